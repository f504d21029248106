"""The fleet summary: one row per vCenter of a `gpuaudit scan --targets` run.

Its workbook also merges the targets' Findings, Clusters, Hosts, GPUs and VMs
sheets into one of each, every row led by the vCenter it came from, and ends with a
Guide to its sheets and columns, written from the single-scan workbook's meanings.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, cast

from markupsafe import Markup

from gpuaudit.report.guide import guide_table
from gpuaudit.report.html import _asset, _csp_hash, environment
from gpuaudit.report.json_report import REPORT_SCHEMA_VERSION
from gpuaudit.report.spool import ChainedRows, SpooledRows
from gpuaudit.report.tables import INT, Column, Table, Value
from gpuaudit.report.workbook import audit_tables
from gpuaudit.report.xlsx import tables_xlsx
from gpuaudit.results import SEVERITIES, AuditResult

# The sheets of each target's workbook that the fleet workbook merges, in order.
MERGED = ("findings", "clusters", "hosts", "gpus", "vms")


AGE_UNITS = (("d", 86400), ("h", 3600), ("min", 60), ("s", 1))  # largest first

# The targets' verdicts, worst first: the fleet's verdict is its worst target's.
VERDICTS = ("ERROR", "FAIL", "NOT PROVEN", "PASS")


def _verdict(data: dict[str, Any]) -> str:
    verdicts = {t["verdict"] for t in data["targets"]}
    return next((v for v in VERDICTS if v in verdicts), "PASS")


def from_history(data: dict[str, Any]) -> bool:
    """Whether the summary is of the latest scans in a history (each with its age)
    rather than of one run's targets."""
    return data.get("source") == "history"


def age_text(seconds: int) -> str:
    """An age as people read it: its largest unit and the next one when not zero
    (3 d 4 h, 2 h, 5 min 10 s, 40 s)."""
    for (name, size), (next_name, next_size) in itertools.pairwise(AGE_UNITS):
        if seconds >= size:
            whole, rest = divmod(seconds, size)
            parts = rest // next_size
            return f"{whole} {name} {parts} {next_name}" if parts else f"{whole} {name}"
    return f"{seconds} s"


def render_fleet_html(data: dict[str, Any]) -> str:
    style = _asset("report.css")
    counts = {v: sum(1 for t in data["targets"] if t["verdict"] == v) for v in VERDICTS}
    return (
        environment()
        .get_template("fleet.html.j2")
        .render(
            data=data,
            verdict=_verdict(data),
            counts=counts,
            severities=SEVERITIES,
            style=Markup(style),  # our own static file
            style_hash=_csp_hash(style),
            from_history=from_history(data),
            age_text=age_text,
        )
    )


def fleet_table(data: dict[str, Any]) -> Table:
    aged = from_history(data)
    columns = [Column("Target"), Column("Server"), Column("Verdict"), Column("Exit", INT)]
    if aged:
        columns += [Column("Checked at"), Column("Age"), Column("Age (s)", INT)]
    columns += [Column(s.capitalize(), INT) for s in SEVERITIES]
    columns += [
        Column("Hosts", INT),
        Column("GPUs", INT),
        Column("GPU VMs", INT),
        Column("Designs"),
        Column("Error"),
        Column("Reports"),
    ]
    rows = []
    for t in data["targets"]:
        failed = t["failed_by_severity"]
        designs = ", ".join(f"{c}: {d}" for c, d in sorted(t["designs"].items()))
        rows.append(
            [t["name"], t["server"], t["verdict"], t["exit_code"]]
            + ([t["checked_at"], age_text(t["age_seconds"]), t["age_seconds"]] if aged else [])
            + [failed.get(s, 0) if not t["error"] else None for s in SEVERITIES]
            + [
                t["hosts"],
                t["gpus"],
                t["gpu_vms"],
                designs,
                t["error"] or "",
                " ".join(t["reports"]),
            ]
        )
    return Table("targets", "Targets", columns, rows)


def target_sheets(result: AuditResult, directory: str | None = None) -> list[Table]:
    """One target's MERGED sheets, their rows spooled to a temporary file: a fleet
    keeps these, not the target's whole audit, until its workbook is written.

    Spooled in ``directory`` (when given), the sheets may be handed to another
    process (report.spool)."""
    return [
        Table(
            table.key,
            table.title,
            table.columns,
            cast(list[list[Value]], SpooledRows(table.rows, directory)),
        )
        for table in audit_tables(result, REPORT_SCHEMA_VERSION)
        if table.key in MERGED
    ]


def merge_sheets(targets: Sequence[Sequence[Table]]) -> list[Table]:
    """Each MERGED sheet with every target's rows, target by target.

    Every target's sheet has the same columns, the vCenter first, so the rows of
    one fleet sheet filter and join like those of one target's workbook.
    """
    by_key: dict[str, list[Table]] = {}
    for sheets in targets:
        for table in sheets:
            by_key.setdefault(table.key, []).append(table)
    merged = []
    for key in MERGED:
        if key in by_key:
            first = by_key[key][0]
            rows = ChainedRows([t.rows for t in by_key[key]])
            merged.append(Table(key, first.title, first.columns, cast(list[list[Value]], rows)))
    return merged


def merged_tables(results: Sequence[AuditResult]) -> list[Table]:
    """Each MERGED sheet with every target's rows (merge_sheets of their audits)."""
    return merge_sheets([target_sheets(result) for result in results])


def render_fleet_xlsx(
    data: dict[str, Any],
    results: Sequence[AuditResult] = (),
    sheets: Sequence[Sequence[Table]] = (),
) -> bytes:
    """The Targets sheet, the targets' merged sheets (of those that were audited: their
    ``results``, or the ``sheets`` target_sheets kept of them), then the Guide to them all."""
    merged = merge_sheets([*(target_sheets(r) for r in results), *sheets])
    tables = [fleet_table(data), *merged]
    return tables_xlsx([*tables, guide_table(tables, [])], "gpuaudit fleet summary")
