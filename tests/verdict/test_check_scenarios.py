"""The rules on the lab's scenarios, with expectations read from the scenarios' `expect`.

The inventory is what the collector must build for each scenario
(tests/lab/expected.py), so these tests need no vCenter. The `broken` scenario
covers the HA, vMotion, GPU, storage, design and data rules, the `telemetry`
scenario the monitoring and licensing rules, the `hahealth` scenario the HA
health rules (HA-09 to HA-13): in each, a rule's failures must be exactly the
objects listed, and its listed twins must pass. For every scenario,
DS-01 must name the expected design.
"""

from __future__ import annotations

import dataclasses
import gc
import json
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from gpuaudit.inventory import Inventory
from gpuaudit.model.policy import Policy
from gpuaudit.model.policy_file import parse_policy
from gpuaudit.results import AuditResult
from gpuaudit.rules import catalogue
from gpuaudit.verdict.check import run_checks

RULE_IDS = [r.id for r in catalogue()]

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
BROKEN = SCENARIOS / "broken.yaml"
TELEMETRY = SCENARIOS / "telemetry.yaml"
VMOTION = SCENARIOS / "vmotion.yaml"
HAHEALTH = SCENARIOS / "hahealth.yaml"
DEVICES = SCENARIOS / "devices.yaml"
DRIFT = SCENARIOS / "drift.yaml"
STUNTIME = SCENARIOS / "stuntime.yaml"
FAILCLOSED_VMOTION = SCENARIOS / "failclosed-vmotion.yaml"
FAILCLOSED_GPUTYPE = SCENARIOS / "failclosed-gputype.yaml"
FAILCLOSED_NVLINK = SCENARIOS / "failclosed-nvlink.yaml"
MAINTENANCE = SCENARIOS / "maintenance.yaml"
TODAY = date(2027, 1, 15)

# The intent that broken.yaml's DS-02 expectations assume (see its header).
BROKEN_POLICY = """
clusters:
  cl-local-pt: {intent: {stateless: false}}
  cl-buffer: {intent: {vm_ha_mandated: true}}
  cl-mixed: {intent: {budget_constrained: true}}
  cl-ha-off: {intent: {max_restart_minutes: 0.5}}
"""

# The vCenter is one object per scenario: its clean twin (VM-01) lives in another file.
_VCENTER = "vcenter"
# DATA-02 judges the whole inventory, which fails only when no host was read: every
# scenario here has hosts, and its failures are in tests/reliability/test_empty.py.
_WHOLE_INVENTORY = "DATA-02"
# GPU-08 compares vGPU manager versions and GPU-09 judges their branch's end of support:
# the collector reads them only where the role grants Host.Config.Image, which only
# failclosed-manager.yaml does (tests/verdict/test_failclosed_manager.py); in the other scenarios
# neither is examined, and their verdicts are also judged on saved inventories in
# tests/rules/test_vgpu_manager.py.
_NOT_COLLECTED = {"GPU-08", "GPU-09"}
# VM-06 passes only where a host's vGPU manager version is known: in a scenario without
# Host.Config.Image its clean twins are not proven, and its passes are judged in
# tests/rules/test_vmotion.py and tests/verdict/test_failclosed_manager.py.
_PROVEN_WITH_THE_MANAGER = "VM-06"
# The K8S rules judge Kubernetes clusters, which no lab scenario holds: their failures
# and passes are the Kubernetes scenarios' (tests/k8s, tests/kubernetes/test_scenarios.py).
_KUBERNETES = {"K8S-01", "K8S-02", "K8S-03", "K8S-04"}


def _scenario_tools() -> tuple[Callable[[Path], dict[str, Any]], Callable[[Any], Inventory]]:
    lab_scenario = pytest.importorskip("tests.lab.scenario")
    lab_expected = pytest.importorskip("tests.lab.expected")
    return lab_scenario.load_scenario, lab_expected.expected_inventory


def load(path: Path) -> tuple[dict[str, Any], Inventory]:
    load_scenario, expected_inventory = _scenario_tools()
    scenario = load_scenario(path)
    return scenario, expected_inventory(scenario)


def check(path: Path, policy: Policy | None = None) -> tuple[dict[str, Any], AuditResult]:
    scenario, inventory = load(path)
    result = run_checks(inventory, policy, TODAY)
    assert result.errors == []
    return scenario, result


