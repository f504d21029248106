"""VM-01 to VM-07 (rules/vmotion.py): exact messages and boundaries, by hand.

healthy() gives c1 with hosts h1..h3, each one L4 offering grid_l4-4q to -24q and a
vMotion adapter, and the grid_l4-8q VMs v1..v3 (one per host).

Then VM-07 on distributed switches (and a gap for unknown uplinks) and VM-06 against
the vGPU branches' ESXi releases and vCenter's (not proven where the branch, or its list
of releases, is not known); and tests/scenarios/vmotion.yaml: its expectations (VM-06,
VM-07, VM-09, VM-10) hold on the oracle's inventory and on the recorded cassette.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuaudit.inventory import (
    HOST_AGENT,
    GpuAttachment,
    Host,
    Inventory,
    VgpuProfile,
    VmotionNic,
)
from gpuaudit.knowledge.branches import branch_for
from gpuaudit.knowledge.releases import Release, esxi_release, vcenter_release
from gpuaudit.rules import vmotion
from gpuaudit.rules.registry import Outcome
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain as scan
from tests.conftest import CASSETTES, SCENARIOS
from tests.lab.expected import expected_inventory
from tests.lab.scenario import load_scenario
from tests.support.builders import Estate, context, healthy


def test_vm01_messages() -> None:
    e = healthy()
    vc = e.inv.vcenter
    vc.vgpu_hotmigrate_enabled = True
    assert vmotion.hotmigrate(context(e.inv), vc) == Outcome(
        True,
        "vgpu.hotmigrate.enabled is true",
        {"setting": "vgpu.hotmigrate.enabled", "value": True, "vgpu_vms": 3},
    )
    vc.vgpu_hotmigrate_enabled = None
    outcome = vmotion.hotmigrate(context(e.inv), vc)
    assert outcome is not None and not outcome.passed
    assert outcome.message == "vgpu.hotmigrate.enabled could not be read: vGPU vMotion may be off"
    vc.vgpu_hotmigrate_enabled = False
    outcome = vmotion.hotmigrate(context(e.inv), vc)
    assert outcome is not None and not outcome.passed
    assert outcome.message == "vgpu.hotmigrate.enabled is not true: vGPU VMs cannot be vMotioned"
    vc.api_type = HOST_AGENT
    assert vmotion.hotmigrate(context(e.inv), vc) is None


def test_vm02_messages() -> None:
    e = healthy()
    v1 = e.inv.vms[0]
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome == Outcome(
        True,
        "grid_l4-8q is also offered by h2, h3",
        {"profiles": ["grid_l4-8q"], "hosts_offering_count": 2, "gpu_types": ["NVIDIA L4"]},
    )
    # Past three hosts the message names the first three and counts the rest.
    for i in (4, 5):
        e.gpu(e.host(f"h{i}", "c1"))
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome == Outcome(
        True,
        "grid_l4-8q is also offered by h2, h3, h4 and 1 more",
        {"profiles": ["grid_l4-8q"], "hosts_offering_count": 4, "gpu_types": ["NVIDIA L4"]},
    )
    for host in e.inv.hosts[1:]:
        host.vgpu_profiles = [VgpuProfile("grid_l4-4q")]
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome is not None and not outcome.passed
    assert outcome.message == (
        "no other connected host of c1 offers grid_l4-8q: no vMotion or HA target"
    )


# PCI device ids (pci.ids): 2bb5 RTX PRO 6000 Blackwell Server Edition, 2c3a RTX PRO 4500
# Blackwell Server Edition. NVIDIA's vGPU types of both include DC-16C.
RTX_PRO_6000_BSE, RTX_PRO_4500_BSE = 0x2BB5, 0x2C3A


def _blackwell(e: Estate, device: int, host: int) -> None:
    for g in e.inv.hosts[host].gpus:
        g.device_id, g.model, g.device_name, g.known_model = device, "", "", False
    e.inv.hosts[host].vgpu_profiles = [VgpuProfile("nvidia_dc-16c")]


def test_vm02_a_profile_of_the_same_name_on_another_board_is_no_target() -> None:
    e = healthy()
    v1 = e.inv.vms[0]
    v1.gpus[0].profile = "nvidia_dc-16c"
    _blackwell(e, RTX_PRO_6000_BSE, 0)
    for i in (1, 2):
        _blackwell(e, RTX_PRO_4500_BSE, i)
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome is not None and not outcome.passed and not outcome.unproven
    assert outcome.message == (
        "h2, h3 offer nvidia_dc-16c only on another type of GPU (the VM's: "
        "NVIDIA RTX PRO 6000 Blackwell Server Edition): NVIDIA moves a vGPU only to a GPU "
        "of the same type: no vMotion or HA target"
    )
    # The twin: one more RTX PRO 6000 host is a target.
    _blackwell(e, RTX_PRO_6000_BSE, 2)
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome is not None and outcome.passed and not outcome.unproven
    assert outcome.message == "nvidia_dc-16c is also offered by h3"


def test_vm02_one_host_offering_the_profile_on_another_board_is_named_alone() -> None:
    e = healthy()
    v1 = e.inv.vms[0]
    v1.gpus[0].profile = "nvidia_dc-16c"
    _blackwell(e, RTX_PRO_6000_BSE, 0)
    _blackwell(e, RTX_PRO_4500_BSE, 1)
    e.inv.hosts[2].vgpu_profiles = []
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome is not None and not outcome.passed
    assert outcome.message == (
        "h2 offers nvidia_dc-16c only on another type of GPU (the VM's: "
        "NVIDIA RTX PRO 6000 Blackwell Server Edition): NVIDIA moves a vGPU only to a GPU "
        "of the same type: no vMotion or HA target"
    )


def test_vm02_is_not_proven_when_the_vms_own_gpu_is_unknown() -> None:
    e = healthy()
    v1 = e.inv.vms[0]
    e.inv.hosts[0].gpus = []
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome is not None and outcome.passed
    assert outcome.unproven == (
        "the GPU type of v1's host is not known, so no host is proven to have a GPU of the "
        "same type"
    )
    assert outcome.message == "grid_l4-8q is also offered by h2, h3"
    assert outcome.evidence == {
        "profiles": ["grid_l4-8q"],
        "hosts_offering_count": 0,
        "gpu_types": [],
    }


def _unknown_board(e: Estate, host: int, graphics_type: str = "sharedDirect") -> None:
    """The host's one GPU becomes an "Acme Z9": no catalogue model, no PCI ids."""
    (g,) = e.inv.hosts[host].gpus
    g.model = g.device_name = "Acme Z9"
    g.known_model, g.vendor_id, g.device_id = False, 0, 0
    g.graphics_type = graphics_type


