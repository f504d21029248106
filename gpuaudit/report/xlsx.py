"""The Excel workbook, for auditors: one sheet per table, in openpyxl's write-only mode.

Every sheet has a frozen, bold header row, an autofilter over its data and column
widths fitted to its contents. Every sheet prints landscape with its header row
on each page; the sheets auditors print (Top Actions, Findings) also fit the page
width and wrap their long text. The GPU Capacity sheet carries a native bar chart.
Values keep their types: numbers are numbers,
times are dates, booleans are TRUE/FALSE. Every string is written as a string
cell, never as a formula, and one that a spreadsheet would take for a formula
when retyped also gets the quote-prefix style.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import tempfile
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, date, datetime
from typing import Any
from zipfile import ZIP_DEFLATED, ZipFile

from openpyxl import Workbook
from openpyxl.cell import Cell, WriteOnlyCell
from openpyxl.cell._writer import write_cell
from openpyxl.chart import BarChart, Reference
from openpyxl.formatting.rule import CellIsRule
from openpyxl.packaging.relationship import Relationship, RelationshipList
from openpyxl.styles import Alignment, Border, Font, PatternFill, Side
from openpyxl.utils import get_column_letter
from openpyxl.worksheet._write_only import WriteOnlyWorksheet
from openpyxl.worksheet.dimensions import RowDimension
from openpyxl.worksheet.pagebreak import Break
from openpyxl.worksheet.properties import PageSetupProperties
from openpyxl.writer.excel import ExcelWriter
from openpyxl.xml.constants import ARC_SHARED_STRINGS, ARC_WORKBOOK_RELS, SHARED_STRINGS
from openpyxl.xml.functions import fromstring, tostring

from gpuaudit.report.json_report import REPORT_SCHEMA_VERSION
from gpuaudit.report.printing import PrintLayout, print_layout
from gpuaudit.report.tables import BOOL, DATE, DATETIME, FLOAT, Table, Value
from gpuaudit.report.text import looks_like_formula, xml_text
from gpuaudit.report.workbook import audit_tables
from gpuaudit.results import SEVERITIES, AuditResult

MAX_CELL = 32767  # the most characters a cell holds
_HEADER_FONT = Font(bold=True, color="FFFFFF")
_HEADER_FILL = PatternFill("solid", fgColor="1F3A5F")
_HEADER_BORDER = Border(bottom=Side(style="thin", color="0F1F33"))
_HEADER_ALIGN = Alignment(vertical="center")

# Severity and status colours: the same as the HTML report's.
COLOURS = {
    "critical": ("7F1D1D", "FFFFFF"),
    "high": ("F8D7DA", "842029"),
    "medium": ("FFF3CD", "664D03"),
    "low": ("DBEAFE", "1E3A8A"),
    "info": ("E9ECEF", "343A40"),
    "fail": ("F8D7DA", "842029"),
    "unproven": ("FFE8CC", "7A3E00"),
    "notice": ("DBEAFE", "1E3A8A"),  # an info finding that fails: a notice, not red
    "waived": ("E9ECEF", "495057"),
    "pass": ("D1E7DD", "0F5132"),
    "FAIL": ("F8D7DA", "842029"),
    "PASS": ("D1E7DD", "0F5132"),
    "NOT PROVEN": ("FFE8CC", "7A3E00"),
    "ERROR": ("7F1D1D", "FFFFFF"),
}
STATUS_VALUES = ("fail", "notice", "unproven", "waived", "pass", "FAIL", "NOT PROVEN", "PASS")

# Per table: the columns coloured by value.
COLOURED: dict[str, dict[str, tuple[str, ...]]] = {
    "Findings": {"Status": STATUS_VALUES, "Severity": SEVERITIES},
    "Top Actions": {"Severity": SEVERITIES},
    "Summary": {"Value": STATUS_VALUES + SEVERITIES},
    "Targets": {"Verdict": ("PASS", "FAIL", "NOT PROVEN", "ERROR")},
}

# The columns of long text that wrap within WRAP_WIDTH characters (or the width the
# print layout gives them). Findings wraps only its title (gpuaudit.report.printing):
# a row is as tall as its tallest cell, printed or not.
WRAPPED: dict[str, tuple[str, ...]] = {
    "Audit Summary": ("Value", "Detail"),
    "Findings": ("Title",),
    "Top Actions": ("Title", "Clusters", "Objects", "Remediation"),
    "Rules": ("Title", "Rationale", "Remediation", "References"),
    "Guide": ("Meaning",),
}
WRAP_WIDTH = 48
_WRAP = Alignment(wrap_text=True, vertical="top")

# OOXML escapes a character as _xHHHH_: a literal "_x0041_" must become
# "_x005F_x0041_", and a carriage return (which XML parsers turn into a line
# feed) travels as _x000D_.
_OOXML_ESCAPE = re.compile(r"_(?=x[0-9A-Fa-f]{4}_)")


def _escaped(text: str) -> str:
    return _OOXML_ESCAPE.sub("_x005F_", text).replace("\r", "_x000D_")


def cell_text(value: str) -> str:
    """A string as a reader shows it: XML-safe and, escapes included, within a
    cell's limit."""
    text = xml_text(value)
    if len(_escaped(text)) <= MAX_CELL:
        return text
    # The limit holds for the stored text (openpyxl cuts it there), which escaping
    # lengthens: cutting that would split an escape and lose the ellipsis. So keep
    # the longest start of the text whose stored form, ellipsis included, fits.
    keep = bisect_right(
        range(len(text)), MAX_CELL, key=lambda n: len(_escaped(text[:n] + "\u2026"))
    )
    return text[: keep - 1] + "\u2026"


