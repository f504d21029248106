"""A fleet's targets start largest first, and only while their expected peaks fit the budget."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuaudit.cli.main import main
from gpuaudit.errors import ExitCode
from gpuaudit.jobs import fleet, fleet_schedule
from gpuaudit.jobs.fleet_schedule import SizeError, expected_peak, parse_size, start_order, to_start

MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("1.5GiB", 1_610_612_736),
        ("800MiB", 838_860_800),
        ("2G", 2_147_483_648),
        ("2GB", 2_147_483_648),
        ("512k", 524_288),
        ("1048576", 1_048_576),
        (" 1 TiB ", 1_099_511_627_776),
        ("512B", 512),  # bytes spelt out, either case
        ("512b", 512),
        ("1", 1),  # the smallest budget there is
    ],
)
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["lots", "1.5XB", "0", "0MiB", "-1G", "5iB", "G", ""])
def test_bad_sizes(text: str) -> None:
    with pytest.raises(SizeError):
        parse_size(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("5iB", "'5iB' is not a size (for example 1.5GiB, 800MiB or 2G)"),
        ("lots", "'lots' is not a size (for example 1.5GiB, 800MiB or 2G)"),
        ("0MiB", "'0MiB': the memory budget must be more than 0"),
    ],
)
def test_a_bad_size_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(SizeError) as caught:
        parse_size(text)
    assert str(caught.value) == message


def _sysconf(values: dict[str, int]) -> Any:
    """os.sysconf of a machine that knows only ``values``; others raise as os.sysconf does."""

    def sysconf(name: str) -> int:
        if name not in values:
            raise ValueError("unrecognized configuration name")
        return values[name]

    return sysconf


def test_the_default_budget_is_half_of_the_machine_s_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 1,000,000 pages of 4,096 bytes: 4,096,000,000 bytes, half of it 2,048,000,000.
    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": 1_000_000}
    monkeypatch.setattr(fleet_schedule.os, "sysconf", _sysconf(pages))
    assert fleet_schedule.machine_memory() == 4_096_000_000
    assert fleet_schedule.default_budget() == 2_048_000_000


def test_a_machine_that_does_not_say_its_memory_gets_2_gib(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fleet_schedule.os, "sysconf", _sysconf({}))
    assert fleet_schedule.machine_memory() is None
    assert fleet_schedule.default_budget() == 2 * 1024 * 1024 * 1024  # 2,147,483,648


def test_expected_peak_from_the_benchmark() -> None:
    # docs/performance.md, bench.fleet at a quarter of the maximum, each target's scan in
    # its own process: 376 MiB at 11,875 objects, 110 MiB at 742. The line through them.
    slope = (376 - 110) / (11_875 - 742)  # 0.02389 MiB per object
    base = 110 - 742 * slope  # 92.27 MiB
    assert abs(expected_peak(11_875) - 376 * MIB) < MIB
    assert abs(expected_peak(742) - 110 * MIB) < MIB
    assert abs(expected_peak(0) - base * MIB) < MIB  # a process costs its base, even empty
    # The maximum, 2,500 hosts + 45,000 VMs: 92.27 + 47,500 x 0.02389 = 1,227.2 MiB.
    assert abs(expected_peak(47_500) - 1227.2 * MIB) < 0.1 * MIB
    assert expected_peak(None) == expected_peak(47_500)  # unknown: the maximum


def test_largest_first_ties_in_file_order() -> None:
    assert start_order([300, 600, 500, 200]) == [1, 2, 0, 3]
    assert start_order([5, 5, 7]) == [2, 0, 1]
    assert start_order([]) == []


def test_start_while_the_budget_holds() -> None:
    peaks = [300, 600, 500, 200]
    # 600 fits; 600 + 500 = 1,100 does not; 600 + 300 = 900 does; + 200 = 1,100 does not.
    assert to_start([1, 2, 0, 3], [], peaks, 1000, 4) == [1, 0]
    # 600 done: 300 + 500 + 200 = 1,000, exactly the budget.
    assert to_start([2, 3], [0], peaks, 1000, 4) == [2, 3]
    assert to_start([2, 3], [0], peaks, 999, 4) == [2]
    # The concurrency bounds it too.
    assert to_start([1, 2, 0, 3], [], peaks, 10_000, 2) == [1, 2]
    assert to_start([0, 3], [1, 2], peaks, 10_000, 2) == []


def test_a_target_over_the_budget_runs_alone() -> None:
    peaks = [1500, 100]
    assert to_start([0, 1], [], peaks, 1000, 4) == [0]
    assert to_start([1], [0], peaks, 1000, 4) == []
    assert to_start([1], [], peaks, 1000, 4) == [1]


def test_two_at_the_maximum_and_eight_at_a_sixteenth_in_1_5_gib() -> None:
    # Issue 37's fleet: 1,227.2 MiB at the maximum (47,500 objects), 92.27 + 2,968 x
    # 0.02389 = 163.2 MiB at a sixteenth; 1,400 MiB left beside the fleet's own process.
    sizes = [2_968, 2_968, 47_500, 2_968, 2_968, 2_968, 47_500, 2_968, 2_968, 2_968]
    peaks = [expected_peak(n) for n in sizes]
    order = start_order(peaks)
    assert order == [2, 6, 0, 1, 3, 4, 5, 7, 8, 9]
    # 1,227.2 + 163.2 = 1,390.4 fits in 1,400; a second small one (1,553.6) does not.
    first = to_start(order, [], peaks, 1400 * MIB, 10)
    assert first == [2, 0]
    # The second large one waits for the first, even with no small one beside it.
    assert to_start([6, 1], [2], peaks, 1400 * MIB, 10) == [1]
    assert to_start([6], [2, 1], peaks, 1400 * MIB, 10) == []
    # The first large one done: the second starts beside the small one running.
    assert to_start([6, 3], [1], peaks, 1400 * MIB, 10) == [6]
    # Eight small ones alone: 8 x 163.2 = 1,305.5 fits.
    assert to_start([0, 1, 3, 4, 5, 7, 8, 9], [], peaks, 1400 * MIB, 10) == [0, 1, 3, 4, 5, 7, 8, 9]


def test_scan_fleet_keeps_to_the_budget(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Expected peaks 600, 300, 500 and 200 MiB in file order, a budget of 1,000 MiB.
    peaks = {"vc0": 600, "vc1": 300, "vc2": 500, "vc3": 200}
    targets = [fleet.Target(name=name, server=name, user="u") for name in peaks]
    journal = tmp_path / "journal"  # each scan runs in a process of its own: they meet here

    def scan_target(target: fleet.Target, *_args: Any) -> fleet.TargetOutcome:
        with journal.open("a") as out:
            out.write(f"start {target.name}\n")
        time.sleep(0.4 if target.name == "vc0" else 0.1)
        with journal.open("a") as out:
            out.write(f"end {target.name}\n")
        return fleet.TargetOutcome(target, ExitCode.OK, "PASS")

    monkeypatch.setattr(fleet, "scan_target", scan_target)
    monkeypatch.setattr(fleet, "target_sizes", lambda _t, _h: list(peaks.values()))
    monkeypatch.setattr(fleet_schedule, "expected_peak", lambda mib: mib * MIB)
    monkeypatch.setattr(fleet, "_own_peak", lambda: 0)  # the fleet's process itself: below
    outcomes = fleet.scan_fleet(
        fleet.Fleet(targets, concurrency=4), tmp_path, ["json"], "high", {}, max_memory=1000 * MIB
    )
    assert [o.target.name for o in outcomes] == ["vc0", "vc1", "vc2", "vc3"]
    events = [line.split() for line in journal.read_text().splitlines()]
    started = [name for what, name in events if what == "start"]
    # vc0 (600) and vc1 (300) first; vc2 (500) only once vc0 is done.
    assert sorted(started[:2]) == ["vc0", "vc1"]
    running: set[str] = set()
    for what, name in events:
        if what == "start":
            running.add(name)
            assert sum(peaks[n] for n in running) <= 1000, running
        else:
            running.remove(name)
    assert not running


def test_the_fleet_s_own_process_counts_in_the_budget(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The fleet's process holds 400 MiB: of a 1,000 MiB budget, 600 are left, which the
    # 600 MiB target takes alone; beside nothing, the 300 MiB one would have started.
    targets = [fleet.Target(name=name, server=name, user="u") for name in ("big", "small")]
    journal = tmp_path / "journal"

    def scan_target(target: fleet.Target, *_args: Any) -> fleet.TargetOutcome:
        with journal.open("a") as out:
            out.write(f"start {target.name}\n")
        time.sleep(0.2)
        with journal.open("a") as out:
            out.write(f"end {target.name}\n")
        return fleet.TargetOutcome(target, ExitCode.OK, "PASS")

    monkeypatch.setattr(fleet, "scan_target", scan_target)
    monkeypatch.setattr(fleet, "target_sizes", lambda _t, _h: [600, 300])
    monkeypatch.setattr(fleet_schedule, "expected_peak", lambda mib: mib * MIB)
    monkeypatch.setattr(fleet, "_own_peak", lambda: 400 * MIB)
    fleet.scan_fleet(
        fleet.Fleet(targets, concurrency=2), tmp_path, ["json"], "high", {}, max_memory=1000 * MIB
    )
    assert journal.read_text().split("\n")[:2] == ["start big", "end big"]


def test_each_target_of_a_fleet_runs_in_a_process_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import os

    targets = [fleet.Target(name=f"vc{i}", server=f"vc{i}", user="u") for i in range(3)]

    def scan_target(target: fleet.Target, *_args: Any) -> fleet.TargetOutcome:
        return fleet.TargetOutcome(target, ExitCode.OK, "PASS", error=str(os.getpid()))

    monkeypatch.setattr(fleet, "scan_target", scan_target)
    outcomes = fleet.scan_fleet(fleet.Fleet(targets, concurrency=2), tmp_path, ["json"], "high", {})
    pids = {o.error for o in outcomes}
    assert len(pids) == 3 and str(os.getpid()) not in pids
    # Each reports the high-water mark of its own process.
    assert all(o.peak_rss and o.peak_rss > 1 << 20 for o in outcomes)
    # One target alone runs in this process.
    alone = fleet.scan_fleet(fleet.Fleet(targets[:1]), tmp_path, ["json"], "high", {})
    assert alone[0].error == str(os.getpid())


@pytest.mark.parametrize(
    ("how", "error"),
    [
        ("kill", "the scan's process ended without a result (killed by SIGKILL)"),
        ("exit", "the scan's process ended without a result (exit status 3)"),
    ],
)
def test_a_scan_process_that_dies_is_its_target_s_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, how: str, error: str
) -> None:
    import os
    import signal

    targets = [fleet.Target(name=f"vc{i}", server=f"vc{i}", user="u") for i in range(3)]

    def scan_target(target: fleet.Target, *_args: Any) -> fleet.TargetOutcome:
        if target.name == "vc1":
            if how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            os._exit(3)
        return fleet.TargetOutcome(target, ExitCode.OK, "PASS")

    monkeypatch.setattr(fleet, "scan_target", scan_target)
    outcomes = fleet.scan_fleet(fleet.Fleet(targets, concurrency=3), tmp_path, ["json"], "high", {})
    assert [(o.verdict, o.error) for o in outcomes] == [
        ("PASS", None),
        ("ERROR", error),
        ("PASS", None),
    ]
    assert outcomes[1].exit_code == ExitCode.CRASH
    assert fleet.fleet_exit_code(outcomes) == ExitCode.CRASH


def test_max_memory_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "targets.yaml"
    path.write_text("targets: [{server: a, user: u}]\n")
    result = CliRunner().invoke(main, ["scan", "--targets", str(path), "--max-memory", "lots"])
    assert result.exit_code == ExitCode.INPUT
    assert "'lots' is not a size" in result.output
    result = CliRunner().invoke(main, ["scan", "--demo", "--max-memory", "1G"])
    assert result.exit_code == ExitCode.INPUT
    assert "--max-memory needs --targets FILE" in result.output


def test_sizes_from_the_history(tmp_path: Path) -> None:
    from gpuaudit.jobs import scan as pipeline
    from gpuaudit.vsphere import obtain

    history = str(tmp_path / "history.db")
    done = pipeline.audit(obtain.demo_source(), tmp_path, ["json"], "high", history=history)
    objects = len(done.inventory.hosts) + len(done.inventory.vms)
    targets = [
        fleet.Target(name="d", server="demo", user="u"),
        fleet.Target(name="n", server="never.example.com", user="u"),
    ]
    assert objects > 0
    assert fleet.target_sizes(targets, history) == [objects, None]
    assert fleet.target_sizes(targets, None) == [None, None]
    assert fleet.target_sizes(targets, str(tmp_path / "none.db")) == [None, None]


def test_a_target_s_process_writes_past_the_fleet_s_live_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The live progress line replaces standard error with its own proxy in the fleet's
    # process; a scan's process must not write through it (its lock may be held).
    import io
    import sys

    targets = [fleet.Target(name=f"vc{i}", server=f"vc{i}", user="u") for i in range(2)]

    def scan_target(target: fleet.Target, *_args: Any) -> fleet.TargetOutcome:
        plain = sys.stderr is sys.__stderr__ and sys.stdout is sys.__stdout__
        return fleet.TargetOutcome(target, ExitCode.OK, "PASS", error=str(plain))

    monkeypatch.setattr(fleet, "scan_target", scan_target)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    outcomes = fleet.scan_fleet(fleet.Fleet(targets, concurrency=2), tmp_path, ["json"], "high", {})
    assert [o.error for o in outcomes] == ["True", "True"]
