"""One audit from start to end: obtain an inventory, check it, write the reports, conclude.

``audit`` is what ``gpuaudit scan`` and every target of a fleet scan run; ``compare``
is what ``gpuaudit diff`` runs. Neither prints nor exits: each returns an outcome or
raises an ``AuditError`` (gpuaudit.errors), and the caller picks the exit status.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from gpuaudit import connect, scan
from gpuaudit.errors import ConnectionFailed, InputError, ReportWriteError
from gpuaudit.inventory import Inventory
from gpuaudit.outcome import Summary, baseline_keys, summarise
from gpuaudit.progress import Progress
from gpuaudit.results import AuditResult

if TYPE_CHECKING:
    from gpuaudit.diff import ReportDiff
    from gpuaudit.kube import Cluster as KubernetesCluster
    from gpuaudit.policy import Policy

# A stream takes one report: the JSON family is what a pipe reads.
STREAMABLE_FORMATS = ("json", "sarif")


@dataclass
class ScanOutcome:
    """What one audit concluded, and where its reports went."""

    result: AuditResult
    summary: Summary
    reports: list[Path] = field(default_factory=list)  # none when written to a stream

    @property
    def blocking(self) -> bool:
        return self.summary.blocking

    @property
    def inventory(self) -> Inventory:
        return self.result.inventory


def audit(
    source: scan.Source,
    out: Path | BinaryIO,
    formats: Sequence[str],
    fail_on: str = "high",
    policy: str | None = None,
    baseline: str | None = None,
    server: str | None = None,
    now: datetime | None = None,
    progress: Progress | None = None,
    kubernetes: Sequence[str] = (),
) -> ScanOutcome:
    """Audit ``source`` against ``policy`` and write ``formats`` to ``out``.

    ``out`` is a folder, or a binary stream that takes exactly one format of
    STREAMABLE_FORMATS. ``server`` names the reports (by default, the source's
    name); ``baseline``, an earlier JSON report, makes only new findings count.
    ``kubernetes`` names files of ``kubectl get nodes,pods -o json``, one per
    Kubernetes cluster. Raises InputError, ConnectionFailed or ReportWriteError.
    """
    say = progress or (lambda _m: None)
    loaded_policy = load_policy(policy)
    clusters = load_kubernetes(kubernetes)
    known = load_baseline(baseline)
    first_seen = load_first_seen(baseline)
    inventory = obtain(source, say)
    say("checking")
    result = check(inventory, loaded_policy, policy, say, clusters)
    if first_seen:
        from gpuaudit.first_seen import carry_first_seen

        carry_first_seen(result, first_seen)
    say("writing reports")
    name = server if server is not None else scan.server_name(source)
    reports = write(result, out, formats, name, now)
    return ScanOutcome(result=result, summary=summarise(result, fail_on, known), reports=reports)


def load_policy(path: str | None) -> Policy | None:
    """The policy at ``path``, or None (the default policy) without one."""
    if not path:
        return None
    from gpuaudit.policy_file import PolicyError
    from gpuaudit.policy_file import load_policy as load
    from gpuaudit.rules import catalogue

    try:
        return load(path, rule_ids=[r.id for r in catalogue()])
    except PolicyError as exc:
        raise InputError(str(exc)) from exc


def load_kubernetes(paths: Sequence[str]) -> list[KubernetesCluster]:
    """The Kubernetes clusters of the files at ``paths``; raises InputError."""
    if not paths:
        return []
    from gpuaudit.kube_read import KubernetesInputError, read_cluster

    try:
        return [read_cluster(path) for path in paths]
    except KubernetesInputError as exc:
        raise InputError(str(exc)) from exc


def load_baseline(path: str | None) -> set[tuple[str, str]] | None:
    """The (rule, object) pairs failed in the baseline report at ``path``, or None."""
    if not path:
        return None
    try:
        return baseline_keys(path)
    except ValueError as exc:
        raise InputError(str(exc)) from exc


def load_first_seen(path: str | None) -> dict[str, str]:
    """Finding id to the date it was first seen, from the baseline report at ``path``."""
    if not path:
        return {}
    from gpuaudit.first_seen import first_seen_dates

    try:
        return first_seen_dates(path)
    except ValueError as exc:
        raise InputError(str(exc)) from exc


def obtain(source: scan.Source, progress: Progress | None = None) -> Inventory:
    """Collect, replay or load the inventory of ``source``."""
    from gpuaudit.cassette import CassetteError
    from gpuaudit.inventory import InventoryError

    try:
        return scan.obtain_inventory(source, progress=progress)
    except connect.ConnectError as exc:
        raise ConnectionFailed(str(exc)) from exc
    except CassetteError as exc:
        raise InputError(str(exc)) from exc  # the message names the cassette
    except InventoryError as exc:
        where = source.path if isinstance(source, (scan.Saved, scan.Replay)) else ""
        raise InputError(f"{where}: {exc}") from exc


def check(
    inventory: Inventory,
    policy: Policy | None,
    policy_source: str | None,
    progress: Progress | None = None,
    kubernetes: Sequence[KubernetesCluster] = (),
) -> AuditResult:
    from gpuaudit.check import run_checks

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
    from gpuaudit.diff import DiffInputError, diff_reports, load_side
    from gpuaudit.results import at_or_above

    try:
        result = diff_reports(load_side(old), load_side(new))
    except DiffInputError as exc:
        raise InputError(str(exc)) from exc
    blocking = fail_on is not None and any(
        at_or_above(str(f.get("severity")), fail_on) for f in result.new
    )
    return DiffOutcome(diff=result, blocking=blocking)