def test_vm02_is_not_proven_when_a_host_offers_the_profile_on_a_board_nothing_tells() -> None:
    # h2's GPU is a board nothing identifies, offering grid_l4-8q; h3 offers nothing: no
    # host is proven to have an L4, and none is proven not to.
    e = healthy()
    v1 = e.inv.vms[0]
    _unknown_board(e, 1)
    e.inv.hosts[2].vgpu_profiles = []
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome is not None and outcome.passed
    assert outcome.unproven == (
        "no catalogue knows the board of h2, so whether it is of the VM's type "
        "(NVIDIA L4) is not known"
    )
    assert outcome.message == "grid_l4-8q is also offered by h2"
    # No host is a proven target: h2's board is not known to be an L4, h3 offers nothing.
    assert outcome.evidence == {
        "profiles": ["grid_l4-8q"],
        "hosts_offering_count": 0,
        "gpu_types": ["NVIDIA L4"],
    }


def _two_blackwells() -> Estate:
    """healthy() with v1 of nvidia_dc-16c on h1's RTX PRO 6000, beside an RTX PRO 4500."""
    e = healthy()
    e.inv.vms[0].gpus[0].profile = "nvidia_dc-16c"
    _blackwell(e, RTX_PRO_6000_BSE, 0)
    other = e.gpu(e.inv.hosts[0], pci_id="0000:5e:00.0")
    other.device_id, other.model, other.device_name, other.known_model = (
        RTX_PRO_4500_BSE,
        "",
        "",
        False,
    )
    return e


