"""gpuaudit/verdict/judgement.py: the job's one verdict, worked out by hand.

The rules, from the module's and docs/scheduling.md's words: a finding counts when it
is open (failed or not proven), at or above --fail-on and, with a baseline, new. A
failure that counts fails the job; else a finding not proven that counts makes it
unproven; else it passes. DATA-02 failed (nothing examined) fails the job whatever
--fail-on and the baseline say. Severities rank critical > high > medium > low > info.
"""

from __future__ import annotations

import pytest

from gpuaudit.inventory import Inventory
from gpuaudit.results import AuditResult, Finding, Judgement, Severity, Status
from gpuaudit.verdict.judgement import judge, judgement_of, nothing_examined


def finding(rule: str, obj: str, status: Status, severity: Severity) -> Finding:
    return Finding(rule, obj, "vm", status, severity, f"{rule} on {obj}")


def result(*findings: Finding) -> AuditResult:
    return AuditResult(Inventory(), [], list(findings), [])


def test_a_failure_at_or_above_fail_on_fails_the_job() -> None:
    audit = result(finding("GPU-03", "vm-a", "fail", "medium"))
    assert judge(audit, "medium", None) == Judgement("fail", "medium", True, False, None)
    assert judge(audit, "low", None).verdict == "fail"
    assert judge(audit, "info", None).verdict == "fail"
    # Medium is below high and critical: the job passes, the finding stays reported.
    assert judge(audit, "high", None) == Judgement("pass", "high", False, False, None)
    assert judge(audit, "critical", None).verdict == "pass"


def test_a_finding_not_proven_makes_the_job_unproven_and_a_failure_outranks_it() -> None:
    unproven = finding("VM-10", "vm-b", "unproven", "high")
    assert judge(result(unproven), "high", None) == Judgement("unproven", "high", False, True, None)
    failed = finding("HA-01", "cluster-a", "fail", "critical")
    assert judge(result(unproven, failed), "high", None) == Judgement(
        "fail", "high", True, True, None
    )
    assert judge(result(failed, unproven), "high", None).verdict == "fail"
    # Below --fail-on a finding not proven counts no more than a failure does.
    assert judge(result(unproven), "critical", None).verdict == "pass"


def test_passed_and_waived_findings_never_count() -> None:
    audit = result(
        finding("HA-01", "cluster-a", "pass", "critical"),
        finding("GPU-03", "vm-a", "waived", "critical"),
    )
    assert judge(audit, "info", None) == Judgement("pass", "info", False, False, None)


def test_a_finding_that_counts_after_ones_that_do_not_still_decides() -> None:
    counts = finding("GPU-03", "vm-z", "fail", "high")
    audit = result(
        finding("HA-01", "cluster-a", "waived", "critical"),  # not open
        finding("DS-01", "cluster-a", "fail", "low"),  # below --fail-on
        finding("VM-10", "vm-y", "fail", "high"),  # in the baseline
        counts,
    )
    assert judge(audit, "high", {("VM-10", "vm-y")}).verdict == "fail"
    assert judge(audit, "high", None).verdict == "fail"


def test_fail_on_never_passes_every_finding_but_nothing_examined() -> None:
    audit = result(
        finding("HA-01", "cluster-a", "fail", "critical"),
        finding("VM-10", "vm-b", "unproven", "critical"),
    )
    assert judge(audit, "never", None) == Judgement("pass", "never", False, False, None)
    nothing = finding("DATA-02", "vcenter.example.com", "fail", "low")
    assert judge(result(nothing), "never", None) == Judgement("fail", "never", True, False, None)
    # Above the finding's own severity, and with DATA-02 already in the baseline: still fail.
    assert judge(result(nothing), "critical", None).verdict == "fail"
    known = {("DATA-02", "vcenter.example.com")}
    assert judge(result(nothing), "critical", known).verdict == "fail"
    # DATA-02 not proven, or another rule failed, under never: a pass.
    not_shown = finding("DATA-02", "vcenter.example.com", "unproven", "critical")
    assert judge(result(not_shown), "never", None).verdict == "pass"


