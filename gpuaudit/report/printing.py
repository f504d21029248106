"""How each workbook sheet prints: what an auditor files, on whole A4 landscape pages.

Printing the whole workbook gives the Audit Summary on one page, Top Actions, the
failed and not-proven findings, the clusters, the GPU capacity chart, the data
gaps and About. The other sheets (the rules too: Top Actions prints the
remediation of every rule that failed) are for
filtering and joining: their print area is one empty cell, so they print nothing
until a reader clears it (then they fit the page width, as every sheet does).

The Findings print area is the leading failed and not-proven rows and the columns
an auditor files, at 100% (no shrinking), with a page break before a rule whose
findings would otherwise start on one page and end on the next.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gpuaudit.report.tables import Table

# The sheets that print in full or in part; every other one prints nothing.
ONE_PAGE = frozenset({"audit-summary", "gpu-capacity"})
PRINTED = frozenset({"top-actions", "findings", "clusters", "gaps", "about", "targets", *ONE_PAGE})
# A sheet of these keys prints its leading rows whose column holds one of the values.
LEADING_ROWS = {
    "findings": ("Status", ("fail", "unproven")),
}

# A4 landscape at 100% with 0.4" side margins holds about 140 character widths
# and, under the repeated header row, about 30 lines of 11 pt text.
PAGE_WIDTH = 130
PAGE_LINES = 30
# The Findings print columns and their widths; None: fitted to the longest value
# between the bounds, and the title takes the width the others leave.
FINDINGS_PRINTED = {
    "Key": 13.0,
    "Severity": 9.0,
    "Status": 9.0,
    "Rule": 9.0,
    "Object": None,
    "Cluster": None,
}
FITTED_BOUNDS = {"Object": (16, 44), "Cluster": (10, 20)}
TITLE_MIN = 30


@dataclass
class PrintLayout:
    printed: bool = True
    rows: int | None = None  # the leading data rows printed; None: all
    columns: int | None = None  # the leading columns printed; None: all
    fit_width: bool = True  # shrink to the page width; False: print at 100%
    one_page: bool = False  # shrink to one page
    widths: dict[int, float] = field(default_factory=dict)  # column index -> width
    wrapped: frozenset[int] = frozenset()  # columns whose text wraps
    breaks: list[int] = field(default_factory=list)  # sheet rows a page starts after


def _leading(table: Table, column: str, values: tuple[str, ...]) -> int:
    index = table.column_index(column)
    count = 0
    for row in table.rows:
        if row[index] not in values:
            break
        count += 1
    return count


def _findings_layout(table: Table, rows: int) -> PrintLayout:
    widths: dict[int, float] = {}
    for name, width in FINDINGS_PRINTED.items():
        index = table.column_index(name)
        if width is None:
            low, high = FITTED_BOUNDS[name]
            longest = max((len(str(r[index] or "")) for r in table.rows[:rows]), default=0)
            width = float(min(max(longest + 2, low), high))
        widths[index] = width
    title = table.column_index("Title")
    widths[title] = float(max(PAGE_WIDTH - sum(widths.values()), TITLE_MIN))
    return PrintLayout(
        rows=rows,
        columns=title + 1,
        fit_width=False,
        widths=widths,
        wrapped=frozenset({title}),
        breaks=rule_breaks(table, rows, title, widths[title]),
    )


def rule_breaks(table: Table, rows: int, title: int, width: float) -> list[int]:
    """The sheet rows after which a page breaks, so no rule's rows straddle two pages.

    A rule whose rows fill more than a page starts a page and breaks where it must.
    """
    rule = table.column_index("Rule")
    groups: list[tuple[int, int]] = []  # (first data row, lines) per run of one rule
    for i, row in enumerate(table.rows[:rows]):
        lines = max(1, math.ceil(len(str(row[title] or "")) / max(width - 2, 1)))
        if i and row[rule] == table.rows[i - 1][rule]:
            groups[-1] = (groups[-1][0], groups[-1][1] + lines)
        else:
            groups.append((i, lines))
    breaks: list[int] = []
    used = 0
    for first, lines in groups:
        if used and used + lines > PAGE_LINES:
            breaks.append(first + 1)  # the sheet row of the data row before (header is row 1)
            used = 0
        used = (used + lines) % PAGE_LINES if lines > PAGE_LINES else used + lines
    return breaks


def print_layout(table: Table) -> PrintLayout:
    """How ``table``'s sheet prints."""
    if table.key not in PRINTED:
        return PrintLayout(printed=False)
    rows = None
    column, values = LEADING_ROWS.get(table.key, ("", ()))
    if column in {c.name for c in table.columns}:
        rows = _leading(table, column, values)
    names = {c.name for c in table.columns}
    if table.key == "findings" and names >= {*FINDINGS_PRINTED, "Title"}:
        return _findings_layout(table, rows or 0)
    return PrintLayout(rows=rows, one_page=table.key in ONE_PAGE)
