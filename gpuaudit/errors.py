"""How an audit ends: the errors the library raises, and the exit status of each ending.

The library never exits. It returns an outcome or raises one of the errors
below; the command line turns either into the process's exit status through
``exit_code``, the one place that picks it. A fleet scan records each target's
status the same way and exits with the worst.
"""

from __future__ import annotations

import enum
import signal
from typing import Protocol


class ExitCode(enum.IntEnum):
    """Exit status, for people and for scheduled jobs (README.md, "Exit status")."""

    OK = 0  # no failed, unwaived finding at or above --fail-on
    FINDINGS = 1  # such a finding, or nothing was examined (DATA-02)
    INPUT = 2  # usage error, or an input file that cannot be used
    CONNECT = 3  # server unreachable, TLS or login failed, answers failed for good
    HANGUP = 128 + signal.SIGHUP  # 129
    INTERRUPTED = 128 + signal.SIGINT  # 130: Ctrl-C
    TERMINATED = 128 + signal.SIGTERM  # 143


class AuditError(Exception):
    """An audit that cannot go on; the message is one line, fit to show as it is."""


class InputError(AuditError):
    """An input that cannot be used: policy, baseline, inventory, cassette, targets,
    credentials, or the server's address."""


class ConnectionFailed(AuditError):
    """The server cannot be reached, TLS verification or login failed, or its answers
    failed for good or could not be understood mid-scan."""


class ReportWriteError(AuditError):
    """The reports cannot be written where they were asked for."""

    def __init__(self, where: str, reason: str, what: str = "reports") -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"cannot write {what} to {where}: {reason}")


class Concluded(Protocol):
    """An audit or a comparison that ran to its end."""

    @property
    def blocking(self) -> bool:
        """True when a finding at or above the threshold fails it."""
        ...


def exit_code(ending: Concluded | AuditError) -> ExitCode:
    """The exit status of an audit that concluded, or of the error that stopped it."""
    if isinstance(ending, ConnectionFailed):
        return ExitCode.CONNECT
    if isinstance(ending, AuditError):  # an input, or a report that cannot be written
        return ExitCode.INPUT
    return ExitCode.FINDINGS if ending.blocking else ExitCode.OK