def stored_text(value: str) -> str:
    """``cell_text(value)`` as written into the sheet's XML."""
    # Escaped once when it fits, as it almost always does (cell_text escapes to measure).
    escaped = _escaped(xml_text(value))
    if len(escaped) <= MAX_CELL:
        return escaped
    return _escaped(cell_text(value))


def excel_value(value: Value) -> Value:
    """What the workbook holds for ``value`` (naive UTC times; safe strings)."""
    if isinstance(value, str):
        return stored_text(value)
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.replace(microsecond=0)
    return value


def _cell(ws: WriteOnlyWorksheet, value: Value, kind: str) -> Any:
    if value is None:
        return None
    value = excel_value(value)
    if kind == FLOAT and isinstance(value, float):
        cell = WriteOnlyCell(ws, value=value)
        cell.number_format = "0.0"
        return cell
    if isinstance(value, str):
        cell = WriteOnlyCell(ws, value=value)
        cell.data_type = "s"  # never a formula, whatever it starts with
        if looks_like_formula(value) or value.startswith("_x000D_"):
            cell.quotePrefix = True
        return cell
    if isinstance(value, datetime):
        cell = WriteOnlyCell(ws, value=value)
        cell.number_format = "yyyy-mm-dd hh:mm:ss"
        return cell
    if isinstance(value, date):
        cell = WriteOnlyCell(ws, value=value)
        cell.number_format = "yyyy-mm-dd"
        return cell
    return value  # bool, int, float: stored as they are


_CDATA = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


