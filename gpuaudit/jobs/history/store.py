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
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from tenacity import retry, retry_if_exception, stop_after_delay, wait_exponential

from gpuaudit import __version__
from gpuaudit.common import urls
from gpuaudit.errors import MissingExtra
from gpuaudit.jobs.history import schema
from gpuaudit.results import SEVERITIES

BUSY_TIMEOUT = 60.0  # seconds a writer waits for another one
R = TypeVar("R")  # a record read back from a per-scan table
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_MIGRATION_LOCK = 0x67707561  # "gpua": PostgreSQL advisory lock around migrations
# The newest migration: a store already at it opens without loading Alembic.
SCHEMA_HEAD = "0004"
# The columns of revision 0003, read and written as they are.
# What postgresql:// means: psycopg 3, installed with the extra gpuaudit[postgres].
SHIPPED_DRIVER = "postgresql+psycopg"
SIZE_COLUMNS = ("hosts", "vms", "gpus", "gpu_vms", "exit_code")


class HistoryError(Exception):
    """The store cannot be opened, read or written; the message names it, without password."""


class StoreTooNew(HistoryError):
    """The store's schema is newer than this program's: written by a later gpuaudit."""


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

    vcenter: str  # the server as it was named
    vcenter_name: str  # the vCenter's own name
    checked_at: datetime  # UTC, naive
    tool_version: str
    rules_version: str
    verdict: str
    failed: dict[str, int]
    waived: int
    passed: int
    rule_errors: int = 0
    unproven: int = 0  # unwaived findings not proven
    # The estate's size and the scan's exit status; None for scans kept before 0003.
    hosts: int | None = None
    vms: int | None = None
    gpus: int | None = None
    gpu_vms: int | None = None
    exit_code: int | None = None
    findings: list[StoredFinding] = field(default_factory=list)
    clusters: list[ClusterRecord] = field(default_factory=list)
    capacity: list[CapacityRecord] = field(default_factory=list)
    run_id: int | None = None
    id: int | None = None
    # The history's key (gpuaudit.jobs.history.track.vcenter_key); the name as given when
    # left empty.
    key: str = ""


@dataclass
class Pruned:
    """The scans of one vCenter that ``Store.prune`` deleted."""

    vcenter: str  # the name it was last scanned by
    scans: int
    oldest: datetime
    newest: datetime


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
    """The location for messages: a path as given; a URL with its password masked and
    without its query, or only its scheme when it cannot be parsed."""
    if "://" not in location:
        return location
    return urls.shown(location, path=True, mark="***")


def engine_url(location: str) -> URL:
    """The SQLAlchemy URL of a path or URL; raises ValueError, never quoting a password."""
    if "://" in location:
        try:
            urls.parse(location)
        except urls.URLError as exc:
            raise ValueError(str(exc)) from None
    try:
        url = make_url(to_url(location))
    except (ArgumentError, ValueError):
        raise ValueError("not a database URL: sqlite:///PATH or postgresql://HOST/DB") from None
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername=SHIPPED_DRIVER)
    if url.get_backend_name() not in ("sqlite", "postgresql"):
        raise ValueError("a history store is a SQLite file or a postgresql:// URL")
    return url


def check_location(location: str) -> None:
    """Refuse, before any scan, a location that can never work: a URL that cannot be
    parsed, another database, a driver that is not installed or is asyncio's.
    A store that merely cannot be reached now is left to fail when it is used.
    Raises HistoryError naming the location without its password, or MissingExtra
    when psycopg, the driver of the extra gpuaudit[postgres], is not installed."""
    try:
        url = engine_url(location)
        if isinstance(url.password, str):
            from gpuaudit.common.debuglog import add_secret

            add_secret(url.password)
        try:
            dialect = url.get_dialect()
        except ArgumentError:
            raise ValueError(f"no database driver {url.drivername!r}") from None
        if getattr(dialect, "is_async", False):
            raise ValueError(
                f"{url.drivername} is an asyncio driver, which gpuaudit does not use: "
                "write postgresql:// (psycopg)"
            )
        try:
            dialect.import_dbapi()
        except ImportError:
            if url.drivername == SHIPPED_DRIVER:  # the driver of the extra gpuaudit[postgres]
                raise MissingExtra(
                    shown(location), "the PostgreSQL driver (psycopg)", "postgres"
                ) from None
            raise ValueError(
                f"the driver of {url.drivername} is not installed: write postgresql:// "
                "(psycopg, with: pip install 'gpuaudit[postgres]')"
            ) from None
    except ValueError as exc:
        raise HistoryError(f"{shown(location)}: {exc}") from None


