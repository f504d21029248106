"""gpuaudit.model.policy on plain data: the lookups the rules make, pinned by hand.

Names with brackets are deliberate: fnmatch reads ``[1]`` as a set of characters,
so "gpu[1]" does not match itself as a pattern, only as an exact name.
"""

from __future__ import annotations

from datetime import date

from gpuaudit.model.policy import (
    ClusterPolicy,
    Intent,
    LicensingPolicy,
    PassthroughLicence,
    Policy,
    unmatched,
)
from gpuaudit.results import Waiver

VWS = "NVIDIA RTX Virtual Workstation"
NVAIE = "NVIDIA AI Enterprise"


def test_passthrough_entry_names_a_vm_exactly_even_when_it_is_no_pattern() -> None:
    licensing = LicensingPolicy(passthrough=(PassthroughLicence("render[1]", VWS),))
    assert licensing.passthrough_for("c1", "render[1]") == PassthroughLicence("render[1]", VWS)
    assert licensing.passthrough_for(None, "render[1]") == PassthroughLicence("render[1]", VWS)
    assert licensing.passthrough_for("c1", "render1") == PassthroughLicence("render[1]", VWS)
    assert licensing.passthrough_for("c1", "render2") is None


def test_passthrough_entry_found_by_the_vms_cluster_or_by_pattern() -> None:
    licensing = LicensingPolicy(
        passthrough=(
            PassthroughLicence("train-*", NVAIE),
            PassthroughLicence("gpu-c2", VWS),
        )
    )
    assert licensing.passthrough_for("gpu-c2", "desk-01") == PassthroughLicence("gpu-c2", VWS)
    assert licensing.passthrough_for("gpu-c2", "train-07") == PassthroughLicence("train-*", NVAIE)
    assert licensing.passthrough_for(None, "desk-01") is None
    assert licensing.passthrough_for("gpu-c3", "desk-01") is None


def test_cluster_named_like_a_pattern_finds_its_own_entry() -> None:
    own = ClusterPolicy("gpu[1]", intent={"stateless": False}, severity={"HA-01": "low"})
    policy = Policy(clusters=[ClusterPolicy("other"), own])
    assert policy.cluster_policy("gpu[1]") is own
    assert policy.cluster_policy("gpu1") is own
    assert policy.cluster_policy("gpu2") is None
    assert policy.cluster_policy(None) is None
    assert policy.intent_for("gpu[1]") == Intent(stateless=False)
    assert policy.severity_for("HA-01", "gpu[1]") == "low"


def test_cluster_without_intent_overrides_keeps_the_default_intent() -> None:
    policy = Policy(
        intent=Intent(budget_constrained=True),
        clusters=[ClusterPolicy("c1", severity={"HA-01": "low"})],
    )
    assert policy.intent_for("c1") == Intent(budget_constrained=True)
    assert policy.intent_for(None) == Intent(budget_constrained=True)


def test_severity_falls_back_to_the_policy_wide_override() -> None:
    policy = Policy(
        clusters=[ClusterPolicy("c1", severity={"HA-01": "low"})],
        severity={"HA-01": "critical", "HA-02": "info"},
    )
    assert policy.severity_for("HA-01", "c1") == "low"
    assert policy.severity_for("HA-02", "c1") == "info"
    assert policy.severity_for("HA-01", "c2") == "critical"
    assert policy.severity_for("HA-01", None) == "critical"
    assert policy.severity_for("HA-03", "c1") is None


def test_ha_mandate_of_a_cluster_comes_before_the_default_intent() -> None:
    mandated = Policy(
        intent=Intent(vm_ha_mandated=True),
        clusters=[
            ClusterPolicy("free", intent={"vm_ha_mandated": False}),
            ClusterPolicy("quiet", intent={"stateless": False}),
        ],
    )
    assert mandated.ha_mandate_declared("free") is False
    # A mandate in the default intent is a declaration even when no key records it.
    assert mandated.ha_mandate_declared("quiet") is True
    assert mandated.ha_mandate_declared(None) is True
    undeclared = Policy(clusters=[ClusterPolicy("quiet", intent={"stateless": False})])
    assert undeclared.ha_mandate_declared("quiet") is None
    declared = Policy(
        clusters=[ClusterPolicy("on", intent={"vm_ha_mandated": 1})],
        intent_declared=frozenset({"vm_ha_mandated"}),
    )
    assert declared.ha_mandate_declared("on") is True
    assert declared.ha_mandate_declared("off") is False


