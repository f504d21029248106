"""The GPU catalogue on the current boards, from a recorded scan of
tests/scenarios/boards.yaml (one host per board, each with a vGPU VM).

The expected names, frame buffers and profile prefixes are written out here from
the sources, not read from gpuaudit.knowledge.catalog: device names and ids from the PCI ID
Repository (pci.ids), frame buffer and vGPU type names from NVIDIA's "Virtual GPU
Types for Supported GPUs" (a type A16-2B is the ESXi profile grid_a16-2b).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from gpuaudit.inventory import Gpu, Inventory
from gpuaudit.knowledge import catalog
from gpuaudit.model import facts as F
from gpuaudit.simulation.failures import simulate_cluster
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES
from tests.lab import expected

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "boards.yaml"

# host -> (model name, frame buffer of one GPU in GB, profile prefix)
BOARDS = {
    "brd-a2": ("NVIDIA A2", 16, "a2"),  # A2-1B ... A2-16Q
    "brd-a16": ("NVIDIA A16", 16, "a16"),  # A16-1B ... A16-16Q, per GPU
    "brd-h100nvl": ("NVIDIA H100 NVL", 94, "h100l"),  # H100L-94C
    "brd-h100sxm": ("NVIDIA H100 SXM5", 80, "h100xm"),  # H100XM-80C
    "brd-h200nvl": ("NVIDIA H200 NVL", 141, "h200"),  # H200-141C
    "brd-l40s": ("NVIDIA L40S", 48, "l40s"),  # L40S-48Q
    "brd-rtx6000ada": ("NVIDIA RTX 6000 Ada Generation", 48, "rtx6000-ada"),  # RTX6000-Ada-48Q
    "brd-m10": ("NVIDIA M10", 8, "m10"),  # M10-8Q, per GPU
}
# pci.ids: "A16 - 25B6 10DE 14A9 / A2 - 25B6 10DE 157E"
A2_SUBSYSTEM = {"sub_vendor_id": 0x10DE, "sub_device_id": 0x157E}
A16_SUBSYSTEM = {"sub_vendor_id": 0x10DE, "sub_device_id": 0x14A9}
ESXI_NAME = "GA107GL [A2 / A16]"  # what pci.ids, and so ESXi, calls device 25b6


@cache
def replayed() -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(CASSETTES / "boards.yaml"))


def scenario() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(SCENARIO.read_text())
    return data


def scenario_hosts() -> dict[str, dict[str, Any]]:
    clusters = scenario()["datacenters"][0]["clusters"]
    return {h["name"]: h for c in clusters for h in c["hosts"]}


def profiles_on(host: str) -> set[str]:
    vms = scenario()["datacenters"][0]["vms"]
    return {g["vgpu"] for vm in vms if vm["host"] == host for g in vm["gpus"]}


def gpu_of(host: str) -> Gpu:
    (gpu,) = next(h for h in replayed().hosts if h.name == host).gpus
    return gpu


def test_the_scenario_has_one_host_per_board() -> None:
    assert set(scenario_hosts()) == set(BOARDS)


def test_each_board_is_named_with_its_frame_buffer() -> None:
    for host, (name, gigabytes, _) in BOARDS.items():
        gpu = gpu_of(host)
        assert (gpu.model, gpu.memory_mb, gpu.known_model) == (name, gigabytes * 1024, True), host


def test_a2_and_a16_share_a_device_and_a_name_and_differ_by_subsystem() -> None:
    a2, a16 = scenario_hosts()["brd-a2"]["gpus"][0], scenario_hosts()["brd-a16"]["gpus"][0]
    assert a2["device_id"] == a16["device_id"] == 0x25B6
    assert a2["device_name"] == a16["device_name"] == ESXI_NAME
    # The collector reads the subsystem ids, and the catalogue decides by them.
    assert (gpu_of("brd-a2").sub_vendor_id, gpu_of("brd-a2").sub_device_id) == (0x10DE, 0x157E)
    assert (gpu_of("brd-a16").sub_vendor_id, gpu_of("brd-a16").sub_device_id) == (0x10DE, 0x14A9)
    assert (gpu_of("brd-a2").model, gpu_of("brd-a16").model) == ("NVIDIA A2", "NVIDIA A16")


def test_the_subsystem_id_decides_not_the_name() -> None:
    def named(device_name: str, **subsystem: int) -> str:
        return catalog.model_name(0x10DE, 0x25B6, device_name, **subsystem)

    assert named(ESXI_NAME, **A2_SUBSYSTEM) == "NVIDIA A2"
    assert named(ESXI_NAME, **A16_SUBSYSTEM) == "NVIDIA A16"
    assert named("NVIDIA A16", **A2_SUBSYSTEM) == "NVIDIA A2"
    assert named("NVIDIA A2", **A16_SUBSYSTEM) == "NVIDIA A16"
    # ESXi's name holds "A2" as a word: without subsystem ids it must not make an A2.
    assert named(ESXI_NAME) == "NVIDIA A16"
    # An inventory saved before subsystem ids were read, whose name says A2 alone.
    assert named("NVIDIA A2") == "NVIDIA A2"


def test_each_boards_profiles_belong_to_it() -> None:
    for host, (name, _, prefix) in BOARDS.items():
        gpu = gpu_of(host)
        assert F.gpu_prefix(gpu) == prefix, host
        model = catalog.model_for_profile(prefix)
        assert model is not None and model.name == name, prefix
        for profile in profiles_on(host):
            info = catalog.parse_profile(profile)
            assert info is not None and info.gpu == prefix, profile


def test_mig_slices_never_join_a_hyphenated_prefix() -> None:
    info = catalog.parse_profile("grid_rtx6000-ada-16q")
    assert info is not None and (info.gpu, info.memory_mb, info.series) == (
        "rtx6000-ada",
        16384,
        "q",
    )
    info = catalog.parse_profile("grid_h100xm-3-40c")
    assert info is not None and (info.gpu, info.mig_slices, info.memory_mb) == ("h100xm", 3, 40960)


def test_legacy_zero_gb_profiles_have_512_mb() -> None:
    for name, prefix, series in (
        ("grid_m10-0b", "m10", "b"),
        ("grid_m60-0b", "m60", "b"),
        ("grid_m10-0q", "m10", "q"),
    ):
        info = catalog.parse_profile(name)
        assert info is not None, name
        assert (info.gpu, info.memory_mb, info.series) == (prefix, 512, series)
    # 16 of them on one 8 GB M10 GPU, not one.
    assert catalog.vgpus_per_gpu(8 * 1024, 512) == 16


def test_zero_gb_vgpus_share_their_gpu_in_the_simulation() -> None:
    (m10,) = [s for s in simulate_cluster(replayed(), "boards").capacity if s.host == "brd-m10"]
    placed = sorted(
        vm["name"] for vm in scenario()["datacenters"][0]["vms"] if vm["host"] == "brd-m10"
    )
    assert sorted(m10.vms) == placed
    assert (m10.capacity, m10.used, m10.used_mb) == (8 * 1024 // 512, 2, 2 * 512)
    vm = next(v for v in replayed().vms if v.name == placed[0])
    assert F.Facts(replayed()).attachment_fraction(vm, vm.gpus[0]) == 512 / (8 * 1024)


def test_the_catalogue_agrees_with_the_independent_table() -> None:
    for (vendor, device), model in catalog.MODELS.items():
        ids = f"{vendor:04x}:{device:04x}"
        known = expected._known_gpu(vendor, device, "", vendor, 0)
        assert known == (model.name, model.memory_mb), ids
    for (vendor, device, sub_vendor, sub_device), model in catalog.BY_SUBSYSTEM.items():
        known = expected._known_gpu(vendor, device, ESXI_NAME, sub_vendor, sub_device)
        assert known == (model.name, model.memory_mb), f"{device:04x} {sub_device:04x}"
