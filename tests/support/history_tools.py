"""Shared by the history tests: a checked demo estate and scans of it at chosen times."""

from __future__ import annotations

import copy
import functools
import uuid
from pathlib import Path
from typing import Any

from gpuaudit.jobs import scan as pipeline
from gpuaudit.results import AuditResult
from gpuaudit.vsphere import obtain


@functools.cache
def _demo() -> AuditResult:
    return pipeline.check(pipeline.obtain(obtain.demo_source()), None, None)


def demo_result(
    checked_at: str = "2026-11-01T00:00:00Z", source: str = "vc01", instance: str | None = None
) -> AuditResult:
    """A fresh copy of the demo estate's result, as if scanned from ``source`` at
    ``checked_at``: a vCenter of its own, whose instance UUID is ``instance`` or, by
    default, one derived from ``source`` (the demo cassette's own UUID is every
    cassette's, recorded from one lab)."""
    result = copy.deepcopy(_demo())
    result.checked_at = checked_at
    result.inventory.source = source
    result.inventory.vcenter.instance_uuid = instance or str(uuid.uuid5(uuid.NAMESPACE_DNS, source))
    return result


def demo_instance() -> str:
    """The instance UUID the demo cassette recorded: that of `scan --demo`'s vCenter."""
    return _demo().inventory.vcenter.instance_uuid


def store_at_revision(path: Path | str, revision: str, *rows: str) -> None:
    """A store at ``path`` (a SQLite file, or a database URL) migrated only to
    ``revision``, holding ``rows`` (INSERT statements written for that revision's tables)."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine, text

    from gpuaudit.jobs.history.store import MIGRATIONS, engine_url

    engine = create_engine(engine_url(str(path)))
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
        for row in rows:
            conn.execute(text(row))
    engine.dispose()


# A scan of vc01.example as revision 0003 kept it: keyed by the name it was given.
SCAN_AT_0003 = (
    "INSERT INTO scans (vcenter, vcenter_name, checked_at, recorded_at, tool_version,"
    " rules_version, verdict, failed_critical, failed_high, failed_medium,"
    " failed_low, failed_info, waived, passed, rule_errors, unproven) VALUES"
    " ('vc01.example', 'vc01-own-name', '2026-11-01 02:00:00', '2026-11-01 02:00:01',"
    " '0.1', 'r', 'fail', 0, 2, 0, 0, 0, 0, 40, 0, 0)"
)


def check_upgrade_to_keys(location: str) -> None:
    """A store of revision 0003 at ``location`` holding SCAN_AT_0003, opened: its scan
    is keyed by the name it was given, found by that name, and a scan of vc01.example
    recorded now, keyed by its instance UUID, is another history (the old scan never
    knew the UUID)."""
    from gpuaudit.jobs import history

    store = history.open_store(location)
    assert store.schema_version() == "0004"
    [old] = store.scans("vc01.example")  # by key: the name as given
    assert (old.key, old.vcenter, old.vcenter_name) == (
        "vc01.example", "vc01.example", "vc01-own-name",
    )  # fmt: skip
    new = demo_result("2026-11-02T00:00:00Z", source="vc01.example", instance="uuid-of-vc01")
    history.record(store, new)
    assert [s.key for s in store.scans()] == ["uuid-of-vc01", "vc01.example"]
    assert len(store.scans("vc01.example", by_name=True)) == 2  # a name finds both
    store.close()


def prune_and_check(location: str) -> None:
    """`gpuaudit history prune` on ``location`` (SQLite or PostgreSQL): scans of vc01
    40 and 10 days old and of vc02 50 days old, a fleet run 50 days old naming vc02's
    scan; pruning vc01 at 30 days, then all, removes just the older scans and rows."""
    from datetime import UTC, datetime, timedelta

    from click.testing import CliRunner
    from sqlalchemy import func, select

    from gpuaudit.cli.main import main
    from gpuaudit.jobs import history
    from gpuaudit.jobs.history import schema

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
