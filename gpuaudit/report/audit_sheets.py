"""The workbook's sheets for auditors who print and file it: Audit Summary, Action Findings, Rules.

The Audit Summary is made to fit one printed page whatever the estate's size: it
names the scope, counts the findings, says what changed since the last scan, and
lists the first top actions and the worst clusters only, each list ending with
how many more the other sheets hold.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpuaudit.report.actions import finding_id, top_actions
from gpuaudit.report.summary import Summary, tolerance
from gpuaudit.report.tables import (
    INT,
    TEXT,
    VERDICT_WORDS,
    Column,
    Table,
    Value,
    _table,
    _time,
    references_text,
)
from gpuaudit.results import AuditResult, severity_rank

# The lists the one-page summary shortens: more would not fit the page.
SUMMARY_ACTIONS = 7
SUMMARY_CLUSTERS = 10
KEY_LENGTH = 12  # the short finding key: the first hex digits of the stable id


def finding_key(finding_id_hex: str) -> str:
    """The short key of a finding: the start of its stable id, as the HTML report prints it."""
    return finding_id_hex[:KEY_LENGTH]


def _changes(result: AuditResult) -> str:
    history = result.history
    if history is None:
        return "not known: no history store was used"
    if history.previous_checked_at is None:
        return "none: this is the first recorded scan"
    return (
        f"{len(history.new)} new, {len(history.resolved)} resolved "
        f"since the scan of {history.previous_checked_at}"
    )


def _more(shown: int, total: int, where: str) -> list[tuple[str, Value, Value]]:
    left = total - shown
    return [] if left <= 0 else [("", f"and {left} more", f"see the {where} sheet")]


def audit_summary_table(result: AuditResult, summary: Summary) -> Table:
    """The one-page summary: verdict, scope, counts, changes, top actions, worst clusters."""
    inv = result.inventory
    verdict = VERDICT_WORDS.get(summary.verdict, summary.verdict.upper())
    rows: list[tuple[str, Value, Value]] = [
        ("Verdict", verdict, summary.nothing_examined or ""),
        ("vCenter", inv.source, f"{inv.vcenter.product} {inv.vcenter.version}".strip()),
        ("vCenter UUID", inv.vcenter.instance_uuid, ""),
        ("Scanned (UTC)", _time(inv.collected_at), ""),
        (
            "Scope",
            f"{len(inv.clusters)} clusters, {len(inv.hosts)} hosts, "
            f"{sum(len(h.gpus) for h in inv.hosts)} GPUs, {len(inv.vms)} VMs",
            f"{sum(1 for v in inv.vms if v.gpus)} GPU VMs",
        ),
        (
            "Failed",
            ", ".join(f"{s} {n}" for s, n in summary.failed_by_severity.items()),
            f"{summary.results.get('fail', 0)} in all",
        ),
        (
            "Not proven",
            ", ".join(f"{s} {n}" for s, n in summary.unproven_by_severity.items()),
            f"{summary.results.get('unproven', 0)} in all",
        ),
        ("Waived", str(summary.results.get("waived", 0)), ""),
        ("Data gaps", str(len(inv.gaps)), f"{summary.gaps} make verdicts uncertain"),
        ("Changes since last scan", _changes(result), ""),
    ]
    actions = top_actions(result)
    for rank, action in enumerate(actions[:SUMMARY_ACTIONS], start=1):
        rows.append(
            (
                f"Top action {rank}",
                f"{action.severity} {action.rule}: {action.title}",
                f"{action.count} objects",
            )
        )
    rows += _more(SUMMARY_ACTIONS, len(actions), "Top Actions")
    # Worst first: the fewest host failures tolerated, then the most failed findings.
    simulated = sorted(
        (c for c in summary.clusters if c.simulated),
        key=lambda c: (c.tolerates if c.tolerates is not None else -1, -c.failed, c.name),
    )
    for cluster in simulated[:SUMMARY_CLUSTERS]:
        rows.append(
            (
                "Cluster N+k",
                cluster.name,
                f"{tolerance(cluster.tolerates, cluster.tolerates_unproven)}, "
                f"{cluster.failed} failed",
            )
        )
    rows += _more(SUMMARY_CLUSTERS, len(simulated), "Clusters")
    spec: list[tuple[str, str, Callable[[Any], Value]]] = [
        ("Item", TEXT, lambda r: r[0]),
        ("Value", TEXT, lambda r: r[1]),
        ("Detail", TEXT, lambda r: r[2]),
    ]
    return _table("audit-summary", "Audit Summary", spec, rows)


def action_findings_table(result: AuditResult) -> Table:
    """Every failed finding of each top action, one a row: the ids no single cell holds."""
    columns = [
        Column("Rank", INT),
        Column("Rule"),
        Column("Key"),
        Column("Object"),
        Column("Kind"),
        Column("Cluster"),
        Column("ID"),
    ]
    rows: list[list[Value]] = []
    for rank, action in enumerate(top_actions(result), start=1):
        for f in action.findings:
            fid = finding_id(f)
            rows.append([rank, f.rule, finding_key(fid), f.object, f.object_kind, f.cluster, fid])
    return Table("action-findings", "Action Findings", columns, rows)


def rules_table(result: AuditResult) -> Table:
    """The rule catalogue; the rules with failed or not-proven findings first, worst first."""
    open_rules = {f.rule for f in result.findings if f.open}
    ordered = sorted(
        result.rules, key=lambda r: (r.id not in open_rules, severity_rank(r.severity), r.id)
    )
    spec: list[tuple[str, str, Callable[[Any], Value]]] = [
        ("Rule", TEXT, lambda r: r.id),
        ("Severity", TEXT, lambda r: r.severity),
        ("Title", TEXT, lambda r: r.title),
        ("Has Findings", TEXT, lambda r: "yes" if r.id in open_rules else "no"),
        ("Category", TEXT, lambda r: r.category),
        ("Examines", TEXT, lambda r: r.object_kind),
        ("Rationale", TEXT, lambda r: r.rationale),
        ("Remediation", TEXT, lambda r: r.remediation),
        ("References", TEXT, references_text),
    ]
    return _table("rules", "Rules", spec, ordered)