def test_vm02_not_proven_names_every_type_the_vm_may_need() -> None:
    # v1 runs on no GPU of h1, which holds an RTX PRO 6000 and an RTX PRO 4500 (both
    # offer DC-16C): it may need either. h2 offers nvidia_dc-16c on a board nothing
    # tells, h3 nothing.
    e = _two_blackwells()
    v1 = e.inv.vms[0]
    for g in e.inv.hosts[0].gpus:
        g.vms = []
    _unknown_board(e, 1)
    e.inv.hosts[1].vgpu_profiles = [VgpuProfile("nvidia_dc-16c")]
    e.inv.hosts[2].vgpu_profiles = []
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome is not None and outcome.passed
    assert outcome.unproven == (
        "no catalogue knows the board of h2, so whether it is of the VM's type "
        "(NVIDIA RTX PRO 4500 Blackwell Server Edition, NVIDIA RTX PRO 6000 Blackwell "
        "Server Edition) is not known"
    )


def test_vm02_a_board_nothing_tells_leaves_no_doubt_beside_a_known_target() -> None:
    # h3 has an L4 offering grid_l4-8q: a target, whatever h2's board is.
    e = healthy()
    v1 = e.inv.vms[0]
    _unknown_board(e, 1)
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome is not None and outcome.passed and not outcome.unproven
    assert outcome.message == "grid_l4-8q is also offered by h3"


def test_vm02_a_board_nothing_tells_in_passthrough_is_no_vgpu_target() -> None:
    # The same board in passthrough runs no vGPU: h2 is proven no target.
    e = healthy()
    v1 = e.inv.vms[0]
    _unknown_board(e, 1, graphics_type="direct")
    e.inv.hosts[2].vgpu_profiles = []
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome is not None and not outcome.passed and not outcome.unproven


def test_vm02_a_running_vm_is_of_the_type_it_runs_on_not_of_its_hosts_others() -> None:
    # h1 holds the RTX PRO 6000 v1 runs on and an RTX PRO 4500; h2 offers nvidia_dc-16c on
    # an RTX PRO 4500 only, h3 nothing.
    e = _two_blackwells()
    v1 = e.inv.vms[0]
    _blackwell(e, RTX_PRO_4500_BSE, 1)
    e.inv.hosts[2].vgpu_profiles = []
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome is not None and outcome.passed is False and not outcome.unproven
    assert outcome.evidence["gpu_types"] == ["NVIDIA RTX PRO 6000 Blackwell Server Edition"]
    # v1 runs on no GPU (powered off): it takes its host's types, both, and h2 has one.
    for g in e.inv.hosts[0].gpus:
        g.vms = []
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome is not None and outcome.passed is True
    assert outcome.evidence["gpu_types"] == [
        "NVIDIA RTX PRO 4500 Blackwell Server Edition",
        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    ]


def test_vm02_names_every_type_of_the_vms_host_when_none_is_a_target() -> None:
    # v1 runs on no GPU of h1, which holds an L4 and a GPU of device 10de:1234; h2 and h3
    # offer grid_l4-8q on GPUs of device 10de:5678.
    e = healthy()
    v1 = e.inv.vms[0]
    unknown = e.gpu(e.inv.hosts[0], pci_id="0000:5e:00.0")
    unknown.device_id, unknown.model, unknown.device_name, unknown.known_model = (
        0x1234,
        "",
        "",
        False,
    )
    for g in e.inv.hosts[0].gpus:
        g.vms = []
    for host in e.inv.hosts[1:]:
        for g in host.gpus:
            g.device_id, g.model, g.device_name, g.known_model = 0x5678, "", "", False
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome is not None and outcome.passed is False
    assert outcome.message == (
        "h2, h3 offer grid_l4-8q only on another type of GPU (the VM's: NVIDIA L4, "
        "PCI 10de:1234): NVIDIA moves a vGPU only to a GPU of the same type: no vMotion or "
        "HA target"
    )


def test_vm03_messages() -> None:
    e = healthy()
    c1 = e.inv.clusters[0]
    outcome = vmotion.mixed_models(context(e.inv), c1)
    assert outcome == Outcome(
        True, "one GPU model: NVIDIA L4", {"hosts_by_model": {"NVIDIA L4": ["h1", "h2", "h3"]}}
    )
    e.gpu(e.inv.hosts[2], pci_id="0000:af:00.0", model="a10")
    e.gpu(e.inv.hosts[1], pci_id="0000:af:00.0", model="t4")
    outcome = vmotion.mixed_models(context(e.inv), c1)
    assert outcome is not None and not outcome.passed
    assert outcome.message == (
        "3 GPU models (supported; watch the spare capacity per model): vGPU VMs can move "
        "only within a group (NVIDIA A10: h3; NVIDIA L4: h1, h2, h3; NVIDIA T4: h2)"
    )


