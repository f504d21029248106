"""How each workbook sheet prints, for small hand-built tables, the layouts written out by hand.

docs/report-formats.md ("Printing the whole workbook"): the Audit Summary and GPU
Capacity on one page; Top Actions, Clusters, Data Gaps, About (and a fleet's
Targets) fitted to the page width; Findings' leading failed and not-proven rows
and its columns Key to Title at 100%, with a page break before a rule whose rows
would straddle two pages; every other sheet prints nothing. printing.py's figures:
A4 landscape holds about 130 character widths and 30 lines under the header.
"""

from __future__ import annotations

import pytest

from gpuaudit.report.printing import PrintLayout, print_layout, rule_breaks
from gpuaudit.report.tables import Column, Table

FRONT = ["Key", "Severity", "Status", "Rule", "Object", "Cluster", "Title"]


def _table(key: str, names: list[str], rows: list[list[object]] | None = None) -> Table:
    return Table(key, key.title(), [Column(n) for n in names], rows or [])


def _findings(rows: list[tuple[str, str, str, str, str]]) -> Table:
    """Findings rows of (status, rule, object, cluster, title), behind the print columns."""
    return _table(
        "findings",
        [*FRONT, "Message", "ID"],
        [["k", "high", s, rule, obj, cl, title, "m", "id"] for s, rule, obj, cl, title in rows],
    )


@pytest.mark.parametrize(
    "key", ["summary", "action-findings", "hosts", "gpus", "vms", "rules", "guide", "failover"]
)
def test_sheets_for_filtering_print_nothing(key: str) -> None:
    assert print_layout(_table(key, ["A"], [["x"]])) == PrintLayout(printed=False)


@pytest.mark.parametrize("key", ["top-actions", "clusters", "gaps", "about", "targets"])
def test_sheets_printed_whole_fit_the_page_width(key: str) -> None:
    layout = print_layout(_table(key, ["A", "Status"], [["x", "pass"]]))
    assert layout == PrintLayout()
    assert (layout.printed, layout.rows, layout.columns) == (True, None, None)
    assert (layout.fit_width, layout.one_page, layout.breaks) == (True, False, [])


@pytest.mark.parametrize("key", ["audit-summary", "gpu-capacity"])
def test_summary_and_capacity_print_on_one_page(key: str) -> None:
    assert print_layout(_table(key, ["A"])) == PrintLayout(one_page=True)


def test_findings_without_the_print_columns_print_the_leading_open_rows() -> None:
    table = _table(
        "findings",
        ["Status", "Title"],
        [["fail", "a"], ["unproven", "b"], ["fail", "c"], ["pass", "d"], ["fail", "e"]],
    )
    # Three leading failed or not-proven rows; the failure after a passed row is not.
    assert print_layout(table) == PrintLayout(rows=3)
    assert print_layout(_table("findings", ["Status"], [["waived"], ["fail"]])).rows == 0


def test_findings_print_layout_widths_columns_and_wrap() -> None:
    table = _findings(
        [
            ("fail", "HA-01", "o" * 20, "c" * 12, "t"),
            ("unproven", "GPU-02", "short", "c", "t"),
            # Not printed: its long object and cluster do not widen the columns.
            ("pass", "GPU-02", "p" * 60, "q" * 30, "t"),
        ]
    )
    layout = print_layout(table)
    # Key 13, Severity 9, Status 9, Rule 9; Object the longest printed (20) + 2;
    # Cluster 12 + 2; Title the rest of 130: 130 - 13 - 27 - 22 - 14 = 54.
    assert layout == PrintLayout(
        rows=2,
        columns=7,
        fit_width=False,
        widths={0: 13.0, 1: 9.0, 2: 9.0, 3: 9.0, 4: 22.0, 5: 14.0, 6: 54.0},
        wrapped=frozenset({6}),
        breaks=[],
    )


