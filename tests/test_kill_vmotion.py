"""VM-01 to VM-04 and VM-07 (rules/vmotion.py): exact messages and boundaries, by hand.

healthy() gives c1 with hosts h1..h3, each one L4 offering grid_l4-4q to -24q and a
vMotion adapter, and the grid_l4-8q VMs v1..v3 (one per host).
"""

from __future__ import annotations

from gpuaudit.inventory import HOST_AGENT, VgpuProfile, VmotionNic
from gpuaudit.rules import vmotion
from gpuaudit.rules.registry import Outcome
from tests.builders import context, healthy


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
        {"profiles": ["grid_l4-8q"], "hosts_offering_count": 2},
    )
    # Past three hosts the message names the first three and counts the rest.
    for i in (4, 5):
        e.gpu(e.host(f"h{i}", "c1"))
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome == Outcome(
        True,
        "grid_l4-8q is also offered by h2, h3, h4 and 1 more",
        {"profiles": ["grid_l4-8q"], "hosts_offering_count": 4},
    )
    for host in e.inv.hosts[1:]:
        host.vgpu_profiles = [VgpuProfile("grid_l4-4q")]
    outcome = vmotion.profile_elsewhere(context(e.inv), v1)
    assert outcome is not None and not outcome.passed
    assert outcome.message == (
        "no other connected host of c1 offers grid_l4-8q: no vMotion or HA target"
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
        VmotionNic("vmk1", uplink_speed_mbps=None),
        VmotionNic("vmk2", uplink_speed_mbps=25_000),
        VmotionNic("vmk3", uplink_speed_mbps=None),
    ]
    outcome = vmotion.vmotion_speed(context(e.inv), h1)
    assert outcome is not None and not outcome.passed
    assert outcome.message == (
        "the uplinks of vMotion adapter vmk1, vmk3 could not be determined: its vMotion "
        "bandwidth is unknown"
    )
    assert outcome.evidence["uplinks_unknown"] == ["vmk1", "vmk3"]
    assert outcome.evidence["uplink_speed_mbps"] == [25_000]
    e.inv.vcenter.api_type = HOST_AGENT
    assert vmotion.vmotion_speed(context(e.inv), h1) is None
