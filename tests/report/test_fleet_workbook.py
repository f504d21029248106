"""The fleet workbook: the targets' Findings, Clusters, Hosts, GPUs and VMs merged, by vCenter.

Expected rows come from each target's JSON report, never from the workbook's writer.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from click.testing import CliRunner

from gpuaudit.cli.main import main
from gpuaudit.errors import ExitCode
from gpuaudit.report import render_json, render_xlsx
from gpuaudit.report.fleet import render_fleet_xlsx
from gpuaudit.results import AuditResult
from tests.conftest import unused_port
from tests.support.fleet_targets import fleet_target
from tests.support.report_fixtures import build_result, realistic_result
from tests.support.report_tools import xlsx_to_csv

MERGED = ["Findings", "Clusters", "Hosts", "GPUs", "VMs"]


def two_estates() -> list[AuditResult]:
    east = realistic_result()
    east.inventory.source = "vc-east.example"
    west = build_result()
    west.inventory.source = "vc-west.example"
    return [east, west]


def expected_counts(doc: dict[str, Any]) -> dict[str, int]:
    inv = doc["inventory"]
    return {
        "Findings": len(doc["findings"]),
        "Clusters": len(doc["summary"]["clusters"]),
        "Hosts": len(inv["hosts"]),
        "GPUs": sum(len(h["gpus"]) for h in inv["hosts"]),
        "VMs": len(inv["vms"]),
    }


def sheet_rows(wb: openpyxl.Workbook, title: str) -> list[dict[str, Any]]:
    head, *body = wb[title].iter_rows(values_only=True)
    return [dict(zip(head, row, strict=True)) for row in body]


def test_fleet_workbook_merges_the_targets_sheets_by_vcenter() -> None:
    results = two_estates()
    data = {
        "targets": [
            fleet_target("east", "FAIL", exit_code=1),
            fleet_target("west", "FAIL", exit_code=1),
            fleet_target("down", "ERROR", exit_code=3, error="connection refused"),
        ]
    }
    wb = openpyxl.load_workbook(io.BytesIO(render_fleet_xlsx(data, results)))
    assert wb.sheetnames == ["Targets", *MERGED, "Guide"]
    for title in MERGED:
        rows = sheet_rows(wb, title)
        assert "vCenter" in [c.value for c in wb[title][1]], title
        for result in results:
            doc = render_json(result)
            server = doc["source"]["server"]
            mine = [r for r in rows if r["vCenter"] == server]
            assert len(mine) == expected_counts(doc)[title], (title, server)
        assert {r["vCenter"] for r in rows} <= {"vc-east.example", "vc-west.example"}
    vms = sheet_rows(wb, "VMs")
    west_vms = {v["name"] for v in render_json(results[1])["inventory"]["vms"]}
    assert {r["VM"] for r in vms if r["vCenter"] == "vc-west.example"} == west_vms
    assert all(isinstance(r["Memory MB"], int) for r in vms)
    findings = sheet_rows(wb, "Findings")
    assert all(len(r["ID"]) == 64 for r in findings)


def test_fleet_guide_explains_every_sheet_and_column_of_its_workbook() -> None:
    """Read back from the fleet workbook, with and without the history's ages: each sheet
    has a (sheet) row and each of its columns a row, in the workbook's order, with a
    meaning; a merged sheet's columns mean what the single-scan Guide says they do."""
    results = two_estates()
    run = {"targets": [fleet_target("east", "FAIL", exit_code=1)]}
    aged = {
        "source": "history",
        "targets": [
            fleet_target("east", "FAIL", checked_at="2026-11-30T08:49:12Z", age_seconds=3700)
        ],
    }
    for data, audited in ((run, results), (aged, []), (run, [])):
        wb = openpyxl.load_workbook(io.BytesIO(render_fleet_xlsx(data, audited)))
        assert wb.sheetnames[-1] == "Guide"
        rows = sheet_rows(wb, "Guide")
        listed = [(r["Sheet"], r["Column"]) for r in rows]
        want = []
        for title in wb.sheetnames:
            want.append((title, "(sheet)"))
            want += [(title, c.value) for c in wb[title][1]]
        assert listed == want
        empty = [pair for pair, r in zip(listed, rows, strict=True) if len(r["Meaning"] or "") < 4]
        assert empty == []
        if data is aged:
            assert ("Targets", "Age (s)") in listed
    # The single-scan workbook's Guide gives a merged column the same meaning.
    single = openpyxl.load_workbook(io.BytesIO(render_xlsx(results[0])))
    meanings = {(r["Sheet"], r["Column"]): r["Meaning"] for r in sheet_rows(single, "Guide")}
    fleet = openpyxl.load_workbook(io.BytesIO(render_fleet_xlsx(run, results)))
    for r in sheet_rows(fleet, "Guide"):
        if r["Sheet"] in MERGED and r["Column"] != "(sheet)":
            assert r["Meaning"] == meanings[(r["Sheet"], r["Column"])], r


@pytest.mark.office
def test_libreoffice_reads_the_merged_sheets(tmp_path: Path) -> None:
    results = two_estates()
    data = {
        "targets": [
            fleet_target("east", "FAIL", exit_code=1),
            fleet_target("west", "FAIL", exit_code=1),
        ]
    }
    path = tmp_path / "fleet.xlsx"
    path.write_bytes(render_fleet_xlsx(data, results))
    sheets = xlsx_to_csv(path, tmp_path / "csv")
    assert sorted(sheets) == sorted(["Targets", *MERGED, "Guide"])
    for title in MERGED:
        head, *rows = sheets[title]
        at = head.index("vCenter")
        for result in results:
            doc = render_json(result)
            server = doc["source"]["server"]
            assert sum(r[at] == server for r in rows) == expected_counts(doc)[title], title


@pytest.mark.live
def test_fleet_scan_writes_one_merged_workbook(lab_factory: Any, tmp_path: Path) -> None:
    labs = [lab_factory("scenario-b"), lab_factory("scenario-c")]
    down = f"http://127.0.0.1:{unused_port()}/sdk"
    targets = "targets:\n"
    for i, lab in enumerate(labs):
        targets += (
            f"  - {{name: lab{i}, server: '{lab.url}', user: {lab.user}, password_env: LAB_PW}}\n"
        )
    targets += f"  - {{name: down, server: '{down}', user: audit, password_env: LAB_PW}}\n"
    path = tmp_path / "targets.yaml"
    path.write_text(targets, encoding="utf-8")
    out = tmp_path / "reports"
    run = CliRunner().invoke(
        main,
        ["scan", "--targets", str(path), "--output-dir", str(out), "--format", "json"],
        env={"LAB_PW": labs[0].password},
    )
    assert run.exit_code == ExitCode.CONNECT, run.output
    wb = openpyxl.load_workbook(next(out.glob("gpuaudit-fleet-*.xlsx")))
    assert wb.sheetnames == ["Targets", *MERGED, "Guide"]
    for name in ("lab0", "lab1"):
        doc = json.loads(next(out.glob(f"gpuaudit-{name}-*.json")).read_text(encoding="utf-8"))
        server = doc["source"]["server"]
        for title in MERGED:
            mine = [r for r in sheet_rows(wb, title) if r["vCenter"] == server]
            assert len(mine) == expected_counts(doc)[title], (name, title)
        vms = {r["VM"]: r for r in sheet_rows(wb, "VMs") if r["vCenter"] == server}
        for vm in doc["inventory"]["vms"]:
            assert vms[vm["name"]]["MoRef ID"] == vm["moref"]
            assert vms[vm["name"]]["BIOS UUID"] == vm["bios_uuid"] != ""
