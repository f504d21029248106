"""The history store: every scan's summary, findings and capacity, in SQLite or PostgreSQL.

Each scan is written in one transaction, so a crash or a kill mid-write leaves
every scan recorded before it intact and the half-written one absent. SQLite
runs in WAL mode and takes its write lock when a transaction begins (BEGIN
IMMEDIATE), waiting up to BUSY_TIMEOUT seconds for another writer; PostgreSQL
serialises the migrations of two first runs with an advisory lock.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import (
    Connection,
    Engine,
    Table,
    create_engine,
    event,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from tenacity import retry, retry_if_exception, stop_after_delay, wait_exponential

from gpuaudit.history import schema
from gpuaudit.results import SEVERITIES

BUSY_TIMEOUT = 60.0  # seconds a writer waits for another one
R = TypeVar("R")  # a record read back from a per-scan table
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_MIGRATION_LOCK = 0x67707561  # "gpua": PostgreSQL advisory lock around migrations
# The newest migration: a store already at it opens without loading Alembic.
SCHEMA_HEAD = "0002"


class HistoryError(Exception):
    """The store cannot be opened, read or written; the message names it, without password."""


@dataclass
class StoredFinding:
    id: str
    rule: str
    object: str
    object_kind: str
    status: str
    severity: str
    first_seen: datetime  # UTC, naive
    cluster: str | None = None
    message: str = ""


@dataclass
class ClusterRecord:
    cluster: str
    design: str | None
    tolerates: int
    manual_tolerates: int
    ha_restarts: bool
    gpu_vms: int
    worst_host: str | None


@dataclass
class CapacityRecord:
    cluster: str
    phase: str  # "before" or "after_worst"
    model: str
    slots: int
    used: int


@dataclass
class ScanRecord:
    """One scan as the store keeps it."""

    vcenter: str
    vcenter_name: str
    checked_at: datetime  # UTC, naive
    tool_version: str
    rules_version: str
    verdict: str
    failed: dict[str, int]
    waived: int
    passed: int
    rule_errors: int = 0
    unproven: int = 0  # unwaived findings not proven
    findings: list[StoredFinding] = field(default_factory=list)
    clusters: list[ClusterRecord] = field(default_factory=list)
    capacity: list[CapacityRecord] = field(default_factory=list)
    run_id: int | None = None
    id: int | None = None


def utc_naive(when: datetime) -> datetime:
    """UTC without a zone, as both databases store and return it."""
    if when.tzinfo is not None:
        when = when.astimezone(UTC).replace(tzinfo=None)
    return when


def to_url(location: str) -> str:
    """A path becomes a SQLite URL; a URL (postgresql://, sqlite://) stays as it is."""
    if "://" in location:
        return location
    return f"sqlite:///{Path(location).expanduser()}"


def shown(location: str) -> str:
    """The location for messages: a path as given, a URL with its password masked."""
    if "://" not in location:
        return location
    try:
        return make_url(to_url(location)).render_as_string(hide_password=True)
    except ArgumentError:
        return location.split("@")[-1]


class Store:
    """An open history store whose schema is at the newest version."""

    def __init__(self, location: str) -> None:
        self.location = shown(location)
        url = make_url(to_url(location))
        if url.drivername in ("postgresql", "postgres"):  # psycopg 3 is the driver shipped
            url = url.set(drivername="postgresql+psycopg")
        if url.get_backend_name() not in ("sqlite", "postgresql"):
            raise ValueError("a history store is a SQLite file or a postgresql:// URL")
        self.sqlite = url.get_backend_name() == "sqlite"
        if self.sqlite and url.database:
            Path(url.database).parent.mkdir(parents=True, exist_ok=True)
        args: dict[str, Any] = {"timeout": BUSY_TIMEOUT} if self.sqlite else {"connect_timeout": 10}
        self.engine: Engine = create_engine(url, connect_args=args)
        if self.sqlite:
            _serialise_sqlite_writers(self.engine)
        self._migrate()

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        with self.engine.begin() as conn:
            yield conn

    def _migrate(self) -> None:
        """Bring the schema to the newest version, once however many processes start."""
        if self.schema_version() == SCHEMA_HEAD:
            return
        from alembic import command
        from alembic.config import Config
        from alembic.runtime.migration import MigrationContext

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self._transaction() as conn:
            if not self.sqlite:
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})")
            if MigrationContext.configure(conn).get_current_revision() == SCHEMA_HEAD:
                return  # another process has just migrated it
            config.attributes["connection"] = conn
            command.upgrade(config, "head")

    def schema_version(self) -> str | None:
        """The store's migration revision; None for a store with no schema yet."""
        with self.engine.connect() as conn:
            if not inspect(conn).has_table("alembic_version"):
                return None
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()

    def record_run(self, kind: str, started_at: datetime, exit_code: int, summary: Any) -> int:
        """A fleet run; its targets' scans name it with ``run_id``."""
        with self._transaction() as conn:
            row = conn.execute(
                schema.runs.insert().returning(schema.runs.c.id),
                {
                    "kind": kind,
                    "started_at": utc_naive(started_at),
                    "exit_code": exit_code,
                    "summary": json.dumps(summary, ensure_ascii=False),
                },
            )
            return int(row.scalar_one())

    def attach_to_run(self, scan_ids: Sequence[int], run_id: int) -> None:
        if not scan_ids:
            return
        with self._transaction() as conn:
            conn.execute(
                schema.scans.update()
                .where(schema.scans.c.id.in_(list(scan_ids)))
                .values(run_id=run_id)
            )

    def record(self, scan: ScanRecord) -> int:
        """Write one scan, its findings, clusters and capacity in one transaction."""
        with self._transaction() as conn:
            row = conn.execute(
                schema.scans.insert().returning(schema.scans.c.id),
                {
                    "run_id": scan.run_id,
                    "vcenter": scan.vcenter,
                    "vcenter_name": scan.vcenter_name,
                    "checked_at": utc_naive(scan.checked_at),
                    "recorded_at": utc_naive(datetime.now(UTC)),
                    "tool_version": scan.tool_version,
                    "rules_version": scan.rules_version,
                    "verdict": scan.verdict,
                    **{f"failed_{s}": scan.failed.get(s, 0) for s in SEVERITIES},
                    "waived": scan.waived,
                    "passed": scan.passed,
                    "unproven": scan.unproven,
                    "rule_errors": scan.rule_errors,
                },
            )
            scan_id = int(row.scalar_one())
            if scan.findings:
                conn.execute(
                    schema.findings.insert(),
                    [
                        {
                            "scan_id": scan_id,
                            "finding_id": f.id,
                            "rule": f.rule,
                            "object": f.object,
                            "object_kind": f.object_kind,
                            "status": f.status,
                            "severity": f.severity,
                            "cluster": f.cluster,
                            "message": f.message,
                            "first_seen": utc_naive(f.first_seen),
                        }
                        for f in scan.findings
                    ],
                )
            if scan.clusters:
                conn.execute(
                    schema.clusters.insert(),
                    [{"scan_id": scan_id, **vars(c)} for c in scan.clusters],
                )
            if scan.capacity:
                conn.execute(
                    schema.capacity.insert(),
                    [{"scan_id": scan_id, **vars(c)} for c in scan.capacity],
                )
        scan.id = scan_id
        return scan_id

    def latest(self, vcenter: str) -> ScanRecord | None:
        """The newest scan of ``vcenter``, with its findings; None before the first."""
        scans = self.scans(vcenter=vcenter, limit=1)
        if not scans:
            return None
        last = scans[0]
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(schema.findings).where(schema.findings.c.scan_id == last.id)
            ).mappings()
            last.findings = [
                StoredFinding(
                    id=r["finding_id"],
                    rule=r["rule"],
                    object=r["object"],
                    object_kind=r["object_kind"],
                    status=r["status"],
                    severity=r["severity"],
                    first_seen=r["first_seen"],
                    cluster=r["cluster"],
                    message=r["message"],
                )
                for r in rows
            ]
        return last

    def scans(
        self, vcenter: str | None = None, limit: int | None = None, by_name: bool = False
    ) -> list[ScanRecord]:
        """Scans newest first, of all or of one vCenter: by its key, or also by its own
        name (``by_name``, for people looking it up)."""
        query = select(schema.scans).order_by(
            schema.scans.c.checked_at.desc(), schema.scans.c.id.desc()
        )
        if vcenter is not None:
            match = schema.scans.c.vcenter == vcenter
            if by_name:
                match = match | (schema.scans.c.vcenter_name == vcenter)
            query = query.where(match)
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as conn:
            return [_scan(r) for r in conn.execute(query).mappings()]

    def vcenters(self) -> list[str]:
        """Every vCenter with a recorded scan, by name."""
        query = select(schema.scans.c.vcenter).distinct().order_by(schema.scans.c.vcenter)
        with self.engine.connect() as conn:
            return [str(v) for v in conn.execute(query).scalars()]

    def clusters_of(self, scan_ids: Sequence[int]) -> dict[int, list[ClusterRecord]]:
        return self._rows_of(schema.clusters, ClusterRecord, scan_ids)

    def capacity_of(self, scan_ids: Sequence[int]) -> dict[int, list[CapacityRecord]]:
        return self._rows_of(schema.capacity, CapacityRecord, scan_ids)

    def _rows_of(
        self, table: Table, record: type[R], scan_ids: Sequence[int]
    ) -> dict[int, list[R]]:
        """The rows of ``table`` belonging to each scan, as ``record``s (scan id left out)."""
        found: dict[int, list[R]] = {i: [] for i in scan_ids}
        if not scan_ids:
            return found
        query = select(table).where(table.c.scan_id.in_(list(scan_ids)))
        with self.engine.connect() as conn:
            for r in conn.execute(query).mappings():
                values = {k: v for k, v in r.items() if k != "scan_id"}
                found[r["scan_id"]].append(record(**values))
        return found

    def count_findings(self, scan_id: int) -> int:
        query = select(func.count()).where(schema.findings.c.scan_id == scan_id)
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())