def test_against_a_baseline_only_new_findings_count_and_each_has_its_state() -> None:
    known = {("GPU-03", "vm-a"), ("HA-01", "cluster-a"), ("VM-10", "vm-gone")}
    audit = result(
        finding("GPU-03", "vm-a", "fail", "critical"),  # open in both: unchanged
        finding("VM-10", "vm-b", "unproven", "high"),  # new
        finding("HA-01", "cluster-a", "waived", "high"),  # waived since: no longer open
        finding("GPU-04", "vm-c", "pass", "high"),  # passed: no state
    )
    states = {
        "GPU-03 vm-a": "unchanged",
        "VM-10 vm-b": "new",
        "HA-01 cluster-a": "absent",
        "VM-10 vm-gone": "absent",
    }
    assert judge(audit, "high", known) == Judgement("unproven", "high", False, True, states)
    # The unchanged critical failure does not count; the new finding is below critical.
    assert judge(audit, "critical", known) == Judgement("pass", "critical", False, False, states)
    # An empty baseline: every open finding is new.
    assert judge(audit, "critical", set()) == Judgement(
        "fail", "critical", True, False, {"GPU-03 vm-a": "new", "VM-10 vm-b": "new"}
    )


def test_a_severity_no_catalogue_names_counts_against_the_job() -> None:
    old = Finding("GPU-99", "vm-a", "vm", "fail", "urgent", "from an old report")  # type: ignore[arg-type]
    assert judge(result(old), "critical", None).verdict == "fail"


def test_nothing_examined_gives_data_02s_message_only_when_it_failed() -> None:
    nothing = Finding("DATA-02", "vc", "vcenter", "fail", "critical", "no host was examined")
    other = Finding("HA-01", "cluster-a", "cluster", "fail", "critical", "HA is off")
    passed = Finding("DATA-02", "vc", "vcenter", "pass", "critical", "hosts were examined")
    assert nothing_examined(result(other, nothing)) == "no host was examined"
    assert nothing_examined(result(other, passed)) is None
    assert nothing_examined(result()) is None


def test_a_report_rendered_on_its_own_counts_every_open_finding() -> None:
    audit = result(finding("DS-01", "cluster-a", "unproven", "info"))
    assert judgement_of(audit) == Judgement("unproven", "info", False, True, None)
    given = Judgement("pass", "never", False, False, None)
    audit.judgement = given
    assert judgement_of(audit) is given


@pytest.mark.parametrize(
    ("verdict", "fail_on", "nothing", "new", "what", "line"),
    [
        ("fail", "high", True, "", "", "FAIL: nothing was examined (DATA-02)"),
        ("pass", "never", False, "", "", "PASS: report only (--fail-on never)"),
        ("fail", "high", False, "", "", "FAIL: findings at or above high"),
        ("fail", "medium", False, "new ", "", "FAIL: new findings at or above medium"),
        (
            "unproven",
            "high",
            False,
            "new ",
            "",
            "NOT PROVEN: findings at or above high rest on facts not known exactly",
        ),
        ("pass", "critical", False, "new ", "", "PASS: nothing new at or above critical"),
        (
            "fail",
            "high",
            False,
            "",
            "the changes introduce or make worse ",
            "FAIL: findings the changes introduce or make worse at or above high",
        ),
        (
            "pass",
            "low",
            False,
            "",
            "the changes introduce or make worse ",
            "PASS: nothing the changes introduce or make worse at or above low",
        ),
    ],
)
def test_the_verdict_line_scan_and_plan_print(
    verdict: str, fail_on: str, nothing: bool, new: str, what: str, line: str
) -> None:
    from gpuaudit.verdict.judgement import verdict_line

    assert verdict_line(verdict, fail_on, nothing, new, what) == line  # type: ignore[arg-type]


def test_the_findings_that_count_are_open_at_or_above_fail_on_and_not_in_the_baseline() -> None:
    from gpuaudit.verdict.judgement import counted

    new_high = finding("HA-05", "vm-a", "fail", "high")
    old_high = finding("HA-05", "vm-b", "fail", "high")  # open in the baseline
    new_unproven = finding("VM-10", "vm-c", "unproven", "critical")
    new_low = finding("GPU-03", "vm-d", "fail", "low")  # below --fail-on
    passed = finding("HA-01", "cluster-a", "pass", "critical")  # not open
    audit = result(new_high, old_high, new_unproven, new_low, passed)
    audit.judgement = judge(audit, "high", {("HA-05", "vm-b")})
    assert counted(audit) == [new_high, new_unproven]
    # Without a baseline every open finding at or above --fail-on counts.
    audit.judgement = judge(audit, "high", None)
    assert counted(audit) == [new_high, old_high, new_unproven]
    audit.judgement = judge(audit, "low", None)
    assert counted(audit) == [new_high, old_high, new_unproven, new_low]
    # A report-only job counts nothing.
    audit.judgement = judge(audit, "never", None)
    assert counted(audit) == []


def test_the_verdict_line_without_a_baseline_or_changes_names_neither() -> None:
    from gpuaudit.verdict.judgement import verdict_line

    assert verdict_line("fail", "high", False) == "FAIL: findings at or above high"
    assert verdict_line("pass", "high", False) == "PASS: nothing at or above high"
