"""A verdict that rests on a fact gpuaudit does not know exactly is "not proven".

It is never counted as passed: the checker gives it its own status, a waiver can
accept it, --fail-on counts it, and every format, the console, the history and
diff show it as such. The expectations are written out here, from the result built
by hand below.
"""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import jsonschema
import openpyxl
import pytest

from gpuaudit.cli.console import print_summary
from gpuaudit.errors import ExitCode, exit_code
from gpuaudit.jobs import history
from gpuaudit.jobs.diff import diff_reports, format_text
from gpuaudit.jobs.outcome import summarise, verdict
from gpuaudit.jobs.scan import ScanOutcome
from gpuaudit.model.policy_file import parse_policy
from gpuaudit.report import render_html, render_json, render_junit, render_sarif, render_xlsx
from gpuaudit.report.json_report import report_schema
from gpuaudit.results import ClusterSimulation, Finding
from gpuaudit.rules import catalogue, registry
from gpuaudit.rules.registry import Context, RuleSpec, Verdict, not_proven
from gpuaudit.verdict.check import run_checks
from tests.support.builders import healthy
from tests.support.fleet_targets import fleet_target
from tests.support.small_report import small_result

TODAY = date(2027, 1, 15)
REASON = "no NVIDIA figure for grid_m60-2b4 on NVIDIA M60"


def unproven_finding(severity: str = "high") -> Finding:
    return Finding(
        rule="HA-01",
        object="gpu-c",
        object_kind="cluster",
        status="unproven",
        severity=severity,  # type: ignore[arg-type]
        message="N+0 proven; N+1 not proven",
        cluster="gpu-c",
        evidence={"not_proven": REASON},
    )


def with_unproven(*findings: Finding) -> Any:
    result = small_result()
    result.findings = [*result.findings, *findings]
    return result


# The checker


def patched(monkeypatch: pytest.MonkeyPatch, verdicts: list[Verdict]) -> None:
    def check(ctx: Context) -> Iterator[Verdict]:
        yield from verdicts

    specs = registry.registered()
    spec = next(s for s in specs if s.rule.id == "HA-02")
    monkeypatch.setattr(
        "gpuaudit.verdict.check.specs",
        lambda: [RuleSpec(spec.rule, check) if s is spec else s for s in specs],
    )


def test_a_pass_on_an_unknown_fact_is_unproven_and_a_failure_stays_a_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    patched(
        monkeypatch,
        [
            Verdict("c1", True, "fits", unproven=REASON),
            Verdict("c2", False, "does not fit", unproven=REASON),
            Verdict("c3", True, "fits"),
        ],
    )
    found = {f.object: f for f in run_checks(healthy().inv).findings if f.rule == "HA-02"}
    assert found["c1"].status == "unproven"
    assert found["c1"].evidence == {"not_proven": REASON}
    assert found["c2"].status == "fail"  # a failure on known facts is proof enough
    assert "not_proven" not in found["c2"].evidence
    assert found["c3"].status == "pass"


def test_an_outcome_not_proven_carries_its_reason() -> None:
    outcome = not_proven("fits", REASON, {"gpus": 2})
    assert (outcome.passed, outcome.unproven, outcome.evidence) == (True, REASON, {"gpus": 2})


def test_a_waiver_accepts_a_finding_not_proven_and_keeps_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    patched(monkeypatch, [Verdict("c1", True, "fits", unproven=REASON)])
    policy = parse_policy(
        "version: 1\nwaivers:\n  - {rule: HA-02, object: c1, reason: CAB-9, owner: ops,"
        " expires: 2027-06-30}\n",
        rule_ids=[r.id for r in catalogue()],
    )
    [finding] = [
        f for f in run_checks(healthy().inv, policy, today=TODAY).findings if f.rule == "HA-02"
    ]
    assert finding.status == "waived"
    assert finding.waiver is not None and finding.waiver.reason == "CAB-9"
    assert finding.evidence["not_proven"] == REASON


# The verdict and the exit status


def test_not_proven_at_or_above_fail_on_is_not_a_pass() -> None:
    result = with_unproven(unproven_finding("high"))
    result.findings = [f for f in result.findings if f.status != "fail"]
    summary = summarise(result, "high", None)
    assert summary.unproven == {"critical": 0, "high": 1, "medium": 0, "low": 0, "info": 0}
    assert (summary.blocking, summary.blocking_unproven) == (False, True)
    assert verdict(summary) == "NOT PROVEN"
    assert summary.to_dict()["verdict"] == "NOT PROVEN"
    assert exit_code(ScanOutcome(result, summary)) == ExitCode.FINDINGS
    # Below the threshold it weighs nothing, as a failure would not.
    summary = summarise(result, "critical", None)
    assert verdict(summary) == "PASS"
    assert exit_code(ScanOutcome(result, summary)) == ExitCode.OK


