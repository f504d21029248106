"""Scanning many vCenters at once: a targets file, bounded concurrency, a fleet summary.

One target's failure (unreachable, bad login, timeout, a bad policy) is recorded
as that target's outcome and never stops, delays past its own timeout, or loses
the reports of the others. The exit status of a fleet scan is the worst of its
targets' (70 > 3 > 2 > 1 > 0).

Each target of a fleet is scanned in a process of its own (forked, so it shares
what is loaded already), which hands back its outcome and ends. Its memory goes back
to the system when it ends, so the fleet's memory is the sum of the running scans'
own, which the schedule (gpuaudit.jobs.fleet_schedule) bounds; threads in one process
kept each finished scan's freed memory in the process, and every scan's garbage
collections walked every other scan's objects. A fleet of one target runs it in
this process.

The processes are started here rather than by concurrent.futures' process pool: the
pool pickles each piece of work (the targets' scans are closures over the run's
settings), a target whose process dies breaks the whole pool and every target still
waiting with it, and a stopped fleet cannot reach the scans running in it. One
``multiprocessing.Process`` per target, with a pipe for its outcome, makes a dead
process that target's error alone and lets a stop reach each scan.
"""

from __future__ import annotations

import itertools
import json
import logging
import multiprocessing
import resource
import signal
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

import yaml
from pydantic import Field, model_validator

from gpuaudit.common.files import write_new
from gpuaudit.common.yamlread import InputFileError, InputModel, Text, YamlReader, problem
from gpuaudit.errors import AuditError, ExitCode, ReportWriteError, exit_code, stage_of
from gpuaudit.jobs import fleet_schedule
from gpuaudit.jobs.outcome import verdict
from gpuaudit.results import AuditResult
from gpuaudit.vsphere import connect, obtain
from gpuaudit.vsphere.credentials import CredentialError, Credentials, read_password_file

if TYPE_CHECKING:  # the report package is slow to import: the command line starts without it
    from gpuaudit.report.tables import Table

log = logging.getLogger("gpuaudit.jobs.fleet")

DEFAULT_CONCURRENCY = 4
MAX_CONCURRENCY = 32


class TargetsError(InputFileError):
    """A targets file that cannot be used."""


@dataclass(frozen=True)
class Target:
    name: str
    server: str
    user: str
    password_env: str | None = None
    password_file: str | None = None
    insecure: bool = False
    ca_file: str | None = None
    timeout: float = connect.DEFAULT_TIMEOUT
    policy: str | None = None


@dataclass
class Fleet:
    targets: list[Target]
    concurrency: int = DEFAULT_CONCURRENCY


class TargetDefaults(InputModel):
    """Settings every target takes unless it sets its own.

    Only the keys a file gives count (``model_dump(exclude_unset=True)``): the
    defaults here are never used, Target's are.
    """

    user: Text = ""
    password_env: Text = ""
    password_file: Text = ""
    insecure: bool = False
    ca_file: Text = ""
    # The bounds of --timeout.
    timeout: float = Field(
        default=connect.DEFAULT_TIMEOUT,
        ge=connect.MIN_TIMEOUT,
        le=connect.MAX_TIMEOUT,
        allow_inf_nan=False,
    )
    policy: Text = ""

    @model_validator(mode="after")
    def _one_password_source(self) -> TargetDefaults:
        if {"password_env", "password_file"} <= self.model_fields_set:
            raise problem("password_env and password_file are exclusive")
        return self


class TargetEntry(TargetDefaults):
    name: Text = ""
    server: Text


class TargetsFile(InputModel):
    concurrency: int = Field(default=DEFAULT_CONCURRENCY, ge=1, le=MAX_CONCURRENCY)
    defaults: TargetDefaults = Field(default_factory=TargetDefaults)
    targets: list[TargetEntry] = Field(min_length=1)


