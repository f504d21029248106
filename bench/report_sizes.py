"""Report sizes per format, offline: MB, MB per 1,000 VMs, seconds and traced peak memory.

    PYTHONPATH=. .venv/bin/python -m bench.report_sizes            # the large estate, 10,240 VMs
    PYTHONPATH=. .venv/bin/python -m bench.report_sizes --max 1    # the configuration maximums
    PYTHONPATH=. .venv/bin/python -m bench.report_sizes --max 1 --format html --open 3

The estate is checked without the lab (tests/lab/expected.py reads the inventory
straight from the scenario), so this takes seconds at 10,240 VMs and about a
minute at 45,000. The peak is tracemalloc's, over the result already held.
``--open N`` then opens the HTML report N times in headless Chromium and prints how
long each took to become interactive (bench.run's Browser: window.gpuauditReady).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
from datetime import date
from pathlib import Path
from typing import Any

from gpuaudit.report import FORMATS, RENDERERS
from gpuaudit.results import AuditResult


def measure(result: AuditResult, formats: tuple[str, ...] = FORMATS) -> dict[str, dict[str, Any]]:
    """Per format: bytes, MB per 1,000 VMs, seconds and traced peak MiB of its renderer."""
    vms = max(1, len(result.inventory.vms))
    out: dict[str, dict[str, Any]] = {}
    for fmt in formats:
        tracemalloc.start()
        start = time.perf_counter()
        try:
            size = len(RENDERERS[fmt](result))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        out[fmt] = {
            "bytes": size,
            "mb_per_1000_vms": size / 1e6 / vms * 1000,
            "seconds": time.perf_counter() - start,
            "peak_mib": peak / 2**20,
        }
    return out


def _max_result(fraction: float) -> AuditResult:
    from gpuaudit.verdict.check import run_checks
    from tests.lab.expected import expected_inventory
    from tests.lab.generate import generate_max
    from tests.lab.scenario import normalise

    inventory = expected_inventory(normalise(generate_max(fraction)))
    inventory.source = "vcenter-max.example.com"
    inventory.collected_at = "2026-11-30T08:49:12Z"
    return run_checks(inventory, None, date(2027, 1, 15))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.report_sizes", description=__doc__)
    parser.add_argument("--max", type=float, metavar="FRACTION", help="the maximums' estate")
    parser.add_argument("--format", action="append", choices=FORMATS, help="default: all")
    parser.add_argument(
        "--open", type=int, default=0, metavar="N", help="open the HTML report N times"
    )
    args = parser.parse_args(argv)
    if args.max is not None:
        result = _max_result(args.max)
    else:
        from tests.support.large_estate import large_estate_result

        result = large_estate_result()
    print(f"{len(result.inventory.vms):,} VMs, {len(result.findings):,} findings")
    for fmt, m in measure(result, tuple(args.format or FORMATS)).items():
        print(
            f"{fmt:6} {m['bytes'] / 1e6:8.1f} MB {m['mb_per_1000_vms']:6.2f} MB/1,000 VMs "
            f"{m['seconds']:6.1f} s  peak {m['peak_mib']:7.0f} MiB"
        )
    if args.open:
        for seconds in open_html(result, args.open):
            print(f"html interactive in headless Chromium after {seconds:.2f} s")
    return 0


def open_html(result: AuditResult, times: int) -> list[float]:
    """Seconds from navigation until the HTML report is drawn, ``times`` times over."""
    from bench.run import Browser

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.html"
        path.write_bytes(RENDERERS["html"](result))
        browser = Browser()
        try:
            return [browser.open_seconds(str(path)) for _ in range(times)]
        finally:
            browser.close()


if __name__ == "__main__":
    sys.exit(main())