def scenario_files() -> list[Path]:
    return sorted(SCENARIOS.glob("*.yaml"))


def design_expectations() -> list[tuple[str, str, str]]:
    """(file, cluster, scenario) for every DS-01 expectation of every scenario file."""
    load_scenario, _ = _scenario_tools()
    out = []
    for path in scenario_files():
        for e in load_scenario(path)["expect"]:
            if e["rule"] == "DS-01" and "scenario" in e:
                out.append((path.name, e["cluster"], str(e["scenario"])))
    return out


# maintenance.yaml's VM-12 expectations assume stateful workloads (see its header).
MAINTENANCE_POLICY = """
clusters:
  "mm-*": {intent: {stateless: false}}
"""


def maintenance_policy() -> Policy:
    return parse_policy(MAINTENANCE_POLICY, "maintenance-policy", rule_ids=RULE_IDS)


def broken_policy() -> Policy:
    return parse_policy(BROKEN_POLICY, "broken-policy", rule_ids=RULE_IDS)


# --- every scenario ----------------------------------------------------------------------


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.name)
def test_every_scenario_checks_without_errors(path: Path) -> None:
    _, result = check(path)
    assert {f.rule for f in result.findings} <= {r.id for r in catalogue()}
    assert set(result.designs) <= {c.name for c in result.inventory.clusters}


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.name)
def test_the_check_leaves_no_reference_cycles(path: Path) -> None:
    # A reference cycle is freed only by a collection: the check's searches had left
    # 44,000 of them (34 MiB) at the configuration maximum, each a nested function
    # calling itself. With the plans too, as gpuaudit plan runs it.
    _, inventory = load(path)
    gc.collect()
    gc.disable()
    try:
        for plans in (False, True):
            result = run_checks(inventory, None, TODAY, plans=plans)
            assert gc.get_freeze_count() == 0  # the check's freeze is over
            assert gc.collect() == 0
            assert result.findings
    finally:
        gc.enable()


def test_ds01_names_the_expected_design() -> None:
    expectations = design_expectations()
    assert {f for f, _, _ in expectations} >= {"scenario-a.yaml", "broken.yaml"}
    for name in sorted({f for f, _, _ in expectations}):
        _, result = check(SCENARIOS / name)
        for _, cluster, scenario in (e for e in expectations if e[0] == name):
            assert result.designs.get(cluster) == scenario, (name, cluster)
            ds01 = next(f for f in result.findings if f.rule == "DS-01" and f.object == cluster)
            assert ds01.evidence["scenario"] == scenario
            assert ds01.status == ("fail" if scenario == "other" else "pass")


# --- the broken scenario -----------------------------------------------------------------


def broken_expectations(path: Path = BROKEN) -> list[dict[str, Any]]:
    load_scenario, _ = _scenario_tools()
    return [
        e
        for e in load_scenario(path)["expect"]
        if e.get("fail") or e.get("pass") or e.get("unproven")
    ]


# The scenarios built with a failure and a clean twin per rule, and the policy each assumes.
TWIN_SCENARIOS: dict[Path, Callable[[], Policy | None]] = {
    BROKEN: broken_policy,
    TELEMETRY: lambda: None,
    VMOTION: lambda: None,
    HAHEALTH: lambda: None,
    DEVICES: lambda: None,
    DRIFT: lambda: None,
    STUNTIME: lambda: None,
    FAILCLOSED_VMOTION: lambda: None,
    FAILCLOSED_GPUTYPE: lambda: None,
    FAILCLOSED_NVLINK: lambda: None,
    MAINTENANCE: lambda: maintenance_policy(),
}


def twin_scenarios(rule: str) -> list[Path]:
    """The scenarios whose expectations cover ``rule`` (broken.yaml when none does)."""
    found = [
        path for path in TWIN_SCENARIOS if any(e["rule"] == rule for e in broken_expectations(path))
    ]
    return found or [BROKEN]


def test_broken_has_a_failure_and_a_twin_for_every_rule() -> None:
    listed = {
        e["rule"]
        for path in TWIN_SCENARIOS
        for e in broken_expectations(path)
        if e["fail"] and (e["pass"] or (e["rule"] == _PROVEN_WITH_THE_MANAGER and e["unproven"]))
    }
    rules = {r.id for r in catalogue() if r.object_kind != _VCENTER}
    assert rules - listed == {_WHOLE_INVENTORY, *_NOT_COLLECTED, *_KUBERNETES}


