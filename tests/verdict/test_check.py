"""run_checks: every rule, passes too; broken rules recorded; waivers and overrides applied."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from datetime import date, datetime

import pytest

import gpuaudit
from gpuaudit.model.policy_file import parse_policy
from gpuaudit.rules import catalogue, registry
from gpuaudit.rules.registry import Context, RuleSpec, Verdict
from gpuaudit.simulation import failures as simulate
from gpuaudit.verdict.check import run_checks
from tests.support.builders import healthy, passthrough_estate

RULE_IDS = [r.id for r in catalogue()]

TODAY = date(2027, 1, 15)


def test_result_carries_catalogue_version_and_time() -> None:
    result = run_checks(healthy().inv)
    assert result.rules == catalogue()
    assert result.tool_version == gpuaudit.__version__
    assert result.checked_at.endswith("Z")
    assert datetime.fromisoformat(result.checked_at.replace("Z", "+00:00")).tzinfo is not None
    assert result.policy_source is None and result.waivers == [] and result.errors == []
    assert [s.cluster for s in result.simulations] == ["c1"]
    assert result.designs == {"c1": "B"}
    json.dumps(dataclasses.asdict(result))  # plain data all the way down


def test_findings_record_passes_with_evidence() -> None:
    result = run_checks(healthy().inv)
    f = next(f for f in result.findings if f.rule == "HA-06")
    assert (f.status, f.object, f.object_kind, f.cluster, f.severity) == (
        "pass",
        "c1",
        "cluster",
        "c1",
        "medium",
    )
    assert f.evidence["capacity_gpus"] == 3


def test_a_rule_that_raises_is_recorded_and_the_audit_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(ctx: Context) -> Iterator[Verdict]:
        yield Verdict("c1", True, "fine")
        raise RuntimeError("boom")

    specs = registry.registered()
    spec = next(s for s in specs if s.rule.id == "HA-02")
    patched = [RuleSpec(spec.rule, broken) if s is spec else s for s in specs]
    monkeypatch.setattr("gpuaudit.verdict.check.specs", lambda: patched)
    result = run_checks(healthy().inv)
    assert [(e.rule, e.error) for e in result.errors] == [("HA-02", "RuntimeError: boom")]
    assert not any(f.rule == "HA-02" for f in result.findings)
    assert any(f.rule == "HA-03" for f in result.findings)


def test_a_simulation_that_raises_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise ValueError("no")

    monkeypatch.setattr("gpuaudit.verdict.check.simulate_cluster_notes", broken)
    result = run_checks(healthy().inv)
    assert [e.rule for e in result.errors] == ["simulation"]
    assert result.simulations == []
    assert not any(f.rule == "HA-05" for f in result.findings)


def test_severity_overrides_global_and_per_cluster() -> None:
    policy = parse_policy(
        "severity: {HA-04: low}\nclusters:\n  pt:\n    severity: {HA-01: info}\n", rule_ids=RULE_IDS
    )
    result = run_checks(passthrough_estate().inv, policy, TODAY)
    severities = {(f.rule, f.object): f.severity for f in result.findings}
    assert severities[("HA-04", "pv1")] == "low"
    assert severities[("HA-01", "pt")] == "info"
    # Untouched by the overrides: an observed design A grades to medium (docs/policy.md).
    assert severities[("HA-03", "pv1")] == "medium"


WAIVERS = """
waivers:
  - {rule: HA-04, object: "pv*", reason: K8s restarts the pods, owner: ops, expires: 2027-06-30}
  - {rule: HA-01, object: pt, reason: app-level HA, owner: ops, expires: 2027-01-14}
  - {rule: GPU-03, object: nothing-here, reason: old, owner: ops, expires: 2027-12-31}
"""


def test_active_waiver_turns_fail_into_waived() -> None:
    result = run_checks(passthrough_estate().inv, parse_policy(WAIVERS, rule_ids=RULE_IDS), TODAY)
    waived = [f for f in result.findings if f.status == "waived"]
    assert sorted(f.object for f in waived) == ["pv1", "pv2"]
    assert all(f.rule == "HA-04" and f.waiver is not None for f in waived)
    assert waived[0].waiver is not None and waived[0].waiver.owner == "ops"
    assert "fixed DirectPath" in waived[0].message  # the evidence stays
    assert not any(f.status == "waived" for f in result.failed())


def test_expired_waiver_stops_applying_and_is_reported() -> None:
    result = run_checks(passthrough_estate().inv, parse_policy(WAIVERS, rule_ids=RULE_IDS), TODAY)
    ha01 = next(f for f in result.findings if f.rule == "HA-01")
    assert ha01.status == "fail" and ha01.waiver is None
    assert ha01.evidence["expired_waiver"]["expires"] == "2027-01-14"
    assert [w.rule for w in result.expired_waivers] == ["HA-01"]
    assert len(result.waivers) == 3


def test_waiver_on_a_passing_finding_changes_nothing() -> None:
    policy = parse_policy(
        "waivers:\n  - {rule: HA-06, object: c1, reason: r, owner: o, expires: 2027-06-30}\n",
        rule_ids=RULE_IDS,
    )
    result = run_checks(healthy().inv, policy, TODAY)
    f = next(f for f in result.findings if f.rule == "HA-06")
    assert f.status == "pass" and f.waiver is None


def test_counts_follow_effective_severity() -> None:
    policy = parse_policy("severity: {HA-04: low}\n", rule_ids=RULE_IDS)
    counts = run_checks(passthrough_estate().inv, policy, TODAY).counts()
    assert counts["severity"]["low"] == 2


def test_rules_of_every_module_are_registered() -> None:
    modules = {spec.check.__module__ for spec in registry.registered()}
    assert modules == {
        f"gpuaudit.rules.{m}"
        for m in (
            "data",
            "design",
            "devices",
            "drift",
            "drs",
            "gpu",
            "ha",
            "ha_health",
            "kubernetes",
            "licensing",
            "maintenance",
            "monitoring",
            "storage",
            "stun",
            "vgpu_manager",
            "vgpu_options",
            "vmotion",
        )
    }


def test_public_simulation_api() -> None:
    inv = healthy().inv
    assert [s.cluster for s in simulate.simulate(inv)] == ["c1"]
    assert simulate.simulate_cluster(inv, "c1").tolerates == 2
