"""The fleet summary's page, Targets sheet and workbook, every value written out by hand.

Three targets as `gpuaudit scan --targets` records them (gpuaudit.jobs.fleet.fleet_json):
one that passed, one with findings, one that could not be scanned. Two such fleets:
EAST, WEST and DOWN, and SHEETS_EAST, SHEETS_WEST and SHEETS_DOWN (east passed,
west failed with two high findings and one low, down could not be scanned), the
latter also for the merged sheets.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
from typing import Any

import openpyxl
import pytest

from gpuaudit.report.fleet import fleet_table, merged_tables, render_fleet_html, render_fleet_xlsx
from gpuaudit.report.html import template_root
from gpuaudit.report.tables import INT, TEXT, Column, Table
from tests.support.fleet_targets import fleet_target
from tests.support.small_report import small_result

EAST = fleet_target(
    "east",
    "PASS",
    hosts=4,
    gpus=8,
    gpu_vms=6,
    designs={"gpu-b": "ha-reserved", "gpu-a": "n-plus-one"},
    reports=["gpuaudit-east.html", "gpuaudit-east.json"],
)


WEST = fleet_target(
    "west",
    "FAIL",
    exit_code=1,
    failed_by_severity={"high": 2, "low": 1},
    hosts=2,
    gpus=2,
    gpu_vms=1,
    designs={"gpu-c": "none"},
)


DOWN = fleet_target("down", "ERROR", exit_code=3, error="connection refused")


def fleet(*targets: dict[str, Any]) -> dict[str, Any]:
    return {
        "generator": {"name": "gpuaudit", "version": "0"},
        "scanned_at": "2026-12-01T02:39:07+00:00",
        "exit_code": max((t["exit_code"] for t in targets), default=0),
        "targets": list(targets),
    }


def test_targets_sheet_one_row_per_target_with_blank_counts_for_one_not_scanned() -> None:
    text, num = "text", "int"
    east = ("east", "vc-east.example", "PASS", 0)
    west = ("west", "vc-west.example", "FAIL", 1)
    down = ("down", "vc-down.example", "ERROR", 3)
    reports = "gpuaudit-east.html gpuaudit-east.json"
    columns = [Column("Target", text), Column("Server", text), Column("Verdict", text)]
    columns += [Column("Exit", num), Column("Critical", num), Column("High", num)]
    columns += [Column("Medium", num), Column("Low", num), Column("Info", num)]
    columns += [Column("Hosts", num), Column("GPUs", num), Column("GPU VMs", num)]
    columns += [Column("Designs", text), Column("Error", text), Column("Reports", text)]
    assert fleet_table(fleet(EAST, WEST, DOWN)) == Table(
        "targets",
        "Targets",
        columns,
        [
            [
                *east,
                *(0, 0, 0, 0, 0),
                4,
                8,
                6,
                "gpu-a: n-plus-one, gpu-b: ha-reserved",
                "",
                reports,
            ],
            [*west, *(0, 2, 0, 1, 0), 2, 2, 1, "gpu-c: none", "", ""],
            [*down, *(None,) * 5, 0, 0, 0, "", "connection refused", ""],
        ],
    )


def verdict_box(page: str) -> tuple[str, str, str]:
    match = re.search(
        r'<div class="verdict verdict-([a-z]+)">\s*<div class="verdict-word">([A-Z]+)</div>.*?'
        r'<div class="verdict-headline">([^<]*)</div>',
        page,
        re.S,
    )
    assert match, "no verdict box"
    return match.group(1), match.group(2), match.group(3)


def test_the_fleet_s_verdict_is_its_worst_target_s_and_counts_each_kind() -> None:
    assert verdict_box(render_fleet_html(fleet(EAST))) == (
        "pass",
        "PASS",
        "1 passed, 0 with findings, 0 could not be scanned",
    )
    assert verdict_box(render_fleet_html(fleet(EAST, WEST, WEST))) == (
        "high",
        "FAIL",
        "1 passed, 2 with findings, 0 could not be scanned",
    )
    assert verdict_box(render_fleet_html(fleet(WEST, DOWN, EAST))) == (
        "critical",
        "ERROR",
        "1 passed, 1 with findings, 1 could not be scanned",
    )
    assert "&middot; FAIL &middot; gpuaudit</title>" in render_fleet_html(fleet(WEST, EAST))


def test_the_page_carries_the_report_style_under_its_content_security_policy_hash() -> None:
    css = template_root().joinpath("report.css").read_text(encoding="utf-8")
    # CSP's hash-source: "sha256-" and the base64 of the style text's SHA-256.
    digest = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode("ascii")
    page = render_fleet_html(fleet(EAST))
    assert f"<style>{css}</style>" in page
    assert f"style-src 'sha256-{digest}';" in page


def test_the_fleet_workbook_is_titled_and_leads_with_the_targets_sheet() -> None:
    book = openpyxl.load_workbook(io.BytesIO(render_fleet_xlsx(fleet(EAST, DOWN))))
    assert book.properties.title == "gpuaudit fleet summary"
    assert book.sheetnames == ["Targets", "Guide"]
    assert [c.value for c in book["Targets"][1]][:4] == ["Target", "Server", "Verdict", "Exit"]


SHEETS_EAST = fleet_target(
    "east",
    "PASS",
    hosts=3,
    gpus=4,
    gpu_vms=5,
    designs={"gpu-b": "C", "gpu-a": "B"},
    tolerates={"gpu-a": 1},
    reports=["east.html", "east.json"],
)


SHEETS_WEST = fleet_target(
    "west", "FAIL", exit_code=1, failed_by_severity={"high": 2, "low": 1}, hosts=1
)


SHEETS_DOWN = fleet_target("down", "ERROR", exit_code=3, error="cannot connect: refused")


def _data(*targets: dict[str, Any]) -> dict[str, Any]:
    return {
        "generator": {"name": "gpuaudit", "version": "9.9.9"},
        "scanned_at": "2026-11-30T08:50:00+00:00",
        "exit_code": max(t["exit_code"] for t in targets),
        "targets": list(targets),
    }


def test_the_targets_table() -> None:
    table = fleet_table(_data(SHEETS_EAST, SHEETS_WEST, SHEETS_DOWN))
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
        (
            (SHEETS_EAST, SHEETS_EAST),
            "PASS",
            "pass",
            "2 passed, 0 with findings, 0 could not be scanned",
        ),
        (
            (SHEETS_EAST, SHEETS_WEST),
            "FAIL",
            "high",
            "1 passed, 1 with findings, 0 could not be scanned",
        ),
        (
            (SHEETS_WEST, SHEETS_DOWN, SHEETS_EAST),
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
    page = render_fleet_html(_data(SHEETS_EAST, SHEETS_WEST, SHEETS_DOWN))
    # Severities in order, worst first, as column heads.
    assert "<th>critical</th><th>high</th><th>medium</th><th>low</th><th>info</th>" in page
    assert '<td colspan="9" class="error">cannot connect: refused</td>' in page
    assert "<td>gpu-a: B (N+1), gpu-b: C</td>" in page
    assert '<a href="east.html">east.html</a>' in page


def test_the_workbook_holds_the_targets_then_the_merged_sheets() -> None:
    data = _data(SHEETS_EAST, SHEETS_WEST)
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