# GPU-08, GPU-09: test_gpu08_and_gpu09_give_no_verdict_where_the_versions_were_not_read.
@pytest.mark.parametrize(
    "rule", sorted({r.id for r in catalogue()} - {*_NOT_COLLECTED, *_KUBERNETES})
)
def test_broken_rule_fails_exactly_where_expected(rule: str) -> None:
    for path in twin_scenarios(rule):
        _holds_in(path, rule)


def _holds_in(path: Path, rule: str) -> None:
    """``rule``'s failures and findings not proven in ``path`` are exactly the objects its
    expectations list; its twins pass."""
    scenario, result = check(path, TWIN_SCENARIOS[path]())
    kind = next(r.object_kind for r in catalogue() if r.id == rule)
    findings = [f for f in result.findings if f.rule == rule]
    if kind == _VCENTER:
        setting = scenario["vcenter"]["settings"].get("vgpu.hotmigrate.enabled")
        assert [f.status for f in findings] == ["pass" if setting is True else "fail"]
    if rule == _WHOLE_INVENTORY:
        assert [(f.object, f.status) for f in findings] == [("inventory", "pass")]
        return
    entries = [e for e in broken_expectations(path) if e["rule"] == rule]
    assert entries, f"{path.name} has no expectation for {rule}"
    for status in ("fail", "unproven"):
        expected = {name for e in entries for name in e[status]}
        found = {f.object for f in findings if f.status == status}
        assert found == expected, (path.name, status)
    for name in (n for e in entries for n in e["pass"]):
        mine = [f for f in findings if f.object == name]
        assert mine, f"{rule} did not examine {name} in {path.name}"
        assert {f.status for f in mine} == {"pass"}, (name, [f.message for f in mine])


def test_broken_result_is_plain_data() -> None:
    rules = set()
    for path, policy in TWIN_SCENARIOS.items():
        _, result = check(path, policy())
        data = json.loads(json.dumps(dataclasses.asdict(result)))
        rules |= {f["rule"] for f in data["findings"]}
        unproven = {f["rule"] for f in data["findings"] if f["status"] == "unproven"}
        expected = {e["rule"] for e in broken_expectations(path) if e["unproven"]}
        assert unproven <= {_PROVEN_WITH_THE_MANAGER, *expected}
        assert all(f["status"] in ("pass", "fail", "unproven") for f in data["findings"])
    # GPU-08 and GPU-09 have nothing to judge where the vGPU manager version cannot be read.
    assert rules == {r.id for r in catalogue()} - {*_NOT_COLLECTED, *_KUBERNETES}


def test_broken_simulation_orders_restarts_by_priority() -> None:
    _, result = check(BROKEN, broken_policy())
    sim = next(s for s in result.simulations if s.cluster == "cl-capacity")
    failure = next(f for f in sim.failures if f.host == "cap-esx01")
    assert [p.vm for p in failure.placed] == ["cap-high"]
    assert [p.vm for p in failure.unplaced] == ["cap-low"]
    assert sim.tolerates == 0 and sim.worst_host == "cap-esx01"


def test_broken_waivers_apply_to_its_failures() -> None:
    policy = broken_policy()
    waivers = parse_policy(
        "waivers:\n"
        "  - {rule: HA-04, object: 'pt-vm-*', reason: app HA, owner: ops, expires: 2027-12-31}\n"
        "  - {rule: HA-04, object: 'buf-vm-*', reason: app HA, owner: ops, expires: 2026-12-31}\n",
        rule_ids=RULE_IDS,
    ).waivers
    policy.waivers = waivers
    _, result = check(BROKEN, policy)
    statuses = {f.object: f.status for f in result.findings if f.rule == "HA-04"}
    assert statuses["pt-vm-01"] == statuses["pt-vm-02"] == "waived"
    assert statuses["buf-vm-01"] == statuses["buf-vm-02"] == "fail"
    assert [w.object for w in result.expired_waivers] == ["buf-vm-*"]


def test_gpu08_and_gpu09_give_no_verdict_where_the_versions_were_not_read() -> None:
    # The lab, like a vCenter read with the Read-only role, reports no vGPU manager version.
    _, result = check(DRIFT, None)
    assert [f for f in result.findings if f.rule in _NOT_COLLECTED] == []