class _Sheet(WriteOnlyWorksheet):
    """A write-only sheet that writes plain cells as XML text.

    openpyxl without lxml serialises every cell as an element through a
    namespace-aware writer in pure Python, which dominates a large workbook.
    Integers and booleans without a style are written here as the same XML text
    that writer produces, and texts (wrapped or not) as indexes into the workbook's
    SharedStrings; every other cell (quote-prefixed texts, dates, floats) still goes
    through openpyxl, which writes its text inline. With lxml, whose writer takes no
    text, every row goes through openpyxl.
    """

    def __init__(
        self,
        parent: Workbook,
        title: str,
        kinds: list[str],
        strings: SharedStrings,
        wrapped: frozenset[int] = frozenset(),
    ) -> None:
        super().__init__(parent, title)
        self.kinds = kinds
        self.strings = strings
        self.wrapped = wrapped  # the indexes of the columns whose text wraps
        self.wrap_style = ""  # ' s="N"': the wrapping style's index, once registered
        self.letters = [get_column_letter(i + 1) for i in range(len(kinds))]
        self.wrap_widths: dict[int, float] = {}  # wrapped column -> width, for row heights
        self.starts: list[str] = []
        self.styles: list[str] = []

    def _write_rows(self) -> Any:
        if self.wrapped:
            # Registered once: the wrapped text cells then take the fast path too.
            styled = WriteOnlyCell(self, value="")
            styled.alignment = _WRAP
            self.wrap_style = f' s="{styled.style_id}"'
        # Per column, the start of a cell's element (its reference less the row) and the
        # style of its text.
        self.starts = [f'<c r="{letter}' for letter in self.letters]
        self.styles = [self.wrap_style if i in self.wrapped else "" for i in range(len(self.kinds))]
        xf = self._writer.xf.send(True)
        write = getattr(xf, "_file", None)  # et_xmlfile's writer of text; lxml's has none
        with xf.element("sheetData"):
            row_idx = 1
            try:
                while True:
                    row = yield
                    if isinstance(row, _Values) and callable(write):
                        self._write_values(xf, write, row, row_idx)
                    else:
                        if isinstance(row, _Values):
                            height = self.row_height(row) if self.wrap_widths else None
                            if height:
                                self.row_dimensions[row_idx] = RowDimension(
                                    self, index=row_idx, ht=height
                                )
                            row = [self._cell(v, i) for i, v in enumerate(row)]
                        self._writer.write_row(xf, self._values_to_row(row, row_idx), row_idx)
                    row_idx += 1
            except GeneratorExit:
                pass
        self._writer.xf.send(None)

    def row_height(self, row: Sequence[Value]) -> int | None:
        """The row's height in points when a wrapped cell needs more than one line.

        Set explicitly: a reader that sizes rows itself may size them for another
        font, and wrapped lines then overlap the next row when printed.
        """
        lines = max(
            (wrapped_lines(row[i], width) for i, width in self.wrap_widths.items()), default=1
        )
        return lines * LINE_POINTS + 3 if lines > 1 else None

    def _write_values(self, xf: Any, write: Any, row: tuple[Value, ...], row_idx: int) -> None:
        r = str(row_idx)
        height = self.row_height(row) if self.wrap_widths else None
        tall = f' ht="{height}" customHeight="1"' if height else ""
        out = [f'<row r="{r}"{tall}>']
        indexes = self.strings.indexes
        starts, styles = self.starts, self.styles
        value: Any
        for i, value in enumerate(row):
            if value is None:
                continue
            kind = type(value)
            if kind is str:
                index = indexes.get(value)
                if index is None:
                    index = self.strings.add(value)
                if index >= 0:
                    out.append(f'{starts[i]}{r}"{styles[i]} t="s"><v>{index}</v></c>')
                    continue
                if index == EMPTY:
                    out.append(f'{starts[i]}{r}"{styles[i]} t="inlineStr" />')
                    continue
            elif kind is int:
                out.append(f'{starts[i]}{r}" t="n"><v>{value:.16g}</v></c>')
                continue
            elif kind is bool:
                out.append(f'{starts[i]}{r}" t="b"><v>{"1" if value else "0"}</v></c>')
                continue
            # Anything else is written by openpyxl, in its place in the row.
            write("".join(out))
            out = []
            cell = self._cell(value, i)
            if not isinstance(cell, Cell):
                cell = WriteOnlyCell(self, value=cell)
            cell.column = i + 1
            cell.row = row_idx
            write_cell(xf, self, cell, cell.has_style)
        out.append("</row>")
        write("".join(out))

    def _cell(self, value: Value, index: int) -> Any:
        cell = _cell(self, value, self.kinds[index])
        if index in self.wrapped and isinstance(cell, Cell):
            cell.alignment = _WRAP
        return cell


STYLED = -1  # a text written by openpyxl, quote-prefixed: the index SharedStrings gives it
EMPTY = -2  # the empty text: written inline and empty, as openpyxl writes it


