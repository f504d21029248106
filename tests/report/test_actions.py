"""Top actions: failed findings rolled up by rule, worst and most widespread first; finding ids.

The lists are also written out whole, by hand, with findings chosen so that every
sort key decides somewhere: severity, then cluster (a finding in no cluster first),
then object within an action; severity, then count, then rule id between actions.
"""

from __future__ import annotations

import hashlib

from gpuaudit.inventory import Inventory
from gpuaudit.report.actions import TopAction, finding_id, top_actions
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


def _rule(rule_id: str) -> Rule:
    return Rule(
        id=rule_id,
        title=f"title of {rule_id}",
        category="ha",
        severity="high",
        rationale="why",
        remediation=f"fix {rule_id}",
        object_kind="host",
    )


def _fail(rule_id: str, obj: str, severity: str, cluster: str | None) -> Finding:
    return Finding(rule_id, obj, "host", "fail", severity, f"{rule_id} on {obj}", cluster)  # type: ignore[arg-type]


def test_the_whole_list_of_actions() -> None:
    b_high_c2 = _fail("BB-01", "a", "high", "c2")
    b_high_c1 = _fail("BB-01", "b", "high", "c1")
    b_high_none = _fail("BB-01", "z", "high", None)
    b_high_alpha = _fail("BB-01", "c", "high", "Alpha")
    b_low = _fail("BB-01", "a", "low", "Alpha")
    unknown = _fail("QQ-09", "h1", "critical", None)
    a_high = _fail("AA-01", "h1", "high", "c1")
    c_high = _fail("CC-01", "h1", "high", "c1")
    waived = Finding("AA-01", "h2", "host", "waived", "critical", "waived", "c1")
    passed = Finding("CC-01", "h2", "host", "pass", "critical", "ok", "c1")
    findings = [c_high, b_low, b_high_c2, waived, a_high, b_high_c1, passed]
    findings += [b_high_none, unknown, b_high_alpha]
    rules = [_rule("AA-01"), _rule("BB-01"), _rule("CC-01")]
    result = AuditResult(inventory=Inventory(), rules=rules, findings=findings, simulations=[])
    assert top_actions(result) == [
        # A rule the catalogue does not know: its id for a title, no remediation.
        TopAction("QQ-09", "QQ-09", "critical", "", [unknown], [""]),
        TopAction(
            "BB-01",
            "title of BB-01",
            "high",
            "fix BB-01",
            [b_high_none, b_high_alpha, b_high_c1, b_high_c2, b_low],
            ["", "Alpha", "c1", "c2"],
        ),
        TopAction("AA-01", "title of AA-01", "high", "fix AA-01", [a_high], ["c1"]),
        TopAction("CC-01", "title of CC-01", "high", "fix CC-01", [c_high], ["c1"]),
    ]


def test_an_action_of_one_cluster_and_one_of_none() -> None:
    alone = _fail("AA-01", "h1", "medium", None)
    result = AuditResult(Inventory(), [_rule("AA-01")], [alone], [])
    (action,) = top_actions(result)
    assert (action.count, action.clusters) == (1, [""])


def test_finding_id_is_the_sha256_written_out_by_hand() -> None:
    assert finding_id(_fail("HA-01", "gpu-a", "critical", None)) == (
        hashlib.sha256(b"HA-01\0host\0gpu-a").hexdigest()
    )


def test_a_lone_surrogate_in_a_name_is_replaced_before_hashing() -> None:
    # "?" is what UTF-8's "replace" error handler writes for it.
    assert finding_id(_fail("HA-01", "vm\udc80", "high", None)) == (
        hashlib.sha256(b"HA-01\0host\0vm?").hexdigest()
    )