class _TargetsReader(YamlReader):
    error = TargetsError
    missing: ClassVar[dict[str, str]] = {
        "server": "no server",
        "targets": "no 'targets' list",
    }

    def __init__(self, source: str, base: Path) -> None:
        super().__init__(source)
        self.base = base

    def fleet(self, root: yaml.Node | None) -> Fleet:
        if root is None:
            raise self.error(self.source, None, "empty: it needs a list of targets")
        file = self.validate(TargetsFile, root, "targets file")
        defaults = file.defaults.model_dump(exclude_unset=True)
        # What spans records stays here: a user from either place, one name per target.
        targets: list[Target] = []
        names: set[str] = set()
        for i, entry in enumerate(file.targets):
            node, where = self.node_at(root, ("targets", i)), f"targets[{i}]"
            settings = {**defaults, **entry.model_dump(exclude_unset=True)}
            if "user" not in settings:
                raise self.fail(node, f"{where}: no user (set it here or in defaults)")
            for key in ("ca_file", "password_file", "policy"):
                if key in settings:  # relative to the targets file
                    settings[key] = str(self.base / settings[key])
            # A name shows on the console and in file names: never a user:password@.
            settings.setdefault("name", connect.shown_server(settings["server"]))
            if settings["name"] in names:
                raise self.fail(node, f"{where}: a second target named {settings['name']!r}")
            names.add(settings["name"])
            targets.append(Target(**settings))
        return Fleet(targets=targets, concurrency=file.concurrency)


def load_targets(path: str | Path) -> Fleet:
    """Read a targets file; raises TargetsError naming the file and line."""
    reader = _TargetsReader(str(path), Path(path).resolve().parent)
    return reader.fleet(reader.read_file(path))


@dataclass
class TargetOutcome:
    target: Target
    exit_code: ExitCode
    verdict: str  # PASS, FAIL, NOT PROVEN or ERROR
    error: str | None = None
    reports: list[Path] = field(default_factory=list)
    failed: dict[str, int] = field(default_factory=dict)  # unwaived failures by severity
    passed: int = 0
    waived: int = 0
    hosts: int = 0
    gpus: int = 0
    gpu_vms: int = 0
    designs: dict[str, str] = field(default_factory=dict)
    tolerates: dict[str, int] = field(default_factory=dict)
    # The fleet workbook's merged sheets of this target, spooled to disk
    # (report.fleet.target_sheets): the audit itself is not kept.
    sheets: list[Table] | None = None
    scan_id: int | None = None  # the scan's row in the history store
    warnings: list[str] = field(default_factory=list)  # the history store's trouble
    peak_rss: int | None = None  # bytes: the high-water mark of the scan's own process


def _password(target: Target, env: dict[str, str]) -> str:
    if target.password_file:
        return read_password_file(
            target.password_file, lambda m: log.warning("%s: %s", target.name, m)
        )
    name = target.password_env or "GPUAUDIT_PASSWORD"
    password = env.get(name)
    if password is None:
        raise CredentialError(f"no password: the variable {name} is not set")
    return password


def scan_target(
    target: Target,
    output_dir: Path,
    formats: Sequence[str],
    fail_on: str,
    env: dict[str, str],
    now: datetime,
    history: str | None = None,
    spool: str | None = None,
) -> TargetOutcome:
    """Scan one target; every failure becomes its outcome, never an exception.

    Its merged sheets are spooled in the folder ``spool`` when given, so that they
    can be handed from the scan's process to the fleet's (report.spool)."""
    from gpuaudit.jobs import scan as pipeline

    try:
        creds = Credentials(
            server=target.server,
            user=target.user,
            password=_password(target, env),
            insecure=target.insecure,
            ca_file=target.ca_file,
        )
        source = obtain.Live(credentials=creds, timeout=target.timeout)
        done = pipeline.audit(
            source,
            output_dir,
            formats,
            fail_on,
            target.policy,
            server=target.name,
            now=now,
            history=history,
        )
    except CredentialError as exc:
        return TargetOutcome(target, ExitCode.INPUT, "ERROR", error=str(exc))
    except ReportWriteError as exc:
        error = f"cannot write reports: {exc.reason}"
        return TargetOutcome(target, exit_code(exc), "ERROR", error=error)
    except AuditError as exc:
        return TargetOutcome(target, exit_code(exc), "ERROR", error=str(exc))
    except Exception as exc:  # a bug in one target's scan must not take the fleet down
        stage = stage_of(exc) or "the scan"
        message = f"{stage} failed unexpectedly: {exc.__class__.__name__}: {exc}"
        log.debug("%s: %s", target.name, message, exc_info=exc)
        return TargetOutcome(target, ExitCode.CRASH, "ERROR", error=message)
    inventory = done.inventory
    summary = done.summary
    return TargetOutcome(
        target,
        exit_code(done),
        verdict(summary),
        reports=done.reports,
        failed=summary.failed,
        passed=summary.passed,
        waived=summary.waived,
        hosts=len(inventory.hosts),
        gpus=sum(len(h.gpus) for h in inventory.hosts),
        gpu_vms=sum(1 for v in inventory.vms if v.gpus),
        designs=summary.designs,
        tolerates=summary.tolerates,
        sheets=_sheets(done.result, spool),
        scan_id=done.scan_id,
        warnings=done.warnings,
    )


