"""The Excel workbook as openpyxl reads it back: sheets, types, styles, no formulas."""

from __future__ import annotations

import dataclasses
import io
import re
import zipfile
from datetime import datetime

import openpyxl
import pytest
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from gpuaudit.kubernetes.model import KubernetesReport
from gpuaudit.report import render_xlsx
from gpuaudit.report.actions import finding_id
from gpuaudit.results import RULES_VERSION
from tests.support.report_fixtures import ALL, HOSTILE, build_result, large_result

# docs/report-formats.md's order.
SHEETS = [
    "Audit Summary", "Summary", "Top Actions", "Action Findings", "Findings", "Clusters",
    "GPU Capacity", "Hosts", "GPUs", "vGPU Profiles", "VMs", "Datastores",
    "Adapters", "vMotion Network", "Failover Simulation", "Licences", "Host Licences", "Data Gaps",
    "Rules", "Guide", "About",
]  # fmt: skip
# Findings prints Key to Title at 100% on A4 landscape: the title takes the page width
# the six columns before it leave (about 130 characters), more than a fitted column.
PAGE_COLUMNS = 130


@pytest.fixture(scope="module")
def realistic() -> openpyxl.Workbook:
    return openpyxl.load_workbook(io.BytesIO(render_xlsx(ALL["realistic"]())))


@pytest.fixture(scope="module")
def hostile_bytes() -> bytes:
    return render_xlsx(ALL["hostile"]())


def header(ws: Worksheet) -> list[str]:
    return [c.value for c in ws[1]]


def column(ws: Worksheet, name: str) -> list[object]:
    index = header(ws).index(name) + 1
    return [ws.cell(row=r, column=index).value for r in range(2, ws.max_row + 1)]


def test_sheets_in_order(realistic: openpyxl.Workbook) -> None:
    assert realistic.sheetnames == SHEETS


@pytest.mark.parametrize("sheet", SHEETS)
def test_every_sheet_has_frozen_header_filter_and_widths(
    realistic: openpyxl.Workbook, sheet: str
) -> None:
    ws = realistic[sheet]
    assert ws.freeze_panes == "A2"
    last = openpyxl.utils.get_column_letter(ws.max_column)
    assert ws.auto_filter.ref == f"A1:{last}{ws.max_row}"
    for i in range(1, ws.max_column + 1):
        width = ws.column_dimensions[openpyxl.utils.get_column_letter(i)].width
        title = sheet == "Findings" and ws.cell(row=1, column=i).value == "Title"
        assert 6 <= width <= (PAGE_COLUMNS if title else 60)
        assert ws.cell(row=1, column=i).font.b
    assert all(isinstance(v, str) and v for v in header(ws))


def test_values_keep_their_types(realistic: openpyxl.Workbook) -> None:
    hosts = realistic["Hosts"]
    assert column(hosts, "# Cores")[0] == 64
    assert column(hosts, "Maintenance")[0] is False
    clusters = realistic["Clusters"]
    assert column(clusters, "HA") == [True, False, True]
    assert column(clusters, "Tolerates") == [1, 0, 0]
    assert column(clusters, "N+k") == ["N+1", "N+0", "N+0"]
    summary = realistic["Summary"]
    items = zip(column(summary, "Section"), column(summary, "Item"), strict=True)
    by_section = dict(zip(items, column(summary, "Value"), strict=True))
    values = {item: value for (_, item), value in by_section.items()}
    assert values["Scanned (UTC)"] == datetime(2026, 11, 30, 8, 49, 12)
    assert values["Verdict"] == "FAIL"
    assert values["Incomplete"] is True
    assert by_section[("Failed by severity", "critical")] == 2
    assert by_section[("Not proven by severity", "critical")] == 0
    expires = [v for v in column(realistic["Findings"], "Waiver Expires") if v is not None]
    assert expires == [datetime(2027, 3, 31)] * 2
    ws = realistic["Findings"]
    at = header(ws).index("Waiver Expires") + 1
    (cell, _) = [c for c in ws[get_column_letter(at)][1:] if c.value is not None]
    assert cell.is_date and cell.number_format == "yyyy-mm-dd"
    free = column(realistic["Datastores"], "Free %")
    assert free[0] == 25.0
    ws = realistic["Datastores"]
    assert ws.cell(row=2, column=header(ws).index("Free %") + 1).number_format == "0.0"
    about = dict(
        zip(column(realistic["About"], "Item"), column(realistic["About"], "Value"), strict=True)
    )
    assert about["Tool Version"] == "0.1.0" and about["Rules Version"] == RULES_VERSION
    assert about["Waivers Applied"] == 2 and about["Source"] == "vcsa01.corp.example"


def test_severity_and_status_are_coloured(realistic: openpyxl.Workbook) -> None:
    ws = realistic["Findings"]
    ranges = {str(cf.sqref): [r.formula[0] for r in cf.rules] for cf in ws.conditional_formatting}
    names = header(ws)
    severity_at = get_column_letter(names.index("Severity") + 1) + "2:"
    status_at = get_column_letter(names.index("Status") + 1) + "2:"
    severity = [f for k, v in ranges.items() if k.startswith(severity_at) for f in v]
    status = [f for k, v in ranges.items() if k.startswith(status_at) for f in v]
    assert sorted(severity) == sorted(
        f'"{s}"' for s in ("critical", "high", "medium", "low", "info")
    )
    assert '"fail"' in status


# What the VMs sheet's XML holds for each formula-like name of the hostile estate: the
# name itself, except that a carriage return travels as OOXML's _x000D_.
FORMULA_LIKE = {
    "vdi1": "=cmd|' /C calc'!A0",
    "vdi2": "+1+1",
    "vdi3": "-2",
    "vdi4": "@SUM(1)",
    "vdi5": "\ttab",
    "vdi6": "_x000D_cr",
}


