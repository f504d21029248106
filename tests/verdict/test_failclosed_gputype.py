"""The GPU-type traps of tests/scenarios/failclosed-gputype.yaml, judged on the scenario's
oracle inventory and on the recorded lab session (cassettes/failclosed-gputype.yaml):
in each trap the only other host offers the VM's profile, or its family, on a board
NVIDIA does not migrate the vGPU to, and VM-02 and the host-failure simulation refuse
it; its twin, whose other host has the VM's own board, passes.

Expected verdicts are written out by hand from the published texts:

- NVIDIA Virtual GPU Software User Guide, "Migrating a VM Configured with vGPU": a vGPU
  is migrated only to "a physical GPU of the same type".
- NVIDIA AI Enterprise release 8, "Blackwell Architecture vGPU Types"
  (https://docs.nvidia.com/ai-enterprise/release-8/latest/infra-software/vgpu/reference/blackwell.html):
  the types DC-8C, DC-16C and DC-32C belong to both the RTX PRO 6000 and the RTX PRO 4500
  Blackwell Server Editions; DC-32C is the whole of the RTX PRO 4500's 32 GB.
- NVIDIA AI Enterprise release 8, "Live Migration"
  (https://docs.nvidia.com/ai-enterprise/release-8/latest/infra-software/vgpu/features/live-migration.html):
  "Live Migration is not supported between 80 GB PCIe and 94 GB NVL variants of GPU
  Boards"; the NVL's types are H100L-* (H100L-94C), the PCIe board's H100-* (H100-80C).
- The PCI ID Repository (pci.ids, github.com/pciutils/pciids at c1c12547): 10de:2bb5
  "GB202GL [RTX PRO 6000 Blackwell Server Edition]", 10de:2c3a "GB203GL [RTX PRO 4500
  Blackwell Server Edition]", 10de:2331 "GH100 [H100 PCIe]", 10de:2321 "GH100 [H100L
  94GB]": the names ESXi reports.
"""

from __future__ import annotations

import pytest

from gpuaudit.inventory import Inventory
from gpuaudit.results import AuditResult
from tests.conftest import SCENARIOS
from tests.lab.scenario import load_scenario
from tests.support.checked_estates import checked, scenario_inventory

NAME = "failclosed-gputype"

# host -> (PCI device id, the name ESXi reports, frame buffer in GB, profiles it offers)
HOSTS = {
    "bw-esx01": (0x2BB5, "GB202GL [RTX PRO 6000 Blackwell Server Edition]", 96, "dc6000"),
    "bw-esx02": (0x2C3A, "GB203GL [RTX PRO 4500 Blackwell Server Edition]", 32, "dc4500"),
    "bw-esx03": (0x2BB5, "GB202GL [RTX PRO 6000 Blackwell Server Edition]", 96, "dc6000"),
    "bw-esx04": (0x2BB5, "GB202GL [RTX PRO 6000 Blackwell Server Edition]", 96, "dc6000"),
    "hp-esx01": (0x2331, "GH100 [H100 PCIe]", 80, "h100"),
    "hp-esx02": (0x2321, "GH100 [H100L 94GB]", 94, "h100l"),
    "hp-esx03": (0x2331, "GH100 [H100 PCIe]", 80, "h100"),
    "hp-esx04": (0x2331, "GH100 [H100 PCIe]", 80, "h100"),
}
OFFERED = {
    "dc6000": ["nvidia_dc-8c", "nvidia_dc-16c", "nvidia_dc-32c", "nvidia_dc-96c"],
    "dc4500": ["nvidia_dc-8c", "nvidia_dc-16c", "nvidia_dc-32c"],
    "h100": ["grid_h100-20c", "grid_h100-40c", "grid_h100-80c"],
    "h100l": ["grid_h100l-23c", "grid_h100l-47c", "grid_h100l-94c"],
}
PRO_6000 = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
H100_PCIE = "NVIDIA H100 PCIe 80GB"

# VM -> (VM-02 status, message)
VM02 = {
    "bw-trap-vm": (
        "fail",
        f"bw-esx02 offers nvidia_dc-16c only on another type of GPU (the VM's: {PRO_6000}): "
        "NVIDIA moves a vGPU only to a GPU of the same type: no vMotion or HA target",
    ),
    "bw-twin-vm": ("pass", "nvidia_dc-16c is also offered by bw-esx04"),
    "hp-trap-vm": (
        "fail",
        "no other connected host of gt-hp-trap offers grid_h100-80c: no vMotion or HA target",
    ),
    "hp-twin-vm": ("pass", "grid_h100-80c is also offered by hp-esx04"),
}
# VM -> (HA-05 status, message): the simulation restarts a vGPU VM only on its GPU model.
HA05 = {
    "bw-trap-vm": (
        "fail",
        "nowhere to restart if bw-esx01 fails: no surviving host can take it (bw-esx02: no "
        f"Shared Direct GPU of model {PRO_6000})",
    ),
    "bw-twin-vm": ("pass", "can restart on bw-esx04 (0000:3b:00.0) if bw-esx03 fails"),
    "hp-trap-vm": (
        "fail",
        "nowhere to restart if hp-esx01 fails: no surviving host can take it (hp-esx02: does "
        "not offer grid_h100-80c)",
    ),
    "hp-twin-vm": ("pass", "can restart on hp-esx04 (0000:3b:00.0) if hp-esx03 fails"),
}
# cluster -> status of HA-08 (N+1 with every GPU VM restarted) and of HA-13 (admission
# control is on but ignores GPUs; it fails where the simulation finds N+0)
CLUSTERS = {"gt-bw-trap": "fail", "gt-bw-twin": "pass", "gt-hp-trap": "fail", "gt-hp-twin": "pass"}
TRAPS_AND_TWINS = {"bw-trap-vm": "bw-twin-vm", "hp-trap-vm": "hp-twin-vm"}


