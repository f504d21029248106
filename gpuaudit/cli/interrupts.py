"""Ctrl-C, SIGTERM and SIGHUP: clean up, say so in one line, exit 128 + the signal.

Python turns Ctrl-C (SIGINT) into KeyboardInterrupt; SIGTERM and SIGHUP would end
the process at once, leaving a recording's scratch folder behind and the session
open. ``stop_on_signals`` makes them an exception too, raised in the main thread,
so that every ``finally`` on the way out runs: the scratch folder is removed, the
session logged out, a half-written report's temporary file deleted.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from gpuaudit.errors import ExitCode

STOPPING = (signal.SIGTERM, signal.SIGHUP)


class Stopped(BaseException):
    """A signal asked gpuaudit to stop.

    A BaseException, as KeyboardInterrupt is, so that no ``except Exception``
    on the way (a login that turns every failure into a message) swallows it.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode(128 + self.signum)


def _stop(signum: int, _frame: FrameType | None) -> None:
    # The clean-up that follows must not be cut short by a second signal.
    for other in STOPPING:
        signal.signal(other, signal.SIG_IGN)
    raise Stopped(signum)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise Stopped; the handlers before are restored."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers
        return
    previous = {signum: signal.signal(signum, _stop) for signum in STOPPING}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
