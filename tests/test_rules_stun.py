"""VM-10 (vGPU vMotion stun time) as one rule on one object, and the model it rests on.

The published figures below are written out from VMware's pages, not computed:
vCenter Server and Host Management 6.7 (10 GbE, full frame buffer) and 7.0 (10 GbE,
estimated worst case with 4 GB of VM memory, and expected times). The estates come
from tests/builders.py: healthy() has three hosts with 25 Gb/s vMotion uplinks,
each offering the L4 profiles and running one grid_l4-8q VM.
"""

from __future__ import annotations

import pytest
from pyVmomi import vim

from gpuaudit.collect.vms import gpu_attachment
from gpuaudit.inventory import Inventory, Vm
from gpuaudit.rules import stun
from gpuaudit.rules.registry import Outcome
from tests.builders import Estate, context, healthy

TOLERANCE_S = 1.0

# (GB of vGPU frame buffer, seconds) at 10 GbE.
ESXI_67_PUBLISHED = [(1, 9.0), (8, 61.3), (12, 91.2)]
ESXI_70_WORST_CASE = [(1, 5), (2, 7), (4, 13), (8, 24), (16, 47), (32, 91)]
ESXI_70_EXPECTED = [(8, 12), (32, 39)]


@pytest.mark.parametrize(("gb", "seconds"), ESXI_67_PUBLISHED)
def test_the_67_model_reproduces_the_published_figures(gb: int, seconds: float) -> None:
    assert stun.ESXI_67.seconds(gb, 10_000) == pytest.approx(seconds, abs=TOLERANCE_S)


def test_the_67_model_puts_16_gb_over_the_100_s_limit() -> None:
    assert stun.ESXI_67.seconds(16, 10_000) > 100


@pytest.mark.parametrize(("gb", "seconds"), ESXI_70_WORST_CASE)
def test_the_70_model_reproduces_the_published_worst_case(gb: int, seconds: float) -> None:
    assert stun.ESXI_70.seconds(gb, 10_000) == pytest.approx(seconds, abs=TOLERANCE_S)


@pytest.mark.parametrize(("gb", "seconds"), ESXI_70_EXPECTED)
def test_the_70_expected_times_stay_below_the_worst_case_model(gb: int, seconds: int) -> None:
    assert stun.ESXI_70.seconds(gb, 10_000) > seconds


def test_the_transfer_part_scales_with_the_bandwidth() -> None:
    # 32 GB at 25 Gb/s: 2.0 + 2.8 * 32 * 10 / 25 = 37.84 s.
    assert stun.ESXI_70.seconds(32, 25_000) == pytest.approx(37.84)


def test_an_esxi_67_host_gets_the_67_model() -> None:
    assert stun.model_for(stun.R.Release(6, 7, 3)) is stun.ESXI_67
    assert stun.model_for(stun.R.Release(8, 0, 2)) is stun.ESXI_70
    assert stun.model_for(None) is stun.ESXI_70


def estate(profile: str, speeds: tuple[int, int, int] = (10_000, 10_000, 10_000)) -> Estate:
    """Three L40S hosts offering ``profile`` with the given vMotion uplink speeds; one VM."""
    e = Estate()
    e.cluster("c1")
    hosts = [e.host(f"h{i}", "c1", profiles=(profile,)) for i in (1, 2, 3)]
    for h, speed in zip(hosts, speeds, strict=True):
        e.gpu(h, model="l40s")
        h.vmotion_nics[0].uplink_speed_mbps = speed
    e.datastore("san1", hosts)
    e.vm("v1", hosts[0], ["san1"], vgpu=profile)
    return e


def judge(inv: Inventory, vm: Vm) -> Outcome:
    outcome = stun.stun_time(context(inv), vm)
    assert outcome is not None, "VM-10 does not apply to the VM"
    return outcome


def vm_named(e: Estate, name: str) -> Vm:
    return next(v for v in e.inv.vms if v.name == name)


def test_vm10_a_48_gb_profile_on_10_gbe_exceeds_100_s() -> None:
    e = estate("grid_l40s-48q")
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert not outcome.passed
    # 2.0 + 2.8 * 48 = 136.4 s
    assert outcome.evidence["estimated_stun_s"] == 136
    assert outcome.evidence["tolerated_s"] == 100
    assert outcome.evidence["data_source"] == ["profile frame buffer"]
    assert "exceeds the tolerated 100 s" in outcome.message


def test_vm10_an_8_gb_profile_on_10_gbe_passes() -> None:
    e = estate("grid_l40s-8q")
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.passed
    assert outcome.evidence["estimated_stun_s"] == 24  # 2.0 + 2.8 * 8 = 24.4 s