class SharedStrings:
    """The workbook's shared-string table: each distinct text written once, cells
    holding its index (ECMA-376 Part 1, 18.4).

    openpyxl 3.1 writes every text inline, in each cell that holds it, and writes no
    shared-string table. The Findings sheet repeats its rule's references and
    remediation in every row: 179 of its 268 million characters at the configuration
    maximum, whose sheet was 564 MB of XML to write, read back and deflate. The table
    is spooled to a temporary file as texts are first met, a batch at a time, so it
    holds little more in memory than the index of each text; ``write`` adds its part to
    the archive, and ``_Archive`` its relationship.
    """

    path = "/" + ARC_SHARED_STRINGS  # for openpyxl's manifest: the part's content type
    mime_type = SHARED_STRINGS

    def __init__(self) -> None:
        self.indexes: dict[str, int] = {}  # text -> index, STYLED or EMPTY
        self.count = 0
        self._spool: Any = None  # a binary file: a text file resets its decoder per write
        self._batch: list[str] = []  # the entries not spooled yet

    def add(self, value: str) -> int:
        """The index of ``value``'s stored text, added to the table if new: STYLED when
        it needs the quote-prefix style (openpyxl writes it, inline), EMPTY when empty."""
        stored = stored_text(value)
        if looks_like_formula(stored) or stored.startswith("_x000D_"):
            index = STYLED
        elif not stored:
            index = EMPTY
        else:
            stripped = stored.strip()
            space = ' xml:space="preserve"' if stripped and stored != stripped else ""
            self._batch.append(f"<si><t{space}>{stored.translate(_CDATA)}</t></si>")
            if len(self._batch) >= _SPOOL_BATCH:
                self._spill()
            index, self.count = self.count, self.count + 1
        self.indexes[value] = index
        return index

    def _spill(self) -> None:
        if self._spool is None:  # kept open across calls: close() closes it
            self._spool = tempfile.TemporaryFile()  # noqa: SIM115
        self._spool.write("".join(self._batch).encode("utf-8"))
        self._batch.clear()

    def write(self, archive: ZipFile) -> None:
        """The table as the part xl/sharedStrings.xml of ``archive``."""
        with archive.open(ARC_SHARED_STRINGS, "w", force_zip64=True) as part:
            part.write(
                b"<?xml version='1.0' encoding='UTF-8'?>\n"
                b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
                b' uniqueCount="%d">' % self.count
            )
            if self._spool is not None:
                self._spool.seek(0)
                shutil.copyfileobj(self._spool, part, 1 << 20)
            part.write("".join(self._batch).encode("utf-8"))
            part.write(b"</sst>")

    def close(self) -> None:
        if self._spool is not None:
            self._spool.close()
            self._spool = None


_SPOOL_BATCH = 4096  # shared strings spooled at a time


LINE_POINTS = 15  # one line of 11 pt text


