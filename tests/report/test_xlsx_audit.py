"""The workbook as auditors use it: top actions first, joinable rows, stable ids, print, chart.

Expectations come from the JSON report, the lab's scenario or are written out here,
never from the code that writes the workbook.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import time
import zipfile
from datetime import date
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from click.testing import CliRunner
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from gpuaudit.cli.main import main
from gpuaudit.report import render_json, render_xlsx
from gpuaudit.results import AuditResult
from tests.conftest import require_tool
from tests.lab.expected import uuid_from
from tests.support.large_estate import large_estate_result
from tests.support.report_fixtures import build_result, realistic_result
from tests.support.report_tools import xlsx_to_csv

SEVERITIES = ("critical", "high", "medium", "low", "info")


def rows(ws: Worksheet) -> list[dict[str, Any]]:
    head, *body = ws.iter_rows(values_only=True)
    return [dict(zip(head, row, strict=True)) for row in body]


def stable_id(rule: str, kind: str, obj: str) -> str:
    """The SARIF fingerprint: SHA-256 of rule, object kind and object, NUL-separated."""
    return hashlib.sha256(f"{rule}\0{kind}\0{obj}".encode()).hexdigest()


@pytest.fixture(scope="module")
def realistic() -> tuple[dict[str, Any], openpyxl.Workbook]:
    result = realistic_result()
    doc = render_json(result)
    return doc, openpyxl.load_workbook(io.BytesIO(render_xlsx(result)))


def test_top_actions_come_first_after_the_summaries(
    realistic: tuple[dict[str, Any], openpyxl.Workbook],
) -> None:
    doc, wb = realistic
    assert wb.sheetnames[:5] == [
        "Audit Summary",
        "Summary",
        "Top Actions",
        "Action Findings",
        "Findings",
    ]
    failed = [f for f in doc["findings"] if f["status"] == "fail"]
    per_rule: dict[str, list[dict[str, Any]]] = {}
    for f in failed:
        per_rule.setdefault(f["rule"], []).append(f)
    actions = rows(wb["Top Actions"])
    assert [a["Rank"] for a in actions] == list(range(1, len(per_rule) + 1))
    assert {a["Rule"]: a["# Objects"] for a in actions} == {
        rule: len(fs) for rule, fs in per_rule.items()
    }
    ranks = [SEVERITIES.index(a["Severity"]) for a in actions]
    assert ranks == sorted(ranks)  # worst first
    remediation = {r["id"]: r["remediation"] for r in doc["rules"]}
    # Action Findings: each action's findings one a row, under its rank, with the
    # stable id and its first 12 hex digits as the key.
    listed = rows(wb["Action Findings"])
    rank_of = {a["Rank"]: a["Rule"] for a in actions}
    for a in actions:
        assert a["Remediation"] == remediation[a["Rule"]]
        assert sorted(a["Objects"].split(", ")) == sorted(f["object"] for f in per_rule[a["Rule"]])
        ids = {stable_id(f["rule"], f["object_kind"], f["object"]) for f in per_rule[a["Rule"]]}
        mine = [r for r in listed if r["Rank"] == a["Rank"]]
        assert {r["ID"] for r in mine} == ids and len(mine) == len(ids)
    for r in listed:
        assert r["Rule"] == rank_of[r["Rank"]]
        assert r["Key"] == r["ID"][:12]


def test_every_finding_row_has_its_stable_id(
    realistic: tuple[dict[str, Any], openpyxl.Workbook],
) -> None:
    doc, wb = realistic
    findings = rows(wb["Findings"])
    assert len(findings) == len(doc["findings"])
    by_id = {r["ID"]: r for r in findings}
    for f in doc["findings"]:
        row = by_id[stable_id(f["rule"], f["object_kind"], f["object"])]
        notice = f["status"] == "fail" and f["severity"] == "info"  # never a failed finding
        status = "notice" if notice else f["status"]
        assert (row["Rule"], row["Object"], row["Status"]) == (f["rule"], f["object"], status)
        assert row["vCenter"] == doc["source"]["server"]
        assert row["First Seen"] is None  # no history, no baseline
        assert not str(row["Evidence"] or "").startswith("{")


def test_evidence_reads_as_key_value_lines() -> None:
    result = build_result()
    result.findings[0].evidence = {
        "spare": {"gpus": 2, "hosts": ["esx-1", "esx-2"]},
        "ok": True,
        "owner": None,
        "unplaced": [{"vm": "vdi-01", "reason": "no slot"}],
        "empty": {},
    }
    wb = openpyxl.load_workbook(io.BytesIO(render_xlsx(result)))
    f = result.findings[0]
    (row,) = [
        r for r in rows(wb["Findings"]) if r["ID"] == stable_id(f.rule, f.object_kind, f.object)
    ]
    evidence = row["Evidence"]
    assert evidence == (
        "empty: (none)\n"
        "ok: yes\n"
        "owner: (none)\n"
        "spare.gpus: 2\n"
        "spare.hosts: esx-1, esx-2\n"
        "unplaced.0.reason: no slot\n"
        "unplaced.0.vm: vdi-01"
    )


def test_clusters_count_every_severity(
    realistic: tuple[dict[str, Any], openpyxl.Workbook],
) -> None:
    doc, wb = realistic
    morefs = {c["name"]: c["moref"] for c in doc["inventory"]["clusters"]}
    failed = [f for f in doc["findings"] if f["status"] == "fail"]
    clusters = rows(wb["Clusters"])
    assert clusters
    for row in clusters:
        assert row["MoRef ID"] == morefs[row["Cluster"]]
        for severity in SEVERITIES:
            want = sum(f["cluster"] == row["Cluster"] and f["severity"] == severity for f in failed)
            assert row[severity.capitalize()] == want, (row["Cluster"], severity)


def test_top_actions_print_fitting_the_width_and_wrap(
    realistic: tuple[dict[str, Any], openpyxl.Workbook],
) -> None:
    _doc, wb = realistic
    ws = wb["Top Actions"]
    assert ws.page_setup.orientation == "landscape"
    assert ws.sheet_properties.pageSetUpPr.fitToPage is True
    assert ws.page_setup.fitToWidth == 1 and ws.page_setup.fitToHeight == 0
    assert ws.print_title_rows == "$1:$1"
    head = [c.value for c in ws[1]]
    column = head.index("Remediation") + 1
    cells = [ws.cell(row=r, column=column) for r in range(2, ws.max_row + 1)]
    assert cells and all(c.alignment.wrap_text for c in cells)
    letter = get_column_letter(column)
    assert ws.column_dimensions[letter].width <= 60


def test_findings_print_the_failed_and_not_proven_rows_key_to_title_at_full_size(
    realistic: tuple[dict[str, Any], openpyxl.Workbook],
) -> None:
    """docs/report-formats.md: the print area is the leading failed and not-proven rows
    and the first seven columns (Key to Title), at 100%, the header on every page."""
    doc, wb = realistic
    ws = wb["Findings"]
    assert ws.page_setup.orientation == "landscape"
    assert not (ws.sheet_properties.pageSetUpPr and ws.sheet_properties.pageSetUpPr.fitToPage)
    assert ws.page_setup.scale in (None, 100)
    assert ws.print_title_rows == "$1:$1"
    head = [c.value for c in ws[1]]
    assert head[:7] == ["Key", "Severity", "Status", "Rule", "Object", "Cluster", "Title"]
    open_count = sum(
        f["status"] == "unproven" or (f["status"] == "fail" and f["severity"] != "info")
        for f in doc["findings"]
    )
    assert open_count
    assert ws.print_area == f"'Findings'!$A$1:$G${open_count + 1}"
    title = head.index("Title") + 1
    cells = [ws.cell(row=r, column=title) for r in range(2, open_count + 2)]
    assert all(c.alignment.wrap_text for c in cells)


def test_capacity_chart_plots_gpus_now_and_after_the_worst_failure(
    realistic: tuple[dict[str, Any], openpyxl.Workbook],
) -> None:
    doc, wb = realistic
    ws = wb["GPU Capacity"]
    sims = [s for s in doc["simulations"] if s["capacity"]]
    table = rows(ws)
    assert [r["Cluster"] for r in table] == [s["cluster"] for s in sims]
    for row, sim in zip(table, sims, strict=True):
        assert row["GPUs"] == len(sim["capacity"])
        assert row["GPUs After Worst"] == len(sim["after_worst"])
        assert row["GPUs After Worst"] < row["GPUs"]
    assert_capacity_chart(ws, len(sims))


def assert_capacity_chart(ws: Worksheet, clusters: int) -> None:
    (chart,) = ws._charts
    refs = [s.val.numRef.f for s in chart.series]
    last = clusters + 1
    assert refs == [f"'GPU Capacity'!$C$2:$C${last}", f"'GPU Capacity'!$D$2:$D${last}"]
    categories = chart.series[0].cat
    assert (categories.strRef or categories.numRef).f == f"'GPU Capacity'!$A$2:$A${last}"


@pytest.mark.office
def test_libreoffice_keeps_the_chart_and_the_columns(tmp_path: Path) -> None:
    soffice = require_tool("soffice", "libreoffice")
    result = realistic_result()
    source = tmp_path / "in" / "report.xlsx"
    source.parent.mkdir()
    source.write_bytes(render_xlsx(result))
    profile = tmp_path / "profile"
    subprocess.run(
        [
            soffice,
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--norestore",
            "--convert-to",
            "xlsx:Calc MS Excel 2007 XML",
            "--outdir",
            str(tmp_path / "out"),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    wb = openpyxl.load_workbook(tmp_path / "out" / "report.xlsx")
    sims = [s for s in result.simulations if s.capacity]
    (chart,) = wb["GPU Capacity"]._charts
    refs = [s.val.numRef.f for s in chart.series]
    assert [re.sub(r"[$']", "", r) for r in refs] == [
        f"GPU Capacity!C2:C{len(sims) + 1}",
        f"GPU Capacity!D2:D{len(sims) + 1}",
    ]
    sheets = xlsx_to_csv(source, tmp_path / "csv")
    head = sheets["Findings"][0]
    assert head[:2] == ["Key", "Severity"] and head[-1] == "ID"
    doc = render_json(result)
    ids = [r[-1] for r in sheets["Findings"][1:]]
    assert sorted(ids) == sorted(
        stable_id(f["rule"], f["object_kind"], f["object"]) for f in doc["findings"]
    )
    # Failed, then not proven, notices, waived and passed (failures first).
    statuses = [r[head.index("Status")] for r in sheets["Findings"][1:]]
    order = ["fail", "unproven", "notice", "waived", "pass"]
    assert statuses == sorted(statuses, key=order.index)


def scan(tmp_path: Path, out: str, *extra: str) -> Path:
    folder = tmp_path / out
    run = CliRunner().invoke(
        main, ["scan", "--demo", "--format", "xlsx,json", "--output-dir", str(folder), *extra]
    )
    assert run.exit_code in (0, 1), run.output
    return folder


def test_vms_join_by_moref_and_uuids_the_lab_serves(tmp_path: Path) -> None:
    folder = scan(tmp_path, "one")
    wb = openpyxl.load_workbook(next(folder.glob("*.xlsx")))
    vms = rows(wb["VMs"])
    assert vms
    for vm in vms:
        assert vm["vCenter"] == "demo"
        assert re.fullmatch(r"vm-\d+", vm["MoRef ID"]), vm["MoRef ID"]
        assert vm["BIOS UUID"] == uuid_from("vm-bios", vm["VM"])
        assert vm["Instance UUID"] == uuid_from("vm-instance", vm["VM"])
    hosts = rows(wb["Hosts"])
    assert all(re.fullmatch(r"host-\d+", h["MoRef ID"]) for h in hosts)
    host_ids = {h["Host"]: h["MoRef ID"] for h in hosts}
    for gpu in rows(wb["GPUs"]):
        assert gpu["Host MoRef ID"] == host_ids[gpu["Host"]]


def test_first_seen_is_carried_forward_from_a_baseline(tmp_path: Path) -> None:
    first = scan(tmp_path, "first", "--no-history")
    report = next(first.glob("*.json"))
    doc = json.loads(report.read_text(encoding="utf-8"))
    failed = [f for f in doc["findings"] if f["status"] == "fail"]
    assert len(failed) >= 3
    dated, undated, dropped = failed[:3]
    dated["first_seen"] = "2025-11-03"
    doc["source"]["checked_at"] = "2026-01-10T08:00:00Z"
    doc["findings"].remove(dropped)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(doc), encoding="utf-8")

    second = scan(tmp_path, "second", "--baseline", str(baseline), "--no-history")
    wb = openpyxl.load_workbook(next(second.glob("*.xlsx")))
    seen = {r["ID"]: r["First Seen"] for r in rows(wb["Findings"])}

    def key(f: dict[str, Any]) -> str:
        return stable_id(f["rule"], f["object_kind"], f["object"])

    carried = json.loads(next(second.glob("*.json")).read_text(encoding="utf-8"))
    today = date.fromisoformat(carried["source"]["checked_at"][:10])
    assert seen[key(dated)].date() == date(2025, 11, 3)
    assert seen[key(undated)].date() == date(2026, 1, 10)
    assert seen[key(dropped)].date() == today  # new against the baseline: first seen now
    passed = [f for f in doc["findings"] if f["status"] == "pass"]
    assert passed and all(seen[key(f)] is None for f in passed)
    # The new JSON report carries the dates, for the next scan to take them from.
    by_id = {key(f): (f.get("first_seen") or "")[:10] for f in carried["findings"]}
    assert by_id[key(dated)] == "2025-11-03"
    assert by_id[key(undated)] == "2026-01-10"
    assert by_id[key(dropped)] == today.isoformat()


@pytest.fixture(scope="session")
def large_estate() -> AuditResult:
    """The large estate (64 clusters x 16 hosts x 4 GPUs, 10,240 VMs), checked offline."""
    return large_estate_result()


def test_large_estate_workbook_prints_and_charts_every_cluster(large_estate: AuditResult) -> None:
    started = time.monotonic()
    data = render_xlsx(large_estate)
    elapsed = time.monotonic() - started
    wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True)
    capacity = rows(wb["GPU Capacity"])
    assert len(capacity) == 64
    assert all(r["GPUs"] == 64 and r["GPUs After Worst"] == 60 for r in capacity)
    vms = rows(wb["VMs"])
    assert len(vms) == 10_240
    assert len({v["Instance UUID"] for v in vms}) == 10_240
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        chart = z.read("xl/charts/chart1.xml").decode()
        findings = z.read(f"xl/worksheets/sheet{wb.sheetnames.index('Findings') + 1}.xml")
        workbook_xml = z.read("xl/workbook.xml")
    assert "'GPU Capacity'!$C$2:$C$65" in chart
    assert "'GPU Capacity'!$D$2:$D$65" in chart
    # Findings prints its failed and not-proven rows only, at 100%, with page breaks.
    assert b"fitToWidth" not in findings and b'orientation="landscape"' in findings
    assert b"<rowBreaks" in findings
    open_count = sum(
        f.unproven or (f.failed and f.severity != "info") for f in large_estate.findings
    )
    assert open_count < len(large_estate.findings)
    assert f"'Findings'!$A$1:$G${open_count + 1}".encode() in workbook_xml
    last = len(large_estate.findings) + 1  # the filter covers every finding
    assert re.search(rb'<autoFilter ref="A1:[A-Z]+%d"' % last, findings)
    assert elapsed < 60, f"{elapsed:.1f} s"