def _waiver(obj: str, expires: str, rule: str = "HA-04") -> Waiver:
    return Waiver(rule, obj, "reason", "owner@example.com", expires)


def test_waiver_names_an_object_exactly_even_when_it_is_no_pattern() -> None:
    policy = Policy(waivers=[_waiver("infer[1]", "2027-01-31")])
    today = date(2027, 1, 1)
    assert policy.waiver_for("HA-04", "infer[1]", today) == _waiver("infer[1]", "2027-01-31")
    assert policy.waiver_for("HA-04", "infer1", today) == _waiver("infer[1]", "2027-01-31")
    assert policy.waiver_for("HA-04", "infer2", today) is None


def test_expired_waiver_is_told_apart_from_an_active_one() -> None:
    old = _waiver("vm-*", "2026-12-31")
    current = _waiver("vm-*", "2027-12-31")
    other_rule = _waiver("vm-*", "2026-06-30", rule="HA-03")
    policy = Policy(waivers=[old, current, other_rule])
    today = date(2027, 1, 1)
    assert policy.waiver_for("HA-04", "vm-1", today) == current
    assert policy.expired_waiver_for("HA-04", "vm-1", today) == old
    assert policy.expired_waiver_for("HA-04", "host-1", today) is None
    assert policy.expired_waiver_for("HA-02", "vm-1", today) is None
    assert policy.expired(today) == [old, other_rule]
    # The expiry day itself is still covered.
    assert policy.expired(date(2026, 12, 31)) == [other_rule]
    assert policy.expired_waiver_for("HA-04", "vm-1", date(2026, 12, 31)) is None


def test_a_waiver_that_covers_no_finding_is_named_in_a_warning() -> None:
    exact = Waiver("HA-04", "infer[1]", "reason", "gpu-ops", "2099-12-31")
    pattern = Waiver("HA-04", "train-*", "reason", "gpu-ops", "2099-12-31")
    typo = Waiver("HA-04", "trian-*", "reason", "ml-team", "2099-12-31")
    wrong_rule = Waiver("GPU-03", "infer[1]", "reason", "gpu-ops", "2099-12-31")
    policy = Policy(waivers=[exact, pattern, typo, wrong_rule])
    # A finding that passes today still names something real.
    findings = [("HA-04", "infer[1]"), ("HA-04", "train-7"), ("GPU-04", "infer[1]")]
    assert unmatched(policy, findings, []) == [
        "waiver HA-04 'trian-*' (owner ml-team) matched no finding",
        "waiver GPU-03 'infer[1]' (owner gpu-ops) matched no finding",
    ]
    # Findings given once, as a generator, are weighed against every waiver.
    assert unmatched(policy, iter(findings), []) == unmatched(policy, findings, [])
    assert unmatched(Policy(waivers=[exact, pattern]), iter(findings), []) == []


def test_a_cluster_pattern_that_names_no_cluster_is_named_in_a_warning() -> None:
    policy = Policy(
        clusters=[
            ClusterPolicy("gpu[1]"),  # an exact name fnmatch would not match
            ClusterPolicy("vdi-*"),
            ClusterPolicy("vid-vgpu"),
            ClusterPolicy("ml-?"),
        ]
    )
    clusters = ["gpu[1]", "vdi-vgpu", "ml-iscsi"]
    assert unmatched(policy, [], clusters) == [
        "cluster pattern 'vid-vgpu' of the policy matched no cluster",
        "cluster pattern 'ml-?' of the policy matched no cluster",
    ]
    assert unmatched(policy, [], iter(clusters)) == unmatched(policy, [], clusters)
    assert unmatched(Policy(), [("HA-04", "x")], clusters) == []