def test_vm04_messages() -> None:
    e = healthy()
    h1 = e.inv.hosts[0]
    h1.vmotion_nics = [VmotionNic("vmk1"), VmotionNic("vmk2")]
    assert vmotion.vmotion_nic(context(e.inv), h1) == Outcome(
        True, "vMotion on vmk1, vmk2", {"vmotion_nics": ["vmk1", "vmk2"]}
    )
    h1.vmotion_nics = []
    assert vmotion.vmotion_nic(context(e.inv), h1) == Outcome(
        False, "no VMkernel adapter has vMotion", {"vmotion_nics": []}
    )


def test_vm07_at_10_gbe_exactly() -> None:
    e = healthy()
    h1 = e.inv.hosts[0]
    h1.vmotion_nics = [
        VmotionNic("vmk1", uplink_speed_mbps=1000, switch="vSwitch0"),
        VmotionNic("vmk2", uplink_speed_mbps=10_000, switch="dvs1", distributed=True),
    ]
    assert vmotion.vmotion_speed(context(e.inv), h1) == Outcome(
        True,
        "fastest vMotion uplink 10000 Mb/s",
        {"uplink_speed_mbps": [1000, 10_000], "switches": {"vmk1": "vSwitch0", "vmk2": "dvs1"}},
    )
    h1.vmotion_nics[1].uplink_speed_mbps = 9999
    outcome = vmotion.vmotion_speed(context(e.inv), h1)
    assert outcome is not None
    assert (outcome.passed, outcome.message) == (
        False,
        "fastest vMotion uplink 9999 Mb/s: below 10 Gb/s",
    )


def test_vm07_names_the_adapters_whose_uplinks_are_unknown() -> None:
    e = healthy()
    h1 = e.inv.hosts[0]
    h1.vmotion_nics = [
        VmotionNic("vmk1", uplink_speed_mbps=None, switch="dvs1", distributed=True),
        VmotionNic("vmk2", uplink_speed_mbps=25_000, switch="vSwitch0"),
        VmotionNic("vmk3", uplink_speed_mbps=None, switch="dvs2", distributed=True),
    ]
    assert vmotion.vmotion_speed(context(e.inv), h1) == Outcome(
        False,
        "the uplinks of vMotion adapter vmk1, vmk3 could not be determined: its vMotion "
        "bandwidth is unknown",
        {
            "uplink_speed_mbps": [25_000],
            "switches": {"vmk1": "dvs1", "vmk2": "vSwitch0", "vmk3": "dvs2"},
            "uplinks_unknown": ["vmk1", "vmk3"],
        },
    )
    e.inv.vcenter.api_type = HOST_AGENT
    assert vmotion.vmotion_speed(context(e.inv), h1) is None


def test_vm05_messages() -> None:
    e = healthy()
    v1, h1 = e.inv.vms[0], e.inv.hosts[0]
    assert vmotion.migrate_supported(context(e.inv), v1) == Outcome(
        True,
        "vGPU migration is supported",
        {
            "profiles": ["grid_l4-8q"],
            "backing_migrate_supported": [None],
            "host_migrate_supported": [True],
        },
    )
    # a second vGPU of the same profile, and both the backing and the host say false
    v1.gpus.append(GpuAttachment("vgpu", profile="grid_l4-8q"))
    v1.gpus[0].migrate_supported = False
    for p in h1.vgpu_profiles:
        p.migrate_supported = p.name != "grid_l4-8q"
    assert vmotion.migrate_supported(context(e.inv), v1) == Outcome(
        False,
        "the VM's vGPU backing says migrateSupported false; h1 reports migrateSupported false "
        "for grid_l4-8q, grid_l4-8q",
        {
            "profiles": ["grid_l4-8q", "grid_l4-8q"],
            "backing_migrate_supported": [False, None],
            "host_migrate_supported": [False, False],
        },
    )
    # a host the inventory does not hold offers nothing to look up
    v1.host = "gone"
    assert vmotion.migrate_supported(context(e.inv), v1) == Outcome(
        False,
        "the VM's vGPU backing says migrateSupported false",
        {
            "profiles": ["grid_l4-8q", "grid_l4-8q"],
            "backing_migrate_supported": [False, None],
            "host_migrate_supported": [None, None],
        },
    )
    e.inv.vcenter.api_type = HOST_AGENT
    assert vmotion.migrate_supported(context(e.inv), v1) is None


