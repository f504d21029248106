"""Top actions and finding ids, whole, written out by hand.

The findings are chosen so that every sort key decides somewhere: severity, then
cluster (a finding in no cluster first), then object within an action; severity,
then count, then rule id between actions.
"""

from __future__ import annotations

import hashlib

from gpuaudit.inventory import Inventory
from gpuaudit.report.actions import TopAction, finding_id, top_actions
from gpuaudit.results import AuditResult, Finding, Rule


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


def test_finding_id_is_sha256_of_rule_kind_and_object() -> None:
    assert finding_id(_fail("HA-01", "gpu-a", "critical", None)) == (
        hashlib.sha256(b"HA-01\0host\0gpu-a").hexdigest()
    )


def test_a_lone_surrogate_in_a_name_is_replaced_before_hashing() -> None:
    # "?" is what UTF-8's "replace" error handler writes for it.
    assert finding_id(_fail("HA-01", "vm\udc80", "high", None)) == (
        hashlib.sha256(b"HA-01\0host\0vm?").hexdigest()
    )
