"""An exception nobody expected: one line, the traceback kept in a crash file.

The command line ends such a run with ``ExitCode.CRASH`` (70), never with the
status of findings. The line names the stage that failed (``errors.during``), the
exception and the file that holds the traceback; the traceback itself goes to
standard error only with ``-v``. Both are redacted as every log line is.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import tempfile
import traceback
from pathlib import Path

from gpuaudit import __version__
from gpuaudit.common.debuglog import redact
from gpuaudit.errors import stage_of


def crash_folder() -> Path:
    """$XDG_STATE_HOME/gpuaudit/crashes, else ~/.local/state/gpuaudit/crashes."""
    state = os.environ.get("XDG_STATE_HOME", "")
    base = Path(state) if os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "gpuaudit" / "crashes"


def traceback_text(exc: BaseException) -> str:
    """The whole traceback, redacted."""
    return redact("".join(traceback.format_exception(exc)))


def write_crash_file(
    exc: BaseException, command: str, now: dt.datetime | None = None
) -> Path | None:
    """Keep the traceback in a new file readable by its owner only; None if none can be written."""
    stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%SZ")
    text = f"gpuaudit {__version__}: {command}\n{traceback_text(exc)}"
    for folder in (crash_folder(), Path(tempfile.gettempdir())):
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
        for n in range(100):  # never another crash's file
            suffix = f"-{n}" if n else ""
            path = folder / f"gpuaudit-crash-{stamp}-{os.getpid()}{suffix}.txt"
            try:
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                continue
            except OSError:
                break
            with (
                contextlib.suppress(OSError),
                os.fdopen(descriptor, "w", encoding="utf-8", errors="backslashreplace") as out,
            ):
                out.write(text)
                return path
            break
    return None


def crash_line(exc: BaseException, crash_file: Path | None) -> str:
    """One line: what failed, the exception, where its traceback is."""
    stage = stage_of(exc) or "gpuaudit"
    message = " ".join(str(exc).split())
    what = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    where = f"the traceback is in {crash_file}" if crash_file else "run with -v for the traceback"
    return redact(f"{stage} failed unexpectedly: {what} (a bug in gpuaudit; {where})")
