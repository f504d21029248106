"""Scan history: what each scan found, kept in SQLite or PostgreSQL, and what follows from it.

``open_store`` opens (creating or upgrading) the store; ``annotate`` gives an
audit result its findings' first-seen dates, its changes since the last scan of
the same vCenter and its trend; ``record`` keeps the scan for the next one.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

# Alembic says what it migrates at INFO, on every first use: not the scan's news.
logging.getLogger("alembic").setLevel(logging.WARNING)

from gpuaudit.jobs.history.store import (  # noqa: E402
    HistoryError,
    Store,
    StoreTooNew,
    check_location,
    open_store,
    reason,
    shown,
)
from gpuaudit.jobs.history.track import (  # noqa: E402
    annotate,
    baseline_first_seen,
    record,
    vcenter_key,
)

__all__ = [
    "HistoryError",
    "Store",
    "StoreTooNew",
    "annotate",
    "baseline_first_seen",
    "check_location",
    "default_location",
    "open_store",
    "reason",
    "record",
    "shown",
    "vcenter_key",
]


def default_location() -> str:
    """$XDG_STATE_HOME/gpuaudit/history.sqlite, else ~/.local/state/gpuaudit/history.sqlite."""
    state = os.environ.get("XDG_STATE_HOME", "")
    # The XDG Base Directory specification ignores a relative path.
    base = Path(state) if os.path.isabs(state) else Path.home() / ".local" / "state"
    return str(base / "gpuaudit" / "history.sqlite")
