"""Shapes real hosts report, served by the lab: tests/scenarios/real-shapes.yaml,
recorded as cassettes/real-shapes.yaml.

Figures written out here, not taken from gpuaudit's tables:

- NVIDIA's vGPU user guide, "Virtual GPU Types": T4-2B4 has 2048 MB of frame buffer,
  the T4 16 GB.
- govc's gpu.host.info (govmomi, isPhysicalGPU): an NVIDIA device whose subsystem device
  id is 0x0000 is a virtual function, not a GPU. The lab lists a GPU's functions on its
  bus from function 4 of its slot on, eight a slot.
- esx.conf writes PCI addresses in decimal, three digits for the bus: 0000:3b:00.0 is
  000:059:00.0.
- The NVIDIA host driver numbers gpuN over the GPUs it owns (Shared or Shared Direct).
- pci.ids (c1c12547, 2026-08-22), vendor 10de: "1bb3  GP104GL [Tesla P4]", "1b38  GP102GL
  [Tesla P40]", "1db6  GV100GL [Tesla V100 PCIe 32GB]"; NVIDIA's datasheets: the Tesla P4
  has 8 GB of GDDR5, the Tesla P40 24 GB, the V100 PCIe 32GB 32 GB of HBM2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuaudit.inventory import Host, Inventory
from gpuaudit.results import AuditResult
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES
from tests.lab.scenario import load_scenario
from tests.support.checked_estates import assert_expectations

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "real-shapes.yaml"
T4_2B4_MB = 2048
T4_MB = 16 * 1024


SPEC: dict[str, Any] = load_scenario(SCENARIO)


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(CASSETTES / "real-shapes.yaml"))


@pytest.fixture(scope="module")
def result(inventory: Inventory) -> AuditResult:
    return run_checks(inventory)


def hosts(cluster: str) -> list[dict[str, Any]]:
    dc = SPEC["datacenters"][0]
    return next(c for c in dc["clusters"] if c["name"] == cluster)["hosts"]


def host(inventory: Inventory, name: str) -> Host:
    found = inventory.host(name)
    assert found is not None
    return found


def test_the_expectations_of_the_scenario_hold(result: AuditResult) -> None:
    assert_expectations(result, SPEC["expect"])


def test_b4_vgpus_take_their_frame_buffer_share(result: AuditResult) -> None:
    vms = [v for v in SPEC["datacenters"][0]["vms"] if v["host"].startswith("rs-b4-")]
    assert {g["vgpu"] for v in vms for g in v["gpus"]} == {"grid_t4-2b4"}
    ha06 = next(f for f in result.findings if f.rule == "HA-06" and f.object == "rs-b4")
    assert ha06.evidence["allocated_gpus"] == pytest.approx(len(vms) * T4_2B4_MB / T4_MB)
    for v in vms:
        lic = next(f for f in result.findings if f.rule == "LIC-01" and f.object == v["name"])
        assert "NVIDIA Virtual PC" in lic.message


def test_virtual_functions_are_no_gpus(inventory: Inventory) -> None:
    for spec in hosts("rs-vf"):
        found = host(inventory, spec["name"])
        assert [g.pci_id for g in found.gpus] == [g["pci_id"] for g in spec["gpus"]]
        for gpu, g in zip(found.gpus, spec["gpus"], strict=True):
            count = g["sriov"]["vfs"]
            assert len(gpu.virtual_functions) == count == 32
            # The functions of 0000:3b:00.0: 0000:3b:00.4 to 0000:3b:04.3.
            assert gpu.virtual_functions[0] == "0000:3b:00.4"
            assert gpu.virtual_functions[-1] == "0000:3b:04.3"
            assert len(set(gpu.virtual_functions)) == count
        assert found.unattached_virtual_functions == []


def test_physical_gpus_report_a_subsystem_of_their_own(inventory: Inventory) -> None:
    assert all(g.sub_device_id != 0 for h in inventory.hosts for g in h.gpus)


def _decimal(pci_id: str) -> str:
    segment, bus, rest = pci_id.split(":")
    slot, function = rest.split(".")
    return f"{int(segment, 16):03d}:{int(bus, 16):03d}:{int(slot, 16):02d}.{function}"


def test_decimal_instances_match_the_gpu_at_their_bus(inventory: Inventory) -> None:
    spec = next(h for h in hosts("rs-counters") if h["name"] == "rs-dec")
    assert spec["gpu_counter_instances"] == "decimal"
    found = host(inventory, "rs-dec")
    by_pci = {g.pci_id: g for g in found.gpus}
    assert _decimal("0000:3b:00.0") == "000:059:00.0"
    for g in spec["gpus"]:
        telemetry = by_pci[g["pci_id"]].telemetry
        assert telemetry is not None
        assert (telemetry.instance, telemetry.matched_by) == (_decimal(g["pci_id"]), "pci")
        assert telemetry.temperature_c is not None
        assert telemetry.temperature_c.peak == max(g["telemetry"]["temperature_c"])


def test_gpu_n_names_the_gpus_the_host_driver_owns(inventory: Inventory) -> None:
    spec = next(h for h in hosts("rs-counters") if h["name"] == "rs-mix")
    owned = sorted(
        g["pci_id"]
        for g in spec["gpus"]
        if g["graphics_type"] in ("shared", "sharedDirect") and not g["passthrough"]["active"]
    )
    assert owned == ["0000:5e:00.0"]
    found = host(inventory, "rs-mix")
    by_pci = {g.pci_id: g for g in found.gpus}
    for position, pci_id in enumerate(owned):
        telemetry = by_pci[pci_id].telemetry
        assert telemetry is not None and (telemetry.instance, telemetry.matched_by) == (
            f"gpu{position}",
            "order",
        )
    assert by_pci["0000:3b:00.0"].telemetry is None


# (device id, frame buffer in GB, a word of the board's name) from the figures above.
LEGACY = {
    "rs-p4-01": (0x1BB3, 8, "P4"),
    "rs-p4-02": (0x1BB3, 8, "P4"),
    "rs-p40-01": (0x1B38, 24, "P40"),
    "rs-v100-01": (0x1DB6, 32, "V100"),
}


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_boards_real_estates_still_run_are_known_by_pci_id(inventory: Inventory, name: str) -> None:
    """ESXi's glued device name ("NVIDIATesla P4") does not matter: the PCI id does."""
    device_id, gigabytes, word = LEGACY[name]
    (gpu,) = host(inventory, name).gpus
    assert gpu.device_id == device_id
    assert gpu.known_model
    assert word in gpu.model.split()
    assert gpu.memory_mb == gigabytes * 1024