class Store:
    """An open history store whose schema is at the newest version."""

    def __init__(self, location: str, read_only: bool = False) -> None:
        self.location = shown(location)
        url = engine_url(location)
        self.sqlite = url.get_backend_name() == "sqlite"
        args: dict[str, Any] = {"timeout": BUSY_TIMEOUT} if self.sqlite else {"connect_timeout": 10}
        if read_only and self.sqlite and url.database:
            # A SQLite file in a folder this user cannot write: read as it is, without
            # the WAL files SQLite would otherwise create beside it.
            query = {"mode": "ro", "immutable": "1", "uri": "true"}
            url = url.set(database=f"file:{Path(url.database).resolve()}", query=query)
            self.engine: Engine = create_engine(url, connect_args=args)
            found = self.schema_version()
            if found != SCHEMA_HEAD:
                raise HistoryError(f"read-only, and its schema ({found}) is not {SCHEMA_HEAD}")
            return
        if self.sqlite and url.database:
            Path(url.database).parent.mkdir(parents=True, exist_ok=True)
        self.engine = create_engine(url, connect_args=args)
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
        """Bring the schema to the newest version, once however many processes start.

        A store at a revision this program does not know (written by a newer
        gpuaudit) is refused as it is: StoreTooNew, and nothing is changed.
        """
        found = self.schema_version()
        if found == SCHEMA_HEAD:
            return
        from alembic import command
        from alembic.config import Config
        from alembic.runtime.migration import MigrationContext

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        _refuse_unknown(found, config)
        with self._transaction() as conn:
            if not self.sqlite:
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})")
            found = MigrationContext.configure(conn).get_current_revision()
            if found == SCHEMA_HEAD:
                return  # another process has just migrated it
            _refuse_unknown(found, config)
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
                    "vcenter_key": scan.key or scan.vcenter,
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
                    **{key: getattr(scan, key) for key in SIZE_COLUMNS},
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
        """Scans newest first, of all or of one vCenter: by its key, or (``by_name``, for
        people looking it up) by any name it was scanned by, or its own name; a name
        gives the whole history of each vCenter it names."""
        query = select(schema.scans).order_by(
            schema.scans.c.checked_at.desc(), schema.scans.c.id.desc()
        )
        if vcenter is not None:
            query = query.where(self._of(vcenter, by_name))
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as conn:
            return [_scan(r) for r in conn.execute(query).mappings()]

    @staticmethod
    def _of(vcenter: str, by_name: bool) -> Any:
        """The condition on scans of the vCenter keyed ``vcenter`` or, ``by_name``, of every
        vCenter that ``vcenter`` keys or names."""
        scans = schema.scans
        if not by_name:
            return scans.c.vcenter_key == vcenter
        named = (
            (scans.c.vcenter_key == vcenter)
            | (scans.c.vcenter == vcenter)
            | (scans.c.vcenter_name == vcenter)
        )
        return scans.c.vcenter_key.in_(select(scans.c.vcenter_key).where(named))

    def vcenters(self) -> list[str]:
        """The key of every vCenter with a recorded scan, in the order of the name it was
        last scanned by."""
        scans = schema.scans
        query = select(scans.c.vcenter_key, scans.c.vcenter).order_by(
            scans.c.checked_at.desc(), scans.c.id.desc()
        )
        newest: dict[str, str] = {}
        with self.engine.connect() as conn:
            for key, name in conn.execute(query).all():
                newest.setdefault(str(key), str(name))
        return sorted(newest, key=lambda key: (newest[key], key))

    def latest_of_each(self) -> list[ScanRecord]:
        """The newest scan of every vCenter, by the name it was last scanned by."""
        return [scan for vcenter in self.vcenters() for scan in self.scans(vcenter, limit=1)]

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

    def prune(self, before: datetime, vcenter: str | None = None) -> list[Pruned]:
        """Delete the scans checked before ``before`` (of one vCenter, by its key or any of
        its names, or of all), with their findings, clusters and capacity, in one
        transaction; then the fleet runs started before it that no scan names any more."""
        cutoff = utc_naive(before)
        scans = schema.scans
        old = scans.c.checked_at < cutoff
        if vcenter is not None:
            old = old & self._of(vcenter, by_name=True)
        query = (
            select(scans.c.vcenter_key, scans.c.vcenter, scans.c.checked_at)
            .where(old)
            .order_by(scans.c.checked_at, scans.c.id)
        )
        with self._transaction() as conn:
            found: dict[str, Pruned] = {}
            for key, name, when in conn.execute(query).all():
                kept = found.setdefault(str(key), Pruned(str(name), 0, when, when))
                # Oldest first: each vCenter is named as it was last scanned.
                kept.vcenter, kept.scans, kept.newest = str(name), kept.scans + 1, when
            removed = sorted(found.values(), key=lambda p: p.vcenter)
            ids = select(scans.c.id).where(old).scalar_subquery()
            for table in (schema.findings, schema.clusters, schema.capacity):
                conn.execute(table.delete().where(table.c.scan_id.in_(ids)))
            conn.execute(scans.delete().where(old))
            if vcenter is None:
                named = select(scans.c.run_id).where(scans.c.run_id.is_not(None))
                conn.execute(
                    schema.runs.delete().where(
                        (schema.runs.c.started_at < cutoff) & schema.runs.c.id.not_in(named)
                    )
                )
        return removed

    def count_findings(self, scan_id: int) -> int:
        query = select(func.count()).where(schema.findings.c.scan_id == scan_id)
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())


