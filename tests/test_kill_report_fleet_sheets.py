"""The fleet summary's page, Targets table and workbook, written out by hand.

Three targets: east passed, west failed (two high findings, one low), down could
not be scanned.
"""

from __future__ import annotations

import base64
import hashlib
import io
from typing import Any

import openpyxl
import pytest

from gpuaudit.report.fleet import fleet_table, merged_tables, render_fleet_html, render_fleet_xlsx
from gpuaudit.report.html import template_root
from gpuaudit.report.tables import INT, TEXT, Column
from tests.support.fleet_targets import fleet_target
from tests.support.small_report import small_result

EAST = fleet_target(
    "east",
    "PASS",
    hosts=3,
    gpus=4,
    gpu_vms=5,
    designs={"gpu-b": "C", "gpu-a": "B"},
    tolerates={"gpu-a": 1},
    reports=["east.html", "east.json"],
)
WEST = fleet_target("west", "FAIL", exit_code=1, failed_by_severity={"high": 2, "low": 1}, hosts=1)
DOWN = fleet_target("down", "ERROR", exit_code=3, error="cannot connect: refused")


def _data(*targets: dict[str, Any]) -> dict[str, Any]:
    return {
        "generator": {"name": "gpuaudit", "version": "9.9.9"},
        "scanned_at": "2026-11-30T08:50:00+00:00",
        "exit_code": max(t["exit_code"] for t in targets),
        "targets": list(targets),
    }


def test_the_targets_table() -> None:
    table = fleet_table(_data(EAST, WEST, DOWN))
    assert (table.key, table.title) == ("targets", "Targets")
    assert table.columns == [
        Column("Target", TEXT),
        Column("Server", TEXT),
        Column("Verdict", TEXT),
        Column("Exit", INT),
        Column("Critical", INT),
        Column("High", INT),
        Column("Medium", INT),
        Column("Low", INT),
        Column("Info", INT),
        Column("Hosts", INT),
        Column("GPUs", INT),
        Column("GPU VMs", INT),
        Column("Designs", TEXT),
        Column("Error", TEXT),
        Column("Reports", TEXT),
    ]
    assert table.rows == [
        [
            "east",
            "vc-east.example",
            "PASS",
            0,
            0,
            0,
            0,
            0,
            0,
            3,
            4,
            5,
            "gpu-a: B, gpu-b: C",
            "",
            "east.html east.json",
        ],
        ["west", "vc-west.example", "FAIL", 1, 0, 2, 0, 1, 0, 1, 0, 0, "", "", ""],
        [
            "down",
            "vc-down.example",
            "ERROR",
            3,
            None,
            None,
            None,
            None,
            None,
            0,
            0,
            0,
            "",
            "cannot connect: refused",
            "",
        ],
    ]


def _css_hash() -> str:
    css = template_root().joinpath("report.css").read_text(encoding="utf-8")
    return "sha256-" + base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode()


@pytest.mark.parametrize(
    ("targets", "verdict", "kind", "headline"),
    [
        ((EAST, EAST), "PASS", "pass", "2 passed, 0 with findings, 0 could not be scanned"),
        ((EAST, WEST), "FAIL", "high", "1 passed, 1 with findings, 0 could not be scanned"),
        (
            (WEST, DOWN, EAST),
            "ERROR",
            "critical",
            "1 passed, 1 with findings, 1 could not be scanned",
        ),
    ],
)
def test_the_page_leads_with_the_worst_verdict_and_the_counts(
    targets: tuple[dict[str, Any], ...], verdict: str, kind: str, headline: str
) -> None:
    page = render_fleet_html(_data(*targets))
    n = len(targets)
    assert (
        f"<title>Fleet of {n} vCenters &middot; 2026-11-30 08:50 UTC &middot; {verdict} "
        "&middot; gpuaudit</title>"
    ) in page
    assert f'<div class="verdict verdict-{kind}">' in page
    assert f'<div class="verdict-word">{verdict}</div>' in page
    assert f'<div class="verdict-headline">{headline}</div>' in page
    css = template_root().joinpath("report.css").read_text(encoding="utf-8")
    assert f"<style>{css}</style>" in page
    assert f"style-src '{_css_hash()}';" in page


def test_the_page_lists_eachfleet_target() -> None:
    page = render_fleet_html(_data(EAST, WEST, DOWN))
    # Severities in order, worst first, as column heads.
    assert "<th>critical</th><th>high</th><th>medium</th><th>low</th><th>info</th>" in page
    assert '<td colspan="9" class="error">cannot connect: refused</td>' in page
    assert "<td>gpu-a: B (N+1), gpu-b: C</td>" in page
    assert '<a href="east.html">east.html</a>' in page


def test_the_workbook_holds_the_targets_then_the_merged_sheets() -> None:
    data = _data(EAST, WEST)
    alone = openpyxl.load_workbook(io.BytesIO(render_fleet_xlsx(data)))
    assert alone.sheetnames == ["Targets", "Guide"]
    assert alone.properties.title == "gpuaudit fleet summary"
    east, west = small_result(), small_result()
    west.inventory.source = "vc-west.example"
    merged = openpyxl.load_workbook(io.BytesIO(render_fleet_xlsx(data, [east, west])))
    assert merged.sheetnames == ["Targets", "Findings", "Clusters", "Hosts", "GPUs", "VMs", "Guide"]


def test_merged_sheets_hold_each_targets_rows_target_byfleet_target() -> None:
    east, west = small_result(), small_result()
    west.inventory.source = "vc-west.example"
    tables = merged_tables([east, west])
    assert [t.key for t in tables] == ["findings", "clusters", "hosts", "gpus", "vms"]
    hosts = tables[2]
    at = hosts.column_index("vCenter")
    # tests/support/small_report.py's estate has two hosts.
    assert [r[at] for r in hosts.rows] == ["vc01.corp.example"] * 2 + ["vc-west.example"] * 2