@pytest.fixture(scope="module", params=["oracle", "cassette"])
def inventory(request: pytest.FixtureRequest) -> Inventory:
    return scenario_inventory(NAME, request.param)


@pytest.fixture(scope="module")
def result(inventory: Inventory) -> AuditResult:
    return checked(inventory)


def findings(result: AuditResult, rule: str) -> dict[str, tuple[str, str]]:
    return {f.object: (f.status, f.message) for f in result.findings if f.rule == rule}


def test_the_hosts_report_their_boards_as_esxi_names_them(inventory: Inventory) -> None:
    seen = {
        h.name: (g.device_id, g.device_name, g.memory_mb, [p.name for p in h.vgpu_profiles])
        for h in inventory.hosts
        for g in h.gpus
    }
    assert seen == {
        host: (device, name, gigabytes * 1024, OFFERED[offers])
        for host, (device, name, gigabytes, offers) in HOSTS.items()
    }


def test_vm02_refuses_a_profile_offered_only_on_another_board(result: AuditResult) -> None:
    assert findings(result, "VM-02") == VM02
    for trap, twin in TRAPS_AND_TWINS.items():
        assert VM02[trap][0] == "fail" and VM02[twin][0] == "pass"
    types = {f.object: f.evidence["gpu_types"] for f in result.findings if f.rule == "VM-02"}
    assert types == {
        "bw-trap-vm": [PRO_6000],
        "bw-twin-vm": [PRO_6000],
        "hp-trap-vm": [H100_PCIE],
        "hp-twin-vm": [H100_PCIE],
    }


def test_the_host_failure_simulation_restarts_only_on_the_vms_own_board(
    result: AuditResult,
) -> None:
    assert findings(result, "HA-05") == HA05
    restarted = {
        s.cluster: {f.host: sorted(p.vm for p in f.placed) for f in s.failures}
        for s in result.simulations
    }
    assert restarted["gt-bw-trap"]["bw-esx01"] == []
    assert restarted["gt-bw-twin"]["bw-esx03"] == ["bw-twin-vm"]
    assert restarted["gt-hp-trap"]["hp-esx01"] == []
    assert restarted["gt-hp-twin"]["hp-esx03"] == ["hp-twin-vm"]


@pytest.mark.parametrize("rule", ["HA-08", "HA-13"])
def test_a_trap_cluster_has_no_gpu_failover_and_its_twin_has(
    result: AuditResult, rule: str
) -> None:
    assert {name: status for name, (status, _) in findings(result, rule).items()} == CLUSTERS


def test_vm10_times_no_vmotion_to_another_board(result: AuditResult) -> None:
    # The traps have no destination of their type: VM-02 judges them, VM-10 does not.
    found = {f.object: f for f in result.findings if f.rule == "VM-10"}
    assert sorted(found) == ["bw-twin-vm", "hp-twin-vm"]
    assert found["bw-twin-vm"].status == "pass"
    assert found["bw-twin-vm"].evidence["slowest_destination"] == "bw-esx04"
    # 80 GB of vGPU data is beyond VMware's table, which ends at 32 GB.
    assert found["hp-twin-vm"].status == "unproven"
    assert found["hp-twin-vm"].evidence["slowest_destination"] == "hp-esx04"


def test_the_scenario_expects_what_this_test_writes_out() -> None:
    expect = {e["rule"]: e for e in load_scenario(SCENARIOS / f"{NAME}.yaml")["expect"]}
    for rule, table in (("VM-02", VM02), ("HA-05", HA05)):
        for status in ("fail", "pass"):
            assert sorted(expect[rule][status]) == sorted(
                vm for vm, (s, _) in table.items() if s == status
            ), rule
    for rule in ("HA-08", "HA-13", "VM-03"):
        for status in ("fail", "pass"):
            assert sorted(expect[rule][status]) == sorted(
                c for c, s in CLUSTERS.items() if s == status
            ), rule
    assert expect["VM-10"]["pass"] == ["bw-twin-vm"]
    assert expect["VM-10"]["unproven"] == ["hp-twin-vm"]
