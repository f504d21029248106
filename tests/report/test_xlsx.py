"""The Excel workbook as openpyxl reads it back: sheets, types, styles, no formulas.

Also workbooks of small hand-built tables, read back with openpyxl and as their sheet
XML: what docs/report-formats.md ("Excel workbook") and xlsx.py's docstring promise,
a frozen, bold header row, an autofilter over the data, widths fitted to the
contents (header length plus 3 for the filter button, at least 6, at most 60; 20
for times, 12 for dates, 48 for the wrapped columns of the printed sheets),
landscape printing with the header on every page of a printed sheet, Top Actions
fitted to the page width, typed values (naive UTC times without microseconds, 0.0 for
floats of a float column), strings never formulas and quote-prefixed when a
spreadsheet would read them as one, and severity and status cells coloured as in
the HTML report.
"""

from __future__ import annotations

import builtins
import dataclasses
import io
import re
import zipfile
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import openpyxl
import pytest
from openpyxl.cell._writer import write_cell as openpyxl_write_cell
from openpyxl.utils import get_column_letter
from openpyxl.worksheet._writer import WorksheetWriter
from openpyxl.worksheet.worksheet import Worksheet

from gpuaudit.kubernetes.model import KubernetesReport
from gpuaudit.report import render_xlsx, xlsx
from gpuaudit.report.actions import finding_id
from gpuaudit.report.json_report import REPORT_SCHEMA_VERSION
from gpuaudit.report.tables import Column, Table
from gpuaudit.report.workbook import audit_tables
from gpuaudit.report.xlsx import MAX_CELL, cell_text, excel_value, stored_text, tables_xlsx
from gpuaudit.results import RULES_VERSION
from tests.support.report_fixtures import ALL, HOSTILE, build_result, large_result
from tests.support.small_report import small_result
from tests.support.zones import local_zone

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
    data = render_xlsx(result)
    strings = _xml(data, "xl/sharedStrings.xml")
    assert "<si><t>vm_x005F_x0041_1</t></si>" in strings
    assert "<si><t>_x1_</t></si>" in strings  # _x1_ escapes nothing
    assert "<si><t>cl_x005F_x00e9_prod</t></si>" in strings
    assert "vm_x0041_1<" not in strings and "cl_x00e9_prod<" not in strings
    # openpyxl reads a shared string as Excel shows it, its escapes undone: the name.
    wb = openpyxl.load_workbook(io.BytesIO(data))
    assert column(wb["VMs"], "VM")[:2] == ["vm_x0041_1", "_x1_"]
    assert column(wb["Clusters"], "Cluster")[0] == "cl_x00e9_prod"
    assert column(wb["Hosts"], "Cluster")[0] == "cl_x00e9_prod"


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

    doc = (Path(__file__).resolve().parents[2] / "docs" / "report-formats.md").read_text(
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


FINDINGS = Table(
    "findings",
    "Findings",
    [
        Column("Status"),
        Column("Severity"),
        Column("Title"),
        Column("N", "int"),
        Column("Pct", "float"),
        Column("OK", "bool"),
        Column("When", "datetime"),
        Column("Day", "date"),
    ],
    [
        [
            "fail",
            "critical",
            "=1+1",
            3,
            12.5,
            True,
            datetime(2026, 12, 1, 11, 30, 5, 999, tzinfo=timezone(timedelta(hours=1))),
            date(2026, 11, 1),
        ],
        ["pass", None, " pad ", 0, None, False, datetime(2026, 1, 2, 3, 4, 5, 6), None],
        ["_x0041_", "a<b&c>", "\rcr", -4, 7, None, None, None],
    ],
)


# Styles, in the order the sheet registers them: 1 the wrapped text, 2 the header, 3
# wrapped and quote-prefixed, 4 "0.0", 5 a time, 6 a date. Excel counts days from
# 1899-12-30: 2026-11-01 is day 46327, 2026-12-01 day 46357, 2026-01-02 day 46024;
# 10:30:05 is 37805 / 86400 of a day, 03:04:05 11045 / 86400.
# The header row, written by openpyxl in its style (2), its texts inline.
FINDINGS_HEADER_XML = (
    '<row r="1">'
    '<c r="A1" s="2" t="inlineStr"><is><t>Status</t></is></c>'
    '<c r="B1" s="2" t="inlineStr"><is><t>Severity</t></is></c>'
    '<c r="C1" s="2" t="inlineStr"><is><t>Title</t></is></c>'
    '<c r="D1" s="2" t="inlineStr"><is><t>N</t></is></c>'
    '<c r="E1" s="2" t="inlineStr"><is><t>Pct</t></is></c>'
    '<c r="F1" s="2" t="inlineStr"><is><t>OK</t></is></c>'
    '<c r="G1" s="2" t="inlineStr"><is><t>When</t></is></c>'
    '<c r="H1" s="2" t="inlineStr"><is><t>Day</t></is></c>'
    "</row>"
)
# The sheet's cells as written: each text an index into the workbook's shared strings
# (SHARED_STRINGS, in the order first met), but for quote-prefixed texts and the
# header, which openpyxl writes inline.
FINDINGS_XML = (
    "<sheetData>"
    + FINDINGS_HEADER_XML
    + (
        '<row r="2">'
        '<c r="A2" t="s"><v>0</v></c>'
        '<c r="B2" t="s"><v>1</v></c>'
        '<c r="C2" s="3" t="inlineStr"><is><t>=1+1</t></is></c>'
        '<c r="D2" t="n"><v>3</v></c>'
        '<c r="E2" s="4" t="n"><v>12.5</v></c>'
        '<c r="F2" t="b"><v>1</v></c>'
        '<c r="G2" s="5" t="n"><v>46357.43755787037</v></c>'
        '<c r="H2" s="6" t="n"><v>46327</v></c>'
        "</row>"
        '<row r="3">'
        '<c r="A3" t="s"><v>2</v></c>'
        '<c r="C3" s="1" t="s"><v>3</v></c>'
        '<c r="D3" t="n"><v>0</v></c>'
        '<c r="F3" t="b"><v>0</v></c>'
        '<c r="G3" s="5" t="n"><v>46024.12783564815</v></c>'
        "</row>"
        '<row r="4">'
        '<c r="A4" t="s"><v>4</v></c>'
        '<c r="B4" t="s"><v>5</v></c>'
        '<c r="C4" s="3" t="inlineStr"><is><t>_x000D_cr</t></is></c>'
        '<c r="D4" t="n"><v>-4</v></c>'
        '<c r="E4" t="n"><v>7</v></c>'
        "</row>"
        "</sheetData>"
    )
)
SHARED_STRINGS = (
    "<?xml version='1.0' encoding='UTF-8'?>\n"
    '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" uniqueCount="6">'
    "<si><t>fail</t></si>"
    "<si><t>critical</t></si>"
    "<si><t>pass</t></si>"
    '<si><t xml:space="preserve"> pad </t></si>'
    "<si><t>_x005F_x0041_</t></si>"
    "<si><t>a&lt;b&amp;c&gt;</t></si>"
    "</sst>"
)


def _inline(sheet: str, strings: str) -> str:
    """``sheet`` with each shared string written into its cell, as openpyxl writes it."""
    texts = re.findall(r"<si>(.*?)</si>", strings)
    return re.sub(
        r' t="s"><v>(\d+)</v>', lambda m: f' t="inlineStr"><is>{texts[int(m[1])]}</is>', sheet
    )


# The same cells as openpyxl writes them, every text inline (with lxml, every row goes
# through openpyxl).
FINDINGS_XML_INLINE = _inline(FINDINGS_XML, SHARED_STRINGS)


def _book(tables: list[Table], title: str = "T") -> bytes:
    return tables_xlsx(tables, title)


def _xml(data: bytes, name: str) -> str:
    return zipfile.ZipFile(io.BytesIO(data)).read(name).decode()


def _sheet_data(data: bytes, sheet: int = 1) -> str:
    text = _xml(data, f"xl/worksheets/sheet{sheet}.xml")
    match = re.search(r"<sheetData>.*</sheetData>|<sheetData />", text)
    assert match
    return match.group()


def _load(data: bytes) -> openpyxl.Workbook:
    return openpyxl.load_workbook(io.BytesIO(data))


def _widths(ws: Worksheet) -> list[float]:
    return [ws.column_dimensions[c].width for c in "ABCDEFGH"[: ws.max_column]]


def test_findings_sheet_xml_cell_by_cell() -> None:
    data = _book([FINDINGS])
    assert _sheet_data(data) == FINDINGS_XML
    assert _xml(data, "xl/sharedStrings.xml") == SHARED_STRINGS


def test_shared_strings_part_is_declared() -> None:
    # ECMA-376 Part 1, 12.3.15: the part has its content type and the workbook a
    # relationship of the sharedStrings type to it.
    data = _book([FINDINGS])
    types = _xml(data, "[Content_Types].xml")
    assert (
        '<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml" />'
    ) in types
    rels = _xml(data, "xl/_rels/workbook.xml.rels")
    found = re.findall(r'<Relationship [^>]*Target="sharedStrings.xml"[^>]*/>', rels)
    assert len(found) == 1
    assert (
        'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings"'
        in found[0]
    )
    ids = re.findall(r'Id="([^"]+)"', rels)
    assert len(ids) == len(set(ids)) == 4  # the sheet, styles, theme, shared strings


def test_a_workbook_without_plain_text_has_no_shared_strings() -> None:
    table = Table("t", "T", [Column("N", "int")], [[1], [2]])
    with zipfile.ZipFile(io.BytesIO(_book([table]))) as z:
        names = z.namelist()
        rels = z.read("xl/_rels/workbook.xml.rels").decode()
    assert "xl/sharedStrings.xml" not in names and "sharedStrings" not in rels
    assert _load(_book([table]))["T"]["A2"].value == 1


def test_findings_sheet_read_back() -> None:
    wb = _load(_book([FINDINGS], "gpuaudit report: vc\x01"))
    assert (wb.properties.creator, wb.properties.title) == ("gpuaudit", "gpuaudit report: vc\\x01")
    assert wb.sheetnames == ["Findings"]
    ws = wb["Findings"]
    assert [list(r) for r in ws.iter_rows(values_only=True)] == [
        ["Status", "Severity", "Title", "N", "Pct", "OK", "When", "Day"],
        [
            "fail",
            "critical",
            "=1+1",
            3,
            12.5,
            True,
            datetime(2026, 12, 1, 10, 30, 5),
            datetime(2026, 11, 1),
        ],
        ["pass", None, " pad ", 0, None, False, datetime(2026, 1, 2, 3, 4, 5), None],
        # openpyxl undoes the escape of a shared string (as Excel does) and reads an
        # inline one, written by openpyxl for a quote-prefixed text, as it is stored.
        ["_x0041_", "a<b&c>", "_x000D_cr", -4, 7, None, None, None],
    ]
    formats = [[c.number_format for c in row] for row in ws.iter_rows(min_row=2)]
    assert formats == [
        [
            "General",
            "General",
            "General",
            "General",
            "0.0",
            "General",
            "yyyy-mm-dd hh:mm:ss",
            "yyyy-mm-dd",
        ],
        ["General"] * 6 + ["yyyy-mm-dd hh:mm:ss", "General"],
        ["General"] * 8,
    ]
    assert [[c.data_type for c in row] for row in ws.iter_rows(min_row=2, max_col=3)] == [
        ["s", "s", "s"],
        ["s", "n", "s"],
        ["s", "s", "s"],
    ]
    quoted = [[c.quotePrefix for c in row] for row in ws.iter_rows(min_row=2, max_col=3)]
    assert quoted == [[False, False, True], [False, False, False], [False, False, True]]
    # Title is one of the Findings sheet's printed columns: it wraps at the top.
    wrapped = [[c.alignment.wrap_text for c in row] for row in ws.iter_rows(min_row=2)]
    assert wrapped == [[None, None, True, None, None, None, None, None]] * 2 + [
        [None, None, True] + [None] * 5
    ]
    assert [ws[f"C{r}"].alignment.vertical for r in (2, 3, 4)] == ["top"] * 3
    for cell in ws[1]:
        assert (cell.font.b, cell.font.color.rgb) == (True, "00FFFFFF")
        assert (cell.fill.fill_type, cell.fill.fgColor.rgb) == ("solid", "001F3A5F")
        assert (cell.border.bottom.style, cell.border.bottom.color.rgb) == ("thin", "000F1F33")
        assert (cell.alignment.vertical, cell.alignment.wrap_text) == ("center", None)
        assert cell.data_type == "s"
    assert ws.freeze_panes == "A2"
    assert ws.auto_filter.ref == "A1:H4"
    # Status 6 + 3; Severity 8 + 3; Title wraps: 48; N, Pct, OK at least 6; time 20; date 12.
    assert _widths(ws) == [9, 11, 48, 6, 6, 6, 20, 12]
    assert ws.page_setup.orientation == "landscape"
    assert ws.print_title_rows == "$1:$1"
    assert ws.sheet_properties.pageSetUpPr.fitToPage is True
    assert (ws.page_setup.fitToWidth, ws.page_setup.fitToHeight) == (1, 0)


def _rules(ws: Worksheet) -> list[tuple[str, str, str, str, str, bool]]:
    out = []
    for cf in ws.conditional_formatting:
        for rule in cf.rules:
            out.append(
                (
                    str(cf.sqref),
                    rule.operator,
                    rule.formula[0],
                    rule.dxf.fill.bgColor.rgb,
                    rule.dxf.font.color.rgb,
                    bool(rule.dxf.font.b),
                )
            )
    return out


def test_status_and_severity_colours() -> None:
    ws = _load(_book([FINDINGS]))["Findings"]
    # The HTML report's colours: background, then text; critical and fail in bold.
    assert _rules(ws) == [
        ("A2:A4", "equal", '"fail"', "00F8D7DA", "00842029", True),
        # an info finding that fails is a notice: the colour of low, never red
        ("A2:A4", "equal", '"notice"', "00DBEAFE", "001E3A8A", False),
        ("A2:A4", "equal", '"unproven"', "00FFE8CC", "007A3E00", False),
        ("A2:A4", "equal", '"waived"', "00E9ECEF", "00495057", False),
        ("A2:A4", "equal", '"pass"', "00D1E7DD", "000F5132", False),
        ("A2:A4", "equal", '"FAIL"', "00F8D7DA", "00842029", True),
        ("A2:A4", "equal", '"NOT PROVEN"', "00FFE8CC", "007A3E00", False),
        ("A2:A4", "equal", '"PASS"', "00D1E7DD", "000F5132", False),
        ("B2:B4", "equal", '"critical"', "007F1D1D", "00FFFFFF", True),
        ("B2:B4", "equal", '"high"', "00F8D7DA", "00842029", False),
        ("B2:B4", "equal", '"medium"', "00FFF3CD", "00664D03", False),
        ("B2:B4", "equal", '"low"', "00DBEAFE", "001E3A8A", False),
        ("B2:B4", "equal", '"info"', "00E9ECEF", "00343A40", False),
    ]
    for cf in ws.conditional_formatting:
        for rule in cf.rules:
            assert (rule.type, rule.dxf.fill.fill_type) == ("cellIs", "solid")
            assert rule.dxf.fill.fgColor.rgb == rule.dxf.fill.bgColor.rgb


def test_coloured_columns_of_the_other_sheets() -> None:
    summary = Table("summary", "Summary", [Column("Item"), Column("Value")], [])
    targets = Table("targets", "Targets", [Column("vCenter"), Column("Verdict")], [["a", "PASS"]])
    actions = Table("top-actions", "Top Actions", [Column("Rank", "int"), Column("Severity")], [])
    wb = _load(_book([summary, targets, actions]))
    # An empty sheet still colours its first data row.
    assert [(r[0], r[2], r[5]) for r in _rules(wb["Summary"])] == [
        ("B2", '"fail"', True),
        ("B2", '"notice"', False),
        ("B2", '"unproven"', False),
        ("B2", '"waived"', False),
        ("B2", '"pass"', False),
        ("B2", '"FAIL"', True),
        ("B2", '"NOT PROVEN"', False),
        ("B2", '"PASS"', False),
        ("B2", '"critical"', True),
        ("B2", '"high"', False),
        ("B2", '"medium"', False),
        ("B2", '"low"', False),
        ("B2", '"info"', False),
    ]
    assert _rules(wb["Targets"]) == [
        ("B2", "equal", '"PASS"', "00D1E7DD", "000F5132", False),
        ("B2", "equal", '"FAIL"', "00F8D7DA", "00842029", True),
        ("B2", "equal", '"NOT PROVEN"', "00FFE8CC", "007A3E00", False),
        ("B2", "equal", '"ERROR"', "007F1D1D", "00FFFFFF", False),
    ]
    assert [(r[0], r[2]) for r in _rules(wb["Top Actions"])] == [
        ("B2", '"critical"'),
        ("B2", '"high"'),
        ("B2", '"medium"'),
        ("B2", '"low"'),
        ("B2", '"info"'),
    ]
    assert wb["Summary"].auto_filter.ref == "A1:B1"
    assert wb["Targets"].auto_filter.ref == "A1:B2"
    # Top Actions prints to the page width; so does Summary, a sheet for filtering,
    # once a reader clears its print area (docs/report-formats.md).
    assert wb["Top Actions"].sheet_properties.pageSetUpPr.fitToPage is True
    assert wb["Summary"].sheet_properties.pageSetUpPr.fitToPage is True
    assert (wb["Summary"].page_setup.fitToWidth, wb["Summary"].page_setup.fitToHeight) == (1, 0)
    assert wb["Summary"].page_setup.orientation == "landscape"
    # Summary is not among the printed sheets (the Audit Summary is): its print area
    # is one empty cell below the table, and it repeats no header row.
    assert wb["Summary"].print_area == "'Summary'!$A$3"
    assert wb["Summary"].print_title_rows is None
    assert wb["Top Actions"].print_title_rows == "$1:$1"
    assert _widths(wb["Top Actions"]) == [7, 11]


def test_plain_sheet_widths_and_no_wrapping() -> None:
    long = "x" * 70
    table = Table(
        "hosts",
        "A sheet title longer than 31 characters",
        [
            Column("Host"),
            Column("Title"),
            Column("Flag", "bool"),
            Column("Count", "int"),
            Column("When", "datetime"),
            Column("Day", "date"),
            Column("Note"),
        ],
        [["esx-01.corp.example", long, True, 123456789, None, None, None]]
        + [["h", "t", False, 1, None, None, None]] * 498
        + [["h", "t", False, 1, None, None, "the 500th row"]]
        + [["h", "t", False, 1, None, None, "beyond the first 500 rows"]],
    )
    ws = _load(_book([table]))["A sheet title longer than 31 ch"]
    # Host: 19 + 1; Title is not printed here: 70 + 1, cut to 60; Flag: booleans do not
    # count, "Flag" + 3 is 7; Count 9 digits + 1; Note: the 500th row's 13 + 1, the
    # 501st is not measured.
    assert _widths(ws) == [20, 60, 7, 10, 20, 12, 14]
    assert ws["B2"].alignment.wrap_text is None
    assert ws.auto_filter.ref == "A1:G502"
    assert ws.max_row == 502
    # Hosts is for filtering: it prints nothing (an empty cell two rows below its 501
    # rows and header) and repeats no header row, and once its print area is cleared
    # it prints as wide as the page.
    assert ws.print_area == "'A sheet title longer than 31 ch'!$A$504"
    assert ws.print_title_rows is None
    assert ws.sheet_properties.pageSetUpPr.fitToPage is True
    assert (ws.page_setup.fitToWidth, ws.page_setup.fitToHeight) == (1, 0)
    assert ws.conditional_formatting._cf_rules == {}


def test_capacity_sheet_chart() -> None:
    columns = [
        Column("Cluster"),
        Column("Worst Host"),
        Column("GPUs", "int"),
        Column("GPUs After Worst", "int"),
    ]
    table = Table("gpu-capacity", "GPU Capacity", columns, [["a", "h", 2, 1], ["b", None, 3, None]])
    data = _book([table])
    ws = _load(data)["GPU Capacity"]
    (chart,) = ws._charts
    assert (chart.type, chart.grouping) == ("bar", "clustered")
    assert chart.title.tx.rich.p[0].r[0].t == (
        "GPUs per cluster: now and after the worst host failure"
    )
    assert chart.x_axis.title.tx.rich.p[0].r[0].t == "Cluster"
    assert chart.y_axis.title.tx.rich.p[0].r[0].t == "GPUs"
    assert [s.tx.strRef.f for s in chart.series] == ["'GPU Capacity'!C1", "'GPU Capacity'!D1"]
    assert [s.val.numRef.f for s in chart.series] == [
        "'GPU Capacity'!$C$2:$C$3",
        "'GPU Capacity'!$D$2:$D$3",
    ]
    assert [s.cat.numRef.f for s in chart.series] == ["'GPU Capacity'!$A$2:$A$3"] * 2
    # Anchored at F2, two columns right of the last; 18 cm wide, at least 7.5 cm high.
    drawing = _xml(data, "xl/drawings/drawing1.xml")
    assert "<from><col>5</col><colOff>0</colOff><row>1</row><rowOff>0</rowOff></from>" in drawing
    assert '<ext cx="6480000" cy="2700000" />' in drawing


def test_capacity_chart_grows_with_clusters_and_is_left_out_when_empty() -> None:
    columns = [Column("Cluster"), Column("W"), Column("GPUs", "int"), Column("After", "int")]
    rows: list[list] = [[f"c{i}", None, 1, 1] for i in range(10)]
    data = _book(
        [
            Table("gpu-capacity", "GPU Capacity", columns, rows),
            Table("gpu-capacity", "Empty", columns, []),
            Table("other", "Other", columns, rows),
        ]
    )
    wb = _load(data)
    (chart,) = wb["GPU Capacity"]._charts
    assert [s.val.numRef.f for s in chart.series] == [
        "'GPU Capacity'!$C$2:$C$11",
        "'GPU Capacity'!$D$2:$D$11",
    ]
    assert wb["Empty"]._charts == [] and wb["Other"]._charts == []
    # 0.6 cm per cluster and 3 more: 9 cm.
    assert '<ext cx="6480000" cy="3240000" />' in _xml(data, "xl/drawings/drawing1.xml")


def test_render_xlsx_of_a_small_result() -> None:
    result = small_result()
    wb = _load(render_xlsx(result))
    tables = audit_tables(result, REPORT_SCHEMA_VERSION)
    assert wb.sheetnames == [t.title for t in tables]
    assert wb.properties.title == "gpuaudit report: vc01.corp.example"
    about = wb["About"]
    assert ["Report Schema", REPORT_SCHEMA_VERSION] in [
        list(r) for r in about.iter_rows(values_only=True)
    ]


def test_text_helpers() -> None:
    assert cell_text("a\x00b\x1f") == "a\\x00b\\x1f"
    assert cell_text("x" * MAX_CELL) == "x" * 32767
    assert cell_text("x" * 32768) == "x" * 32766 + "\u2026"
    # The limit holds for the stored text: an escaped "_" takes 7 characters, and
    # the text is cut before an escape would be split.
    assert cell_text("_x0041_" * 5000) == "_x0041_" * 2520 + "_x0041\u2026"
    assert stored_text("\r" * 40000) == "_x000D_" * 4680 + "\u2026"
    assert stored_text("_x0041_ and _x12G4_ and _xABCD") == "_x005F_x0041_ and _x12G4_ and _xABCD"
    assert stored_text("a\r\nb") == "a_x000D_\nb"
    assert excel_value("_x0041_") == "_x005F_x0041_"
    aware = datetime(2026, 12, 1, 0, 30, 0, 5, tzinfo=timezone(timedelta(hours=2)))
    assert excel_value(aware) == datetime(2026, 11, 30, 22, 30)
    assert excel_value(aware).tzinfo is None  # type: ignore[union-attr]
    assert excel_value(datetime(2026, 1, 1, 1, 1, 1, 1, tzinfo=UTC)) == datetime(
        2026, 1, 1, 1, 1, 1
    )
    assert excel_value(date(2026, 1, 1)) == date(2026, 1, 1)
    assert excel_value(3) == 3 and excel_value(None) is None and excel_value(True) is True


def test_long_and_empty_text_cells() -> None:
    # 5000 "_x0041_": each is stored escaped, 13 characters, and the stored text,
    # ellipsis included, holds at most 32767. 2520 escaped sequences take 32760;
    # the next 6 characters, "_x0041" (no longer an escape), and the ellipsis fill
    # the rest.
    long = "_x0041_" * 5000
    table = Table("t", "T", [Column(c) for c in "ABCDE"], [])
    table.rows = [[long, "", "\t", "x ", " "], ["-1", "@x", "+", "\r", "a"]]
    stored = "_x005F_x0041_" * 2520 + "_x0041\u2026"
    data = _book([table])
    assert _sheet_data(data).endswith(
        '<row r="2"><c r="A2" t="s"><v>0</v></c>'
        '<c r="B2" t="inlineStr" />'  # empty: as openpyxl writes it, not a shared string
        '<c r="C2" s="2" t="inlineStr"><is><t>\t</t></is></c>'
        '<c r="D2" t="s"><v>1</v></c>'
        '<c r="E2" t="s"><v>2</v></c></row>'
        '<row r="3"><c r="A3" s="2" t="inlineStr"><is><t>-1</t></is></c>'
        '<c r="B3" s="2" t="inlineStr"><is><t>@x</t></is></c>'
        '<c r="C3" s="2" t="inlineStr"><is><t>+</t></is></c>'
        '<c r="D3" s="2" t="inlineStr"><is><t>_x000D_</t></is></c>'
        '<c r="E3" t="s"><v>3</v></c></row></sheetData>'
    )
    assert _xml(data, "xl/sharedStrings.xml").endswith(
        f"<si><t>{stored}</t></si>"
        '<si><t xml:space="preserve">x </t></si>'
        # Whitespace alone is written as openpyxl writes it: without xml:space.
        "<si><t> </t></si>"
        "<si><t>a</t></si></sst>"
    )
    ws = _load(data)["T"]
    shown = "_x0041_" * 2520 + "_x0041\u2026"  # the stored text, its escapes undone
    assert [list(r) for r in ws.iter_rows(min_row=2, values_only=True)] == [
        [shown, None, "\t", "x ", " "],
        ["-1", "@x", "+", "_x000D_", "a"],
    ]
    assert [[c.quotePrefix for c in row] for row in ws.iter_rows(min_row=2)] == [
        [False, False, True, False, False],
        [True, True, True, True, False],
    ]


def _no_text_writer(obj: object, name: str, *default: object) -> object:
    """getattr, as if the XML writer were lxml's, which has no ``_file``."""
    if name == "_file":
        if default:
            return default[0]
        raise AttributeError(name)
    return builtins.getattr(obj, name, *default)


def test_every_row_through_openpyxl_writes_the_same_sheet() -> None:
    # With lxml every row goes through openpyxl: the same cells, each text inline, and
    # no shared strings.
    xlsx.getattr = _no_text_writer  # type: ignore[attr-defined]
    try:
        data = _book([FINDINGS])
    finally:
        del xlsx.getattr  # type: ignore[attr-defined]
    assert _sheet_data(data) == FINDINGS_XML_INLINE
    assert "xl/sharedStrings.xml" not in zipfile.ZipFile(io.BytesIO(data)).namelist()


def test_floats_outside_float_columns_and_formula_headers() -> None:
    table = Table(
        "top-actions",
        "Top Actions",
        [Column("Severity"), Column("=Sum"), Column("Title"), Column("N", "int")],
        [["low", 1.25, 2.5, 3.75]],
    )
    data = _book([table])
    # A float in another column is a plain number, unstyled even in a wrapped column.
    assert _sheet_data(data) == (
        "<sheetData>"
        '<row r="1">'
        '<c r="A1" s="2" t="inlineStr"><is><t>Severity</t></is></c>'
        '<c r="B1" s="2" t="inlineStr"><is><t>=Sum</t></is></c>'
        '<c r="C1" s="2" t="inlineStr"><is><t>Title</t></is></c>'
        '<c r="D1" s="2" t="inlineStr"><is><t>N</t></is></c>'
        "</row>"
        '<row r="2">'
        '<c r="A2" t="s"><v>0</v></c>'
        '<c r="B2" t="n"><v>1.25</v></c>'
        '<c r="C2" t="n"><v>2.5</v></c>'
        '<c r="D2" t="n"><v>3.75</v></c>'
        "</row>"
        "</sheetData>"
    )
    ws = _load(data)["Top Actions"]
    assert (ws["B1"].value, ws["B1"].data_type) == ("=Sum", "s")
    assert [c.number_format for c in ws[2]] == ["General"] * 4
    assert (ws["C2"].alignment.wrap_text, ws["B2"].alignment.wrap_text) == (None, None)


def test_times_are_utc_whatever_the_local_zone() -> None:
    aware = datetime(2026, 12, 1, 0, 30, tzinfo=timezone(timedelta(hours=2)))
    with local_zone("EAT-3"):  # three hours east of UTC
        assert excel_value(aware) == datetime(2026, 11, 30, 22, 30)


def test_plain_cells_skip_openpyxl_and_each_text_is_escaped_once() -> None:
    # The workbook's speed rests on this (docs/performance.md): plain strings, integers
    # and booleans are written as text, never cell by cell through openpyxl, and a
    # string met again, in its sheet or another, reuses its shared string.
    calls: dict[str, list] = {"rows": [], "cells": [], "texts": []}
    writer = WorksheetWriter.write_row
    add = xlsx.SharedStrings.add

    def write_row(self: WorksheetWriter, xf: object, row: list, row_idx: int) -> None:
        calls["rows"].append(row_idx)
        writer(self, xf, row, row_idx)

    def write_cell(*args: object) -> None:
        calls["cells"].append(args)

    def added(self: xlsx.SharedStrings, value: str) -> int:
        calls["texts"].append(value)
        return add(self, value)

    table = Table(
        "t",
        "T",
        [Column("A"), Column("N", "int"), Column("B", "bool")],
        [["x", 1, True], ["x", 2, False], ["y", 3, None]],
    )
    other = Table("u", "U", [Column("A")], [["y"], ["z"]])
    WorksheetWriter.write_row = write_row  # type: ignore[method-assign]
    xlsx.write_cell = write_cell  # type: ignore[assignment]
    xlsx.SharedStrings.add = added  # type: ignore[method-assign]
    try:
        data = _book([table, other])
    finally:
        WorksheetWriter.write_row = writer  # type: ignore[method-assign]
        xlsx.write_cell = openpyxl_write_cell
        xlsx.SharedStrings.add = add  # type: ignore[method-assign]
    assert calls == {"rows": [1, 1], "cells": [], "texts": ["x", "y", "z"]}
    assert _sheet_data(data).endswith(
        '<row r="2"><c r="A2" t="s"><v>0</v></c>'
        '<c r="B2" t="n"><v>1</v></c><c r="C2" t="b"><v>1</v></c></row>'
        '<row r="3"><c r="A3" t="s"><v>0</v></c>'
        '<c r="B3" t="n"><v>2</v></c><c r="C3" t="b"><v>0</v></c></row>'
        '<row r="4"><c r="A4" t="s"><v>1</v></c>'
        '<c r="B4" t="n"><v>3</v></c></row></sheetData>'
    )
    assert _sheet_data(data, 2).endswith(
        '<row r="2"><c r="A2" t="s"><v>1</v></c></row>'
        '<row r="3"><c r="A3" t="s"><v>2</v></c></row></sheetData>'
    )
    assert _xml(data, "xl/sharedStrings.xml").endswith(
        'uniqueCount="3"><si><t>x</t></si><si><t>y</t></si><si><t>z</t></si></sst>'
    )


def test_an_empty_text_in_a_wrapped_column_keeps_its_style() -> None:
    # Rules wraps its Title: an empty title is an empty cell of the wrapping style (1),
    # as a title with text is, written inline as openpyxl writes an empty text.
    table = Table("rules", "Rules", [Column("Title"), Column("Rule")], [["", ""], ["t", "h"]])
    assert _sheet_data(_book([table])).endswith(
        '<row r="2"><c r="A2" s="1" t="inlineStr" /><c r="B2" t="inlineStr" /></row>'
        '<row r="3"><c r="A3" s="1" t="s"><v>0</v></c><c r="B3" t="s"><v>1</v></c></row>'
        "</sheetData>"
    )


def test_shared_strings_past_one_spooled_batch_keep_their_order() -> None:
    # More distinct texts than one batch of the spool holds: each cell still reads back
    # its own text, and the table lists each text once, in the order first met.
    texts = [f"host-{n:05d}" for n in range(10_000)]
    table = Table("t", "T", [Column("A"), Column("B")], [[t, texts[0]] for t in texts])
    data = _book([table])
    strings = re.findall(r"<si><t>(.*?)</t></si>", _xml(data, "xl/sharedStrings.xml"))
    assert strings == texts
    ws = openpyxl.load_workbook(io.BytesIO(data), read_only=True)["T"]
    assert [list(r) for r in ws.iter_rows(min_row=2, values_only=True)] == [
        [t, texts[0]] for t in texts
    ]


def test_each_sheet_is_in_the_archive_once_deflated_early_or_not() -> None:
    # Sheets without a chart are deflated as soon as they are written; the capacity
    # sheet, whose drawing openpyxl links as it saves, is written at the end.
    data = render_xlsx(build_result(ALL))
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        names = z.namelist()
        assert z.testzip() is None  # every part's CRC holds
    wb = openpyxl.load_workbook(io.BytesIO(data))
    sheets = [n for n in names if n.startswith("xl/worksheets/sheet")]
    assert len(names) == len(set(names))
    assert sorted(sheets) == sorted(
        f"xl/worksheets/sheet{i}.xml" for i in range(1, 1 + len(wb.sheetnames))
    )
    capacity = wb.sheetnames.index("GPU Capacity") + 1
    assert f"xl/worksheets/_rels/sheet{capacity}.xml.rels" in names
    assert "xl/charts/chart1.xml" in names


def test_a_sheet_that_fails_to_deflate_fails_the_workbook_and_leaves_no_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    written: list[str] = []
    add_early = xlsx._Archive.add_early

    def failing(self: xlsx._Archive, path: str, name: str) -> None:
        written.append(path)
        if len(written) == 2:
            raise OSError(28, "No space left on device")
        add_early(self, path, name)

    monkeypatch.setattr(xlsx._Archive, "add_early", failing)
    with pytest.raises(OSError, match="No space left"):
        render_xlsx(build_result(ALL))
    assert len(written) >= 2
    assert not [p for p in written if Path(p).exists()]  # every sheet's file removed