def test_vm10_the_slowest_destination_sets_the_bandwidth() -> None:
    # 48 GB at 25 Gb/s is 55.8 s; the 10 Gb/s host h3 makes it 136.4 s.
    e = estate("grid_l40s-48q", speeds=(25_000, 25_000, 10_000))
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert not outcome.passed
    assert outcome.evidence["slowest_destination"] == "h3"
    assert outcome.evidence["estimated_stun_s"] == 136


def test_vm10_fast_links_everywhere_pass_a_48_gb_profile() -> None:
    e = estate("grid_l40s-48q", speeds=(25_000, 25_000, 25_000))
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.passed
    assert outcome.evidence["estimated_stun_s"] == 56


def test_vm10_the_backing_migrate_data_size_wins_over_the_profile() -> None:
    e = estate("grid_l40s-48q")
    vm = vm_named(e, "v1")
    vm.gpus[0].migrate_data_mb = 20 * 1024
    outcome = judge(e.inv, vm)
    assert outcome.passed
    assert outcome.evidence["estimated_stun_s"] == 58  # 2.0 + 2.8 * 20 = 58 s
    assert outcome.evidence["data_source"] == ["vgpuMigrateDataSizeMB"]


def test_vm10_the_cluster_tolerance_option_is_the_limit() -> None:
    e = estate("grid_l40s-24q")  # 2.0 + 2.8 * 24 = 69.2 s
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "60"}
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert not outcome.passed
    assert outcome.evidence["tolerated_s"] == 60
    assert outcome.evidence["tolerated_from"] == "VmDevicesStunTimeTolerated"


def test_vm10_an_esxi_67_source_uses_the_67_model() -> None:
    e = estate("grid_l40s-16q")
    e.inv.hosts[0].version, e.inv.hosts[0].build = "6.7.0", "14320388"
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert not outcome.passed
    assert outcome.evidence["estimated_stun_s"] == 122  # 1.5 + 7.5 * 16 = 121.5 s


def test_vm10_a_destination_without_the_profile_is_not_eligible() -> None:
    e = estate("grid_l40s-48q", speeds=(25_000, 25_000, 1_000))
    e.inv.hosts[2].vgpu_profiles = []
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.passed
    assert outcome.evidence["slowest_destination"] == "h2"


def test_vm10_does_not_judge_a_vm_without_a_destination() -> None:
    e = estate("grid_l40s-48q")
    for h in e.inv.hosts[1:]:
        h.vgpu_profiles = []
    assert stun.stun_time(context(e.inv), vm_named(e, "v1")) is None


def test_vm10_does_not_judge_a_source_with_unknown_bandwidth() -> None:
    e = healthy()
    e.inv.hosts[0].vmotion_nics[0].uplink_speed_mbps = None
    assert stun.stun_time(context(e.inv), vm_named(e, "v1")) is None


def test_vm10_passes_the_healthy_estate() -> None:
    e = healthy()
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.passed
    assert outcome.evidence["estimated_stun_s"] == 11  # 2.0 + 2.8 * 8 * 10 / 25 = 10.96 s


def test_the_collector_reads_vgpu_migrate_data_size() -> None:
    backing = vim.vm.device.VirtualPCIPassthrough.VmiopBackingInfo(
        vgpu="grid_l40s-48q", vgpuMigrateDataSizeMB=49_664
    )
    device = vim.vm.device.VirtualPCIPassthrough(
        backing=backing, deviceInfo=vim.Description(label="PCI device 0", summary="")
    )
    attachment = gpu_attachment(device)
    assert attachment is not None
    assert attachment.migrate_data_mb == 49_664


def test_vm10_a_slow_source_fails_though_no_destination_bandwidth_is_known() -> None:
    e = estate("grid_l40s-8q", speeds=(1_000, 10_000, 10_000))
    for h in e.inv.hosts[1:]:
        h.vmotion_nics[0].uplink_speed_mbps = None
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert not outcome.passed
    assert outcome.evidence["estimated_stun_s"] == 226  # 2.0 + 2.8 * 8 * 10 = 226 s
    assert outcome.evidence["destinations_bandwidth_unknown"] == ["h2", "h3"]
    assert "at least 226 s" in outcome.message


def test_vm10_does_not_judge_a_fast_source_whose_destinations_are_unknown() -> None:
    e = estate("grid_l40s-8q")
    for h in e.inv.hosts[1:]:
        h.vmotion_nics[0].uplink_speed_mbps = None
    assert stun.stun_time(context(e.inv), vm_named(e, "v1")) is None
