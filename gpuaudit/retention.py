"""Report sets of one server in one folder: keep the newest few, and a stable latest name.

A report set is the files one scan wrote, which share a stem:
gpuaudit-<server>-<UTC time>[-<n>].<extension> (gpuaudit.report.naming). Only a
regular file whose whole name has that shape, for that server and a known
extension, is ever deleted: another server's reports, the latest links, and any
file that merely looks alike stay.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from gpuaudit.report.naming import EXTENSIONS, safe_server

LATEST = "latest"


def _set_pattern(server: str) -> re.Pattern[str]:
    extensions = "|".join(re.escape(e) for e in sorted(set(EXTENSIONS.values())))
    return re.compile(
        rf"gpuaudit-{re.escape(safe_server(server))}-"
        rf"(?P<stamp>\d{{8}}T\d{{6}}Z)(?:-(?P<n>[1-9]\d{{0,5}}))?\.(?:{extensions})"
    )


def report_sets(folder: Path, server: str) -> list[list[Path]]:
    """The report sets of ``server`` in ``folder``, oldest first."""
    pattern = _set_pattern(server)
    sets: dict[tuple[str, int], list[Path]] = {}
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False):
            continue
        key = (match["stamp"], int(match["n"] or 0))
        sets.setdefault(key, []).append(Path(entry.path))
    return [sorted(sets[key]) for key in sorted(sets)]


def prune(folder: Path, server: str, keep: int) -> list[Path]:
    """Delete all but the newest ``keep`` report sets of ``server``; return what went."""
    if keep < 1:
        raise ValueError(f"keep at least one report set, not {keep}")
    removed: list[Path] = []
    for old in report_sets(folder, server)[:-keep]:
        for path in old:
            with contextlib.suppress(FileNotFoundError):  # another run removed it first
                path.unlink()
                removed.append(path)
    return removed


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
