"""What a scan concludes: the failed findings that count, and its summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gpuaudit.files import read_json
from gpuaudit.results import SEVERITIES, AuditResult, ScanHistory, at_or_above, severity_rank
from gpuaudit.rules.data import NOTHING_EXAMINED


def baseline_keys(path: str | Path) -> set[tuple[str, str]]:
    """The (rule, object) pairs that had failed in an earlier JSON report."""
    data = read_json(path)
    findings = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(findings, list):
        raise ValueError(f"{path}: not a gpuaudit JSON report (no findings list)")
    keys = set()
    for item in findings:
        if isinstance(item, dict) and item.get("status") == "fail":
            keys.add((str(item.get("rule")), str(item.get("object"))))
    return keys


@dataclass
class FailedRule:
    """A rule with unwaived failures: its worst severity and how many objects fail it."""

    rule: str
    title: str
    severity: str
    objects: int = 0
    new: int = 0  # with a baseline: objects that had not failed it before


@dataclass
class Summary:
    threshold: str
    failed: dict[str, int] = field(default_factory=dict)  # unwaived failures by severity
    new: dict[str, int] | None = None  # with a baseline: the new ones only
    waived: int = 0
    passed: int = 0
    blocking: bool = False
    designs: dict[str, str] = field(default_factory=dict)
    tolerates: dict[str, int] = field(default_factory=dict)
    # DATA-02's message when the audit read no host: the scan fails whatever
    # --fail-on, the baseline or the policy say.
    nothing_examined: str | None = None
    failed_rules: list[FailedRule] = field(default_factory=list)  # worst first
    failing_clusters: set[str] = field(default_factory=set)  # with an unwaived failure
    history: ScanHistory | None = None  # None: no history store was used


def summarise(result: AuditResult, fail_on: str, known: set[tuple[str, str]] | None) -> Summary:
    summary = Summary(threshold=fail_on, designs=dict(result.designs))
    summary.failed = {s: 0 for s in SEVERITIES}
    if known is not None:
        summary.new = {s: 0 for s in SEVERITIES}
    titles = {r.id: r.title for r in result.rules}
    by_rule: dict[str, FailedRule] = {}
    for finding in result.findings:
        if finding.status == "waived":
            summary.waived += 1
        elif finding.status == "pass":
            summary.passed += 1
        else:
            summary.failed[finding.severity] += 1
            is_new = known is None or (finding.rule, finding.object) not in known
            if summary.new is not None and is_new:
                summary.new[finding.severity] += 1
            if is_new and at_or_above(finding.severity, fail_on):
                summary.blocking = True
            failed = by_rule.setdefault(
                finding.rule,
                FailedRule(finding.rule, titles.get(finding.rule, ""), finding.severity),
            )
            failed.objects += 1
            failed.new += is_new
            if severity_rank(finding.severity) < severity_rank(failed.severity):
                failed.severity = finding.severity
            if finding.cluster:
                summary.failing_clusters.add(finding.cluster)
            if finding.object_kind == "cluster":
                summary.failing_clusters.add(finding.object)
            if finding.rule == NOTHING_EXAMINED:
                summary.nothing_examined = finding.message
                summary.blocking = True
    summary.tolerates = {s.cluster: s.tolerates for s in result.simulations}
    summary.history = result.history
    summary.failed_rules = sorted(
        by_rule.values(), key=lambda r: (severity_rank(r.severity), -r.objects, r.rule)
    )
    return summary
