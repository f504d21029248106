"""Capacity traps that frame buffer arithmetic passes and NVIDIA's figures refuse.

tests/scenarios/failclosed-capacity.yaml holds each trap and its clean twin, recorded
from the lab as cassettes/failclosed-capacity.yaml. The figures are NVIDIA's, written
out here:

- MIG user guide, "Supported MIG Profiles", H100 80GB: 7 instances of 1g.10gb per GPU;
  AI Enterprise 6: its vGPU type on the H100 SXM5 80GB is H100XM-1-10C.
- vGPU 17 user guide, A.1, NVIDIA L40S: at most 32 L40S-1Q per GPU in equal-size mode.
- vGPU 17 user guide, A.3, GPUs with 48 GB: a 24q starts at slot 0 or 24 (24 slots), a
  16q at 0 or 32 (16 slots), a 4q at 0, 8, 12, 20, 24, 32, 36 or 44 (4 slots).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuaudit.inventory import Inventory
from gpuaudit.results import AuditResult
from gpuaudit.simulation.failures import simulate_cluster
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES
from tests.lab.scenario import load_scenario
from tests.support.checked_estates import assert_expectations

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "failclosed-capacity.yaml"
H100_1G_10GB_PER_GPU = 7
L40S_1Q_PER_GPU = 32
L40S_24Q_STARTS, L40S_24Q_SLOTS = (0, 24), 24
L40S_16Q_STARTS, L40S_16Q_SLOTS = (0, 32), 16
L40S_4Q_STARTS, L40S_4Q_SLOTS = (0, 8, 12, 20, 24, 32, 36, 44), 4


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(CASSETTES / "failclosed-capacity.yaml"))


@pytest.fixture(scope="module")
def result(inventory: Inventory) -> AuditResult:
    return run_checks(inventory)


def scenario() -> dict[str, Any]:
    data: dict[str, Any] = load_scenario(SCENARIO)
    return data


def running(host: str) -> list[str]:
    return [v["gpus"][0]["vgpu"] for v in scenario()["datacenters"][0]["vms"] if v["host"] == host]


def test_the_expectations_of_the_scenario_hold(result: AuditResult) -> None:
    assert_expectations(result, scenario()["expect"])


def test_an_eighth_mig_1g_10gb_is_refused_on_an_h100(inventory: Inventory) -> None:
    assert running("mtrap-esx02").count("grid_h100xm-1-10c") == H100_1G_10GB_PER_GPU
    assert running("mtwin-esx02").count("grid_h100xm-1-10c") == H100_1G_10GB_PER_GPU - 1
    # Frame buffer division would take an 8th: 80 GB / 10 GB = 8.
    trap = simulate_cluster(inventory, "fc-mig-trap")
    lost = {p.vm for f in trap.failures for p in f.unplaced}
    assert lost == {"mtrap-a", "mtrap-b-low"}
    assert "no MIG placement left" in next(
        p.reason or "" for f in trap.failures for p in f.unplaced if p.vm == "mtrap-a"
    )
    assert simulate_cluster(inventory, "fc-mig-twin").tolerates == 1


def test_a_33rd_l40s_1q_is_refused(inventory: Inventory) -> None:
    assert running("etrap-esx02").count("grid_l40s-1q") == L40S_1Q_PER_GPU
    # Frame buffer division would allow 48 GB / 1 GB = 48.
    trap = simulate_cluster(inventory, "fc-equal-trap")
    (lost,) = [p for f in trap.failures if f.host == "etrap-esx01" for p in f.unplaced]
    assert lost.vm == "etrap-a"
    assert f"NVIDIA allows {L40S_1Q_PER_GPU} of L40S-1Q per GPU" in (lost.reason or "")
    assert simulate_cluster(inventory, "fc-equal-twin").tolerates == 1


def test_a_16q_is_refused_where_the_free_16_gb_are_split(inventory: Inventory) -> None:
    assert sorted(running("xtrap-esx02")) == ["grid_l40s-24q", "grid_l40s-4q", "grid_l40s-4q"]
    # The frame buffers alone would fit it: 24 + 4 + 4 + 16 = 48.
    # Every layout of the running three leaves no 16q start free: with the 24q at 0 the
    # 4q sit at 24 or beyond, each inside 32-47, so 32 is taken (0 is the 24q's); with
    # the 24q at 24, a 4q not at 20 sits inside 0-15 and the other 16q start, 32, is
    # the 24q's; two 4q cannot both sit at 20.
    for big in L40S_24Q_STARTS:
        taken = set(range(big, big + L40S_24Q_SLOTS))
        smalls = [s for s in L40S_4Q_STARTS if not taken & set(range(s, s + L40S_4Q_SLOTS))]
        for first in smalls:
            for second in smalls:
                if first + L40S_4Q_SLOTS > second:
                    continue  # the same layout with the two swapped, or overlapping
                used = taken | set(range(first, first + 4)) | set(range(second, second + 4))
                assert all(used & set(range(s, s + L40S_16Q_SLOTS)) for s in L40S_16Q_STARTS), (
                    big,
                    first,
                    second,
                )
    trap = simulate_cluster(inventory, "fc-mixed-trap")
    (lost,) = [p for f in trap.failures if f.host == "xtrap-esx01" for p in f.unplaced]
    assert lost.vm == "xtrap-a"
    assert "no placement left for grid_l40s-16q" in (lost.reason or "")
    twin = simulate_cluster(inventory, "fc-mixed-twin")
    assert [p.to_host for f in twin.failures if f.host == "xtwin-esx01" for p in f.placed] == [
        "xtwin-esx02"
    ]
