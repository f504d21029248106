"""Writing files so that a crash never leaves a half-written one behind."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


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


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def read_json(path: str | Path, error: type[Exception] = ValueError) -> Any:
    """Parse a JSON file; any failure raises ``error`` naming the file and, if known, the line."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"), parse_constant=_no_constant)
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise error(f"{path}: line {exc.lineno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise error(f"{path}: not valid JSON: nested too deeply") from None
    except ValueError as exc:  # a number too long, NaN or Infinity
        raise error(f"{path}: not valid JSON: {str(exc).split(':')[0]}") from None


def _no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON, though Python's parser accepts them."""
    raise ValueError(f"{name} is not a JSON number: ")
