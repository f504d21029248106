"""Shared by the history tests: a checked demo estate and scans of it at chosen times."""

from __future__ import annotations

import copy
import functools
from pathlib import Path

from gpuaudit import pipeline, scan
from gpuaudit.results import AuditResult


@functools.cache
def _demo() -> AuditResult:
    return pipeline.check(pipeline.obtain(scan.demo_source()), None, None)


def demo_result(checked_at: str = "2026-11-01T00:00:00Z", source: str = "vc01") -> AuditResult:
    """A fresh copy of the demo estate's result, as if scanned from ``source`` at ``checked_at``."""
    result = copy.deepcopy(_demo())
    result.checked_at = checked_at
    result.inventory.source = source
    return result


def store_at_revision(path: Path, revision: str, *rows: str) -> None:
    """A SQLite store at ``path`` migrated only to ``revision``, holding ``rows``
    (INSERT statements written for that revision's tables)."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine, text

    from gpuaudit.history.store import MIGRATIONS

    engine = create_engine(f"sqlite:///{path}")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
        for row in rows:
            conn.execute(text(row))
    engine.dispose()
