"""Progress reports from the long phases of a scan, as plain data.

A phase says what it is doing with a plain message ("reading inventory") and, as
it goes, how far it has come with a ``Step`` (40 objects, 3 of 5 hosts). Whoever
shows them (gpuaudit/cli/console.py) decides how: a live line on a terminal, a few
log lines anywhere else. The layers that do the work know nothing of terminals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """``done`` of ``total`` ``unit`` (total None: not known in advance) in ``phase``."""

    phase: str
    done: int
    total: int | None = None
    unit: str = ""
    detail: str = ""  # more counts, e.g. "3 pages"

    @property
    def finished(self) -> bool:
        return self.total is not None and self.done >= self.total

    def counts(self) -> str:
        done = f"{self.done:,}" if self.total is None else f"{self.done:,}/{self.total:,}"
        text = f"{done} {self.unit}".strip()
        return f"{text} ({self.detail})" if self.detail else text

    def __str__(self) -> str:
        return f"{self.phase}: {self.counts()}"


Progress = Callable[[str | Step], None]


def ignore(_report: str | Step) -> None:
    """A progress callback that shows nothing."""
