"""What a scan concludes: the failed findings that count, and its summary."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuaudit.common.files import read_json
from gpuaudit.results import (
    NOTICE,
    OPEN_STATUSES,
    SEVERITIES,
    AuditResult,
    Finding,
    Judgement,
    ScanHistory,
    Waiver,
    severity_rank,
)
from gpuaudit.rules.data import NOTHING_EXAMINED
from gpuaudit.verdict.changes import WAIVED, change
from gpuaudit.verdict.judgement import NEVER, judge

if TYPE_CHECKING:  # the report package is slow to import: the command line starts without it
    from gpuaudit.report.actions import TopAction

# --fail-on never: a report-only job; only DATA-02 (nothing examined) still fails it.
FAILING_SEVERITIES = tuple(s for s in SEVERITIES if s != NOTICE)
FAIL_ON_CHOICES = (*SEVERITIES, NEVER)
TOP_ACTIONS = 5  # the rules with the most to fix, in the summary


def baseline_statuses(path: str | Path) -> list[tuple[tuple[str, str], str]]:
    """Each finding's (rule, object) in an earlier JSON report with its status, read
    once: the open ones are what a baseline knows, the waived ones what expired since."""
    data = read_json(path)
    findings = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(findings, list):
        raise ValueError(f"{path}: not a gpuaudit JSON report (no findings list)")
    return [
        ((str(item.get("rule")), str(item.get("object"))), str(item.get("status")))
        for item in findings
        if isinstance(item, dict)
    ]


def with_status(
    statuses: Iterable[tuple[tuple[str, str], str]], wanted: Iterable[str] = OPEN_STATUSES
) -> set[tuple[str, str]]:
    """The (rule, object) pairs of ``statuses`` that had one of ``wanted`` (by default
    failed or not proven)."""
    keep = set(wanted)
    return {key for key, status in statuses if status in keep}


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
    judgement: Judgement  # the job's one verdict
    failed: dict[str, int] = field(default_factory=dict)  # unwaived failures by severity
    new: dict[str, int] | None = None  # with a baseline: the new ones only
    unchanged: int | None = None  # with a baseline: open findings open in it too
    notices: int = 0  # unwaived info findings: notices, never counted as failed
    # Unwaived findings not proven, by severity: each rests on a fact not known exactly.
    unproven: dict[str, int] = field(default_factory=dict)
    waived: int = 0
    passed: int = 0
    blocking: bool = False
    # With no blocking failure: a finding not proven at or above --fail-on blocks the
    # pass (the verdict is NOT PROVEN, the exit status 1).
    blocking_unproven: bool = False
    designs: dict[str, str] = field(default_factory=dict)
    tolerates: dict[str, int] = field(default_factory=dict)
    # cluster -> the k reached only if facts NVIDIA does not publish allow it
    tolerates_unproven: dict[str, int] = field(default_factory=dict)
    # DATA-02's message when the audit read no host: the scan fails whatever
    # --fail-on, the baseline or the policy say.
    nothing_examined: str | None = None
    failed_rules: list[FailedRule] = field(default_factory=list)  # worst first
    # with an unwaived failure, or a finding not proven
    failing_clusters: set[str] = field(default_factory=set)
    expired_waivers: list[Waiver] = field(default_factory=list)
    new_findings: list[Finding] = field(default_factory=list)  # with a baseline
    # With a baseline: its open findings that pass now (or are gone), and those that
    # are only waived now: a waiver accepts a failure, it does not resolve it.
    resolved: int | None = None
    newly_waived: int | None = None
    # With a baseline: open findings that were waived in it (the waiver expired or was
    # withdrawn since); each is also among the new ones.
    waiver_expired: int | None = None
    top_actions: list[TopAction] = field(default_factory=list)  # at most TOP_ACTIONS
    baseline_created: Path | None = None  # the first night: the baseline this scan made
    history: ScanHistory | None = None  # None: no history store was used

    def to_dict(self) -> dict[str, Any]:
        """The summary as plain data, for a webhook or a job that reads JSON."""
        return {
            "verdict": verdict(self),
            "fail_on": self.threshold,
            "nothing_examined": self.nothing_examined,
            "failed": dict(self.failed),
            "notices": self.notices,
            "unproven": dict(self.unproven),
            "new": dict(self.new) if self.new is not None else None,
            "unchanged": self.unchanged,
            "resolved": self.resolved,
            "newly_waived": self.newly_waived,
            "waiver_expired": self.waiver_expired,
            "passed": self.passed,
            "waived": self.waived,
            "expired_waivers": [
                {"rule": w.rule, "object": w.object, "owner": w.owner, "expires": w.expires}
                for w in self.expired_waivers
            ],
            "new_findings": [
                {"rule": f.rule, "object": f.object, "severity": f.severity}
                for f in self.new_findings
            ],
            "top_actions": [
                {"rule": a.rule, "title": a.title, "severity": a.severity, "count": a.count}
                for a in self.top_actions
            ],
            "baseline_created": str(self.baseline_created) if self.baseline_created else None,
        }


def verdict(summary: Summary) -> str:
    """PASS, FAIL or NOT PROVEN: the job's one verdict (gpuaudit.verdict.judgement), in the
    words of the console's last line."""
    return VERDICT_WORDS[summary.judgement.verdict]