def _sheets(result: AuditResult, spool: str | None) -> list[Table]:
    from gpuaudit.report.fleet import target_sheets

    return target_sheets(result, spool)


def target_sizes(targets: Sequence[Target], history: str | None) -> list[int | None]:
    """Each target's objects (hosts + VMs) in its last scan in the history; None if unknown.

    A history that cannot be read leaves every size unknown: the scans will say why.
    """
    if history is None:
        return [None] * len(targets)
    from gpuaudit.jobs.history import open_store
    from gpuaudit.jobs.history.listing import missing_sqlite

    if missing_sqlite(history):
        return [None] * len(targets)
    try:
        store = open_store(history, read_only=True)
    except Exception as exc:  # any trouble here is reported by the scans themselves
        log.debug("no sizes from the history: %s", exc)
        return [None] * len(targets)
    sizes: list[int | None] = []
    try:
        for target in targets:
            # Before the scan its UUID is unknown: the name finds the vCenter's history.
            last = store.scans(vcenter=_history_name(target), limit=1, by_name=True)
            known = last and last[0].hosts is not None and last[0].vms is not None
            sizes.append((last[0].hosts or 0) + (last[0].vms or 0) if known else None)
    except Exception as exc:
        log.debug("no sizes from the history: %s", exc)
        return [None] * len(targets)
    finally:
        store.close()
    return sizes


def _history_name(target: Target) -> str:
    """The name the history keeps beside a target's scans.

    As gpuaudit.jobs.history.track.vcenter_named keeps it.
    """
    try:
        return connect.parse_server(target.server).display
    except Exception:  # a server its scan will refuse: it has no scan in the history
        return target.server


