"""The history store on a real PostgreSQL server: many scanning machines share one history."""

from __future__ import annotations

import csv
import io
import signal
import time
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from click.testing import CliRunner

from gpuaudit.cli.main import main
from gpuaudit.jobs import history
from gpuaudit.jobs.history import schema
from tests.support.history_tools import (
    SCAN_AT_0003,
    check_upgrade_to_keys,
    demo_instance,
    demo_result,
    prune_and_check,
    store_at_revision,
)
from tests.support.postgres_server import PostgresServer, serve_postgres
from tests.support.store_writer import spawn

pytestmark = pytest.mark.postgres


server = pytest.fixture(scope="module", name="server")(serve_postgres)


@pytest.fixture
def url(server: PostgresServer, request: pytest.FixtureRequest) -> str:
    name = "t_" + "".join(c if c.isalnum() else "_" for c in request.node.name)[:50].lower()
    return server.create_database(name)


def kept() -> int:
    return sum(f.status in ("fail", "unproven", "waived") for f in demo_result().findings)


def test_the_first_use_migrates_postgresql_to_the_newest_schema(url: str) -> None:
    store = history.open_store(url)
    assert store.schema_version() == "0004"
    with store.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), schema.metadata) == []
    store.close()


def test_a_postgresql_store_of_revision_0003_keys_its_scans_by_the_name_they_were_given(
    url: str,
) -> None:
    store_at_revision(url, "0003", SCAN_AT_0003)
    check_upgrade_to_keys(url)


def test_scans_share_one_history_through_a_url(url: str, tmp_path: Path) -> None:
    for _ in range(2):
        done = CliRunner().invoke(
            main, ["-q", "scan", "--demo", "-f", "json", "-o", str(tmp_path), "--history", url]
        )
        assert done.exit_code == 1 and done.stderr == ""
    listed = CliRunner().invoke(main, ["history", "--history", url, "-f", "csv"])
    rows = list(csv.DictReader(io.StringIO(listed.stdout)))
    assert [r["vcenter"] for r in rows] == ["demo", "demo"]
    store = history.open_store(url)
    later = demo_result("2030-01-01T00:00:00Z", source="demo", instance=demo_instance())
    history.annotate(store, later)
    assert later.history is not None and len(later.history.trend) == 3
    assert len(set(later.first_seen.values())) == 1  # both scans saw the same findings first


def test_two_machines_writing_at_once_both_land(url: str) -> None:
    start = time.time() + 4  # every writer opens the new database at once: all migrate
    writers = [spawn(url, source, 10, start) for source in ("vc01", "vc02", "vc03")]
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
        assert len(out.split()) == 10
    store = history.open_store(url)
    assert [len(store.scans(s, by_name=True)) for s in ("vc01", "vc02", "vc03")] == [10, 10, 10]
    assert {store.count_findings(s.id or 0) for s in store.scans()} == {kept()}


def test_a_writer_killed_mid_write_loses_nothing_recorded_before(url: str) -> None:
    history.open_store(url).close()
    writer = spawn(url, "vc01", 10_000)
    assert writer.stdout is not None
    committed = [int(writer.stdout.readline()) for _ in range(5)]
    time.sleep(0.05)
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)
    committed += [int(line) for line in writer.stdout.read().split()]
    store = history.open_store(url)
    stored = {s.id for s in store.scans("vc01", by_name=True)}
    assert set(committed) <= stored
    for scan_id in stored:
        assert store.count_findings(scan_id or 0) == kept()
    assert history.record(store, demo_result(source="vc01")) > max(committed)


def test_a_postgresql_store_newer_than_the_program_is_refused_naming_both_versions(
    url: str, tmp_path: Path
) -> None:
    store = history.open_store(url)
    history.record(store, demo_result())
    with store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
    store.close()
    out = tmp_path / "out"
    done = CliRunner().invoke(
        main, ["--no-color", "scan", "--demo", "-f", "json", "-o", str(out), "--history", url]
    )
    assert done.exit_code == 1
    assert len(list(out.glob("gpuaudit-demo-*.json"))) == 1
    (warning,) = [line for line in done.stderr.splitlines() if "history" in line]
    assert "its schema is at revision 9999, newer than 0004" in warning
    listed = CliRunner().invoke(main, ["history", "--history", url])
    assert listed.exit_code == 2
    assert "its schema is at revision 9999, newer than 0004" in listed.stderr
    assert "Traceback" not in listed.output


def test_history_prune_deletes_the_old_scans_on_postgresql(url: str) -> None:
    prune_and_check(url)
