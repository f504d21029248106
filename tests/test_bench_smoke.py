"""The scan benchmark's quick mode runs end to end and produces sane figures.

It starts the lab (a tiny estate), so it is in the live tier. The full benchmark
is not run by the tests: its figures are in docs/performance.md.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.run import REQUEST_BOUND

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[1]


def test_quick_benchmark_produces_the_table(tmp_path: Path) -> None:
    out, raw = tmp_path / "performance.md", tmp_path / "raw.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.run",
            "--quick",
            "-q",
            "--output",
            str(out),
            "--json",
            str(raw),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=170,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    for heading in ("## Machine", "## Targets", "## Scaling", "## Phases at scale quick"):
        assert heading in text
    assert re.search(r"^\| quick \| 12 \| 48 \| 120 \(48\) \|", text, re.M), text

    report = json.loads(raw.read_text(encoding="utf-8"))["report"]
    assert report["machine"]["cpus"] >= 1 and report["machine"]["memory_gib"] > 0
    (scale,) = report["scales"]
    for phase in ("connect", "collect", "check", "html", "xlsx", "json", "junit", "sarif"):
        figures = scale["phases"][phase]
        assert figures["wall_s"] > 0 and figures["peak_rss_mib"] > 0, phase
    assert scale["phases"]["collect"]["mb_received"] > 0
    assert scale["floor"]["wall_s"] > 0 and scale["floor"]["mb_received"] > 0
    assert 0 < scale["collect_vs_floor"] < 100 and scale["scan_s"] > scale["floor"]["wall_s"]
    assert all(size > 0 for size in scale["sizes"].values())
    # The session's SOAP requests, pages aside (QueryPerf calls after the first among
    # them), stay in the bound.
    assert 0 < scale["requests_less_pages"] <= REQUEST_BOUND
    assert scale["query_perf"] >= 1
    naive = report["naive"]["naive"]
    assert naive["soap_requests"] > scale["requests"] and naive["wall_s"] > 0
    sim = report["simulation"]
    assert sim["hosts"] == 9 and sim["times_s"] and sim["times_k3_s"] and sim["rules"] >= 1