def known_revisions(config: Any) -> set[str]:
    """The migration revisions this program ships."""
    from alembic.script import ScriptDirectory

    return {script.revision for script in ScriptDirectory.from_config(config).walk_revisions()}


def _refuse_unknown(found: str | None, config: Any) -> None:
    if found is None or found in known_revisions(config):
        return
    raise StoreTooNew(
        f"its schema is at revision {_printable(found)}, newer than {SCHEMA_HEAD}, the newest "
        f"gpuaudit {__version__} knows (a newer gpuaudit wrote it): upgrade gpuaudit, or "
        "give another --history"
    )


def _printable(text: str) -> str:
    return text if text.isascii() and text.isprintable() and len(text) <= 40 else repr(text[:40])


def _scan(row: Any) -> ScanRecord:
    return ScanRecord(
        id=row["id"],
        run_id=row["run_id"],
        vcenter=row["vcenter"],
        vcenter_name=row["vcenter_name"],
        key=row["vcenter_key"],
        checked_at=row["checked_at"],
        tool_version=row["tool_version"],
        rules_version=row["rules_version"],
        verdict=row["verdict"],
        failed={s: row[f"failed_{s}"] for s in SEVERITIES},
        waived=row["waived"],
        passed=row["passed"],
        unproven=row["unproven"],
        rule_errors=row["rule_errors"],
        **{key: row[key] for key in SIZE_COLUMNS},
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


def open_store(location: str, read_only: bool = False) -> Store:
    """Open (and create or upgrade) the store at a path or URL; raises HistoryError,
    whatever went wrong (Alembic's and the drivers' errors included). ``read_only``
    opens a SQLite file as it is: no upgrade, no write."""
    try:
        return Store(location, read_only)
    except HistoryError as exc:
        raise type(exc)(f"{shown(location)}: {exc}") from exc
    except Exception as exc:  # any failure of an optional store is one line
        raise HistoryError(f"{shown(location)}: {reason(exc)}") from exc


def reason(exc: BaseException) -> str:
    """One line: the driver's own message, without SQLAlchemy's background link."""
    original = getattr(exc, "orig", None) or exc
    text = str(original).strip().splitlines()
    return text[0] if text else exc.__class__.__name__
