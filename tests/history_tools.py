"""Shared by the history tests: a checked demo estate and scans of it at chosen times."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

from gpuaudit import pipeline, scan
from gpuaudit.results import AuditResult


@functools.cache
def _demo() -> AuditResult:
    return pipeline.check(pipeline.obtain(scan.demo_source()), None, None)


def demo_result(checked_at: str = "2026-11-01T00:00:00Z", source: str = "vc01") -> AuditResult:
    """A fresh copy of the demo estate's result, as if scanned from ``source`` at ``checked_at``."""
    result = copy.deepcopy(_demo())
    result.checked_at = checked_at
    result.inventory.source = source
    return result


def store_at_revision(path: Path, revision: str, *rows: str) -> None:
    """A SQLite store at ``path`` migrated only to ``revision``, holding ``rows``
    (INSERT statements written for that revision's tables)."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine, text

    from gpuaudit.history.store import MIGRATIONS

    engine = create_engine(f"sqlite:///{path}")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
        for row in rows:
            conn.execute(text(row))
    engine.dispose()


def prune_and_check(location: str) -> None:
    """`gpuaudit history prune` on ``location`` (SQLite or PostgreSQL): scans of vc01
    40 and 10 days old and of vc02 50 days old, a fleet run 50 days old naming vc02's
    scan; pruning vc01 at 30 days, then all, removes just the older scans and rows."""
    from datetime import UTC, datetime, timedelta

    from click.testing import CliRunner
    from sqlalchemy import func, select

    from gpuaudit import history
    from gpuaudit.cli import main
    from gpuaudit.history import schema

    now = datetime.now(UTC)

    def ago(days: int) -> str:
        return (now - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")

    store = history.open_store(location)
    old, recent = (history.record(store, demo_result(ago(d), "vc01")) for d in (40, 10))
    other = history.record(store, demo_result(ago(50), "vc02"))
    run = store.record_run("fleet", now - timedelta(days=50), 0, {"targets": []})
    store.attach_to_run([other], run)

    def rows(table: Any) -> dict[int, int]:
        query = select(table.c.scan_id, func.count()).group_by(table.c.scan_id)
        with store.engine.connect() as conn:
            return {int(i): int(n) for i, n in conn.execute(query).all()}

    assert set(rows(schema.findings)) == set(rows(schema.clusters)) == {old, recent, other}
    prune = ["history", "prune", "--history", location, "--older-than", "30"]
    done = CliRunner().invoke(main, [*prune, "--server", "vc01"])
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0] == f"removed 1 scan of vc01 (checked {ago(40)} to {ago(40)})", lines
    assert len(lines) == 2 and _cutoff(lines[1], "removed 1 scan checked before ", now), lines
    for table in (schema.findings, schema.clusters, schema.capacity):
        assert set(rows(table)) == {recent, other}, table.name
    assert [s.id for s in store.scans()] == [recent, other]

    done = CliRunner().invoke(main, prune)
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[0] == f"removed 1 scan of vc02 (checked {ago(50)} to {ago(50)})"
    assert [s.id for s in store.scans()] == [recent]
    assert set(rows(schema.findings)) == {recent}
    with store.engine.connect() as conn:  # the fleet run has no scan left: gone too
        assert conn.execute(select(func.count()).select_from(schema.runs)).scalar_one() == 0

    done = CliRunner().invoke(main, prune)
    assert done.exit_code == 0, done.output
    assert _cutoff(done.stdout.strip(), "nothing removed: no scan checked before ", now)
    for days in ("0", "-3", "soon"):
        done = CliRunner().invoke(main, [*prune[:-1], days])
        assert done.exit_code == 2 and "--older-than" in done.output, done.output
    store.close()


def _cutoff(line: str, prefix: str, now: Any) -> bool:
    """``line`` is ``prefix`` and a time 30 days before ``now`` (give or take a minute)."""
    from datetime import datetime, timedelta

    if not line.startswith(prefix):
        return False
    when = datetime.fromisoformat(line.removeprefix(prefix).replace("Z", "+00:00"))
    return abs(now - timedelta(days=30) - when) < timedelta(minutes=1)