def _scan(row: Any) -> ScanRecord:
    return ScanRecord(
        id=row["id"],
        run_id=row["run_id"],
        vcenter=row["vcenter"],
        vcenter_name=row["vcenter_name"],
        checked_at=row["checked_at"],
        tool_version=row["tool_version"],
        rules_version=row["rules_version"],
        verdict=row["verdict"],
        failed={s: row[f"failed_{s}"] for s in SEVERITIES},
        waived=row["waived"],
        passed=row["passed"],
        unproven=row["unproven"],
        rule_errors=row["rule_errors"],
    )


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


@retry(
    retry=retry_if_exception(_locked),
    stop=stop_after_delay(BUSY_TIMEOUT),
    wait=wait_exponential(multiplier=0.02, max=0.5),
    reraise=True,
)
def _wal(cursor: Any) -> None:
    """Put the file in WAL mode, once: the mode stays with the file.

    Switching the journal mode needs the file to itself, and SQLite answers "database is
    locked" at once, without its busy handler, while another process is creating or
    migrating the same new file; so the switch is retried for as long as a writer waits.
    """
    if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
        cursor.execute("PRAGMA journal_mode = WAL")


def _serialise_sqlite_writers(engine: Engine) -> None:
    """WAL, durable commits, foreign keys, and transactions that take the write lock first.

    pysqlite opens a transaction only before a write, so two writers can both read
    and then fail to upgrade their locks; BEGIN IMMEDIATE makes the second one wait
    (the SQLAlchemy documentation's recipe for SQLite transactions).
    """

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
        _wal(cursor)
        cursor.execute("PRAGMA synchronous = FULL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def open_store(location: str) -> Store:
    """Open (and create or upgrade) the store at a path or URL; raises HistoryError."""
    try:
        return Store(location)
    except (SQLAlchemyError, OSError, ValueError) as exc:
        raise HistoryError(f"{shown(location)}: {reason(exc)}") from exc


def reason(exc: BaseException) -> str:
    """One line: the driver's own message, without SQLAlchemy's background link."""
    original = getattr(exc, "orig", None) or exc
    text = str(original).strip().splitlines()
    return text[0] if text else exc.__class__.__name__
