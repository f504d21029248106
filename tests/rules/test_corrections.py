"""The corrected rules: ST-04's standby paths, GPU-01's per-GPU graphics types, GPU-02's
and HA-06's wording, and HA findings graded by design intent.

The scenario tests read their expectations, severities included, from
tests/scenarios/corrections.yaml; the unit tests judge one object built with
tests/support/builders.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuaudit.inventory import LunPath
from gpuaudit.model.policy import Policy
from gpuaudit.model.policy_file import parse_policy
from gpuaudit.results import AuditResult, Finding
from gpuaudit.rules import catalogue, gpu, ha, storage
from gpuaudit.rules.scopes import HostGpu
from gpuaudit.verdict.check import run_checks
from tests.support.builders import Estate, context, healthy, passthrough_estate
from tests.verdict.test_check_scenarios import TODAY, load

CORRECTIONS = Path(__file__).resolve().parents[1] / "scenarios" / "corrections.yaml"
RULE_IDS = [r.id for r in catalogue()]
GRADED = ("HA-01", "HA-03", "HA-04", "HA-05", "HA-08")


def checked(policy: Policy | None = None) -> tuple[dict[str, Any], AuditResult]:
    scenario, inventory = load(CORRECTIONS)
    result = run_checks(inventory, policy, TODAY)
    assert result.errors == []
    return scenario, result


def findings(result: AuditResult, rule: str, obj: str) -> list[Finding]:
    found = [f for f in result.findings if f.rule == rule and f.object == obj]
    assert found, f"{rule} did not examine {obj}"
    return found


def policy(text: str) -> Policy:
    return parse_policy(text, "test-policy", rule_ids=RULE_IDS)


# --- the corrections scenario ---------------------------------------------------------------


def expectations() -> list[dict[str, Any]]:
    scenario, _ = load(CORRECTIONS)
    return [e for e in scenario["expect"] if e["fail"] or e["pass"]]


def test_corrections_scenario_covers_every_correction() -> None:
    rules = {e["rule"] for e in expectations()}
    assert rules >= {"ST-04", "GPU-01", "GPU-02", "HA-06", *GRADED}


@pytest.mark.parametrize("rule", sorted({e["rule"] for e in expectations()}))
def test_corrections_rule_fails_exactly_where_expected(rule: str) -> None:
    _, result = checked()
    entries = [e for e in expectations() if e["rule"] == rule]
    failed = {f.object for f in result.findings if f.rule == rule and f.status == "fail"}
    assert failed == {name for e in entries for name in e["fail"]}
    for e in entries:
        for name in e["pass"]:
            assert {f.status for f in findings(result, rule, name)} == {"pass"}, name
        for name in e["fail"]:
            severities = {f.severity for f in findings(result, rule, name)}
            assert severities == {e["severity"]}, (name, severities)


def test_st04_names_the_dead_and_the_disabled_path() -> None:
    _, result = checked()
    (dead,) = findings(result, "ST-04", "fc-dead")
    assert "gfx-esx01: dead path through vmhba3" in dead.message
    (disabled,) = findings(result, "ST-04", "fc-disabled")
    assert "gfx-esx03: disabled path through vmhba2" in disabled.message


def test_gpu01_states_why_it_is_only_medium() -> None:
    _, result = checked()
    (medium,) = findings(result, "GPU-01", "gfx-esx02")
    assert "every GPU in use by vGPU VMs is set to Shared Direct" in medium.message
    (high,) = findings(result, "GPU-01", "gfx-esx03")
    assert "no graphics type of its own on gfx-esx03/0000:3b:00.0" in high.message


def test_observed_design_a_and_c_failures_say_how_to_declare_the_intent() -> None:
    _, result = checked()
    for rule in GRADED:
        for f in result.findings:
            if f.rule == rule and f.status == "fail" and f.cluster in ("cor-a", "cor-c"):
                design = "A" if f.cluster == "cor-a" else "C"
                assert f.message.endswith(
                    f" (design {design} observed: VMware HA may not be relied on; if that is "
                    f"the intent, declare it in the policy (clusters: {f.cluster}: intent: "
                    "vm_ha_mandated: false) and this becomes information)"
                )
                assert f.evidence["intent_declared"] is False
                assert f.severity == "medium"


def test_declared_intent_wins_over_the_observed_design() -> None:
    _, result = checked(
        policy(
            "clusters:\n"
            "  cor-a: {intent: {vm_ha_mandated: true}}\n"
            "  cor-b-off: {intent: {vm_ha_mandated: false}}\n"
        )
    )
    (a,) = findings(result, "HA-01", "cor-a")
    assert a.status == "fail" and a.severity == "high"
    assert {f.severity for f in findings(result, "HA-04", "a-vm-01")} == {"medium"}
    (b,) = findings(result, "HA-01", "cor-b-off")
    assert b.status == "fail" and b.severity == "info"
    assert b.message.startswith("intent: VMware HA is not mandated; ")
    assert {f.severity for f in findings(result, "HA-05", "boff-vm-01")} == {"info"}
    # cor-c declares nothing: its observed design C explains, but grades no lower than
    # medium.
    assert {f.severity for f in findings(result, "HA-04", "c-vm-01")} == {"medium"}


def test_a_cluster_declaration_wins_over_the_default_intent() -> None:
    _, result = checked(
        policy(
            "intent: {vm_ha_mandated: false}\n"
            "clusters:\n  cor-a: {intent: {vm_ha_mandated: true}}\n"
        )
    )
    assert findings(result, "HA-08", "cor-a")[0].severity == "high"
    assert findings(result, "HA-08", "cor-b-off")[0].severity == "info"


def test_a_severity_override_still_wins_over_the_grading() -> None:
    _, result = checked(policy("severity: {HA-01: critical}\n"))
    assert findings(result, "HA-01", "cor-a")[0].severity == "critical"


# --- one rule, one object -------------------------------------------------------------------


def paths(states: list[tuple[str, str]]) -> list[LunPath]:
    return [LunPath(adapter, "fc", state) for adapter, state in states]


@pytest.mark.parametrize(
    "states",
    [
        [("vmhba2", "active"), ("vmhba3", "standby")],
        [("vmhba2", "active"), ("vmhba3", "active")],
    ],
)
def test_st04_an_active_and_a_standby_or_active_path_pass(states: list[tuple[str, str]]) -> None:
    e = healthy()
    ds = e.inv.datastores[0]
    for mount in ds.mounts:
        mount.paths = paths(states)
    assert storage.multipath(context(e.inv), ds).passed  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("states", "problem"),
    [
        ([("vmhba2", "standby")], "a single usable path (vmhba2, standby)"),
        ([("vmhba2", "active"), ("vmhba3", "disabled")], "disabled path through vmhba3"),
        ([("vmhba2", "dead"), ("vmhba3", "dead")], "dead paths through vmhba2, vmhba3"),
        ([("vmhba2", "standby"), ("vmhba3", "standby")], "no active path"),
        ([("vmhba2", "active"), ("vmhba3", "standby"), ("vmhba3", "dead")], "dead path"),
    ],
)
def test_st04_fails_on_fewer_than_two_usable_or_any_broken_path(
    states: list[tuple[str, str]], problem: str
) -> None:
    e = healthy()
    ds = e.inv.datastores[0]
    ds.mounts[0].paths = paths(states)
    outcome = storage.multipath(context(e.inv), ds)
    assert outcome is not None and not outcome.passed
    assert problem in outcome.evidence["problems"]["h1"]
    assert list(outcome.evidence["problems"]) == ["h1"]


def test_gpu01_a_shared_default_under_shared_direct_gpus_is_medium() -> None:
    e = healthy()
    host = e.inv.hosts[0]
    host.default_graphics_type = "shared"
    host.gpus[0].configured_graphics_type = "sharedDirect"
    outcome = gpu.shared_direct(context(e.inv), host)
    assert outcome is not None and not outcome.passed and outcome.severity == "medium"
    assert "Shared (vSGA)" in outcome.message


def test_gpu01_a_gpu_that_takes_a_shared_default_is_high() -> None:
    e = healthy()
    host = e.inv.hosts[0]
    host.default_graphics_type = "shared"
    outcome = gpu.shared_direct(context(e.inv), host)
    assert outcome is not None and not outcome.passed and outcome.severity is None
    assert "no graphics type of its own on h1/0000:3b:00.0" in outcome.message


def test_gpu01_a_gpu_set_to_shared_is_high_whatever_the_default() -> None:
    e = healthy()
    host = e.inv.hosts[0]
    host.gpus[0].configured_graphics_type = "shared"
    outcome = gpu.shared_direct(context(e.inv), host)
    assert outcome is not None and not outcome.passed and outcome.severity is None
    assert "h1/0000:3b:00.0 in use by vGPU VMs set to Shared (vSGA)" in outcome.message


def test_gpu01_a_shared_direct_default_and_gpu_pass() -> None:
    e = healthy()
    e.inv.hosts[0].gpus[0].configured_graphics_type = "sharedDirect"
    outcome = gpu.shared_direct(context(e.inv), e.inv.hosts[0])
    assert outcome is not None and outcome.passed


def test_gpu02_names_a_pending_reboot_or_an_unclaimed_device() -> None:
    e = Estate()
    h = e.host("r1", None, profiles=(), fc=0)
    g = e.gpu(h, mode="pending")
    outcome = gpu.passthrough_pending(context(e.inv), HostGpu(h, g))
    assert outcome is not None and not outcome.passed
    assert "a host reboot is pending" in outcome.message
    assert "failed to claim the device" in outcome.message
    rule = next(r for r in catalogue() if r.id == "GPU-02")
    assert "reboot" in rule.rationale and "claimed" in rule.rationale


def test_ha06_is_medium_and_calls_itself_a_necessary_condition() -> None:
    rule = next(r for r in catalogue() if r.id == "HA-06")
    assert rule.severity == "medium"
    assert "necessary condition, not a sufficient one" in rule.rationale
    assert "HA-08" in rule.rationale
    e = healthy()
    outcome = ha.n_plus_one(context(e.inv), e.inv.clusters[0])
    assert outcome.passed and "a necessary condition only" in outcome.message


def test_ha01_on_an_observed_design_a_is_medium() -> None:
    e = passthrough_estate()
    outcome = ha.ha_enabled(context(e.inv), e.inv.clusters[0])
    assert not outcome.passed and outcome.severity == "medium"
    assert "(design A observed: VMware HA may not be relied on; " in outcome.message


def test_ha01_on_design_b_keeps_its_severity() -> None:
    e = healthy()
    e.inv.clusters[0].ha_enabled = False
    outcome = ha.ha_enabled(context(e.inv), e.inv.clusters[0])
    assert not outcome.passed and outcome.severity is None
    assert "ha_not_relied_on" not in outcome.evidence


def test_ha01_declared_mandate_on_design_a_keeps_its_severity() -> None:
    e = passthrough_estate()
    mandate = policy("clusters:\n  pt: {intent: {vm_ha_mandated: true}}\n")
    outcome = ha.ha_enabled(context(e.inv, mandate), e.inv.clusters[0])
    assert not outcome.passed and outcome.severity is None


def test_ha01_declared_no_mandate_on_design_b_is_information() -> None:
    e = healthy()
    e.inv.clusters[0].ha_enabled = False
    outcome = ha.ha_enabled(
        context(e.inv, policy("intent: {vm_ha_mandated: false}\n")), e.inv.clusters[0]
    )
    assert outcome.severity == "info"
    assert outcome.message.startswith("intent: VMware HA is not mandated; ")


def test_ha03_and_ha04_on_an_observed_design_c_are_medium() -> None:
    e = passthrough_estate(buffer=True)
    vm = e.inv.vms[0]
    for check in (ha.shared_files, ha.fixed_passthrough):
        outcome = check(context(e.inv), vm)
        assert outcome is not None and not outcome.passed and outcome.severity == "medium"
        assert "(design C observed: " in outcome.message
        declared = policy("clusters:\n  pt: {intent: {vm_ha_mandated: false}}\n")
        outcome = check(context(e.inv, declared), vm)
        assert outcome is not None and outcome.severity == "info"


def test_ha05_and_ha08_on_an_observed_design_a_are_medium_and_information_once_declared() -> None:
    result = run_checks(passthrough_estate().inv, None, TODAY)
    graded = [f for f in result.findings if f.rule in ("HA-05", "HA-08") and f.status == "fail"]
    assert {f.rule for f in graded} == {"HA-05", "HA-08"}
    assert {f.severity for f in graded} == {"medium"}
    declared = policy("clusters:\n  pt: {intent: {vm_ha_mandated: false}}\n")
    result = run_checks(passthrough_estate().inv, declared, TODAY)
    graded = [f for f in result.findings if f.rule in ("HA-05", "HA-08") and f.status == "fail"]
    assert {f.severity for f in graded} == {"info"}


def test_ha05_and_ha08_on_design_b_with_ha_off_keep_their_severity() -> None:
    e = healthy()
    e.inv.clusters[0].ha_enabled = False
    result = run_checks(e.inv, None, TODAY)
    graded = [f for f in result.findings if f.rule in ("HA-05", "HA-08") and f.status == "fail"]
    assert {f.rule for f in graded} == {"HA-05", "HA-08"}
    assert {f.severity for f in graded} == {"high"}


def test_policy_tells_a_declared_mandate_from_a_default() -> None:
    assert Policy.default().ha_mandate_declared("c1") is None
    assert policy("intent: {stateless: false}\n").ha_mandate_declared("c1") is None
    assert policy("intent: {vm_ha_mandated: false}\n").ha_mandate_declared("c1") is False
    both = policy(
        "intent: {vm_ha_mandated: false}\nclusters:\n  'gpu-*': {intent: {vm_ha_mandated: true}}\n"
    )
    assert both.ha_mandate_declared("gpu-1") is True
    assert both.ha_mandate_declared("other") is False
