"""The fleet benchmark's parts: the fleet it builds, its memory readings and its figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench import fleet

# Holds this many MiB, every page written (bytes(n) maps zero pages, not resident).
_HOLD = "import time; b = b'x' * ({mib} * 1024 * 1024); print('ready', flush=True); time.sleep(60)"


def test_two_vcenters_at_the_maximum_and_eight_at_a_sixteenth() -> None:
    estates = fleet.fleet_estates()
    assert [label for label, _ in estates] == ["max"] * 2 + ["sixteenth"] * 8
    large, small = estates[0][1], estates[-1][1]
    # vSphere 8's maximums: 2,500 hosts and 45,000 registered VMs per vCenter.
    assert (large.hosts, large.vms) == (2500, 45000)
    # A sixteenth: 2,500 / 16 = 156.25 hosts, 45,000 / 16 = 2,812.5 VMs (rounded to even).
    assert (small.hosts, small.vms) == (156, 2812)


def test_the_tree_s_memory_counts_a_child_s() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLD.format(mib=100)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        own = fleet.tree_rss_mib(child.pid)
        assert own >= 100
        # This process and its child: at least the child's 100 MiB more than this one alone.
        mine = fleet._rss_kib(os.getpid()) / 1024
        assert fleet.tree_rss_mib(os.getpid()) >= mine + 100
    finally:
        child.kill()
        child.wait()


def test_a_command_s_peak_and_time_are_measured() -> None:
    code = "b = b'x' * (150 * 1024 * 1024); import time; time.sleep(0.3)"
    start = time.perf_counter()
    figures = fleet.measure([sys.executable, "-c", code], dict(os.environ))
    assert figures["peak_rss_mib"] >= 150
    assert figures["tree_peak_mib"] >= 150
    assert 0.3 <= figures["wall_s"] <= time.perf_counter() - start


def test_a_scan_that_exits_2_or_more_is_no_figure() -> None:
    with pytest.raises(RuntimeError, match="exited 2"):
        fleet.measure([sys.executable, "-c", "import sys; sys.exit(2)"], dict(os.environ))


def test_figures_are_run_by_run_ratios_and_the_highest_peak() -> None:
    measured = {
        "samples": {
            "fleet": [
                {"wall_s": 100.0, "peak_rss_mib": 900.0, "tree_peak_mib": 950.0},
                {"wall_s": 90.0, "peak_rss_mib": 1000.0, "tree_peak_mib": 990.0},
            ],
            "sequential": [
                {"wall_s": 200.0, "peak_rss_mib": 700.0, "tree_peak_mib": 710.0},
                {"wall_s": 100.0, "peak_rss_mib": 720.0, "tree_peak_mib": 705.0},
            ],
        }
    }
    figures = fleet.summarise(measured)
    # 100 / 200 = 0.5 and 90 / 100 = 0.9: the median of two is their mean, 0.7.
    assert figures["ratios"] == [0.5, 0.9]
    assert figures["ratio"] == pytest.approx(0.7)
    assert figures["fleet_peak_mib"] == 1000.0  # the highest of either reading, any run
    assert figures["sequential_peak_mib"] == 720.0


def test_a_run_whose_summary_lacks_a_target_or_names_an_error_is_no_figure(
    tmp_path: Path,
) -> None:
    from bench.fleet import check_scanned

    with pytest.raises(RuntimeError, match="no fleet summary"):
        check_scanned(tmp_path, 2)
    summary = tmp_path / "gpuaudit-fleet-20261204T000000Z.json"
    ok = {"name": "a", "error": None}
    summary.write_text(json.dumps({"targets": [ok]}), encoding="utf-8")
    with pytest.raises(RuntimeError, match="1 of 2 targets"):
        check_scanned(tmp_path, 2)
    down = {"name": "b", "error": "cannot connect"}
    summary.write_text(json.dumps({"targets": [ok, down]}), encoding="utf-8")
    with pytest.raises(RuntimeError, match="b: cannot connect"):
        check_scanned(tmp_path, 2)
    up = {"name": "b", "error": None}
    summary.write_text(json.dumps({"targets": [ok, up]}), encoding="utf-8")
    check_scanned(tmp_path, 2)  # every target scanned: a figure


def test_each_target_s_peak_is_read_from_the_fleet_s_log() -> None:
    from bench.fleet import target_peaks

    log = (
        "12:00:01 DEBUG gpuaudit.jobs.fleet: starting max-01\n"
        "12:03:10 DEBUG gpuaudit.jobs.fleet: max-01: peak 1062 MiB\n"
        "12:03:11 DEBUG gpuaudit.jobs.fleet: sixteenth-03: peak 161 MiB\n"
        "12:03:12 WARNING gpuaudit.jobs.fleet: a line that says peak 5 MiB in passing\n"
    )
    assert target_peaks(log) == {"max-01": 1062.0, "sixteenth-03": 161.0}
