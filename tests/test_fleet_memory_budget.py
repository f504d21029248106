"""A fleet's targets start largest first, and only while their expected peaks fit the budget."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuaudit import fleet, fleet_schedule
from gpuaudit.cli import main
from gpuaudit.errors import ExitCode
from gpuaudit.fleet_schedule import (
    SizeError,
    expected_peak,
    parse_size,
    start_order,
    to_start,
)

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
    # docs/performance.md: 929 MiB at the maximum, 2,500 hosts + 45,000 VMs.
    assert abs(expected_peak(47_500) - 929 * MIB) < MIB
    assert expected_peak(None) == expected_peak(47_500)  # unknown: the maximum
    # A sixteenth of the maximum: 929 / 16 = 58.06 MiB.
    assert abs(expected_peak(2_968) - 58.06 * MIB) < 0.1 * MIB
    assert expected_peak(0) == 0


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
    # Issue 37's fleet: 929 + 929 = 1,858 MiB is over 1,536; 929 + 8 x 58 = 1,393 is not.
    sizes = [2_968, 2_968, 47_500, 2_968, 2_968, 2_968, 47_500, 2_968, 2_968, 2_968]
    peaks = [expected_peak(n) for n in sizes]
    order = start_order(peaks)
    assert order == [2, 6, 0, 1, 3, 4, 5, 7, 8, 9]
    first = to_start(order, [], peaks, 1536 * MIB, 10)
    assert first == [2, 0, 1, 3, 4, 5, 7, 8, 9]
    # The second large one waits for the first; beside the 8 small ones, 1,393 MiB, it fits.
    assert to_start([6], [2, 0], peaks, 1536 * MIB, 10) == []
    assert to_start([6], [0, 1, 3, 4, 5, 7, 8, 9], peaks, 1536 * MIB, 10) == [6]


def test_scan_fleet_keeps_to_the_budget(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Expected peaks 600, 300, 500 and 200 MiB in file order, a budget of 1,000 MiB.
    sizes = [int(p / 929 * 47_500) + 1 for p in (600, 300, 500, 200)]
    targets = [fleet.Target(name=f"vc{i}", server=f"vc{i}", user="u") for i in range(4)]
    lock = threading.Lock()
    running: list[str] = []
    started: list[str] = []
    together: list[list[str]] = []

    def scan_target(target: fleet.Target, *_args: Any) -> fleet.TargetOutcome:
        with lock:
            running.append(target.name)
            started.append(target.name)
            together.append(sorted(running))
        time.sleep(0.2 if target.name == "vc0" else 0.05)
        with lock:
            running.remove(target.name)
        return fleet.TargetOutcome(target, ExitCode.OK, "PASS")

    monkeypatch.setattr(fleet, "scan_target", scan_target)
    monkeypatch.setattr(fleet, "target_sizes", lambda _t, _h: sizes)
    outcomes = fleet.scan_fleet(
        fleet.Fleet(targets, concurrency=4), tmp_path, ["json"], "high", {}, max_memory=1000 * MIB
    )
    assert [o.target.name for o in outcomes] == ["vc0", "vc1", "vc2", "vc3"]
    # vc0 (600) and vc1 (300) first; vc2 (500) only once vc0 is done.
    assert started[:2] == ["vc0", "vc1"]
    assert not any({"vc0", "vc2"} <= set(group) for group in together)


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
    from gpuaudit import pipeline, scan

    history = str(tmp_path / "history.db")
    done = pipeline.audit(scan.demo_source(), tmp_path, ["json"], "high", history=history)
    objects = len(done.inventory.hosts) + len(done.inventory.vms)
    targets = [
        fleet.Target(name="d", server="demo", user="u"),
        fleet.Target(name="n", server="never.example.com", user="u"),
    ]
    assert objects > 0
    assert fleet.target_sizes(targets, history) == [objects, None]
    assert fleet.target_sizes(targets, None) == [None, None]
    assert fleet.target_sizes(targets, str(tmp_path / "none.db")) == [None, None]