def test_formula_like_names_are_strings_not_formulas(hostile_bytes: bytes) -> None:
    wb = openpyxl.load_workbook(io.BytesIO(hostile_bytes))
    ws = wb["VMs"]
    cells = {c.value: c for c in ws[get_column_letter(header(ws).index("VM") + 1)][1:]}
    for key, stored in FORMULA_LIKE.items():
        cell = cells[stored]
        assert cell.data_type == "s", (HOSTILE[key], cell.data_type)
        assert cell.quotePrefix, HOSTILE[key]
    # Names that look like no formula carry no quote prefix.
    assert not cells["jump-01"].quotePrefix and not cells['"quoted" name\'s'].quotePrefix
    datastores = column(wb["Datastores"], "Datastore")
    assert HOSTILE["ds_nfs"] in datastores  # =HYPERLINK(...) stays text


def test_no_sheet_holds_a_formula(hostile_bytes: bytes) -> None:
    with zipfile.ZipFile(io.BytesIO(hostile_bytes)) as z:
        sheets = [n for n in z.namelist() if n.startswith("xl/worksheets/sheet")]
        assert len(sheets) == len(SHEETS)
        for name in sheets:
            xml = z.read(name).decode("utf-8")
            assert "<f>" not in xml and "<f " not in xml, name
            assert not re.search(r'<c [^>]*t="str"', xml), name  # formula results


def test_forbidden_characters_are_replaced_visibly(hostile_bytes: bytes) -> None:
    wb = openpyxl.load_workbook(io.BytesIO(hostile_bytes))
    vms = column(wb["VMs"], "VM")
    assert "bell\\x07and\\x00nul" in vms
    hosts = column(wb["Hosts"], "Host")
    assert "ctl\\x01host\\x0bname\\x1f" in hosts
    assert "x" * 250 + "-long" in hosts


def test_ooxml_escape_sequences_in_names_stay_literal() -> None:
    """OOXML reads "_x0041_" in a cell as "A": a name that contains it is stored with its
    underscore escaped (_x005F_), so Excel shows the name as it is."""
    result = build_result({"vdi1": "vm_x0041_1", "c1": "cl_x00e9_prod", "vdi2": "_x1_"})
    wb = openpyxl.load_workbook(io.BytesIO(render_xlsx(result)))
    assert column(wb["VMs"], "VM")[:2] == ["vm_x005F_x0041_1", "_x1_"]  # _x1_ escapes nothing
    assert column(wb["Clusters"], "Cluster")[0] == "cl_x005F_x00e9_prod"
    assert column(wb["Hosts"], "Cluster")[0] == "cl_x005F_x00e9_prod"


def test_large_estate_workbook_holds_every_row() -> None:
    # Its speed is the benchmark's to measure (docs/performance.md), not a test's.
    data = render_xlsx(large_result())
    wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True)
    assert sum(1 for _ in wb["VMs"].iter_rows()) == 10_001
    assert sum(1 for _ in wb["Findings"].iter_rows()) == 30_001


def test_documented_columns_match_the_workbook() -> None:
    from pathlib import Path

    from gpuaudit.report.tables import TEXT
    from gpuaudit.report.workbook import audit_tables

    doc = (Path(__file__).resolve().parent.parent / "docs" / "report-formats.md").read_text(
        encoding="utf-8"
    )
    for table in audit_tables(ALL["realistic"](), 1):
        columns = ", ".join(
            c.name if c.type == TEXT else f"{c.name} ({c.type})" for c in table.columns
        )
        assert f"- **{table.title}**: {columns}\n" in doc, table.title


def test_guide_explains_every_sheet_and_column_of_its_workbook() -> None:
    """Read back from the workbook: each sheet has a (sheet) row and each of its columns a
    row, in the workbook's order, with a meaning; the Kubernetes sheets and Age (days)
    appear only in a workbook that has them."""
    plain = ALL["realistic"]()
    first = plain.findings[0]
    with_extras = dataclasses.replace(
        plain,
        kubernetes=[KubernetesReport("k1", "k1.json")],
        first_seen={finding_id(first): "2026-11-01T00:00:00Z"},
    )
    for result in (plain, with_extras):
        wb = openpyxl.load_workbook(io.BytesIO(render_xlsx(result)))
        guide = wb["Guide"]
        assert header(guide) == ["Sheet", "Column", "Type", "Meaning"]
        listed = [
            (sheet, col)
            for sheet, col in zip(column(guide, "Sheet"), column(guide, "Column"), strict=True)
        ]
        meanings = column(guide, "Meaning")
        want = []
        for title in wb.sheetnames:
            want.append((title, "(sheet)"))
            want += [(title, name) for name in header(wb[title])]
        assert listed == want
        assert all(isinstance(m, str) and len(m) > 3 for m in meanings), [
            pair for pair, m in zip(listed, meanings, strict=True) if not m
        ]
        has_extras = result is with_extras
        assert ("K8s Nodes", "(sheet)") in listed if has_extras else "K8s Nodes" not in wb
        assert (("Findings", "Age (days)") in listed) == has_extras
    # Types as docs/report-formats.md gives them.
    types = dict(zip(listed, column(guide, "Type"), strict=True))
    assert types[("Findings", "Severity Rank")] == "int"
    assert types[("Findings", "First Seen")] == "date"
    assert types[("Clusters", "HA")] == "bool"
    assert types[("Findings", "Title")] is None  # text: no type written