def wrapped_lines(value: Value, width: float) -> int:
    """How many lines ``value`` takes wrapped in a column ``width`` characters wide.

    Counted for a narrower column than it is: a proportional font fits fewer wide
    letters, and one line too many costs less than text that overlaps the next row.
    """
    if not isinstance(value, str) or not value:
        return 1
    per_line = max(int(width * 0.85) - 1, 1)
    return sum(max(1, -(-len(line) // per_line)) for line in value.split("\n"))


class _Values(tuple[Value, ...]):
    """A row of table values, for _Sheet to write."""


def _width(table: Table, index: int) -> float:
    column = table.columns[index]
    if column.name in WRAPPED.get(table.title, ()):
        return WRAP_WIDTH
    if column.type == DATETIME:
        return 20
    if column.type == DATE:
        return 12
    longest = len(column.name) + 3  # room for the filter button
    if column.type != BOOL:
        for row in table.rows[:500]:
            value = row[index]
            if value is not None:
                longest = max(longest, len(str(value)) + 1)
    return float(min(max(longest, 6), 60))


def _write_table(wb: Workbook, table: Table, strings: SharedStrings) -> _Sheet:
    kinds = [c.type for c in table.columns]
    layout = print_layout(table)
    wrapping = WRAPPED.get(table.title, ())
    wrapped = layout.wrapped | {i for i, c in enumerate(table.columns) if c.name in wrapping}
    ws = _Sheet(wb, table.title[:31], kinds, strings, frozenset(wrapped))
    wb._add_sheet(ws)
    ncols = len(table.columns)
    last = get_column_letter(ncols)
    for i in range(ncols):
        width = layout.widths.get(i) or _width(table, i)
        ws.column_dimensions[get_column_letter(i + 1)].width = width
        if i in wrapped:
            ws.wrap_widths[i] = width
    ws.freeze_panes = "A2"
    _page_setup(ws, table, layout)
    if table.key == "gpu-capacity" and table.rows:
        ws.add_chart(capacity_chart(ws, len(table.rows)), f"{get_column_letter(ncols + 2)}2")
    ws.auto_filter.ref = f"A1:{last}{len(table.rows) + 1}"
    for name, values in COLOURED.get(table.title, {}).items():
        letter = get_column_letter(table.column_index(name) + 1)
        cells = f"{letter}2:{letter}{max(len(table.rows) + 1, 2)}"
        for value in values:
            fill, font = COLOURS[value]
            ws.conditional_formatting.add(
                cells,
                CellIsRule(
                    operator="equal",
                    formula=[f'"{value}"'],
                    fill=PatternFill("solid", fgColor=fill, bgColor=fill),
                    font=Font(color=font, bold=value in ("critical", "fail", "FAIL")),
                ),
            )
    header = []
    for column in table.columns:
        cell = WriteOnlyCell(ws, value=stored_text(column.name))
        cell.data_type = "s"
        cell.font = _HEADER_FONT
        cell.fill = _HEADER_FILL
        cell.border = _HEADER_BORDER
        cell.alignment = _HEADER_ALIGN
        header.append(cell)
    ws.append(header)
    for row in table.rows:
        ws.append(_Values(row))
    return ws


def _page_setup(ws: WriteOnlyWorksheet, table: Table, layout: PrintLayout) -> None:
    """Landscape A4, the header row on every page, and what ``layout`` prints."""
    ws.page_setup.orientation = "landscape"
    ws.page_setup.paperSize = "9"  # A4
    ws.page_margins.left = ws.page_margins.right = 0.4
    ws.page_margins.top = ws.page_margins.bottom = 0.5
    ncols = len(table.columns)
    if not layout.printed:
        # A sheet for filtering: one empty cell below the table (no text runs into it)
        # is its print area, and no title rows, so nothing prints, not even a lone
        # header row, until a reader clears the print area; then it prints on whole
        # pages as wide as the page, as many down as it takes.
        ws.print_area = f"A{len(table.rows) + 3}"
        _fit_width(ws, one_page=False)
        return
    ws.print_title_rows = "1:1"
    if layout.rows is not None or layout.columns is not None:
        columns = get_column_letter(layout.columns or ncols)
        rows = 1 + (len(table.rows) if layout.rows is None else layout.rows)
        ws.print_area = f"A1:{columns}{rows}"
    if layout.fit_width or layout.one_page:
        _fit_width(ws, layout.one_page)
    for row in layout.breaks:
        ws.row_breaks.append(Break(id=row))


def _fit_width(ws: WriteOnlyWorksheet, one_page: bool) -> None:
    """As many pages down as it takes (one for a one-page sheet), never wider than one."""
    ws.sheet_properties.pageSetUpPr = PageSetupProperties(fitToPage=True)
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 1 if one_page else 0


def capacity_chart(ws: WriteOnlyWorksheet, clusters: int) -> BarChart:
    """GPUs per cluster now and after its worst host failure, from the GPU Capacity sheet."""
    chart = BarChart()
    chart.type = "bar"  # horizontal: cluster names read along the axis
    chart.grouping = "clustered"
    chart.title = "GPUs per cluster: now and after the worst host failure"
    chart.y_axis.title = "GPUs"
    chart.x_axis.title = "Cluster"
    # Columns C and D: "GPUs" and "GPUs After Worst", with their headers as series names.
    data = Reference(ws, min_col=3, max_col=4, min_row=1, max_row=clusters + 1)
    chart.add_data(data, titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=clusters + 1))
    chart.width = 18
    chart.height = max(7.5, 0.6 * clusters + 3)
    return chart


def render_xlsx(result: AuditResult) -> bytes:
    tables = audit_tables(result, REPORT_SCHEMA_VERSION)
    return tables_xlsx(_each(tables), f"gpuaudit report: {result.inventory.source}")


def _each(tables: list[Table]) -> Iterator[Table]:
    """The tables in order, each let go as the next is asked for: a sheet is on disk
    once written, and the workbook is zipped after the last."""
    tables.reverse()
    while tables:
        yield tables.pop()


def tables_xlsx(tables: Iterable[Table], title: str) -> bytes:
    """A workbook with one sheet per table, each filterable, typed and formula-safe."""
    wb = Workbook(write_only=True)
    wb.properties.creator = "gpuaudit"
    wb.properties.title = cell_text(title)
    strings = SharedStrings()
    buffer = io.BytesIO()
    archive = _Archive(buffer, "w", ZIP_DEFLATED, allowZip64=True, compresslevel=ZIP_LEVEL)
    deflating = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpuaudit-xlsx")
    done: list[Future[None]] = []
    try:
        for table in tables:
            ws = _write_table(wb, table, strings)
            if not ws._charts and not ws._images:  # openpyxl links a drawing as it saves
                ws.close()
                name = f"xl/worksheets/sheet{len(wb.worksheets)}.xml"  # the name save gives it
                done.append(deflating.submit(archive.add_early, ws._writer.out, name))
        for future in done:
            future.result()  # the first failure, if any, raised here
        _save(wb, archive, strings)
    except BaseException:
        deflating.shutdown(cancel_futures=True)
        _discard(wb)
        with contextlib.suppress(Exception):
            archive.close()  # now, not when collected after its buffer is gone
        raise
    finally:
        deflating.shutdown()
        strings.close()
    return buffer.getvalue()


_PIECE = 1 << 24  # bytes of a sheet deflated at a time

# The level the workbook's parts are deflated at. zlib's default (6) spent 3.6 s on the
# 564 MB of inline-string sheet XML of the configuration maximum's workbook (41.7 MB).
# With shared strings its parts are 250 MB: level 3 deflates them in 1.8 s to 38.0 MB,
# level 2 in 1.3 s to 40.3 MB, still smaller than the inline workbook at zlib's default.
ZIP_LEVEL = 2


def _save(wb: Workbook, archive: _Archive, strings: SharedStrings) -> None:
    """``wb.save`` into ``archive`` with the shared strings: what Workbook.save does,
    with the archive opened by the caller (openpyxl opens its own at zlib's default
    level, and writes no shared strings)."""
    if not wb.worksheets:
        wb.create_sheet()  # a workbook holds at least one sheet
    wb.properties.modified = datetime.now(UTC).replace(tzinfo=None)
    writer = ExcelWriter(wb, archive)
    if strings.count:
        strings.write(archive)
        writer.manifest.append(strings)  # its content type
        archive.shared_strings = True
    writer.save()


class _Archive(ZipFile):
    """The workbook's archive, adding the shared strings' relationship to the
    workbook's as openpyxl writes them (its writer knows of no shared strings), and
    taking each finished sheet early.

    A sheet is deflated into the archive as soon as its rows are written, in a thread
    (zlib lets go of the interpreter while it deflates), while the next sheet's rows are
    written: openpyxl would deflate every sheet one after another once the last was
    written. When openpyxl's writer comes to a sheet taken early, it writes the rest
    of the sheet's parts (relationships, content type) as ever, and not the sheet again.
    """

    shared_strings = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.early: set[str] = set()

    def add_early(self, path: str, name: str) -> None:
        """The finished sheet written at ``path`` as the part ``name``, in large pieces:
        the thread takes the interpreter back between pieces, not every few KB."""
        with open(path, "rb") as source, self.open(name, "w", force_zip64=True) as part:
            while chunk := source.read(_PIECE):
                part.write(chunk)
        self.early.add(name)

    def write(
        self,
        filename: Any,
        arcname: Any = None,
        compress_type: int | None = None,
        compresslevel: int | None = None,
    ) -> None:
        if arcname in self.early:
            return
        super().write(filename, arcname, compress_type, compresslevel)

    def writestr(
        self,
        zinfo_or_arcname: Any,
        data: Any,
        compress_type: int | None = None,
        compresslevel: int | None = None,
    ) -> None:
        if zinfo_or_arcname == ARC_WORKBOOK_RELS and self.shared_strings:
            rels = RelationshipList.from_tree(fromstring(data))
            rels.append(Relationship(type="sharedStrings", Target="sharedStrings.xml"))
            data = tostring(rels.to_tree())
        super().writestr(zinfo_or_arcname, data, compress_type, compresslevel)


def _discard(wb: Workbook) -> None:
    """Close and remove what a workbook that failed half-way left open.

    A write-only sheet is written to a temporary file (in TMPDIR) by two
    generators. When a write fails (a full disk), they stay open; closed later by
    the garbage collector, each tries to finish its XML on the failed file, and
    Python prints an "Exception ignored in ... WorksheetWriter.get_stream"
    traceback for each. They are closed here, their errors dropped (the first one
    is already on its way up), and their temporary files removed.
    """
    for ws in wb.worksheets:
        rows = getattr(ws, "_rows", None)
        writer = getattr(ws, "_writer", None)
        for stream in (rows, getattr(writer, "xf", None)):
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.close()
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.cleanup()
