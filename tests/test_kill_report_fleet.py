"""The fleet summary's page, Targets sheet and workbook, every value written out by hand.

Three targets as `gpuaudit scan --targets` records them (gpuaudit.jobs.fleet.fleet_json):
one that passed, one with findings, one that could not be scanned.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
from typing import Any

import openpyxl

from gpuaudit.report.fleet import fleet_table, render_fleet_html, render_fleet_xlsx
from gpuaudit.report.html import template_root
from gpuaudit.report.tables import Column, Table
from tests.support.fleet_targets import fleet_target

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
