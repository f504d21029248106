"""One audit from start to end: obtain an inventory, check it, write the reports, conclude.

``audit`` is what ``gpuaudit scan`` and every target of a fleet scan run; ``compare``
is what ``gpuaudit diff`` runs; ``plan`` what ``gpuaudit plan`` runs. None prints or
exits: each returns an outcome or raises an ``AuditError`` (gpuaudit.errors), and the
caller picks the exit status.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from gpuaudit.common.progress import Progress
from gpuaudit.errors import (
    ConnectionFailed,
    InputError,
    MissingExtra,
    ReportWriteError,
    during,
    exit_code,
)
from gpuaudit.inventory import Inventory
from gpuaudit.jobs.outcome import Summary, baseline_statuses, failed_keys, summarise, with_status
from gpuaudit.results import AuditResult, PlanComparison
from gpuaudit.verdict.judgement import judge, nothing_examined
from gpuaudit.vsphere import connect
from gpuaudit.vsphere import obtain as sources

if TYPE_CHECKING:
    from gpuaudit.jobs.diff import ReportDiff
    from gpuaudit.jobs.history import Store
    from gpuaudit.kubernetes.model import Cluster as KubernetesCluster
    from gpuaudit.model.policy import Policy

# A stream takes one report: the JSON family is what a pipe reads.
STREAMABLE_FORMATS = ("json", "sarif")


@dataclass
class ScanOutcome:
    """What one audit concluded, and where its reports went."""

    result: AuditResult
    summary: Summary
    reports: list[Path] = field(default_factory=list)  # none when written to a stream
    removed: list[Path] = field(default_factory=list)  # older report sets, with keep
    latest: list[Path] = field(default_factory=list)  # the latest names, with latest
    # One line each: what went wrong with the history store (the reports are written).
    warnings: list[str] = field(default_factory=list)
    scan_id: int | None = None  # the scan's row in the history store

    @property
    def blocking(self) -> bool:
        """A failure, or a finding not proven, at or above --fail-on: exit status 1."""
        return self.summary.blocking or self.summary.blocking_unproven

    @property
    def inventory(self) -> Inventory:
        return self.result.inventory


def audit(
    source: sources.Source,
    out: Path | BinaryIO,
    formats: Sequence[str],
    fail_on: str = "high",
    policy: str | None = None,
    baseline: str | None = None,
    server: str | None = None,
    now: datetime | None = None,
    progress: Progress | None = None,
    create_baseline: bool = False,
    keep: int | None = None,
    latest: bool = False,
    history: str | None = None,
    kubernetes: Sequence[str] = (),
    waivers: Sequence[str] = (),
    strict_waivers: bool = False,
) -> ScanOutcome:
    """Audit ``source`` against ``policy`` and write ``formats`` to ``out``.

    ``out`` is a folder, or a binary stream that takes exactly one format of
    STREAMABLE_FORMATS. ``server`` names the reports (by default, the source's
    name); ``baseline``, an earlier JSON report, makes only new findings count.
    With ``create_baseline``, a ``baseline`` that does not exist yet is written
    from this scan, which then has no new findings. ``keep`` deletes all but the
    newest report sets of this server in the folder; ``latest`` points
    gpuaudit-<server>-latest.<extension> at this scan's reports. ``kubernetes``
    names files of ``kubectl get nodes,pods -o json``, one per Kubernetes cluster.
    ``history``, a path or database URL, gives the findings their age and keeps
    the scan; a store that fails becomes a warning, never a lost report.
    ``waivers`` are files of waivers added to the policy's. A waiver that covers no
    finding, or a cluster pattern that names no cluster, is a warning, or with
    ``strict_waivers`` an InputError before any report is written.
    Raises InputError, ConnectionFailed or ReportWriteError.
    """
    say = progress or (lambda _m: None)
    started = time.monotonic()
    with during("reading the policy"):
        loaded_policy = with_waivers(load_policy(policy), waivers)
    with during("reading the Kubernetes files"):
        clusters = load_kubernetes(kubernetes)
    bootstrap = bool(create_baseline and baseline and not Path(baseline).exists())
    with during("reading the baseline"):
        statuses = None if bootstrap else load_baseline(baseline)
        known = None if statuses is None else with_status(statuses)
        waived_before = set() if statuses is None else with_status(statuses, ["waived"])
    inventory = obtain(source, say)
    say("checking")
    result = check(inventory, loaded_policy, policy, say, clusters)
    stale = stale_waivers(loaded_policy, result)
    if stale and strict_waivers:
        raise InputError(f"--strict-waivers: {'; '.join(stale)}")
    if bootstrap and not nothing_examined(result):
        known = failed_keys(result)  # the first night: this scan is the baseline
    result.judgement = judge(result, fail_on, known)
    result.duration_seconds = round(time.monotonic() - started, 3)
    keeper = Keeper(history)
    keeper.annotate(result, None if bootstrap else baseline)
    say("writing reports")
    name = server if server is not None else sources.server_name(source)
    if isinstance(out, Path) and (keep is not None or latest):
        reports, tidied = _write_and_tidy(result, out, formats, name, now, keep, latest)
    else:
        reports, tidied = write(result, out, formats, name, now), ([], [])
    with during("summarising the findings"):
        done = ScanOutcome(
            result=result,
            summary=summarise(result, fail_on, known, waived_before),
            reports=reports,
        )
    try:
        if bootstrap and baseline:
            with during("writing the baseline"):
                _bootstrap_baseline(done, Path(baseline))
    finally:  # kept even when the baseline cannot be written, with the status it had then
        done.scan_id = keeper.record(result, exit_code(done))
        done.warnings = [*stale, *keeper.warnings]
    done.latest, done.removed = tidied
    return done


def _bootstrap_baseline(done: ScanOutcome, path: Path) -> None:
    """Write this scan's JSON report as the baseline: its failures are the accepted ones.

    A scan that examined nothing (DATA-02) makes no baseline: the next one would
    otherwise count every finding of a real estate as new, silently accepted none.
    """
    if done.summary.nothing_examined:
        return
    from gpuaudit.common.files import write_atomic
    from gpuaudit.report import RENDERERS

    try:
        write_atomic(path, RENDERERS["json"](done.result))
    except OSError as exc:
        raise ReportWriteError(str(path), exc.strerror or str(exc), "the baseline") from exc
    done.summary.baseline_created = path


def _write_and_tidy(
    result: AuditResult,
    folder: Path,
    formats: Sequence[str],
    server: str,
    now: datetime | None,
    keep: int | None,
    latest: bool,
) -> tuple[list[Path], tuple[list[Path], list[Path]]]:
    """Write the reports, point the latest names and prune, under the folder's lock
    (gpuaudit.jobs.retention explains why the three go together)."""
    from gpuaudit.jobs import retention

    try:
        with retention.locked(folder, server):
            reports = write(result, folder, formats, server, now)
            with during("keeping the newest reports and the latest names"):
                return reports, retention.tidy(reports, folder, server, keep, latest)
    except OSError as exc:
        raise ReportWriteError(str(folder), exc.strerror or str(exc)) from exc


class Keeper:
    """The history store of one audit: each failure is one warning, and it stops there."""

    def __init__(self, location: str | None) -> None:
        self.location = location
        self.warnings: list[str] = []
        self._store: Store | None = None

    def _open(self) -> Store | None:
        if self.location is None or self.warnings:
            return None
        from gpuaudit.jobs import history  # SQLAlchemy and Alembic load only when needed

        if self._store is None:
            try:
                self._store = history.open_store(self.location)
            except Exception as exc:  # any failure of an optional store is one warning
                self._fail("cannot open", exc)
        return self._store

    def _fail(self, what: str, exc: Exception) -> None:
        from gpuaudit.jobs import history

        reason = str(exc) if isinstance(exc, history.HistoryError) else history.reason(exc)
        expected = ("sqlalchemy", "sqlite3", "psycopg", "alembic", "gpuaudit.jobs.history")
        if not isinstance(exc, OSError) and not type(exc).__module__.startswith(expected):
            reason = f"{type(exc).__name__}: {reason}"  # a bug, not the store's state
        where = history.shown(self.location or "")
        if not reason.startswith(where):
            reason = f"{where}: {reason}"
        self.warnings.append(f"history: {what} {reason}")
        if self._store is not None:
            self._store.close()
            self._store = None

    def annotate(self, result: AuditResult, baseline: str | None) -> None:
        from gpuaudit.jobs import history

        known: dict[str, str] | None = None
        if baseline:
            try:
                known = history.baseline_first_seen(baseline)
            except ValueError:
                known = None  # load_baseline has said what is wrong with it
        store = self._open()
        try:
            history.annotate(store, result, known)
        except Exception as exc:  # a store that fails never costs the reports
            self._fail("cannot read", exc)
            history.annotate(None, result, known)

    def record(self, result: AuditResult, code: int | None = None) -> int | None:
        from gpuaudit.jobs import history

        store = self._open()
        if store is None:
            return None
        try:
            return history.record(store, result, exit_code=code)
        except Exception as exc:  # the reports are written already
            self._fail("cannot record the scan in", exc)
            return None
        finally:
            if self._store is not None:
                self._store.close()


def load_policy(path: str | None) -> Policy | None:
    """The policy at ``path``, or None (the default policy) without one."""
    if not path:
        return None
    from gpuaudit.model.policy_file import PolicyError
    from gpuaudit.model.policy_file import load_policy as load
    from gpuaudit.rules import catalogue

    try:
        return load(path, rule_ids=[r.id for r in catalogue()])
    except PolicyError as exc:
        raise InputError(str(exc)) from exc


def with_waivers(policy: Policy | None, paths: Sequence[str]) -> Policy | None:
    """The policy with the waivers of each file at ``paths`` after its own."""
    if not paths:
        return policy
    from gpuaudit.model.policy import Policy
    from gpuaudit.model.policy_file import PolicyError, load_waivers
    from gpuaudit.rules import catalogue

    merged = policy if policy is not None else Policy.default()
    rule_ids = [r.id for r in catalogue()]
    try:
        for path in paths:
            merged.waivers.extend(load_waivers(path, rule_ids=rule_ids))
    except PolicyError as exc:
        raise InputError(str(exc)) from exc
    return merged


def stale_waivers(policy: Policy | None, result: AuditResult) -> list[str]:
    """A line for each waiver and cluster pattern that matched nothing in ``result``."""
    if policy is None:
        return []
    from gpuaudit.model.policy import unmatched

    pairs = ((f.rule, f.object) for f in result.findings)
    return unmatched(policy, pairs, (c.name for c in result.inventory.clusters))


def load_kubernetes(paths: Sequence[str]) -> list[KubernetesCluster]:
    """The Kubernetes clusters of the files at ``paths``; raises InputError (MissingExtra
    when the Kubernetes client is not installed)."""
    if not paths:
        return []
    from gpuaudit.kubernetes.read import KubernetesInputError, client_missing, read_cluster

    if client_missing():  # before any file is read or any server asked
        raise MissingExtra("--kubernetes", "the Kubernetes client", "kubernetes")
    try:
        return [read_cluster(path) for path in paths]
    except KubernetesInputError as exc:
        raise InputError(str(exc)) from exc


def load_baseline(path: str | None) -> list[tuple[tuple[str, str], str]] | None:
    """Each (rule, object) of the baseline report at ``path`` with its status, or None."""
    if not path:
        return None
    if not Path(path).exists():
        raise InputError(
            f"baseline {path} does not exist: create it from a JSON report with "
            f"`gpuaudit baseline create REPORT.json -o {path}`, or add --baseline-create "
            "to create it from this scan"
        )
    try:
        return baseline_statuses(path)
    except ValueError as exc:
        raise InputError(str(exc)) from exc


def obtain(source: sources.Source, progress: Progress | None = None) -> Inventory:
    """Collect, replay or load the inventory of ``source``."""
    from gpuaudit.inventory import InventoryError
    from gpuaudit.vsphere.cassette import CassetteError

    try:
        with during("collecting the inventory"):
            return sources.obtain_inventory(source, progress=progress)
    except connect.ConnectError as exc:
        raise ConnectionFailed(str(exc)) from exc
    except CassetteError as exc:
        raise InputError(str(exc)) from exc  # the message names the cassette
    except InventoryError as exc:
        where = source.path if isinstance(source, (sources.Saved, sources.Replay)) else ""
        raise InputError(f"{where}: {exc}") from exc


def check(
    inventory: Inventory,
    policy: Policy | None,
    policy_source: str | None,
    progress: Progress | None = None,
    kubernetes: Sequence[KubernetesCluster] = (),
) -> AuditResult:
    from gpuaudit.verdict.check import run_checks

    with during("checking the inventory"):
        result = run_checks(inventory, policy, progress=progress, kubernetes=kubernetes)
    result.policy_source = policy_source
    return result


def write(
    result: AuditResult,
    out: Path | BinaryIO,
    formats: Sequence[str],
    server: str,
    now: datetime | None = None,
) -> list[Path]:
    """Write the reports into the folder ``out``, or the one report to the stream ``out``."""
    from gpuaudit.report import RENDERERS, write_reports

    if not isinstance(out, Path):
        wanted = list(dict.fromkeys(formats))
        if len(wanted) != 1 or wanted[0] not in STREAMABLE_FORMATS:
            raise ValueError(f"a stream takes one of {', '.join(STREAMABLE_FORMATS)}: {wanted}")
        try:
            with during(f"writing the {wanted[0]} report"):
                out.write(RENDERERS[wanted[0]](result))
                out.flush()
        except OSError as exc:
            raise ReportWriteError("standard output", exc.strerror or str(exc)) from exc
        return []
    try:
        return write_reports(result, out, list(formats), server, now)
    except OSError as exc:
        raise ReportWriteError(str(out), exc.strerror or str(exc)) from exc


@dataclass
class DiffOutcome:
    """Two scans compared; blocking when a new failed finding is at or above the threshold."""

    diff: ReportDiff
    blocking: bool


def compare(old: str | Path, new: str | Path, fail_on: str | None = None) -> DiffOutcome:
    """Compare two JSON reports or saved inventories; raises InputError."""
    from gpuaudit.jobs.diff import DiffInputError, diff_reports, load_side
    from gpuaudit.results import at_or_above

    try:
        with during("comparing the reports"):
            result = diff_reports(load_side(old), load_side(new))
    except DiffInputError as exc:
        raise InputError(str(exc)) from exc
    blocking = fail_on is not None and any(
        at_or_above(str(f.get("severity")), fail_on) for f in result.new
    )
    return DiffOutcome(diff=result, blocking=blocking)


@dataclass
class PlanOutcome:
    """A what-if: the audit before the changes, the audit after them (whose ``plan``
    holds the comparison), and the reports written of the after."""

    before: AuditResult
    after: AuditResult
    reports: list[Path] = field(default_factory=list)  # none when written to a stream

    @property
    def blocking(self) -> bool:
        """With a fail_on: a finding the changes introduce or make worse, failed or not
        proven, at or above it (or nothing examined): exit status 1. Without: never."""
        judgement = self.after.judgement
        return judgement is not None and (judgement.blocking or judgement.blocking_unproven)

    @property
    def comparison(self) -> PlanComparison:
        assert self.after.plan is not None
        return self.after.plan


def plan(
    source: sources.Source,
    changes: str,
    out: Path | BinaryIO | None = None,
    formats: Sequence[str] = (),
    policy: str | None = None,
    server: str | None = None,
    now: datetime | None = None,
    progress: Progress | None = None,
    fail_on: str | None = None,
) -> PlanOutcome:
    """Apply the change file ``changes`` to a copy of ``source``'s inventory, audit both
    (with headroom and rolling plans), compare them, and write ``formats`` of the after
    audit, its ``plan`` the comparison, to the folder ``out`` (or the one report to the
    stream ``out``). With ``fail_on``, the after is judged as a scan against a baseline,
    the before being its baseline less the findings the changes make worse
    (whatif.known_before): its judgement counts only what the changes introduce or
    make worse, and every report of it states that verdict.
    Raises InputError (a change file's mistakes, with file:line), ConnectionFailed or
    ReportWriteError."""
    from gpuaudit.plan import whatif
    from gpuaudit.plan.change_file import ChangeFileError, load_changes

    say = progress or (lambda _m: None)
    with during("reading the policy"):
        loaded_policy = load_policy(policy)
    try:
        with during("reading the changes"):
            change_set = load_changes(changes)
    except ChangeFileError as exc:
        raise InputError(str(exc)) from exc
    inventory = obtain(source, say)
    say("applying the changes")
    try:
        with during("applying the changes"):
            applied = whatif.apply(inventory, change_set.changes, loaded_policy)
    except whatif.ChangeError as exc:
        raise InputError(str(change_set.where(exc))) from exc
    say("checking before")
    before = _checked(inventory, loaded_policy, policy)
    say("checking after")
    after = _checked(applied.inventory, loaded_policy, policy)
    after.plan = whatif.compare(before, after, change_set.described(), applied.notes)
    if fail_on is not None:
        after.judgement = judge(after, fail_on, whatif.known_before(before, after))
    reports: list[Path] = []
    if out is not None and formats:
        say("writing reports")
        name = server if server is not None else f"{sources.server_name(source)}-plan"
        reports = write(after, out, formats, name, now)
    return PlanOutcome(before, after, reports)


def _checked(inventory: Inventory, policy: Policy | None, source: str | None) -> AuditResult:
    from gpuaudit.verdict.check import run_checks

    with during("checking the inventory"):
        result = run_checks(inventory, policy, plans=True)
    result.policy_source = source
    return result