def scan_fleet(
    fleet: Fleet,
    output_dir: Path,
    formats: Sequence[str],
    fail_on: str,
    env: dict[str, str],
    progress: Callable[[str], None] | None = None,
    now: datetime | None = None,
    history: str | None = None,
    max_memory: int | None = None,
) -> list[TargetOutcome]:
    """Scan every target, at most ``fleet.concurrency`` at a time; results in file order.

    Targets start largest first, and only while the expected peaks of the running
    ones stay within ``max_memory`` bytes (default: half of the machine's memory;
    gpuaudit.jobs.fleet_schedule). Each runs in a process of its own, unless the fleet
    has only one target.
    """
    say = progress or (lambda _m: None)
    stamp = now or datetime.now(UTC)
    finished = itertools.count(1)
    budget = max_memory or fleet_schedule.default_budget()
    peaks = [fleet_schedule.expected_peak(n) for n in target_sizes(fleet.targets, history)]

    def done(outcome: TargetOutcome) -> TargetOutcome:
        say(f"[{next(finished)}/{len(fleet.targets)}] {outcome.target.name}: {outcome.verdict}")
        if outcome.peak_rss is not None:
            log.debug("%s: peak %d MiB", outcome.target.name, outcome.peak_rss // (1 << 20))
        return outcome

    if len(fleet.targets) == 1:
        target = fleet.targets[0]
        return [done(scan_target(target, output_dir, formats, fail_on, env, stamp, history))]

    waiting = fleet_schedule.start_order(peaks)
    running: dict[Connection, tuple[int, BaseProcess]] = {}
    outcomes: dict[int, TargetOutcome] = {}
    with tempfile.TemporaryDirectory(prefix="gpuaudit-fleet-") as spool:

        def scan_in_child(target: Target) -> TargetOutcome:
            return scan_target(target, output_dir, formats, fail_on, env, stamp, history, spool)

        try:
            while waiting or running:
                held = [index for index, _ in running.values()]
                # This process's own memory is part of the budget too.
                room = budget - _own_peak()
                for index in fleet_schedule.to_start(waiting, held, peaks, room, fleet.concurrency):
                    waiting.remove(index)
                    log.debug("starting %s", fleet.targets[index].name)
                    reader, process = _start(scan_in_child, fleet.targets[index])
                    running[reader] = (index, process)
                for ready in multiprocessing.connection.wait(list(running)):
                    reader = cast(Connection, ready)  # wait() gives back what it was given
                    index, process = running.pop(reader)
                    outcomes[index] = done(_receive(reader, process, fleet.targets[index]))
        finally:
            _stop_all([process for _, process in running.values()])
    return [outcomes[i] for i in range(len(fleet.targets))]


def _start(
    scan_one: Callable[[Target], TargetOutcome], target: Target
) -> tuple[Connection, BaseProcess]:
    """Start ``scan_one(target)`` in a forked process; the connection its outcome comes by."""
    context = multiprocessing.get_context("fork")  # the child needs nothing pickled to start
    reader, writer = context.Pipe(duplex=False)
    process = context.Process(
        target=_child, args=(scan_one, target, writer), name=f"gpuaudit-{target.name}"
    )
    process.start()
    writer.close()  # the child's copy stays open: the reader sees EOF when the child ends
    return reader, process


def _child(scan_one: Callable[[Target], TargetOutcome], target: Target, writer: Connection) -> None:
    """The scan's process: the outcome goes back to the fleet; a signal ends it quietly."""
    # On a terminal the fleet's live progress line routes standard error through itself,
    # under a lock its refresh thread may have held at the fork, and would redraw from
    # here too: the scan writes to the streams the process started with instead.
    if sys.__stderr__ is not None:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    try:
        outcome = scan_one(target)
        outcome.peak_rss = _own_peak()
        writer.send(outcome)
    except KeyboardInterrupt:
        sys.exit(128 + signal.SIGINT)
    except BaseException as exc:  # Stopped (SIGTERM, SIGHUP), cleaned up on the way here
        sys.exit(getattr(exc, "exit_code", ExitCode.CRASH))


def _own_peak() -> int:
    """This process's high-water mark of resident memory, bytes (Linux counts KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _receive(reader: Connection, process: BaseProcess, target: Target) -> TargetOutcome:
    """The outcome a scan's process sent; an ERROR outcome if it ended without one."""
    outcome: TargetOutcome | None
    try:
        outcome = reader.recv()
    except (EOFError, OSError):
        outcome = None
    finally:
        reader.close()
    process.join()
    if outcome is not None:
        return outcome
    code = process.exitcode
    how = f"killed by {signal.Signals(-code).name}" if code and code < 0 else f"exit status {code}"
    error = f"the scan's process ended without a result ({how})"
    return TargetOutcome(target, ExitCode.CRASH, "ERROR", error=error)


def _stop_all(processes: Sequence[BaseProcess]) -> None:
    """Ask every scan still running to stop (each cleans up: its session, its files), then wait."""
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=30)
        if process.is_alive():
            process.kill()
            process.join()


def fleet_exit_code(outcomes: Sequence[TargetOutcome]) -> ExitCode:
    """The worst target's exit status (70 > 3 > 2 > 1 > 0)."""
    return max((o.exit_code for o in outcomes), default=ExitCode.OK)