def test_a_failure_outranks_not_proven() -> None:
    summary = summarise(with_unproven(unproven_finding("high")), "low", None)
    assert summary.blocking and summary.blocking_unproven
    assert verdict(summary) == "FAIL"


def test_a_baseline_that_held_it_makes_it_not_new() -> None:
    result = with_unproven(unproven_finding("high"))
    result.findings = [f for f in result.findings if f.status != "fail"]
    summary = summarise(result, "high", {("HA-01", "gpu-c")})
    assert summary.unproven["high"] == 1
    assert not summary.blocking_unproven
    assert verdict(summary) == "PASS"


def test_the_console_says_not_proven(capsys: pytest.CaptureFixture[str]) -> None:
    result = with_unproven(unproven_finding("high"))
    result.findings = [f for f in result.findings if f.status != "fail"]
    print_summary(summarise(result, "high", None), [], color=False, quiet=False)
    out = capsys.readouterr().out.splitlines()
    assert "not proven: 1 (1 high)" in out
    assert out[-1] == ("NOT PROVEN: findings at or above high rest on facts not known exactly")


# Every format


def test_json_counts_it_apart_and_validates() -> None:
    doc = render_json(with_unproven(unproven_finding("high")))
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    summary = doc["summary"]
    assert summary["results"] == {"fail": 2, "unproven": 1, "waived": 2, "pass": 1}
    assert summary["unproven_by_severity"]["high"] == 1
    assert summary["verdict"] == "fail"  # a failure is still there
    [found] = [f for f in doc["findings"] if f["status"] == "unproven"]
    assert found["evidence"]["not_proven"] == REASON


def test_json_verdict_is_unproven_without_failures() -> None:
    result = with_unproven(unproven_finding("high"))
    result.findings = [f for f in result.findings if f.status != "fail"]
    summary = render_json(result)["summary"]
    assert summary["verdict"] == "unproven"
    assert summary["worst_severity"] is None


def test_junit_makes_it_an_error_of_type_not_proven() -> None:
    from tests.report.test_junit import schema_errors

    body = render_junit(with_unproven(unproven_finding("high")))
    assert schema_errors(body) == []
    root = ET.fromstring(body)
    [suite] = [s for s in root.iter("testsuite") if s.get("name") == "gpuaudit.ha"]
    [case] = [c for c in suite.iter("testcase") if c.get("name") == "cluster gpu-c"]
    [error] = list(case)
    assert error.tag == "error"
    assert error.get("type") == "not proven"
    assert error.get("message") == f"not proven: {REASON}"
    # gpuaudit.ha holds HA-01 on gpu-a (failed), gpu-b (passed) and gpu-c (not proven)
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")


def test_sarif_makes_it_an_open_result_of_level_none() -> None:
    doc = render_sarif(with_unproven(unproven_finding("high")))
    validator = jsonschema.Draft4Validator(
        json.loads(
            (Path(__file__).resolve().parents[1] / "schemas" / "sarif-schema-2.1.0.json").read_text(
                "utf-8"
            )
        )
    )
    assert list(validator.iter_errors(doc)) == []
    [result] = [r for r in doc["runs"][0]["results"] if r["properties"]["status"] == "unproven"]
    assert (result["kind"], result["level"]) == ("open", "none")
    assert result["message"]["text"] == f"Not proven: {REASON}. N+0 proven; N+1 not proven"
    assert result["properties"]["severity"] == "high"


def test_sarif_keeps_a_waived_finding_not_proven_open() -> None:
    waived = dataclasses.replace(unproven_finding("high"), status="waived")
    [result] = [
        r
        for r in render_sarif(with_unproven(waived))["runs"][0]["results"]
        if r["locations"][0]["logicalLocations"][0]["name"] == "gpu-c"
    ]
    assert (result["kind"], result["level"]) == ("open", "none")
    assert result["suppressions"][0]["kind"] == "external"


