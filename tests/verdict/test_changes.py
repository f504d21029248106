"""Changes counted honestly: a failure waived is "newly waived", never "resolved"; a
waiver expired is "waiver expired", never "new"; in `gpuaudit diff`, the history's
changes since the last scan (console and JSON) and its trend, as in the baseline summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuaudit.cli.console import since_last_scan
from gpuaudit.cli.main import main
from gpuaudit.jobs import history
from gpuaudit.jobs.diff import diff_reports, format_text
from gpuaudit.report.actions import finding_id
from gpuaudit.report.json_report import render_json
from gpuaudit.results import AuditResult, Finding
from gpuaudit.verdict.changes import change
from tests.support.history_tools import demo_result


@pytest.mark.parametrize(
    ("before", "now", "expected"),
    [
        # Open is failed or not proven; waived accepts a failure, it resolves nothing.
        ("fail", "fail", "unchanged"),
        ("fail", "unproven", "unchanged"),
        ("unproven", "fail", "unchanged"),
        ("fail", "waived", "newly_waived"),
        ("unproven", "waived", "newly_waived"),
        ("fail", "pass", "resolved"),
        ("fail", None, "resolved"),
        ("unproven", "pass", "resolved"),
        ("waived", "fail", "waiver_expired"),
        ("waived", "unproven", "waiver_expired"),
        (None, "fail", "new"),
        ("pass", "fail", "new"),
        (None, "unproven", "new"),
        ("waived", "waived", None),
        ("pass", "waived", None),
        ("waived", "pass", None),
        ("pass", "pass", None),
        (None, None, None),
    ],
)
def test_each_pair_of_statuses_is_one_change(
    before: str | None, now: str | None, expected: str | None
) -> None:
    assert change(before, now) == expected


def _failing_high(result: AuditResult) -> Finding:
    """The first failed high finding of the demo estate: the one waived in these tests."""
    return next(f for f in result.findings if f.status == "fail" and f.severity == "high")


def _waive(result: AuditResult) -> Finding:
    target = _failing_high(result)
    target.status = "waived"
    return target


def test_diff_calls_a_failure_waived_newly_waived_and_a_waiver_ended_waiver_expired() -> None:
    before = render_json(demo_result("2026-11-01T00:00:00Z"))
    waived_result = demo_result("2026-11-02T00:00:00Z")
    target = _waive(waived_result)
    waived = render_json(waived_result)
    diff = diff_reports(before, waived)
    assert [(f["rule"], f["object"]) for f in diff.newly_waived] == [(target.rule, target.object)]
    assert diff.resolved == [] and diff.new == [] and diff.waiver_expired == []
    text = format_text(diff)
    assert "Resolved: 0" in text and "Newly waived: 1" in text
    assert f"  w {target.rule} [high] {target.object}: " in text
    back = diff_reports(waived, before)  # the waiver ends: failing again
    assert [(f["rule"], f["object"]) for f in back.waiver_expired] == [(target.rule, target.object)]
    assert back.new == [] and back.resolved == [] and back.newly_waived == []
    assert "New findings: 0" in format_text(back) and "Waiver expired: 1" in format_text(back)


def test_diff_json_lists_newly_waived_and_waiver_expired(tmp_path: Path) -> None:
    before, after = demo_result("2026-11-01T00:00:00Z"), demo_result("2026-11-02T00:00:00Z")
    target = _waive(after)
    paths = []
    for name, result in (("before", before), ("after", after)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(render_json(result)))
        paths.append(str(path))
    done = CliRunner().invoke(main, ["diff", *paths, "--format", "json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert [f["object"] for f in data["newly_waived"]] == [target.object]
    assert data["resolved"] == [] and data["waiver_expired"] == []


def test_the_history_counts_a_failure_waived_as_newly_waived_and_its_expiry_apart(
    tmp_path: Path,
) -> None:
    store = history.open_store(str(tmp_path / "h.sqlite"))
    first = demo_result("2026-11-01T00:00:00Z")
    history.annotate(store, first)
    history.record(store, first)
    second = demo_result("2026-11-02T00:00:00Z")
    target = _waive(second)
    key = finding_id(target)
    history.annotate(store, second)
    assert second.history is not None
    assert [r.id for r in second.history.newly_waived] == [key]
    assert second.history.resolved == [] and second.history.new == []
    assert second.history.waiver_expired == []
    line = since_last_scan(second.history)[0]
    assert line.endswith(": 0 new, 0 resolved, 1 newly waived failed findings"), line
    summary = render_json(second)["summary"]["since_last_scan"]
    assert [r["id"] for r in summary["newly_waived"]] == [key] and summary["resolved"] == []
    history.record(store, second)
    third = demo_result("2026-11-03T00:00:00Z")  # the waiver is gone: failing again
    history.annotate(store, third)
    assert third.history is not None
    assert [r.id for r in third.history.waiver_expired] == [key]
    assert third.history.new == [] and third.history.resolved == []
    assert (
        "0 new, 0 resolved, 1 waiver expired failed findings" in since_last_scan(third.history)[0]
    )
    store.close()


def test_the_trend_counts_notices_and_waived_findings_apart_from_failed(tmp_path: Path) -> None:
    store = history.open_store(str(tmp_path / "h.sqlite"))
    first = demo_result("2026-11-01T00:00:00Z")
    history.record(store, first)
    second = demo_result("2026-11-02T00:00:00Z")
    _waive(second)
    history.annotate(store, second)
    assert second.history is not None
    # Counted from the demo estate's findings: failed info findings are notices.
    notices = sum(f.status == "fail" and f.severity == "info" for f in first.findings)
    high = sum(f.status == "fail" and f.severity == "high" for f in first.findings)
    waived = sum(f.status == "waived" for f in first.findings)
    assert notices > 0  # the demo estate has notices, so leaving them out shows
    stored, now = second.history.trend
    for point in (stored, now):
        assert "info" not in point.failed and point.notices == notices
    assert (stored.failed["high"], stored.waived) == (high, waived)
    # The waived failure leaves the failed count and joins the waived one.
    assert (now.failed["high"], now.waived) == (high - 1, waived + 1)
    store.close()