def summary_json(targets: list[dict[str, Any]], now: datetime, **extra: Any) -> dict[str, Any]:
    """The fleet summary around its targets' records: its exit status is the worst one's."""
    return {
        "generator": {"name": "gpuaudit", "version": _version()},
        "scanned_at": now.replace(microsecond=0).isoformat(),
        **extra,
        "exit_code": max((int(t["exit_code"]) for t in targets), default=0),
        "targets": targets,
    }


def fleet_json(outcomes: Sequence[TargetOutcome], now: datetime) -> dict[str, Any]:
    return summary_json(
        [
            {
                "name": o.target.name,
                "server": connect.shown_server(o.target.server),
                "verdict": o.verdict,
                "exit_code": int(o.exit_code),
                "error": o.error,
                "failed_by_severity": o.failed,
                "passed": o.passed,
                "waived": o.waived,
                "hosts": o.hosts,
                "gpus": o.gpus,
                "gpu_vms": o.gpu_vms,
                "designs": o.designs,
                "tolerates": o.tolerates,
                "reports": [p.name for p in o.reports],
            }
            for o in outcomes
        ],
        now,
    )


def history_json(location: str, now: datetime) -> dict[str, Any]:
    """The fleet summary of the latest scan of every vCenter in the history store.

    Raises HistoryError (a store that cannot be opened or read, or holds no scan).
    """
    from gpuaudit.jobs.history import HistoryError, open_store, reason, shown
    from gpuaudit.jobs.history.fleet import latest_targets
    from gpuaudit.jobs.history.listing import missing_sqlite

    if missing_sqlite(location):  # a report creates no store
        raise HistoryError(f"{shown(location)}: no scan recorded yet (no such file)")
    store = open_store(location)
    try:
        targets = latest_targets(store, now)
    except Exception as exc:  # any database error is one line
        raise HistoryError(f"{shown(location)}: {reason(exc)}") from exc
    finally:
        store.close()
    if not targets:
        raise HistoryError(f"{shown(location)}: no scan recorded yet")
    return summary_json(targets, now, source="history")


def record_fleet_run(outcomes: Sequence[TargetOutcome], history: str, now: datetime) -> list[str]:
    """Keep the fleet summary as a run and group its targets' scans under it.

    Returns the warnings: a store that fails costs no report and no exit status.
    """
    from gpuaudit.jobs.history import HistoryError, open_store, reason, shown

    try:
        store = open_store(history)
    except HistoryError as exc:
        return [f"history: cannot open {exc}"]
    try:
        data = fleet_json(outcomes, now)
        run = store.record_run("fleet", now, int(data["exit_code"]), data)
        store.attach_to_run([o.scan_id for o in outcomes if o.scan_id is not None], run)
    except Exception as exc:  # the reports are written already
        return [f"history: cannot record the fleet run in {shown(history)}: {reason(exc)}"]
    finally:
        store.close()
    return []


def _version() -> str:
    from gpuaudit import __version__

    return __version__


def write_fleet_summary(
    outcomes: Sequence[TargetOutcome], output_dir: Path, now: datetime
) -> list[Path]:
    """The fleet summary as HTML, xlsx and JSON, beside the targets' own reports.

    Its name, gpuaudit-fleet-<time>, is one that no target's reports can have.
    Raises ReportWriteError.
    """
    data = fleet_json(outcomes, now)
    return write_summary(
        data, [o.sheets for o in outcomes if o.sheets is not None], output_dir, now
    )


def write_summary(
    data: dict[str, Any], sheets: Sequence[Sequence[Table]], output_dir: Path, now: datetime
) -> list[Path]:
    """Write a fleet summary's HTML, xlsx and JSON; raises ReportWriteError."""
    from gpuaudit.report.fleet import render_fleet_html, render_fleet_xlsx
    from gpuaudit.report.naming import fleet_stem

    files = [
        (".html", render_fleet_html(data).encode("utf-8")),
        (".xlsx", render_fleet_xlsx(data, sheets=sheets)),
        (
            ".json",
            (json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode(
                "utf-8"
            ),
        ),
    ]
    try:
        return write_new(output_dir, fleet_stem(now), files)
    except OSError as exc:
        raise ReportWriteError(
            str(output_dir), exc.strerror or str(exc), "the fleet summary"
        ) from exc