def _vm06_with(e: Estate, version: str, build: str, manager: str | None = None) -> Outcome | None:
    h1 = e.inv.hosts[0]
    h1.version, h1.build, h1.vgpu_manager_version = version, build, manager
    return vmotion.esxi_version(context(e.inv), h1)


def _evidence(
    version: str,
    build: str,
    release: str | None,
    vc: str | None,
    manager: str | None,
    **more: object,
) -> dict[str, object]:
    return {
        "version": version,
        "build": build,
        "esxi_release": release,
        "vcenter_release": vc,
        "vgpu_manager_version": manager,
        **more,
    }


# NVIDIA's release notes for a branch on VMware vSphere, where its ESXi releases are listed.
NOTES_13 = "https://docs.nvidia.com/grid/13.0/grid-vgpu-release-notes-vmware-vsphere/index.html"
NOTES_16 = "https://docs.nvidia.com/grid/16.0/grid-vgpu-release-notes-vmware-vsphere/index.html"
NOTES_17 = "https://docs.nvidia.com/vgpu/17.0/grid-vgpu-release-notes-vmware-vsphere/index.html"
NOTES_19 = "https://docs.nvidia.com/vgpu/19.0/grid-vgpu-release-notes-vmware-vsphere/index.html"


UNKNOWN_MANAGER = (
    "the vGPU manager version is not known (reading it needs Host.Config.Image): "
    "ESXi 8.0 U3 cannot be checked against its vGPU branch"
)


def test_vm06_messages() -> None:
    e = healthy()  # vCenter's version is not given
    assert _vm06_with(e, "8.0.3", "24022510") == Outcome(
        True,
        f"{UNKNOWN_MANAGER}; the vCenter release of version '' is unknown",
        _evidence("8.0.3", "24022510", "8.0 U3", None, None, listing_vgpu_branches=[]),
        unproven=f"{UNKNOWN_MANAGER}; the vCenter release of version '' is unknown",
    )
    assert _vm06_with(e, "", "") == Outcome(
        False,
        "the ESXi release of version '' build '' is unknown",
        _evidence("", "", None, None, None),
    )
    vc = e.inv.vcenter
    vc.version, vc.build = "6.7.0", "8217866"  # 6.7 GA
    assert _vm06_with(e, "6.0.0", "3620759", "999.1") == Outcome(
        False,
        "ESXi 6.0 is older than 6.7 U1: no vGPU vMotion; vCenter 6.7 is older than 6.7 U1: "
        "no vGPU vMotion; vGPU manager 999.1 is of no driver branch in gpuaudit's data",
        _evidence("6.0.0", "3620759", "6.0", "6.7", "999.1", listing_vgpu_branches=[]),
    )
    vc.version, vc.build = "6.7.0", "10244745"  # 6.7 U1, the first with vGPU vMotion
    later = (
        "ESXi 9.0 is later than the releases gpuaudit holds for vGPU 16 (R535) (ESXi 7.0, "
        "8.0): whether NVIDIA lists it is not known"
    )
    assert _vm06_with(e, "9.0.0", "24755229", "535.161.05") == Outcome(
        True,
        f"{later}; vCenter 6.7 U1 predates 8.0 U2: no stun-time estimates",
        _evidence(
            "9.0.0",
            "24755229",
            "9.0",
            "6.7 U1",
            "535.161.05",
            vgpu_branch=16,
            vgpu_release_notes=NOTES_16,
        ),
        unproven=later,
    )
    assert _vm06_with(e, "6.7.0", "14320388", "535.161.05") == Outcome(
        False,
        "ESXi 6.7 U3 is not supported by vGPU 16 (R535) (listed: ESXi 7.0, 8.0); vCenter "
        "6.7 U1 predates 8.0 U2: no stun-time estimates",
        _evidence(
            "6.7.0",
            "14320388",
            "6.7 U3",
            "6.7 U1",
            "535.161.05",
            vgpu_branch=16,
            vgpu_release_notes=NOTES_16,
        ),
    )
    vc.version, vc.build = "8.0.2", "22385739"  # 8.0 U2, the first with stun-time estimates
    later = (
        "ESXi 6.7 U1 is later than the releases gpuaudit holds for vGPU 13 (R470) (ESXi 6.5, "
        "6.7, 7.0): whether NVIDIA lists it is not known"
    )
    assert _vm06_with(e, "6.7.0", "10302608", "470.256.02") == Outcome(
        True,
        later,
        _evidence(
            "6.7.0",
            "10302608",
            "6.7 U1",
            "8.0 U2",
            "470.256.02",
            vgpu_branch=13,
            vgpu_release_notes=NOTES_13,
        ),
        unproven=later,
    )
    assert _vm06_with(e, "7.0.3", "19193900", "550.54.16") == Outcome(
        True,
        "ESXi 7.0 U3 is listed for vGPU 17 (R550)",
        _evidence(
            "7.0.3",
            "19193900",
            "7.0 U3",
            "8.0 U2",
            "550.54.16",
            vgpu_branch=17,
            vgpu_release_notes=NOTES_17,
        ),
    )
    no_list = "the ESXi releases vGPU 19 (R580) supports are not in gpuaudit's data"
    assert _vm06_with(e, "8.0.3", "24022510", "580.65.05") == Outcome(
        True,
        no_list,
        _evidence(
            "8.0.3",
            "24022510",
            "8.0 U3",
            "8.0 U2",
            "580.65.05",
            vgpu_branch=19,
            vgpu_release_notes=NOTES_19,
        ),
        unproven=no_list,
    )
    # ESXi 8.0 itself is listed for vGPU 15 to 18: the evidence says where to look.
    unknown = "vGPU manager 600.12.01 is of no driver branch in gpuaudit's data"
    assert _vm06_with(e, "8.0.0", "20513097", "600.12.01") == Outcome(
        True,
        unknown,
        _evidence(
            "8.0.0",
            "20513097",
            "8.0",
            "8.0 U2",
            "600.12.01",
            listing_vgpu_branches=[15, 16, 17, 18],
        ),
        unproven=unknown,
    )


