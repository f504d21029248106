"""The demo workbook as an auditor prints it (LibreOffice, A4) and sorts and joins it.

Expectations come from the JSON report of the same scan and from the issue's
figures written here (one page of summary, at most 20 pages in all), never from
the code that lays the workbook out.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from gpuaudit.jobs import scan as pipeline
from gpuaudit.report import render_json, render_xlsx, write_reports
from gpuaudit.results import AuditResult
from gpuaudit.vsphere import obtain
from tests.support.report_tools import xlsx_to_pdf_pages

SEVERITY_ORDER = ["critical", "high", "medium", "low", "info"]  # docs/rules.md's order
CHART_TITLE = "GPUs per cluster"


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def demo() -> AuditResult:
    return pipeline.check(pipeline.obtain(obtain.demo_source()), None, None)


@pytest.fixture(scope="module")
def doc(demo: AuditResult) -> dict[str, Any]:
    return json.loads(json.dumps(render_json(demo), default=str))


def sheet_rows(wb: openpyxl.Workbook, title: str) -> list[dict[str, Any]]:
    head, *body = wb[title].iter_rows(values_only=True)
    return [dict(zip(head, row, strict=True)) for row in body]


@pytest.mark.office
def test_demo_workbook_prints_summary_on_one_page_and_every_failed_finding_whole(
    demo: AuditResult, doc: dict[str, Any], tmp_path: Path
) -> None:
    (xlsx,) = write_reports(demo, tmp_path, ["xlsx"], "demo")
    pages = xlsx_to_pdf_pages(xlsx, tmp_path / "pdf")
    assert 1 < len(pages) <= 20

    # The summary: its verdict, changes, first top action and clusters all on page 1,
    # and none of its rows on page 2.
    first = words(pages[0])
    clusters = [s["cluster"] for s in doc["simulations"]]
    for label in ("Verdict", "FAIL", "Changes since last scan", "Top action 1", *clusters):
        assert label in first
    assert "Top action" not in pages[1] and "Changes since last scan" not in pages[1]

    # Every failed finding: its short key (the stable id's first 12 hex digits) on a
    # line with its rule and its whole object name, and its rule's title whole on that page.
    titles = {r["id"]: r["title"] for r in doc["rules"]}
    # An info finding that fails is a notice: not a failed finding, not printed.
    failed = [f for f in doc["findings"] if f["status"] == "fail" and f["severity"] != "info"]
    assert len(failed) > 20
    for f in failed:
        key = hashlib.sha256(f"{f['rule']}\0{f['object_kind']}\0{f['object']}".encode())
        key_hex = key.hexdigest()[:12]
        hits = [p for p in pages if key_hex in p]
        assert len(hits) == 1, key_hex
        (line,) = [ln for ln in hits[0].splitlines() if key_hex in ln]
        assert f["rule"] in line.split() and f["object"] in line.split(), line
        assert words(titles[f["rule"]]) in words(hits[0]), (f["rule"], hits[0])

    # The chart: its title on exactly one page, with its legend's series.
    chart = [p for p in pages if CHART_TITLE in p]
    assert len(chart) == 1
    assert "GPUs After Worst" in chart[0]


def test_findings_sort_by_severity_rank_in_severity_order(
    demo: AuditResult, doc: dict[str, Any]
) -> None:
    wb = openpyxl.load_workbook(io.BytesIO(render_xlsx(demo)))
    rows = sheet_rows(wb, "Findings")
    ranked = sorted(rows, key=lambda r: r["Severity Rank"])
    severities = [r["Severity"] for r in ranked]
    present = [s for s in SEVERITY_ORDER if s in severities]
    assert len(present) >= 3
    # Sorted by rank, the severities come in their order: each in one block.
    assert [s for i, s in enumerate(severities) if i == 0 or s != severities[i - 1]] == present
    assert {r["Severity"]: r["Severity Rank"] for r in rows} == {
        s: SEVERITY_ORDER.index(s) + 1 for s in present
    }


def test_findings_join_vms_and_hosts_by_managed_object_id(
    demo: AuditResult, doc: dict[str, Any]
) -> None:
    wb = openpyxl.load_workbook(io.BytesIO(render_xlsx(demo)))
    findings = sheet_rows(wb, "Findings")
    vms = {r["MoRef ID"]: r for r in sheet_rows(wb, "VMs")}
    hosts = {r["MoRef ID"]: r for r in sheet_rows(wb, "Hosts")}
    inv = doc["inventory"]
    vm_ids = {v["name"]: v["moref"] for v in inv["vms"]}
    host_ids = {h["name"]: h["moref"] for h in inv["hosts"]}
    uuid = inv["vcenter"]["instance_uuid"]
    joined = {"vm": 0, "host": 0, "gpu": 0}
    for f in findings:
        kind = f["Kind"]
        if kind == "vm":
            assert f["MoRef ID"] == vm_ids[f["Object"]]
            assert vms[f["MoRef ID"]]["VM"] == f["Object"]
        elif kind in ("host", "gpu"):
            host = f["Object"].split("/")[0]
            assert f["MoRef ID"] == host_ids[host]
            assert hosts[f["MoRef ID"]]["Host"] == host
        else:
            continue
        joined[kind] += 1
        assert f["vCenter UUID"] == uuid
    assert all(joined.values()), joined
    # Every sheet that names the vCenter names it one way, with its instance UUID.
    for title in ("Findings", "VMs", "Hosts", "Clusters", "GPUs", "Data Gaps"):
        for row in sheet_rows(wb, title):
            assert (row["vCenter"], row["vCenter UUID"]) == (doc["source"]["server"], uuid)
