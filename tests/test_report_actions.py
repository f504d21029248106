"""Top actions: failed findings rolled up by rule, worst and most widespread first."""

from __future__ import annotations

import hashlib

from gpuaudit.inventory import Inventory
from gpuaudit.report.actions import finding_id, top_actions
from gpuaudit.results import AuditResult, Finding, Rule


def rule(rule_id: str, severity: str = "high") -> Rule:
    return Rule(
        id=rule_id,
        title=f"title of {rule_id}",
        category="ha",
        severity=severity,  # type: ignore[arg-type]
        rationale="why",
        remediation=f"fix {rule_id}",
        object_kind="host",
    )


def finding(
    rule_id: str, obj: str, severity: str, cluster: str | None, status: str = "fail"
) -> Finding:
    return Finding(
        rule=rule_id,
        object=obj,
        object_kind="host",
        status=status,  # type: ignore[arg-type]
        severity=severity,  # type: ignore[arg-type]
        message=f"{rule_id} on {obj}",
        cluster=cluster,
    )


def result(findings: list[Finding]) -> AuditResult:
    rules = [rule("AA-01"), rule("BB-01"), rule("CC-01"), rule("DD-01")]
    return AuditResult(inventory=Inventory(), rules=rules, findings=findings, simulations=[])


def test_actions_sorted_by_severity_then_count_then_rule() -> None:
    findings = [
        finding("AA-01", "h1", "medium", "c1"),
        finding("AA-01", "h2", "medium", "c2"),
        finding("AA-01", "h3", "medium", "c2"),
        finding("BB-01", "h1", "critical", "c1"),
        finding("CC-01", "h1", "medium", None),
        finding("DD-01", "h4", "medium", "c1"),
        finding("DD-01", "h5", "medium", "c1"),
        finding("DD-01", "h6", "low", "c3", status="pass"),
    ]
    actions = top_actions(result(findings))
    assert [(a.rule, a.severity, a.count) for a in actions] == [
        ("BB-01", "critical", 1),
        ("AA-01", "medium", 3),
        ("DD-01", "medium", 2),
        ("CC-01", "medium", 1),
    ]
    assert actions[1].clusters == ["c1", "c2"]
    assert actions[1].title == "title of AA-01"
    assert actions[1].remediation == "fix AA-01"
    assert actions[3].clusters == [""]


def test_an_action_takes_its_worst_severity_and_lists_worst_first() -> None:
    findings = [
        finding("AA-01", "h1", "low", "c1"),
        finding("AA-01", "h2", "critical", "c2"),
        finding("BB-01", "h1", "high", "c1"),
        finding("BB-01", "h2", "high", "c1"),
    ]
    actions = top_actions(result(findings))
    assert [a.rule for a in actions] == ["AA-01", "BB-01"]
    assert actions[0].severity == "critical"
    assert [f.object for f in actions[0].findings] == ["h2", "h1"]


def test_no_failures_no_actions() -> None:
    assert top_actions(result([finding("AA-01", "h1", "high", "c1", status="waived")])) == []


def test_finding_id_is_sha256_of_rule_kind_and_object() -> None:
    f = finding("AA-01", "esx01", "high", "c1")
    assert finding_id(f) == hashlib.sha256(b"AA-01\0host\0esx01").hexdigest()
    moved = finding("AA-01", "esx01", "low", "c9")
    assert finding_id(moved) == finding_id(f)
    assert finding_id(finding("AA-01", "esx02", "high", "c1")) != finding_id(f)
