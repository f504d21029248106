"""The process's local time zone, set for a block: for tests that show a time is
taken as UTC, not as local time, whatever the machine's zone."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def local_zone(rule: str) -> Iterator[None]:
    """Local time follows ``rule``, a POSIX TZ rule such as "JST-9" (nine hours east of
    UTC), which needs no time zone database, until the block ends."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = rule
    time.tzset()
    try:
        yield
    finally:
        if saved is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = saved
        time.tzset()