NOT_PROVEN = "NOT PROVEN"
VERDICT_WORDS = {"fail": "FAIL", "unproven": NOT_PROVEN, "pass": "PASS"}


def failed_keys(result: AuditResult) -> set[tuple[str, str]]:
    """The (rule, object) pairs that fail or are not proven in ``result``, as a baseline
    of it would hold."""
    return {(f.rule, f.object) for f in result.findings if f.open}


def summarise(
    result: AuditResult,
    fail_on: str,
    known: set[tuple[str, str]] | None,
    waived_before: Collection[tuple[str, str]] = (),
) -> Summary:
    """The console's and the notifications' summary; the verdict is the result's
    judgement (gpuaudit.verdict.judgement), computed here only when the result has none.
    ``waived_before``: the (rule, object) pairs waived in the baseline."""
    judgement = result.judgement or judge(result, fail_on, known)
    summary = Summary(threshold=fail_on, designs=dict(result.designs), judgement=judgement)
    summary.blocking = judgement.blocking
    summary.blocking_unproven = judgement.blocking_unproven
    summary.failed = {s: 0 for s in FAILING_SEVERITIES}
    summary.unproven = {s: 0 for s in SEVERITIES}
    if judgement.states is not None:
        summary.new = {s: 0 for s in FAILING_SEVERITIES}
    titles = {r.id: r.title for r in result.rules}
    by_rule: dict[str, FailedRule] = {}
    for finding in result.findings:
        if finding.status == "waived":
            summary.waived += 1
        elif finding.status == "pass":
            summary.passed += 1
        elif finding.status == "unproven":
            summary.unproven[finding.severity] += 1
            if finding.cluster:
                summary.failing_clusters.add(finding.cluster)
        elif finding.severity == NOTICE:
            summary.notices += 1  # a notice: never counted as failed
        else:
            summary.failed[finding.severity] += 1
            is_new = judgement.state(finding) != "unchanged"
            if summary.new is not None and is_new:
                summary.new[finding.severity] += 1
                summary.new_findings.append(finding)
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
    summary.tolerates = {s.cluster: s.tolerates for s in result.simulations}
    summary.tolerates_unproven = {
        s.cluster: s.tolerates_unproven
        for s in result.simulations
        if s.tolerates_unproven is not None
    }
    summary.expired_waivers = list(result.expired_waivers)
    from gpuaudit.report.actions import top_actions

    summary.top_actions = top_actions(result)[:TOP_ACTIONS]
    if judgement.states is not None:
        summary.unchanged = judgement.count("unchanged")
        # Each baseline finding open no more was open then: how it changed is its status now.
        now = {(f.rule, f.object): f.status for f in result.findings}
        changed = [change(OPEN_STATUSES[0], now.get(key)) for key in judgement.absent()]
        summary.newly_waived = changed.count("newly_waived")
        expired = [
            f
            for f in result.findings
            if judgement.state(f) == "new"
            and change(WAIVED if (f.rule, f.object) in waived_before else None, f.status)
            == "waiver_expired"
        ]
        summary.waiver_expired = len(expired)
        summary.resolved = changed.count("resolved")
    summary.history = result.history
    summary.failed_rules = sorted(
        by_rule.values(), key=lambda r: (severity_rank(r.severity), -r.objects, r.rule)
    )
    return summary
