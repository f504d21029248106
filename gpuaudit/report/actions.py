"""What to fix first: failed findings rolled up by rule, and each finding's stable id.

Every format that leads with actions (the HTML report's "Top actions", the
workbook's sheet of the same name) takes them from here, so they agree.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from gpuaudit.results import AuditResult, Finding, Severity, severity_rank


def finding_id(f: Finding) -> str:
    """A finding's stable id: the same rule on the same object keeps it from scan to scan.

    It is the SARIF result's ``partialFingerprints["gpuaudit/v1"]``, so a finding in
    the workbook, the JSON report and GitHub code scanning is one and the same.
    """
    key = f"{f.rule}\0{f.object_kind}\0{f.object}"
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()


@dataclass
class TopAction:
    """One rule's failed findings: what to do, and where."""

    rule: str
    title: str
    severity: Severity  # the worst effective severity among its findings
    remediation: str
    findings: list[Finding] = field(default_factory=list)
    clusters: list[str] = field(default_factory=list)  # sorted; "" for objects in none

    @property
    def count(self) -> int:
        return len(self.findings)


def top_actions(result: AuditResult) -> list[TopAction]:
    """Failed findings grouped by rule, worst severity first, then most objects, then rule id.

    Within an action the findings are ordered by severity, cluster and object, so the
    list reads the same on every run.
    """
    rules = {r.id: r for r in result.rules}
    grouped: dict[str, list[Finding]] = {}
    for finding in result.failed():
        grouped.setdefault(finding.rule, []).append(finding)
    actions = []
    for rule_id, findings in grouped.items():
        rule = rules.get(rule_id)
        findings.sort(key=lambda f: (severity_rank(f.severity), f.cluster or "", f.object))
        actions.append(
            TopAction(
                rule=rule_id,
                title=rule.title if rule else rule_id,
                severity=findings[0].severity,
                remediation=rule.remediation if rule else "",
                findings=findings,
                clusters=sorted({f.cluster or "" for f in findings}),
            )
        )
    actions.sort(key=lambda a: (severity_rank(a.severity), -a.count, a.rule))
    return actions
