"""The command line's log lines: UTC timestamps, as text or as JSON, always redacted.

Times are UTC with the zone written out (2026-12-01T02:45:00Z), whatever TZ says,
so that lines from hosts in different zones sort together. ``--log-format json``
writes one JSON object per line (time, level, logger, message) for jobs that ship
their logs. Either way every record passes debuglog's redacting filter first, and
its bidirectional controls and lone surrogates are escaped (gpuaudit.common.terminal).
"""

from __future__ import annotations

import json
import logging
import sys
import time

from gpuaudit.common import debuglog
from gpuaudit.common.terminal import printable_lines

FORMATS = ("text", "json")
# pyVmomi and http.client debug output only at -vv.
NOISY = ("pyVmomi", "vcr", "urllib3")


def _utc(record: logging.LogRecord) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))


class UtcFormatter(logging.Formatter):
    """``2026-12-01T02:45:00Z INFO message``."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(message)s")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return f"{_utc(record)}Z"

    def format(self, record: logging.LogRecord) -> str:
        return printable_lines(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, to the millisecond), level, logger, message."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return f"{_utc(record)}.{int(record.msecs):03d}Z"

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return printable_lines(json.dumps(entry, ensure_ascii=False))


class StderrHandler(logging.StreamHandler):
    """Writes to standard error as it is at each record, not as it was at start.

    A live progress display routes standard error above itself, and a test
    runner swaps it for a buffer: both must see the log lines.
    """

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


_installed: list[tuple[logging.Handler, int]] = []  # our handler, the root level before


def setup(verbose: int, quiet: bool, fmt: str = "text") -> None:
    """Log to standard error at the level -v/-q ask for; again after a change of mind."""
    teardown()
    root = logging.getLogger()
    if not root.handlers:  # as logging.basicConfig: a host process's own logging stays as it is
        handler = StderrHandler()
        handler.setFormatter(JsonFormatter() if fmt == "json" else UtcFormatter())
        _installed.append((handler, root.level))
        root.addHandler(handler)
        root.setLevel(logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO)
    for noisy in NOISY:
        logging.getLogger(noisy).setLevel(logging.WARNING if verbose < 2 else logging.NOTSET)
    # Every record is redacted; -vv also logs the HTTP traffic (debuglog.py).
    debuglog.install(wire=verbose >= 2 and not quiet)


def teardown() -> None:
    """Undo ``setup`` (for a command line run inside a longer-lived process)."""
    debuglog.uninstall()
    root = logging.getLogger()
    while _installed:
        handler, level = _installed.pop()
        root.removeHandler(handler)
        root.setLevel(level)