def test_vm06_asks_nothing_of_a_host_without_vgpu_vms_or_without_vcenter() -> None:
    e = healthy()
    idle = e.host("h4", "c1")
    e.gpu(idle)
    assert vmotion.esxi_version(context(e.inv), idle) is None
    e.inv.vcenter.api_type = HOST_AGENT
    assert vmotion.esxi_version(context(e.inv), e.inv.hosts[0]) is None


def test_vm02_names_every_vgpu_profile_of_a_vm_with_two() -> None:
    e = healthy()
    v1 = e.inv.vms[0]
    v1.gpus.append(GpuAttachment("vgpu", profile="grid_l4-4q"))
    assert vmotion.profile_elsewhere(context(e.inv), v1) == Outcome(
        True,
        "grid_l4-8q, grid_l4-4q is also offered by h2, h3",
        {
            "profiles": ["grid_l4-8q", "grid_l4-4q"],
            "hosts_offering_count": 2,
            "gpu_types": ["NVIDIA L4"],
        },
    )
    for host in e.inv.hosts[1:]:
        host.vgpu_profiles = [VgpuProfile("grid_l4-2q")]
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome is not None and outcome.message == (
        "no other connected host of c1 offers grid_l4-8q, grid_l4-4q: no vMotion or HA target"
    )


# --- one host at a time: VM-06's releases and VM-07's uplinks -----------------------------


def _host(e: Estate) -> Host:
    return e.inv.hosts[0]


def _vm06(e: Estate) -> Outcome:
    outcome = vmotion.esxi_version(context(e.inv), _host(e))
    assert outcome is not None
    return outcome


def _vm07(e: Estate) -> Outcome:
    outcome = vmotion.vmotion_speed(context(e.inv), _host(e))
    assert outcome is not None
    return outcome


# --- releases --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "build", "release"),
    [
        ("6.7.0", "8169922", Release(6, 7, 0)),
        ("6.7.0", "10302608", Release(6, 7, 1)),
        ("6.7.0", "13006603", Release(6, 7, 2)),
        ("6.7.0", "16316930", Release(6, 7, 3)),
        ("7.0.3", "21930508", Release(7, 0, 3)),
        ("8.0.2", "22380479", Release(8, 0, 2)),
        ("8.0.0", "", Release(8, 0, 0)),
    ],
)
def test_esxi_release_reads_the_update(version: str, build: str, release: Release) -> None:
    assert esxi_release(version, build) == release


def test_a_6x_release_without_a_build_is_unknown() -> None:
    assert esxi_release("6.7.0", "") is None
    assert vcenter_release("", "") is None


