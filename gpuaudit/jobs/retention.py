"""Report sets of one server in one folder: keep the newest few, and a stable latest name.

A report set is the files one scan wrote, which share a stem:
gpuaudit-<server>-<UTC time>[-<n>].<extension> (gpuaudit.report.naming). Only a
regular file whose whole name has that shape, for that server and a known
extension, is ever deleted: another server's reports, the latest links, and any
file that merely looks alike stay.

Runs of one server may share a folder and overlap (a slow night and the next, a
retry). Two rules keep every latest link pointing at a report that exists:

- :func:`prune` never deletes a set that a latest link points to, even beyond
  ``keep``. Without it, a run whose set is older (an earlier stamp) but which
  links later would point the link at a set that the other run's ``--keep 1``
  deletes; so would a run writing only JSON, whose pruning deletes the set the
  HTML link points to.
- A run that prunes or links writes its set, links and prunes under one
  exclusive lock on the folder's lock file (``.gpuaudit-<server>.lock``, flock;
  :func:`locked`, then :func:`tidy`). Otherwise a run could read the links,
  another re-point one at a set, and the first delete that set; or a run's set
  could be pruned while it is written, its names claimed again by a third run,
  and the link made to that run's claim, which it then releases. A link is made
  only to a report that still exists. The links are each replaced by a rename,
  so a reader never meets a missing link.
- :func:`prune` never deletes a set still being written (one of its files is an
  empty claim, files.write_new), such as that of a run without ``--keep`` or
  ``--latest``, which takes no lock.

A set kept because a link pointed at it goes at the first prune after the link
moves on.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from gpuaudit.report.naming import EXTENSIONS, safe_server

LATEST = "latest"


def _set_pattern(server: str) -> re.Pattern[str]:
    extensions = "|".join(re.escape(e) for e in sorted(set(EXTENSIONS.values())))
    return re.compile(
        rf"gpuaudit-{re.escape(safe_server(server))}-"
        rf"(?P<stamp>\d{{8}}T\d{{6}}Z)(?:-(?P<n>[1-9]\d{{0,5}}))?\.(?:{extensions})"
    )


def _sets(folder: Path, server: str) -> dict[tuple[str, int], list[Path]]:
    """The report sets of ``server`` in ``folder`` by (stamp, counter)."""
    pattern = _set_pattern(server)
    sets: dict[tuple[str, int], list[Path]] = {}
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return {}
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False):
            continue
        sets.setdefault(_key(match), []).append(Path(entry.path))
    return sets


def _key(match: re.Match[str]) -> tuple[str, int]:
    return (match["stamp"], int(match["n"] or 0))


def report_sets(folder: Path, server: str) -> list[list[Path]]:
    """The report sets of ``server`` in ``folder``, oldest first."""
    sets = _sets(folder, server)
    return [sorted(sets[key]) for key in sorted(sets)]


def linked_sets(folder: Path, server: str) -> set[tuple[str, int]]:
    """The (stamp, counter) of each set a latest link of ``server`` points to."""
    pattern = _set_pattern(server)
    prefix = f"gpuaudit-{safe_server(server)}-{LATEST}."
    linked = set()
    for extension in set(EXTENSIONS.values()):
        try:
            target = os.readlink(folder / f"{prefix}{extension}")
        except OSError:  # no link, or a copy
            continue
        match = pattern.fullmatch(target)
        if match is not None:
            linked.add(_key(match))
    return linked


def prune(folder: Path, server: str, keep: int) -> list[Path]:
    """Delete all but the newest ``keep`` report sets of ``server``, and never a set a
    latest link points to; return what went."""
    if keep < 1:
        raise ValueError(f"keep at least one report set, not {keep}")
    sets, linked = _sets(folder, server), linked_sets(folder, server)
    removed: list[Path] = []
    for key in sorted(sets)[:-keep]:
        if key in linked or any(_claimed(path) for path in sets[key]):
            continue
        for path in sorted(sets[key]):
            with contextlib.suppress(FileNotFoundError):  # another run removed it first
                path.unlink()
                removed.append(path)
    return removed


def _claimed(path: Path) -> bool:
    """An empty file: a name another run has claimed and not yet written
    (files.write_new), which must not be freed for a third run to take."""
    try:
        return path.stat().st_size == 0
    except FileNotFoundError:
        return False


@contextlib.contextmanager
def locked(folder: Path, server: str) -> Iterator[None]:
    """Hold the exclusive lock of ``server``'s report sets in ``folder`` (flock on
    ``.gpuaudit-<server>.lock``, which stays); wait for another run to release it."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / f".gpuaudit-{safe_server(server)}.lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def tidy(
    reports: Sequence[Path], folder: Path, server: str, keep: int | None, latest: bool
) -> tuple[list[Path], list[Path]]:
    """Point the latest names at ``reports`` (with ``latest``) and prune to ``keep``
    sets (unless None); return the links and what went. The caller holds
    :func:`locked` from before it wrote ``reports``."""
    # A report another run pruned (it had a newer set) gets no link.
    links = link_latest([r for r in reports if r.exists()], server) if latest else []
    removed = prune(folder, server, keep) if keep is not None else []
    return links, removed


def latest_name(server: str, report: Path) -> str:
    """gpuaudit-<server>-latest.<extension of report>."""
    extension = next(
        (e for e in sorted(EXTENSIONS.values(), key=len, reverse=True) if report.name.endswith(e)),
        report.suffix.lstrip("."),
    )
    return f"gpuaudit-{safe_server(server)}-{LATEST}.{extension}"


def link_latest(reports: Sequence[Path], server: str) -> list[Path]:
    """Point gpuaudit-<server>-latest.<ext> at each report: a relative symlink
    replaced atomically, or a copy where the file system takes no symlinks."""
    links = []
    for report in reports:
        link = report.with_name(latest_name(server, report))
        tmp = link.with_name(f".{link.name}.{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        try:
            tmp.symlink_to(report.name)
        except OSError:
            shutil.copyfile(report, tmp)
        os.replace(tmp, link)
        links.append(link)
    return links
