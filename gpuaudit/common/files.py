"""Writing files so that a crash never leaves a half-written one behind, and so
that runs writing into one folder at once never take each other's names."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MAX_CLAIMS = 1000


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file renamed into place.

    The temporary file sits in the same folder, so the rename is atomic on POSIX;
    on any error it is removed and the earlier file at ``path`` is left untouched.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp creates the file 0600; a report gets the mode any new file would.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def claim_names(folder: Path, stem: str, suffixes: Sequence[str]) -> list[Path]:
    """Create ``folder/stem+suffix`` for every suffix, empty, each one exclusively.

    If any of them exists (an earlier run, or another writing at this moment),
    the ones just created are removed and ``stem-1``, ``stem-2``, ... are tried,
    so that the files of one run share one stem and no run takes another's name:
    the exclusive create (O_EXCL) is atomic, unlike a look before writing.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(MAX_CLAIMS):
        paths = [folder / f"{stem if n == 0 else f'{stem}-{n}'}{s}" for s in suffixes]
        claimed: list[Path] = []
        try:
            for path in paths:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                claimed.append(path)  # before anything else can interrupt
                os.close(fd)
        except FileExistsError:
            release(claimed)
            continue
        except BaseException:
            release(claimed)
            raise
        return paths
    raise FileExistsError(errno.EEXIST, f"{MAX_CLAIMS} files named {stem} exist already")


def release(paths: Sequence[Path]) -> None:
    """Remove names claimed by claim_names that will not be written."""
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def write_new(folder: Path, stem: str, files: Sequence[tuple[str, bytes]]) -> list[Path]:
    """Write each ``(suffix, data)`` under one stem that no other file has.

    The names are claimed together (claim_names), then each file is written
    atomically over its empty claim (write_atomic). If one cannot be written,
    its claim and those after it are removed: no empty or partial file remains,
    and the files written before it are whole.
    """
    paths = claim_names(folder, stem, [suffix for suffix, _ in files])
    done = 0
    try:
        for path, (_, data) in zip(paths, files, strict=True):
            write_atomic(path, data)
            done += 1
    except BaseException:
        release(paths[done:])
        raise
    return paths


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def read_json(path: str | Path, error: type[Exception] = ValueError) -> Any:
    """Parse a JSON file; any failure raises ``error`` naming the file and, if known, the line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {exc}") from None
    return parse_json(text, error, f"{path}: ")


def parse_json(text: str, error: type[Exception] = ValueError, where: str = "") -> Any:
    """Parse JSON text; any failure (bad syntax, nesting deeper than the parser's
    recursion limit, a number too long, NaN) raises ``error``, its message one line
    that starts with ``where`` and names the line if it is known."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise error(f"{where}line {exc.lineno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise error(f"{where}not valid JSON: nested too deeply") from None
    except ValueError as exc:  # a number too long, NaN or Infinity
        raise error(f"{where}not valid JSON: {str(exc).split(':')[0]}") from None


def _no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON, though Python's parser accepts them."""
    raise ValueError(f"{name} is not a JSON number: ")