def test_a_vgpu_manager_version_names_its_branch() -> None:
    assert branch_for("535.161.05").number == 16  # type: ignore[union-attr]
    assert branch_for("570.124.03").number == 18  # type: ignore[union-attr]
    assert branch_for("999.1") is None and branch_for(None) is None


# --- VM-06 ---------------------------------------------------------------------------------


def _unproven(outcome: Outcome) -> str:
    """The reason of a verdict not proven; fails on a plain pass or a failure."""
    assert outcome.passed and outcome.unproven, outcome
    return outcome.unproven


def test_vm06_esxi_67_ga_has_no_vgpu_vmotion() -> None:
    e = healthy()
    _host(e).version, _host(e).build = "6.7.0", "8169922"
    outcome = _vm06(e)
    assert not outcome.passed
    assert "ESXi 6.7 is older than 6.7 U1" in outcome.message


def test_vm06_esxi_67_u1_is_not_proven_without_the_branch() -> None:
    e = healthy()
    _host(e).version, _host(e).build = "6.7.0", "10302608"
    assert "the vGPU manager version is not known" in _unproven(_vm06(e))


def test_vm06_without_a_manager_version_is_never_a_pass() -> None:
    e = healthy()
    e.inv.vcenter.version, e.inv.vcenter.build = "8.0.3", "24022509"
    outcome = _vm06(e)  # ESXi 8.0.3
    assert _unproven(outcome) == (
        "the vGPU manager version is not known (reading it needs Host.Config.Image): "
        "ESXi 8.0 U3 cannot be checked against its vGPU branch"
    )
    assert outcome.evidence["listing_vgpu_branches"] == []


def test_vm06_a_release_its_branch_does_not_list_fails() -> None:
    # gpuaudit holds ESXi 8.0 and 9.0 for vGPU 18 (R570): 7.0 U3 is older than both.
    e = healthy()
    _host(e).version, _host(e).build = "7.0.3", "21930508"
    _host(e).vgpu_manager_version = "570.124.03"
    outcome = _vm06(e)
    assert not outcome.passed
    assert "ESXi 7.0 U3 is not supported by vGPU 18 (R570)" in outcome.message
    assert outcome.evidence["vgpu_branch"] == 18


def test_vm06_a_later_update_than_the_branch_lists_is_not_proven() -> None:
    # Before, vGPU 18 "supported" 8.0 U3 because it lists 8.0: no NVIDIA text says so.
    e = healthy()
    e.inv.vcenter.version, e.inv.vcenter.build = "8.0.3", "24022509"
    _host(e).vgpu_manager_version = "570.124.03"
    assert _unproven(_vm06(e)) == (
        "ESXi 8.0 U3 is later than the releases gpuaudit holds for vGPU 18 (R570) "
        "(ESXi 8.0, 9.0): whether NVIDIA lists it is not known"
    )


def test_vm06_a_release_its_branch_lists_passes() -> None:
    e = healthy()
    e.inv.vcenter.version, e.inv.vcenter.build = "8.0.3", "24022509"
    _host(e).version, _host(e).build = "8.0.0", "20513097"
    _host(e).vgpu_manager_version = "570.124.03"
    outcome = _vm06(e)
    assert outcome.passed and not outcome.unproven
    assert outcome.message == "ESXi 8.0 is listed for vGPU 18 (R570)"


@pytest.mark.parametrize(
    ("manager", "reason"),
    [
        # vGPU 19 (R580) and 20 (R595): NVIDIA's ESXi lists were not read.
        ("580.65.05", "the ESXi releases vGPU 19 (R580) supports are not in gpuaudit's data"),
        ("595.58.02", "the ESXi releases vGPU 20 (R595) supports are not in gpuaudit's data"),
        # A later driver branch (vGPU 21 is not published) matches nothing.
        ("610.10.01", "vGPU manager 610.10.01 is of no driver branch in gpuaudit's data"),
    ],
)
def test_vm06_a_branch_newer_than_its_data_is_not_proven(manager: str, reason: str) -> None:
    e = healthy()
    e.inv.vcenter.version, e.inv.vcenter.build = "8.0.3", "24022509"
    _host(e).vgpu_manager_version = manager
    assert _unproven(_vm06(e)) == reason


def test_vm06_an_unreadable_release_never_passes() -> None:
    e = healthy()
    _host(e).version, _host(e).build = "", ""
    assert not _vm06(e).passed


