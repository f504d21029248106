"""AuditResults of the lab's estates, built once per session for the report-format tests.

The recorded scenarios are replayed from their cassettes (offline) and checked by
the real rules, as `gpuaudit scan --replay` does. The large estate is
tests/lab/generate.py's 64 clusters of 16 hosts and 10,240 VMs, built straight
from the scenario (the inventory a correct collector returns) and checked offline,
which takes seconds where serving it through the lab takes minutes.
"""

from __future__ import annotations

import functools
from typing import Any

from gpuaudit.inventory import Inventory
from gpuaudit.results import AuditResult
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES, SCENARIOS
from tests.support.large_estate import large_estate_result


@functools.cache
def recorded(name: str) -> AuditResult:
    """The checked result of a recorded scenario, replayed from its cassette."""
    return run_checks(obtain.obtain_inventory(obtain.Replay(CASSETTES / f"{name}.yaml")))


def scenario_inventory(name: str, source: str) -> Inventory:
    """A recorded scenario's inventory from ``source``: "oracle", what a correct collector
    builds from the scenario file (tests/lab/expected.py), or "cassette", the recorded
    session replayed through the collector."""
    if source == "oracle":
        from tests.lab.expected import expected_inventory
        from tests.lab.scenario import load_scenario

        return expected_inventory(load_scenario(SCENARIOS / f"{name}.yaml"))
    return obtain.obtain_inventory(obtain.Replay(CASSETTES / f"{name}.yaml"))


def checked(inventory: Inventory) -> AuditResult:
    """The rules' result on an inventory, which must raise no rule error."""
    result = run_checks(inventory)
    assert result.errors == []
    return result


def large() -> AuditResult:
    """The checked result of the large generated estate (tests/support/large_estate.py)."""
    return large_estate_result()


def assert_expectations(result: AuditResult, expect: list[dict[str, Any]]) -> None:
    """Each entry of a scenario's ``expect``: its rule fails and passes where listed."""
    for entry in expect:
        found = {f.object: f.status for f in result.findings if f.rule == entry["rule"]}
        for name in entry["fail"]:
            assert found.get(name) == "fail", (entry["rule"], name)
        for name in entry["pass"]:
            assert found.get(name) == "pass", (entry["rule"], name)
