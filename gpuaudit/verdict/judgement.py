"""The job's one verdict: computed once, before any report is written, and read by all.

A finding counts against the job when it is open (failed, or not proven), at or
above --fail-on, and, with a baseline, new: not open in the baseline. A failure
that counts makes the verdict fail; else a finding not proven that counts makes it
unproven; else it is pass. DATA-02 (nothing examined) fails the job whatever
--fail-on and the baseline say. The console, the exit status, every report, the
notifications and the history all state this one verdict.
"""

from __future__ import annotations

from gpuaudit.results import (
    AuditResult,
    BaselineState,
    Finding,
    Judgement,
    Verdict,
    at_or_above,
    baseline_key,
)
from gpuaudit.rules.data import NOTHING_EXAMINED

NEVER = "never"  # --fail-on never: a report-only job
# A report rendered on its own, with no job around it: every open finding counts.
EVERY_SEVERITY = "info"


def judge(result: AuditResult, fail_on: str, known: set[tuple[str, str]] | None) -> Judgement:
    """The verdict of ``result`` under ``fail_on``, against the baseline's open
    (rule, object) pairs ``known`` (None: no baseline)."""
    states: dict[str, BaselineState] | None = None if known is None else {}
    blocking = blocking_unproven = False
    for finding in result.findings:
        if not finding.open:
            continue
        is_new = known is None or (finding.rule, finding.object) not in known
        if states is not None:
            states[baseline_key(finding.rule, finding.object)] = "new" if is_new else "unchanged"
        if finding.failed and finding.rule == NOTHING_EXAMINED:
            blocking = True
        if not is_new or fail_on == NEVER or not _at_or_above(finding.severity, fail_on):
            continue
        if finding.failed:
            blocking = True
        else:
            blocking_unproven = True
    if states is not None and known is not None:
        for rule, obj in known:
            states.setdefault(baseline_key(rule, obj), "absent")
    verdict: Verdict = "fail" if blocking else "unproven" if blocking_unproven else "pass"
    return Judgement(verdict, fail_on, blocking, blocking_unproven, states)


def counted(result: AuditResult) -> list[Finding]:
    """The open findings that count against the job under the result's judgement: at
    or above its --fail-on and, against a baseline, new (DATA-02's failure apart)."""
    judgement = judgement_of(result)
    if judgement.fail_on == NEVER:
        return []
    return [
        f
        for f in result.findings
        if f.open
        and judgement.state(f) != "unchanged"
        and _at_or_above(f.severity, judgement.fail_on)
    ]


def verdict_line(
    verdict: Verdict, fail_on: str, nothing: bool, new: str = "", what: str = ""
) -> str:
    """The verdict in the words of a job's last line, which scan and plan print alike:
    ``nothing`` for DATA-02's failure; ``new`` ("new ") where a baseline decides what
    counts, ``what`` ("the changes introduce or make worse ") where a plan's changes do."""
    if nothing:
        return "FAIL: nothing was examined (DATA-02)"
    if fail_on == NEVER:
        return "PASS: report only (--fail-on never)"
    if verdict == "fail":
        return f"FAIL: {new}findings {what}at or above {fail_on}"
    if verdict == "unproven":
        return f"NOT PROVEN: findings {what}at or above {fail_on} rest on facts not known exactly"
    return f"PASS: nothing {new}{what}at or above {fail_on}"


def _at_or_above(severity: str, fail_on: str) -> bool:
    """A severity no catalogue names (an old report's) counts: a verdict is never
    quietened by what it cannot rank."""
    try:
        return at_or_above(severity, fail_on)
    except ValueError:
        return True


def nothing_examined(result: AuditResult) -> str | None:
    """DATA-02's message when the audit read no host, else None."""
    return next(
        (f.message for f in result.findings if f.rule == NOTHING_EXAMINED and f.failed), None
    )


def judgement_of(result: AuditResult) -> Judgement:
    """The verdict the job gave ``result``; for a result rendered on its own, every
    open finding counts."""
    if result.judgement is not None:
        return result.judgement
    return judge(result, EVERY_SEVERITY, None)
