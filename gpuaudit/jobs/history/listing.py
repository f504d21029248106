"""`gpuaudit history`: the recorded scans of each vCenter, as a table, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from gpuaudit.common.terminal import printable, printable_lines
from gpuaudit.jobs.history.store import (
    HistoryError,
    ScanRecord,
    Store,
    StoreTooNew,
    engine_url,
    open_store,
    reason,
    shown,
)
from gpuaudit.jobs.history.track import iso
from gpuaudit.results import SEVERITIES

COLUMNS = (
    "vcenter",
    "key",
    "scan",
    "checked_at",
    "verdict",
    *(f"failed_{s}" for s in SEVERITIES),
    "unproven",
    "waived",
    "passed",
    "rule_errors",
    "run",
    "tool_version",
)


def rows(location: str, server: str | None, limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` scans of each vCenter (or of ``server``), vCenter by vCenter."""
    if missing_sqlite(location):
        return []  # nothing recorded yet: listing creates no store
    try:
        store = open_store(location)
    except StoreTooNew:
        raise
    except HistoryError:
        if not _sqlite(location):
            raise
        try:  # a file this user may read but not write (nor its folder)
            store = open_store(location, read_only=True)
        except HistoryError:
            pass
        else:
            return _listed(store, location, server, limit)
        raise
    return _listed(store, location, server, limit)


def _listed(store: Store, location: str, server: str | None, limit: int) -> list[dict[str, Any]]:
    try:
        found: list[dict[str, Any]] = []
        if server:
            # Every vCenter the name keys or names, each with its newest ``limit`` scans.
            by_key: dict[str, list[ScanRecord]] = {}
            for scan in store.scans(server, by_name=True):
                by_key.setdefault(scan.key, []).append(scan)
            return [_row(scan) for scans in by_key.values() for scan in scans[:limit]]
        for key in store.vcenters():
            found += [_row(scan) for scan in store.scans(key, limit)]
        return found
    except HistoryError:
        raise
    except Exception as exc:  # any database error is one line
        from gpuaudit.jobs.history.store import reason

        raise HistoryError(f"{shown(location)}: {reason(exc)}") from exc
    finally:
        store.close()


def _sqlite(location: str) -> bool:
    try:
        url = engine_url(location)
    except ValueError:
        return False
    return url.get_backend_name() == "sqlite" and bool(url.database)


def prune(location: str, days: int, server: str | None, now: datetime) -> str:
    """`gpuaudit history prune`: delete the scans checked more than ``days`` days before
    ``now`` (of ``server``, or of every vCenter) and say what was removed."""
    before = now - timedelta(days=days)
    removed = []
    if not missing_sqlite(location):  # nothing recorded yet: pruning creates no store
        store = open_store(location)
        try:
            removed = store.prune(before, server)
        except Exception as exc:  # a failing database is one line, as for any other use
            raise HistoryError(f"{shown(location)}: {reason(exc)}") from exc
        finally:
            store.close()
    if not removed:
        whose = f" of {printable(server)}" if server else ""
        return f"nothing removed: no scan{whose} checked before {iso(before)}\n"
    lines = [
        f"removed {p.scans} scan{'' if p.scans == 1 else 's'} of {printable(p.vcenter)} "
        f"(checked {iso(p.oldest)} to {iso(p.newest)})"
        for p in removed
    ]
    total = sum(p.scans for p in removed)
    lines.append(f"removed {total} scan{'' if total == 1 else 's'} checked before {iso(before)}")
    return "\n".join(lines) + "\n"


def missing_sqlite(location: str) -> bool:
    """A SQLite file that does not exist; HistoryError if that cannot even be known."""
    try:
        url = engine_url(location)
    except ValueError as exc:
        raise HistoryError(f"{shown(location)}: {exc}") from None
    if url.get_backend_name() != "sqlite" or not url.database:
        return False
    try:
        return not Path(str(url.database)).exists()
    except OSError as exc:  # a folder on the way this user may not enter
        raise HistoryError(f"{shown(location)}: {exc.strerror or exc}") from None


def _row(scan: ScanRecord) -> dict[str, Any]:
    return {
        "vcenter": scan.vcenter,
        "key": scan.key,
        "scan": scan.id,
        "checked_at": iso(scan.checked_at),
        "verdict": scan.verdict,
        **{f"failed_{s}": scan.failed.get(s, 0) for s in SEVERITIES},
        "unproven": scan.unproven,
        "waived": scan.waived,
        "passed": scan.passed,
        "rule_errors": scan.rule_errors,
        "run": scan.run_id,
        "tool_version": scan.tool_version,
    }


def export(location: str, server: str | None, limit: int, fmt: str) -> str:
    """The scans as text, csv or json; raises HistoryError."""
    found = rows(location, server, limit)
    if fmt == "json":
        return printable_lines(json.dumps({"scans": found}, indent=1, ensure_ascii=False)) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(found)
        return out.getvalue()
    return _table(found)


def _table(found: list[dict[str, Any]]) -> str:
    if not found:
        return "no scans recorded\n"
    lines: list[str] = []
    current = name = None
    for row in found:
        if row["key"] != current:
            # One vCenter: named as it was last scanned, with its key beside the name.
            current, name = row["key"], row["vcenter"]
            lines += [""] if lines else []  # a blank line between two vCenters
            key = "" if current == name else f" ({current})"
            lines.append(printable(f"{name}{key}"))
            lines.append(
                "  scan  checked at            verdict   crit high  med  low info  "
                "not proven  waived  passed"
            )
        counts = " ".join(f"{row[f'failed_{s}']:>4}" for s in SEVERITIES)
        # A scan made by another name of the same vCenter says which.
        named = "" if row["vcenter"] == name else f"  as {printable(str(row['vcenter']))}"
        lines.append(
            f"  {row['scan']:>4}  {row['checked_at']:<20}  {row['verdict']:<8}  {counts}"
            f"  {row['unproven']:>10}  {row['waived']:>6}  {row['passed']:>6}{named}"
        )
    return "\n".join(lines) + "\n"
