"""MIG-backed vGPUs: capacity by MIG geometry, not by frame-buffer division.

The per-GPU maximums below are NVIDIA's, written out from the MIG user guide
("Supported MIG Profiles": instances available per profile, and their placements).
The scenario tests read tests/scenarios/mig.yaml and work out each failure by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gpuaudit import catalog, mig, scan
from gpuaudit.check import run_checks
from gpuaudit.inventory import Inventory
from gpuaudit.simulate import simulate_cluster
from tests.conftest import CASSETTES

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "mig.yaml"

# NVIDIA: MIG-backed vGPUs per A100 40GB, by profile (1g.5gb, 2g.10gb, 1g.5gb+me).
A100_40GB_MAXIMUM = {"grid_a100-1-5c": 7, "grid_a100-2-10c": 3, "grid_a100-1-5cme": 1}
A100_40GB_MB = 40 * 1024
PRIORITY = ["highest", "high", "medium", "low", "lowest"]


def scenario() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(SCENARIO.read_text())
    return data


def replayed() -> Inventory:
    return scan.obtain_inventory(scan.Replay(CASSETTES / "mig.yaml"))


# --- the geometry -------------------------------------------------------------------------


def test_a100_40gb_maximums_are_nvidias() -> None:
    for profile, maximum in A100_40GB_MAXIMUM.items():
        assert mig.fits([profile] * maximum), profile
        assert not mig.fits([profile] * (maximum + 1)), profile


def test_frame_buffer_division_would_allow_more() -> None:
    """What the simulation placed before: 40 GB / 5 GB = 8 and 40 / 10 = 4."""
    assert catalog.vgpus_per_gpu(A100_40GB_MB, 5 * 1024) == 8 > 7
    assert catalog.vgpus_per_gpu(A100_40GB_MB, 10 * 1024) == 4 > 3


def test_mixed_mig_sizes_need_free_start_slices() -> None:
    # 3g.20gb starts at slice 0 or 4 and covers 4 memory slices; 2g.10gb starts at 0, 2 or 4.
    assert mig.fits(["grid_a100-3-20c", "grid_a100-2-10c", "grid_a100-2-10c"])
    assert mig.fits(["grid_a100-4-20c", "grid_a100-3-20c"])
    # Two 3g.20gb take all 8 memory slices: no slice is left for a 1g.5gb (7 compute
    # slices in all would be enough).
    assert not mig.fits(["grid_a100-3-20c", "grid_a100-3-20c", "grid_a100-1-5c"])
    # 1g.10gb takes two memory slices at 0, 2, 4 or 6: four fill the GPU.
    assert mig.fits(["grid_a100-1-10c"] * 4)
    assert not mig.fits(["grid_a100-1-10c"] * 4 + ["grid_a100-1-5c"])
    # A 7g.40gb is the whole GPU.
    assert not mig.fits(["grid_a100-7-40c", "grid_a100-1-5c"])


def test_other_boards_follow_their_tables() -> None:
    # A30 24GB: 4 of 1g.6gb, 2 of 2g.12gb, one media extension per GPU.
    assert mig.fits(["grid_a30-1-6c"] * 4) and not mig.fits(["grid_a30-1-6c"] * 5)
    assert mig.fits(["grid_a30-2-12c"] * 2) and not mig.fits(["grid_a30-2-12c"] * 3)
    assert not mig.fits(["grid_a30-1-6cme", "grid_a30-2-12cme"])
    # A100 80GB and H100 80GB: 7 of 1g.10gb, 3 of 2g.20gb.
    for gpu in ("a100d", "h100"):
        assert mig.fits([f"grid_{gpu}-1-10c"] * 7) and not mig.fits([f"grid_{gpu}-1-10c"] * 8)
        assert mig.fits([f"grid_{gpu}-2-20c"] * 3) and not mig.fits([f"grid_{gpu}-2-20c"] * 4)
    # H200 141GB: 7 of 1g.18gb; H100 NVL 94GB: 2 of 3g.47gb.
    assert mig.fits(["grid_h200-1-18c"] * 7) and not mig.fits(["grid_h200-1-18c"] * 8)
    assert mig.fits(["grid_h100l-3-47c"] * 2) and not mig.fits(["grid_h100l-3-47c"] * 3)


def test_every_table_cites_the_mig_user_guide() -> None:
    assert {g.source for g in mig.GEOMETRIES.values()} == {
        "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html"
    }


def test_media_extension_profiles_parse() -> None:
    info = catalog.parse_profile("grid_a100-1-5cme")
    assert info is not None
    assert (info.gpu, info.mig_slices, info.memory_mb, info.series) == ("a100", 1, 5120, "c")
    plain = catalog.parse_profile("grid_a100-1-5c")
    assert plain is not None and plain.memory_mb == 5120
    assert mig.is_mig_profile("grid_a100-1-5cme") and mig.is_mig_profile("nvidia_h100-1-10c")
    assert not mig.is_mig_profile("grid_a100-10c")


# --- the scenario -------------------------------------------------------------------------


def expected_restarts(cluster: str, failed: str) -> set[str]:
    """The failed host's VMs that fit next to the survivor's, highest priority first."""
    dc = scenario()["datacenters"][0]
    hosts = next(c for c in dc["clusters"] if c["name"] == cluster)["hosts"]
    survivor = next(h["name"] for h in hosts if h["name"] != failed)
    vms = dc["vms"]
    running = [v["gpus"][0]["vgpu"] for v in vms if v["host"] == survivor]
    displaced = sorted(
        (v for v in vms if v["host"] == failed),
        key=lambda v: PRIORITY.index(v.get("restart_priority", "medium")),
    )
    restarted = set()
    for vm in displaced:
        profile = vm["gpus"][0]["vgpu"]
        if running.count(profile) < A100_40GB_MAXIMUM[profile]:
            running.append(profile)
            restarted.add(vm["name"])
    return restarted


def test_scenario_restarts_within_nvidias_maximums() -> None:
    inv = replayed()
    for cluster in ("mig-1g", "mig-2g", "mig-unread", "mig-media"):
        sim = simulate_cluster(inv, cluster)
        assert len(sim.failures) == 2
        for failure in sim.failures:
            expected = expected_restarts(cluster, failure.host)
            assert {p.vm for p in failure.placed} == expected, (cluster, failure.host)
            assert failure.unplaced, (cluster, failure.host)  # each has one VM too many


def test_unreadable_mode_on_8_0_u2_means_mig() -> None:
    inv = replayed()
    hosts = [h for h in inv.hosts if h.cluster == "mig-unread"]
    assert hosts and all(h.version == "8.0.2" for h in hosts)
    assert all(g.vgpu_mode is None for h in hosts for g in h.gpus)
    sim = simulate_cluster(inv, "mig-unread")
    assert all(len(f.placed) == 3 for f in sim.failures)


def test_scenario_expectations_hold() -> None:
    result = run_checks(replayed())
    for expect in scenario()["expect"]:
        found = {f.object: f.status for f in result.findings if f.rule == expect["rule"]}
        for name in expect.get("fail", []):
            assert found.get(name) == "fail", (expect["rule"], name)
        for name in expect.get("pass", []):
            assert found.get(name) == "pass", (expect["rule"], name)


def test_cme_vm_needs_an_ai_enterprise_licence_not_a_whole_gpu() -> None:
    result = run_checks(replayed())
    lic = {f.object: f for f in result.findings if f.rule == "LIC-01"}
    for name in ("cme-vm-01", "cme-vm-02"):
        assert lic[name].status == "pass"
        assert "NVIDIA AI Enterprise" in lic[name].message