def test_the_workbook_counts_it_on_the_summary_sheet(tmp_path: Path) -> None:
    path = tmp_path / "r.xlsx"
    path.write_bytes(render_xlsx(with_unproven(unproven_finding("medium"))))
    sheet = openpyxl.load_workbook(path)["Summary"]
    rows = {(r[0], r[1]): r[2] for r in sheet.iter_rows(min_row=2, values_only=True)}
    assert rows[("Results", "Not proven")] == 1
    assert rows[("Not proven by severity", "medium")] == 1
    findings = openpyxl.load_workbook(path)["Findings"]
    header = [c.value for c in findings[1]]
    statuses = [r[header.index("Status")] for r in findings.iter_rows(min_row=2, values_only=True)]
    assert statuses.count("unproven") == 1


def test_the_html_banner_and_its_status_button() -> None:
    result = with_unproven(unproven_finding("high"))
    result.findings = [f for f in result.findings if f.status != "fail"]
    page = render_html(result)
    assert '<div class="verdict-word">NOT PROVEN</div>' in page
    assert 'class="verdict verdict-unproven"' in page
    assert (
        '<button type="button" class="fchip st-unproven" data-value="unproven" '
        'aria-pressed="true">not proven <b>1</b></button>'
    ) in page
    assert "No failed findings; 1 not proven (1 high)" in page


# Comparing scans


def test_diff_does_not_call_a_failure_that_is_now_unproven_resolved() -> None:
    old = render_json(small_result())
    now = small_result()
    now.findings = [
        dataclasses.replace(f, status="unproven", evidence={"not_proven": REASON})
        if f.rule == "HA-01" and f.object == "gpu-a"
        else f
        for f in now.findings
    ]
    diff = diff_reports(old, render_json(now))
    assert [(f["rule"], f["object"]) for f in diff.resolved] == []
    assert [
        (c["rule"], c["object"], c["before"]["status"], c["after"]["status"]) for c in diff.changed
    ] == [("HA-01", "gpu-a", "fail", "unproven")]
    assert "  ~ HA-01 gpu-a: critical -> critical, not proven (HA is off)" in format_text(diff)


def test_history_keeps_the_count_and_a_failure_now_unproven_is_not_resolved(
    tmp_path: Path,
) -> None:
    store = history.open_store(str(tmp_path / "h.sqlite"))
    first = small_result()
    history.annotate(store, first)
    history.record(store, first)
    second = small_result()
    second.checked_at = "2026-12-02T11:30:00+01:00"
    second.findings = [
        dataclasses.replace(f, status="unproven", evidence={"not_proven": REASON})
        if f.rule == "HA-01" and f.object == "gpu-a"
        else f
        for f in second.findings
    ]
    history.annotate(store, second)
    assert second.history is not None and second.history.resolved == []
    history.record(store, second)
    newest = store.scans("vc01.corp.example", limit=1, by_name=True)[0]
    assert (newest.verdict, newest.unproven) == ("fail", 1)  # X-99 still fails
    store.close()


# A fleet


def test_a_fleet_with_a_target_not_proven_says_so_and_ranks_it_below_a_failure() -> None:
    from gpuaudit.report.fleet import render_fleet_html

    data = {
        "generator": {"name": "gpuaudit", "version": "0"},
        "scanned_at": "2026-12-01T02:00:00Z",
        "exit_code": 1,
        "targets": [
            fleet_target("east", "PASS"),
            fleet_target("west", "NOT PROVEN", exit_code=1),
        ],
    }
    page = render_fleet_html(data)
    assert '<div class="verdict-word">NOT PROVEN</div>' in page
    assert "1 passed, 0 with findings, 1 not proven, 0 could not be scanned" in page
    data["targets"].append(fleet_target("north", "FAIL", exit_code=1))
    assert '<div class="verdict-word">FAIL</div>' in render_fleet_html(data)


def test_a_tolerance_not_proven_reads_as_what_is_proven_and_what_is_not() -> None:
    from gpuaudit.report.summary import tolerance

    assert tolerance(0, 1) == "N+0 (up to N+1 not proven)"
    assert tolerance(1, 3) == "N+1 (up to N+3 not proven)"
    assert tolerance(1, 1) == "N+1"
    assert tolerance(2, None) == "N+2"
    assert tolerance(None, 1) == "\u2013"


def test_the_console_names_a_cluster_whose_n_plus_one_is_not_proven(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = with_unproven(unproven_finding("high"))
    result.findings = [f for f in result.findings if f.status != "fail"]
    result.designs = {"gpu-c": "B"}
    result.simulations = [ClusterSimulation("gpu-c", tolerates=0, tolerates_unproven=1)]
    print_summary(summarise(result, "high", None), [], color=False, quiet=False)
    assert "cluster gpu-c: design B, tolerates N+0 (up to N+1 not proven)" in (
        capsys.readouterr().out.splitlines()
    )