def test_findings_fitted_widths_keep_within_their_bounds() -> None:
    narrow = print_layout(_findings([("fail", "R", "o", "", "t")]))
    # Object at least 16, Cluster at least 10: Title 130 - 40 - 16 - 10 = 64.
    assert narrow.widths == {0: 13.0, 1: 9.0, 2: 9.0, 3: 9.0, 4: 16.0, 5: 10.0, 6: 64.0}
    wide = print_layout(_findings([("fail", "R", "o" * 80, "c" * 80, "t")]))
    # Object at most 44, Cluster at most 20: Title 130 - 40 - 44 - 20 = 26, below its
    # least, 30.
    assert wide.widths == {0: 13.0, 1: 9.0, 2: 9.0, 3: 9.0, 4: 44.0, 5: 20.0, 6: 30.0}
    # Exactly at a bound's edge: 14 + 2 = 16, 42 + 2 = 44; 8 + 2 = 10, 18 + 2 = 20.
    edge = print_layout(_findings([("fail", "R", "o" * 14, "c" * 8, "t")]))
    assert (edge.widths[4], edge.widths[5]) == (16.0, 10.0)
    edge = print_layout(_findings([("fail", "R", "o" * 42, "c" * 18, "t")]))
    assert (edge.widths[4], edge.widths[5]) == (44.0, 20.0)
    empty = print_layout(_findings([("pass", "R", "o" * 42, "c" * 18, "t")]))
    assert (empty.rows, empty.columns, empty.widths[4], empty.widths[5]) == (0, 7, 16.0, 10.0)


def _rules(*groups: tuple[str, int, int]) -> Table:
    """Rows of (rule, rows, title length) runs."""
    rows = [
        ("fail", rule, f"o{i}", "c", "t" * length)
        for rule, count, length in groups
        for i in range(count)
    ]
    return _findings(rows)


def test_rule_breaks_start_a_rule_on_a_new_page_when_it_would_straddle() -> None:
    title = 6
    # Width 12: 10 characters a line. A: 20 one-line rows; B: 15 (20 + 15 > 30): a
    # break after sheet row 21 (the header is row 1, A's last row 21); then B's 15.
    # C: 5 rows of 25 characters (3 lines each), 15 + 15 = 30: fits. D: 1 row: break.
    table = _rules(("A", 20, 5), ("B", 15, 10), ("C", 5, 25), ("D", 1, 1))
    assert rule_breaks(table, len(table.rows), title, 12.0) == [21, 41]


def test_rule_breaks_of_a_rule_longer_than_a_page() -> None:
    title = 6
    # A: 40 rows, no break before it (the page is empty) and 10 lines on its last page;
    # B: 25 rows: 10 + 25 > 30, a break before it; C: 5 rows: 25 + 5 = 30, fits.
    table = _rules(("A", 40, 1), ("B", 25, 1), ("C", 5, 1))
    assert rule_breaks(table, len(table.rows), title, 12.0) == [41]
    # Only the rows printed count: 21 of B's rows (31 lines) still break, 20 fit.
    assert rule_breaks(table, 61, title, 12.0) == [41]
    assert rule_breaks(table, 60, title, 12.0) == []
    # One rule repeated after another is a new run.
    table = _rules(("A", 20, 1), ("B", 5, 1), ("A", 10, 1))
    assert rule_breaks(table, len(table.rows), title, 12.0) == [26]


def test_rule_breaks_count_wrapped_title_lines() -> None:
    title = 6
    # Width 7: 5 characters a line; 11 characters take 3 lines. A: 9 rows, 27 lines;
    # B: 1 row of 3 lines: 30, fits; C: 1 row: 31, break.
    table = _rules(("A", 9, 11), ("B", 1, 11), ("C", 1, 1))
    assert rule_breaks(table, len(table.rows), title, 7.0) == [11]
    # An empty title still takes a line; a width of 2 or less wraps a character a line.
    table = _rules(("A", 30, 0), ("B", 1, 0))
    assert rule_breaks(table, len(table.rows), title, 12.0) == [31]
    table = _rules(("A", 10, 3), ("B", 1, 1))
    assert rule_breaks(table, len(table.rows), title, 2.0) == [11]


def test_findings_layout_carries_its_rule_breaks() -> None:
    table = _rules(("A", 20, 1), ("B", 15, 1))
    table.rows.append(["k", "high", "pass", "Z", "o", "c", "t", "m", "id"])
    assert print_layout(table).breaks == [21]
