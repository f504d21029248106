"""How an audit ends: the errors the library raises, and the exit status of each ending.

The library never exits. It returns an outcome or raises one of the errors
below; the command line turns either into the process's exit status through
``exit_code``, the one place that picks it. A fleet scan records each target's
status the same way and exits with the worst. An exception none of these
expected (a bug) is ``ExitCode.CRASH``, never FINDINGS: ``during`` names the
stage it broke out of, for the one line the command line prints.
"""

from __future__ import annotations

import contextlib
import enum
import signal
from collections.abc import Iterator
from typing import Protocol


class ExitCode(enum.IntEnum):
    """Exit status, for people and for scheduled jobs (README.md, "Exit status")."""

    OK = 0  # no failed, unwaived finding at or above --fail-on
    FINDINGS = 1  # such a finding, or nothing was examined (DATA-02)
    INPUT = 2  # usage error, or an input file that cannot be used
    CONNECT = 3  # server unreachable, TLS or login failed, answers failed for good
    CRASH = 70  # EX_SOFTWARE (sysexits.h): an unexpected exception, a bug in gpuaudit
    HANGUP = 128 + signal.SIGHUP  # 129
    INTERRUPTED = 128 + signal.SIGINT  # 130: Ctrl-C
    TERMINATED = 128 + signal.SIGTERM  # 143


class AuditError(Exception):
    """An audit that cannot go on; the message is one line, fit to show as it is."""


class InputError(AuditError):
    """An input that cannot be used: policy, baseline, inventory, cassette, targets,
    credentials, or the server's address."""


class MissingExtra(InputError):
    """A feature whose library is an optional dependency (an extra of the package) that
    is not installed: the message names the extra and the command that installs it."""

    def __init__(self, feature: str, library: str, extra: str) -> None:
        self.feature, self.library, self.extra = feature, library, extra
        super().__init__(f"{feature} needs {library}: pip install 'gpuaudit[{extra}]'")


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


_STAGE = "gpuaudit_stage"  # the attribute ``during`` leaves on an exception


@contextlib.contextmanager
def during(stage: str) -> Iterator[None]:
    """Name ``stage`` on any unexpected exception raised inside it (the innermost wins).

    An ``AuditError`` is expected and says what failed itself; it is left alone.
    """
    try:
        yield
    except AuditError:
        raise
    except Exception as exc:
        if stage_of(exc) is None:
            with contextlib.suppress(AttributeError, TypeError):
                setattr(exc, _STAGE, stage)
        raise


def stage_of(exc: BaseException) -> str | None:
    """The stage an unexpected exception broke out of, if ``during`` named one."""
    stage = getattr(exc, _STAGE, None)
    return stage if isinstance(stage, str) else None
