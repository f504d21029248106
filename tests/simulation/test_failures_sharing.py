"""What may share one physical GPU, by ESXi release and vGPU mode; the nominal frame buffer.

VMware ("What's new for GPUs in vSphere 8 Update 3"): before 8.0 U2 a GPU runs one
exact vGPU profile; from 8.0 U2 profiles of one frame-buffer size share it across
series; different sizes need mixed-size mode (8.0 U3), within NVIDIA's maximum per
profile in that mode. NVIDIA's numbers for the L4 (24 GB) are written out below. The
scenario tests read tests/scenarios/sharing.yaml.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gpuaudit.inventory import Gpu, Host, Inventory
from gpuaudit.model.facts import gpu_board
from gpuaudit.simulation import sharing
from gpuaudit.simulation.failures import simulate_cluster
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "sharing.yaml"

L4_MB = 24 * 1024
# NVIDIA: vGPUs per L4 in equal-size and in mixed-size mode.
L4_EQUAL = {"grid_l4-4q": 6, "grid_l4-8q": 3, "grid_l4-12q": 2, "grid_l4-24q": 1}
L4_MIXED = {"grid_l4-4q": 4, "grid_l4-8q": 2, "grid_l4-12q": 2, "grid_l4-24q": 1}


def scenario() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(SCENARIO.read_text())
    return data


def replayed() -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(CASSETTES / "sharing.yaml"))


def l4(mode: str | None = None, memory_mb: int = L4_MB) -> Gpu:
    return Gpu(
        pci_id="0000:3b:00.0",
        vendor_id=0x10DE,
        device_id=0x27B8,
        model="NVIDIA L4",
        memory_mb=memory_mb,
        graphics_type="sharedDirect",
        vgpu_mode=mode,
    )


def joins(version: str, mode: str | None, running: list[str], profile: str) -> bool | None:
    """Can an L4 on a host of ``version`` running ``running`` take one more ``profile``?"""
    gpu = l4(mode)
    rule = sharing.policy(Host(name="h", moref="h", version=version), gpu)
    share = sharing.GpuRule(rule, sharing.mode_known(gpu), L4_MB, gpu_board(gpu))
    placed = [(f"vm{i}", p, int(p.rsplit("-", 1)[1][:-1]) * 1024) for i, p in enumerate(running)]
    return sharing.judge(share, placed, profile)


# --- the rules ----------------------------------------------------------------------------


def test_before_8_0_u2_one_exact_profile_per_gpu() -> None:
    assert joins("7.0.3", None, ["grid_l4-8q"], "grid_l4-8q")
    assert not joins("7.0.3", None, ["grid_l4-8q"], "grid_l4-8c")
    assert not joins("8.0.1", None, ["grid_l4-8c"], "grid_l4-8q")


def test_from_8_0_u2_one_size_across_series() -> None:
    assert joins("8.0.2", None, ["grid_l4-8q"], "grid_l4-8c")
    assert joins("8.0.3", "sameSize", ["grid_l4-8q", "grid_l4-8c"], "grid_l4-8q")
    assert not joins("8.0.2", None, ["grid_l4-8q"], "grid_l4-4q")
    assert not joins("8.0.3", "sameSize", ["grid_l4-8q"], "grid_l4-4q")


def test_mixed_sizes_only_in_mixed_size_mode_within_nvidias_maximums() -> None:
    # Two 8q sit at NVIDIA's placement IDs 0 and 16 (8 slots each); a 4q starts at 0, 8,
    # 12 or 20 (4 slots): 8 and 12 are free whatever the layout.
    assert joins("8.0.3", "mixedSize", ["grid_l4-8q", "grid_l4-8q"], "grid_l4-4q") is True
    for profile, maximum in L4_MIXED.items():
        assert joins("8.0.3", "mixedSize", [profile] * (maximum - 1), profile) is True
        assert joins("8.0.3", "mixedSize", [profile] * maximum, profile) is False
    # The frame buffers must fit too: 12 + 8 + 8 > 24.
    assert joins("8.0.3", "mixedSize", ["grid_l4-12q", "grid_l4-8q"], "grid_l4-8q") is False


def test_equal_size_mode_keeps_nvidias_equal_size_counts() -> None:
    for profile, maximum in L4_EQUAL.items():
        assert joins("8.0.3", None, [profile] * (maximum - 1), profile)
        assert not joins("8.0.3", None, [profile] * maximum, profile)


def test_unknown_release_gets_the_strictest_rule() -> None:
    assert not joins("", None, ["grid_l4-8q"], "grid_l4-8c")


def test_t4_has_no_mixed_size_mode() -> None:
    t4 = Gpu(pci_id="x", vendor_id=0x10DE, device_id=0x1EB8, vgpu_mode="mixedSize")
    rule = sharing.policy(Host(name="h", moref="h", version="8.0.3"), t4)
    assert rule == sharing.SAME_SIZE


def test_nominal_frame_buffer_wins_over_a_short_report() -> None:
    assert sharing.nominal_memory(l4(memory_mb=23034)) == L4_MB


# --- the scenario -------------------------------------------------------------------------


def test_scenario_outcomes() -> None:
    inv = replayed()
    dc = scenario()["datacenters"][0]
    versions = {h["name"]: h.get("version", "8.0.3") for c in dc["clusters"] for h in c["hosts"]}
    placed = {}
    for cluster in ("share-703", "share-802", "share-mixed", "share-max", "share-fb"):
        for failure in simulate_cluster(inv, cluster).failures:
            for p in failure.placed:
                placed[p.vm] = p.to_host
    # 7.0 U3: an 8q and an 8c never share; 8.0 U2: they do.
    assert versions["s703-esx01"] == "7.0.3" and versions["s802-esx01"] == "8.0.2"
    assert "s703-8q" not in placed and "s703-8c" not in placed
    assert placed["s802-8q"] == "s802-esx02" and placed["s802-8c"] == "s802-esx01"
    # Mixed-size mode, NVIDIA's placements for 24 GB GPUs: 8q at 0 or 16 (8 slots), 4q
    # at 0, 8, 12 or 20 (4 slots). The 4q fits next to two 8q (slots 8-15 are free); one
    # 8q fits next to a 4q wherever it sits, a second only if it sits at 8 or 12.
    assert (placed["mixed-4q"], placed["mixed-8q-1"]) == ("mixed-esx01", "mixed-esx02")
    assert "mixed-8q-2" not in placed
    unproven = {
        p.vm: p.reason
        for failure in simulate_cluster(inv, "share-mixed").failures
        for p in failure.unproven
    }
    assert list(unproven) == ["mixed-8q-2"]
    assert unproven["mixed-8q-2"] == (
        "restart not proven: whether grid_l4-8q fits next to grid_l4-4q, grid_l4-8q on NVIDIA "
        "L4 depends on where ESXi placed each of them, which no API reports"
    )
    # Three 8q fit 24 GB, but L4-8Q allows 2 per GPU in mixed-size mode.
    assert 3 * 8 <= 24 and L4_MIXED["grid_l4-8q"] < 3
    assert placed["max-high"] == "max-esx02"
    assert "max-low" not in placed and "max-solo" not in placed
    # The full-size profile fits an L4 that reports a little less than 24 GB.
    short = next(h for h in inv.hosts if h.name == "fb-esx02").gpus[0]
    assert short.memory_mb == 23034 < L4_MB
    assert placed["fb-24q"] == "fb-esx02"


def test_scenario_expectations_hold() -> None:
    result = run_checks(replayed())
    for expect in scenario()["expect"]:
        found = {f.object: f.status for f in result.findings if f.rule == expect["rule"]}
        for name in expect.get("fail", []):
            assert found.get(name) == "fail", (expect["rule"], name)
        for name in expect.get("pass", []):
            assert found.get(name) == "pass", (expect["rule"], name)
        for name in expect.get("unproven", []):
            assert found.get(name) == "unproven", (expect["rule"], name)


def test_unplaced_reason_names_the_sharing_rule() -> None:
    inv = replayed()
    reasons = {
        p.vm: p.reason or ""
        for cluster in ("share-703", "share-max")
        for f in simulate_cluster(inv, cluster).failures
        for p in f.unplaced
    }
    assert (
        "it runs grid_l4-8c, and before ESXi 8.0 U2 a GPU runs one profile" in (reasons["s703-8q"])
    )
    assert "NVIDIA allows 2 of L4-8Q per GPU in mixed-size mode" in reasons["max-low"]