def test_vm06_a_vcenter_older_than_67_u1_fails() -> None:
    e = healthy()
    e.inv.vcenter.version, e.inv.vcenter.build = "6.7.0", "8217866"
    outcome = _vm06(e)
    assert not outcome.passed
    assert "vCenter 6.7 is older than 6.7 U1" in outcome.message


def test_vm06_a_vcenter_before_80_u2_is_noted() -> None:
    e = healthy()
    e.inv.vcenter.version, e.inv.vcenter.build = "8.0.1", "21560480"
    _host(e).version, _host(e).build = "8.0.0", "20513097"
    _host(e).vgpu_manager_version = "550.54.16"
    outcome = _vm06(e)
    assert outcome.passed and not outcome.unproven
    assert "vCenter 8.0 U1 predates 8.0 U2: no stun-time estimates" in outcome.message


# --- VM-07 ---------------------------------------------------------------------------------


def test_vm07_a_fast_distributed_uplink_passes() -> None:
    e = healthy()
    _host(e).vmotion_nics = [
        VmotionNic("vmk1", "10.0.0.1", uplink_speed_mbps=25000, switch="dvs", distributed=True)
    ]
    assert _vm07(e).passed


def test_vm07_a_slow_distributed_uplink_fails() -> None:
    e = healthy()
    _host(e).vmotion_nics = [
        VmotionNic("vmk1", "10.0.0.1", uplink_speed_mbps=1000, switch="dvs", distributed=True)
    ]
    outcome = _vm07(e)
    assert not outcome.passed
    assert outcome.message == "fastest vMotion uplink 1000 Mb/s: below 10 Gb/s"


def test_vm07_unknown_uplinks_fail_and_say_so() -> None:
    e = healthy()
    _host(e).vmotion_nics = [VmotionNic("vmk1", "10.0.0.1", switch="dvs", distributed=True)]
    outcome = _vm07(e)
    assert not outcome.passed
    assert "vmk1 could not be determined" in outcome.message
    assert outcome.evidence["uplinks_unknown"] == ["vmk1"]


# --- the vmotion scenario ----------------------------------------------------------------


def _expectations() -> list[dict[str, Any]]:
    expect = load_scenario(SCENARIOS / "vmotion.yaml")["expect"]
    assert {e["rule"] for e in expect} == {"VM-06", "VM-07", "VM-09", "VM-10"}
    return list(expect)


def _holds(inv: Inventory) -> None:
    result = run_checks(inv)
    assert result.errors == []
    for entry in _expectations():
        findings = [f for f in result.findings if f.rule == entry["rule"]]
        failed = {f.object for f in findings if f.status == "fail"}
        assert failed == set(entry["fail"]), entry["rule"]
        passed = {f.object for f in findings if f.status == "pass"}
        assert set(entry["pass"]) <= passed, entry["rule"]
        unproven = {f.object for f in findings if f.status == "unproven"}
        assert set(entry["unproven"]) <= unproven, entry["rule"]


def test_the_scenario_expectations_hold_on_the_oracle_inventory() -> None:
    _holds(expected_inventory(load_scenario(SCENARIOS / "vmotion.yaml")))


def test_the_scenario_expectations_hold_on_the_recorded_cassette(no_network: None) -> None:
    _holds(scan.obtain_inventory(scan.Replay(CASSETTES / "vmotion.yaml")))


def test_the_collector_reads_distributed_uplinks_and_records_a_gap(no_network: None) -> None:
    inv = scan.obtain_inventory(scan.Replay(CASSETTES / "vmotion.yaml"))
    ready = inv.host("ready-esx01")
    assert ready is not None
    assert [
        (n.device, n.switch, n.distributed, n.uplink_speed_mbps) for n in ready.vmotion_nics
    ] == [("vmk1", "dvs-vmotion", True, 25000)]
    down = [
        (g.object, g.property, g.reason)
        for g in inv.gaps
        if g.object == "down-esx02" and g.uncertain
    ]
    assert down == [
        (
            "down-esx02",
            "config.network.proxySwitch",
            "vmk1: no connected uplink on distributed switch dvs-vmotion",
        )
    ]
    legacy = inv.cluster("legacy")
    assert legacy is not None
    assert legacy.drs_options == {
        "VgpuMMAutomationTimeoutSecs": "-1",
        "VmDevicesStunTimeTolerated": "50",
    }
