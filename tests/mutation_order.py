"""A pytest plugin for mutation runs (scripts/mutation): the fastest tests first.

mutmut runs the tests that cover a mutated function and stops at the first failure
(``-x``), in no particular order, so a mutant that a 10 ms unit test catches could
first wait for seconds of end-to-end tests. Sorting by the durations mutmut
recorded for each test makes a caught mutant cost about its quickest failing
test. The order changes no verdict: the same tests run until one fails.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

# What mutmut puts in MUTANT_UNDER_TEST when no mutant is active.
_NO_MUTANT = {"", "stats", "list_all_tests", "mutant_generation", "fail"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if os.environ.get("MUTANT_UNDER_TEST", "") in _NO_MUTANT:
        return
    stats = Path("mutmut-stats.json")  # mutmut runs the tests from its mutants/ folder
    if not stats.is_file():
        return
    durations = json.loads(stats.read_text(encoding="utf-8")).get("duration_by_test", {})
    items.sort(key=lambda item: durations.get(item.nodeid, 0.0))
