"""A pytest plugin for mutation runs (scripts/mutation): the fastest tests first.

mutmut runs the tests that cover a mutated function and stops at the first failure
(``-x``), in no particular order, so a mutant that a 10 ms unit test catches could
first wait for seconds of end-to-end tests. Sorting by the durations mutmut
recorded for each test makes a caught mutant cost about its quickest failing
test. The order changes no verdict: the same tests run until one fails.

mutmut forks each mutant's test run from a process that has already run the tests
once, so every functools cache of gpuaudit comes filled with the answers of the code
before the mutation: a mutant behind a cache (sharing._judge's helpers, for one)
would meet only remembered answers. The caches are emptied before each test.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
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


@pytest.fixture(autouse=True)
def _empty_caches() -> Iterator[None]:
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    if mutant not in _NO_MUTANT:
        mutated = mutant.rsplit(".", 1)[0]  # gpuaudit.simulation.sharing.x__judge__mutmut_3
        for name, module in list(sys.modules.items()):
            if name == "gpuaudit" or name.startswith("gpuaudit."):
                for value in list(vars(module).values()):
                    clear = getattr(value, "cache_clear", None)
                    # A cache without arguments holds data loaded once (NVIDIA's
                    # figures take a second to read): kept, unless its own module is
                    # the one mutated.
                    if callable(clear) and (name == mutated or _takes_arguments(value)):
                        clear()
    yield


def _takes_arguments(function: object) -> bool:
    wrapped = getattr(function, "__wrapped__", None)
    code = getattr(wrapped, "__code__", None)
    return code is None or code.co_argcount > 0
