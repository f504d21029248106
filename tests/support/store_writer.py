"""A process that records scans of the demo estate into a history store, for the
concurrency and crash tests: it prints each scan's id once its transaction is committed.

    python -m tests.support.store_writer LOCATION SOURCE COUNT [START]

START, a time.time() value, makes several writers open the store at the same moment.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from gpuaudit.jobs import history
from tests.support.history_tools import demo_result

ROOT = Path(__file__).resolve().parents[2]


def spawn(
    location: str, source: str, count: int, start: float | None = None
) -> subprocess.Popen[str]:
    """Start a writer in its own process; read its stdout for the committed scan ids."""
    at = [] if start is None else [str(start)]
    return subprocess.Popen(
        [sys.executable, "-m", "tests.support.store_writer", location, source, str(count), *at],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def main() -> None:
    location, source, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    result = demo_result(source=source)
    if len(sys.argv) > 4:
        time.sleep(max(0.0, float(sys.argv[4]) - time.time()))
    store = history.open_store(location)
    for i in range(count):
        result.checked_at = f"2026-11-01T00:{i // 60:02d}:{i % 60:02d}Z"
        scan_id = history.record(store, result)
        print(scan_id, flush=True)


if __name__ == "__main__":
    main()
