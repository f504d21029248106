"""VM-10 (vGPU vMotion stun time) as one rule on one object, and the tables it reads.

The published figures below are written out from VMware's pages, not read from
gpuaudit's tables:

- vCenter Server and Host Management 7.0, "Migrating Virtual Machines with vGPU",
  "Estimated Worst-Case Stun Times" (10 Gb network, V100 PCIe 32 GB):

  | vGPU Memory | VM Memory 4 GB | 8 GB | 16 GB | 32 GB |
  | 1 GB        | 5              | 6    | 8     | 12    |
  | 2 GB        | 7              | 9    | 11    | 15    |
  | 4 GB        | 13             | 14   | 16    | 21    |
  | 8 GB        | 24             | 25   | 28    | 32    |
  | 16 GB       | 47             | 48   | 50    | 54    |
  | 32 GB       | 91             | 92   | 95    | 99    |

- vCenter Server and Host Management 6.7, the same topic, first edition (10 Gb,
  Tesla P40), "Used vGPU Frame Buffer (GB) | VM Stun Time (sec)": 1 → 9.0; 2 → 16.5;
  4 → 31.4; 8 → 61.3; 10 → 76.3; 12 → 91.2; 16 → 100+ (vMotion timeout); 24 → 100+.

The estates come from tests/support/builders.py: healthy() has three hosts with 25 Gb/s
vMotion uplinks, each offering the L4 profiles and running one grid_l4-8q VM of
16 GB.

Then VM-10's exact messages, evidence and boundaries (rules/stun.py,
rules/stun_bounds.py), worked out by hand from the ESXi 7.0 worst-case table above: 8 GB
of vGPU memory in a 16 GB VM is 28 s at 10 Gb/s.
"""

from __future__ import annotations

import pytest
from pyVmomi import vim

from gpuaudit.inventory import (
    HOST_AGENT,
    GpuAttachment,
    Inventory,
    StunEstimate,
    VgpuProfile,
    Vm,
    VmotionNic,
)
from gpuaudit.rules import stun
from gpuaudit.rules.registry import Outcome
from gpuaudit.rules.stun_bounds import (
    TABLE_67,
    TABLE_70,
    Bounds,
    at_bandwidth,
    bracket,
    combined,
    interpolate,
    vcenter_bounds,
)
from gpuaudit.vsphere.collect.vms import gpu_attachment
from tests.support.builders import Estate, context, healthy

WORST_CASE_70 = {
    1: {4: 5, 8: 6, 16: 8, 32: 12},
    2: {4: 7, 8: 9, 16: 11, 32: 15},
    4: {4: 13, 8: 14, 16: 16, 32: 21},
    8: {4: 24, 8: 25, 16: 28, 32: 32},
    16: {4: 47, 8: 48, 16: 50, 32: 54},
    32: {4: 91, 8: 92, 16: 95, 32: 99},
}
PUBLISHED_67 = {1: 9.0, 2: 16.5, 4: 31.4, 8: 61.3, 10: 76.3, 12: 91.2}
TIMEOUT_67 = (16, 24)  # "100+ (vMotion timeout)"


@pytest.mark.parametrize(
    ("vgpu_gb", "memory_gb", "seconds"),
    [(g, m, s) for g, row in WORST_CASE_70.items() for m, s in row.items()],
)
def test_the_70_table_holds_every_published_figure(
    vgpu_gb: int, memory_gb: int, seconds: int
) -> None:
    assert TABLE_70.bounds(vgpu_gb, memory_gb) == Bounds(seconds, seconds)


@pytest.mark.parametrize(("vgpu_gb", "seconds"), PUBLISHED_67.items())
def test_the_67_table_holds_every_published_figure(vgpu_gb: int, seconds: float) -> None:
    # The 6.7 page gives no VM memory: the figure holds whatever it is.
    assert TABLE_67.bounds(vgpu_gb, 64) == Bounds(seconds, seconds)


@pytest.mark.parametrize("vgpu_gb", TIMEOUT_67)
def test_the_67_table_gives_only_more_than_100_s_from_16_gb(vgpu_gb: int) -> None:
    bounds = TABLE_67.bounds(vgpu_gb, 16)
    assert (bounds.low, bounds.high) == (100, None)


def test_between_published_points_the_neighbours_bound_the_time() -> None:
    # 12 GB of vGPU data in a 12 GB VM: at least 8 GB/8 GB (25 s), at most 16 GB/16 GB (50 s).
    assert TABLE_70.bounds(12, 12) == Bounds(25, 50)


def test_beyond_the_last_row_nothing_bounds_the_time_from_above() -> None:
    bounds = TABLE_70.bounds(48, 16)
    assert (bounds.low, bounds.high) == (95, None)  # at least 32 GB / 16 GB
    assert bounds.unknown == (
        "48 GB of vGPU data is beyond VMware's ESXi 7.0 table, which ends at 32 GB",
    )


def test_beyond_the_last_column_nothing_bounds_the_time_from_above() -> None:
    bounds = TABLE_70.bounds(8, 64)
    assert (bounds.low, bounds.high) == (32, None)  # at least 8 GB / 32 GB
    assert bounds.unknown == (
        "64 GB of VM memory is beyond VMware's ESXi 7.0 table, which ends at 32 GB",
    )


def test_below_the_first_row_and_column_nothing_bounds_the_time_from_below() -> None:
    # A 512 MB profile in a 2 GB VM: at most 1 GB / 4 GB, 5 s.
    assert TABLE_70.bounds(0.5, 2) == Bounds(None, 5)


def test_an_unknown_vm_memory_bounds_nothing() -> None:
    assert TABLE_70.bounds(8, None) == Bounds(None, None, ("the VM's memory size is unknown",))


def estate(
    profile: str,
    speeds: tuple[int, int, int] = (10_000, 10_000, 10_000),
    memory_gb: int = 16,
) -> Estate:
    """Three L40S hosts offering ``profile`` with the given vMotion uplink speeds; one VM
    with ``memory_gb`` of memory on h1."""
    e = Estate()
    e.cluster("c1")
    hosts = [e.host(f"h{i}", "c1", profiles=(profile,)) for i in (1, 2, 3)]
    for h, speed in zip(hosts, speeds, strict=True):
        e.gpu(h, model="l40s")
        h.vmotion_nics[0].uplink_speed_mbps = speed
    e.datastore("san1", hosts)
    vm = e.vm("v1", hosts[0], ["san1"], vgpu=profile)
    vm.memory_mb = vm.memory_reservation_mb = memory_gb * 1024
    return e


def judge(inv: Inventory, vm: Vm) -> Outcome:
    outcome = stun.stun_time(context(inv), vm)
    assert outcome is not None, "VM-10 does not apply to the VM"
    return outcome


def vm_named(e: Estate, name: str) -> Vm:
    return next(v for v in e.inv.vms if v.name == name)


def bounds_of(outcome: Outcome) -> tuple[object, object]:
    return outcome.evidence["stun_s_at_least"], outcome.evidence["stun_s_at_most"]


def test_vm10_an_8_gb_profile_in_a_16_gb_vm_on_10_gbe_passes() -> None:
    e = estate("grid_l40s-8q")
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.passed and not outcome.unproven
    assert bounds_of(outcome) == (28, 28)  # 8 GB / 16 GB
    assert outcome.evidence["estimate_source"] == "VMware's ESXi 7.0 table"


def test_vm10_the_vms_memory_decides_against_a_tight_tolerance() -> None:
    # A 16 GB profile: 47 s in a 4 GB VM, 54 s in a 32 GB one; the tolerance is 50 s.
    big = estate("grid_l40s-16q", memory_gb=32)
    big.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "50"}
    outcome = judge(big.inv, vm_named(big, "v1"))
    assert not outcome.passed
    assert bounds_of(outcome) == (54, 54)
    small = estate("grid_l40s-16q", memory_gb=4)
    small.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "50"}
    outcome = judge(small.inv, vm_named(small, "v1"))
    assert outcome.passed and not outcome.unproven
    assert bounds_of(outcome) == (47, 47)


def test_vm10_a_48_gb_profile_is_beyond_the_table_and_not_proven() -> None:
    e = estate("grid_l40s-48q")
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.passed and outcome.unproven  # the checker makes it "unproven"
    assert bounds_of(outcome) == (95, None)  # at least 32 GB / 16 GB
    assert "beyond VMware's ESXi 7.0 table" in outcome.unproven


def test_vm10_a_48_gb_profile_fails_a_tolerance_its_lower_bound_reaches() -> None:
    e = estate("grid_l40s-48q")
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "90"}
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert not outcome.passed  # at least 95 s
    assert outcome.evidence["tolerated_s"] == 90


def test_vm10_a_vm_beyond_the_memory_columns_is_not_proven() -> None:
    e = estate("grid_l40s-8q", memory_gb=64)
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.unproven == (
        "64 GB of VM memory is beyond VMware's ESXi 7.0 table, which ends at 32 GB"
    )
    assert bounds_of(outcome) == (32, None)


def test_vm10_the_slowest_destination_sets_the_bandwidth() -> None:
    # 8 GB / 16 GB: 28 s at 10 Gb/s, the speed of h3; at 25 Gb/s only at most 28 s.
    e = estate("grid_l40s-8q", speeds=(25_000, 25_000, 10_000))
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.evidence["slowest_destination"] == "h3"
    assert bounds_of(outcome) == (28, 28)


def test_vm10_a_path_faster_than_10_gbe_is_bounded_from_above_only() -> None:
    e = estate("grid_l40s-8q", speeds=(25_000, 25_000, 25_000))
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.passed and not outcome.unproven
    assert bounds_of(outcome) == (None, 28)


def test_vm10_a_path_slower_than_10_gbe_is_bounded_from_below_only() -> None:
    e = estate("grid_l40s-8q", speeds=(1_000, 1_000, 1_000))
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.unproven == "VMware publishes stun times at 10 Gb/s only, not at 1 Gb/s"
    assert bounds_of(outcome) == (28, None)
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "28"}
    assert not judge(e.inv, vm_named(e, "v1")).passed


def test_vm10_a_48_gb_profile_on_a_fast_path_is_not_proven() -> None:
    # Beyond the table and above 10 Gb/s: nothing bounds it either way.
    e = estate("grid_l40s-48q", speeds=(25_000, 25_000, 25_000))
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.unproven
    assert bounds_of(outcome) == (None, None)


def test_vm10_the_backing_migrate_data_size_wins_over_the_profile() -> None:
    e = estate("grid_l40s-48q")
    vm = vm_named(e, "v1")
    vm.gpus[0].migrate_data_mb = 20 * 1024
    outcome = judge(e.inv, vm)
    # 20 GB in a 16 GB VM: at least 16 GB / 16 GB (50 s), at most 32 GB / 16 GB (95 s).
    assert outcome.passed and not outcome.unproven
    assert bounds_of(outcome) == (50, 95)
    assert outcome.evidence["data_source"] == ["vgpuMigrateDataSizeMB"]


def test_vm10_a_stun_time_equal_to_the_tolerance_fails() -> None:
    # KB 313479: DRS automates the move when the estimate "is lower than" the limit.
    e = estate("grid_l40s-16q")  # 16 GB / 16 GB: 50 s
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "50"}
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert not outcome.passed
    assert outcome.evidence["tolerated_from"] == "VmDevicesStunTimeTolerated"
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "51"}
    assert judge(e.inv, vm_named(e, "v1")).passed


def test_vm10_an_esxi_67_source_reads_the_67_table() -> None:
    e = estate("grid_l40s-8q")
    e.inv.hosts[0].version, e.inv.hosts[0].build = "6.7.0", "14320388"
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert bounds_of(outcome) == (61.3, 61.3)
    assert outcome.evidence["estimate_source"] == "VMware's ESXi 6.7 table"


def test_vm10_a_16_gb_profile_on_esxi_67_times_out() -> None:
    e = estate("grid_l40s-16q")
    e.inv.hosts[0].version, e.inv.hosts[0].build = "6.7.0", "14320388"
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert not outcome.passed  # more than 100 s: not below the default 100 s
    assert bounds_of(outcome) == (100, None)


def test_vm10_an_unknown_esxi_release_is_not_proven() -> None:
    e = estate("grid_l40s-8q")
    e.inv.hosts[0].version = "banana"
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.unproven == "the ESXi release of h1 is unknown"


def test_vm10_an_unknown_vm_memory_is_not_proven() -> None:
    e = estate("grid_l40s-8q")
    vm_named(e, "v1").memory_mb = 0  # config.hardware.memoryMB not read
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.unproven == "the VM's memory size is unknown"


def test_vm10_a_destination_without_the_profile_is_not_eligible() -> None:
    e = estate("grid_l40s-8q", speeds=(25_000, 25_000, 1_000))
    e.inv.hosts[2].vgpu_profiles = []
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.passed and not outcome.unproven
    assert outcome.evidence["slowest_destination"] == "h2"


def test_vm10_does_not_judge_a_vm_without_a_destination() -> None:
    e = estate("grid_l40s-48q")
    for h in e.inv.hosts[1:]:
        h.vgpu_profiles = []
    assert stun.stun_time(context(e.inv), vm_named(e, "v1")) is None


def test_vm10_does_not_judge_a_host_without_a_vmotion_adapter() -> None:
    e = estate("grid_l40s-8q")
    e.inv.hosts[0].vmotion_nics = []
    assert stun.stun_time(context(e.inv), vm_named(e, "v1")) is None


def test_vm10_a_source_with_unknown_bandwidth_is_not_proven() -> None:
    e = healthy()
    e.inv.hosts[0].vmotion_nics[0].uplink_speed_mbps = None
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.unproven == "the vMotion bandwidth of h1 is unknown"
    assert bounds_of(outcome) == (None, None)


def test_vm10_passes_the_healthy_estate() -> None:
    e = healthy()
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.passed and not outcome.unproven
    assert bounds_of(outcome) == (None, 28)  # 8 GB / 16 GB at 25 Gb/s: at most 28 s


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
    e = estate("grid_l40s-8q", speeds=(10_000, 10_000, 10_000))
    for h in e.inv.hosts[1:]:
        h.vmotion_nics[0].uplink_speed_mbps = None
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "20"}
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert not outcome.passed  # at least 28 s at 10 Gb/s, whatever the destination
    assert outcome.evidence["destinations_bandwidth_unknown"] == ["h2", "h3"]
    assert bounds_of(outcome) == (28, None)


def test_vm10_a_destination_of_unknown_bandwidth_leaves_it_not_proven() -> None:
    e = estate("grid_l40s-8q")
    e.inv.hosts[2].vmotion_nics[0].uplink_speed_mbps = None
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.unproven == "the vMotion bandwidth of h3 is unknown"
    assert outcome.evidence["slowest_destination"] == "h2"


# PCI device ids (pci.ids): 2bb5 RTX PRO 6000 Blackwell Server Edition, 2c3a RTX PRO 4500
# Blackwell Server Edition. NVIDIA gives both the vGPU type DC-16C ("Blackwell
# Architecture vGPU Types", NVIDIA AI Enterprise release 8), and migrates a vGPU only to
# "a physical GPU of the same type" (Virtual GPU Software User Guide).
PRO_6000, PRO_4500 = 0x2BB5, 0x2C3A


def blackwell(boards: tuple[int, int, int], speeds: tuple[int, int, int]) -> Estate:
    """estate() with nvidia_dc-16c, the hosts' GPUs of the given PCI device ids."""
    e = estate("nvidia_dc-16c", speeds=speeds)
    for host, device in zip(e.inv.hosts, boards, strict=True):
        for g in host.gpus:
            g.device_id, g.device_name, g.model, g.known_model = device, "", "", False
    return e


def test_vm10_a_host_offering_the_profile_on_another_board_is_no_destination() -> None:
    # h2 offers nvidia_dc-16c on an RTX PRO 4500 at 1 Gb/s: no destination of v1's, so
    # the path is h3's 10 Gb/s: 16 GB / 16 GB, 50 s.
    e = blackwell((PRO_6000, PRO_4500, PRO_6000), (10_000, 1_000, 10_000))
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.passed and not outcome.unproven
    assert outcome.evidence["slowest_destination"] == "h3"
    assert bounds_of(outcome) == (50, 50)


def test_vm10_judges_no_vm_whose_profile_only_another_board_offers() -> None:
    e = blackwell((PRO_6000, PRO_4500, PRO_4500), (10_000, 10_000, 10_000))
    assert stun.stun_time(context(e.inv), vm_named(e, "v1")) is None  # VM-02 judges it


def test_vm10_where_the_vms_own_board_is_unknown_every_host_offering_it_counts() -> None:
    # No type to compare (VM-02 is then not proven): the slowest host offering the
    # profile, h2 at 1 Gb/s, sets the path, which is slower than VMware's table.
    e = blackwell((PRO_6000, PRO_4500, PRO_6000), (10_000, 1_000, 10_000))
    e.inv.hosts[0].gpus = []  # v1's host reports no GPU: its type is not known
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.evidence["slowest_destination"] == "h2"
    assert outcome.unproven == "VMware publishes stun times at 10 Gb/s only, not at 1 Gb/s"


# --- exact messages, evidence and boundaries, by hand -------------------------------------


def test_passing_message_and_whole_evidence() -> None:
    e = estate("grid_l40s-8q", speeds=(25_000, 10_000, 25_000))
    assert judge(e.inv, vm_named(e, "v1")) == Outcome(
        True,
        "estimated stun time 28 s (VMware's ESXi 7.0 table) for 8 GB of vGPU data and 16 GB "
        "of VM memory at 10 Gb/s to h2 is below the tolerated 100 s",
        {
            "migrate_data_mb": 8192,
            "data_source": ["profile frame buffer"],
            "vm_memory_mb": 16_384,
            "source_bandwidth_mbps": 25_000,
            "slowest_destination": "h2",
            "destination_bandwidth_mbps": 10_000,
            "stun_s_at_least": 28,
            "stun_s_at_most": 28,
            "estimate_source": "VMware's ESXi 7.0 table",
            "vcenter_estimates_from": None,
            "unknown": [],
            "tolerated_s": 100,
            "tolerated_from": "default",
            "destinations_bandwidth_unknown": [],
        },
    )


def test_failing_message_names_the_path_and_the_limit() -> None:
    e = estate("grid_l40s-16q", speeds=(10_000, 25_000, 25_000), memory_gb=32)
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "50"}
    outcome = judge(e.inv, vm_named(e, "v1"))
    # The source is the slower end: 16 GB in a 32 GB VM at 10 Gb/s, 54 s.
    assert outcome.message == (
        "estimated stun time 54 s (VMware's ESXi 7.0 table) for 16 GB of vGPU data and 32 GB "
        "of VM memory at 10 Gb/s to h2 is not below the tolerated 50 s"
    )
    assert not outcome.passed
    assert outcome.evidence["destination_bandwidth_mbps"] == 25_000


def test_not_proven_message_reason_and_whole_evidence() -> None:
    e = estate("grid_l40s-48q", speeds=(25_000, 25_000, 25_000))
    reasons = [
        "48 GB of vGPU data is beyond VMware's ESXi 7.0 table, which ends at 32 GB",
        "VMware publishes stun times at 10 Gb/s only, not at 25 Gb/s",
    ]
    assert judge(e.inv, vm_named(e, "v1")) == Outcome(
        True,
        "estimated stun time unknown (VMware's ESXi 7.0 table) for 48 GB of vGPU data and "
        "16 GB of VM memory at 25 Gb/s to h2: not proven below the tolerated 100 s: "
        + "; ".join(reasons),
        {
            "migrate_data_mb": 49_152,
            "data_source": ["profile frame buffer"],
            "vm_memory_mb": 16_384,
            "source_bandwidth_mbps": 25_000,
            "slowest_destination": "h2",
            "destination_bandwidth_mbps": 25_000,
            "stun_s_at_least": None,
            "stun_s_at_most": None,
            "estimate_source": "VMware's ESXi 7.0 table",
            "vcenter_estimates_from": None,
            "unknown": reasons,
            "tolerated_s": 100,
            "tolerated_from": "default",
            "destinations_bandwidth_unknown": [],
        },
        unproven="; ".join(reasons),
    )


def test_between_published_points_a_limit_between_them_is_not_proven() -> None:
    e = estate("grid_l40s-24q")  # 24 GB in a 16 GB VM: between 50 s and 95 s
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "60"}
    outcome = judge(e.inv, vm_named(e, "v1"))
    reason = "the published figures put it between 50 and 95 s"
    assert outcome.unproven == reason
    assert outcome.message.endswith(f"to h2: not proven below the tolerated 60 s: {reason}")
    assert "estimated stun time between 50 and 95 s (" in outcome.message


def test_at_the_limit_a_lower_bound_fails_and_an_upper_bound_does_not_pass() -> None:
    e = estate("grid_l40s-8q", speeds=(1_000, 1_000, 1_000))  # at least 28 s
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "28"}
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert not outcome.passed
    assert "estimated stun time at least 28 s (" in outcome.message
    e = estate("grid_l40s-8q", speeds=(25_000, 25_000, 25_000))  # at most 28 s
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "28"}
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.unproven == "VMware publishes stun times at 10 Gb/s only, not at 25 Gb/s"
    assert "estimated stun time at most 28 s (" in outcome.message
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "29"}
    assert judge(e.inv, vm_named(e, "v1")).unproven == ""


def test_with_no_destination_bandwidth_the_whole_failing_verdict() -> None:
    e = estate("grid_l40s-24q", speeds=(10_000, 10_000, 10_000))
    for h in e.inv.hosts[1:]:
        h.vmotion_nics[0].uplink_speed_mbps = None
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "50"}
    # 24 GB in a 16 GB VM at 10 Gb/s: at least 16 GB / 16 GB, 50 s.
    assert judge(e.inv, vm_named(e, "v1")) == Outcome(
        False,
        "estimated stun time at least 50 s (VMware's ESXi 7.0 table) for 24 GB of vGPU data "
        "and 16 GB of VM memory at 10 Gb/s is not below the tolerated 50 s",
        {
            "migrate_data_mb": 24_576,
            "data_source": ["profile frame buffer"],
            "vm_memory_mb": 16_384,
            "source_bandwidth_mbps": 10_000,
            "slowest_destination": None,
            "destination_bandwidth_mbps": None,
            "stun_s_at_least": 50,
            "stun_s_at_most": None,
            "estimate_source": "VMware's ESXi 7.0 table",
            "vcenter_estimates_from": None,
            "unknown": ["the vMotion bandwidth of h2, h3 is unknown"],
            "tolerated_s": 50,
            "tolerated_from": "VmDevicesStunTimeTolerated",
            "destinations_bandwidth_unknown": ["h2", "h3"],
        },
    )


def test_a_source_of_unknown_bandwidth_whole_verdict() -> None:
    e = estate("grid_l40s-8q")
    e.inv.hosts[0].vmotion_nics[0].uplink_speed_mbps = 0  # no connected uplink
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.message == (
        "estimated stun time unknown to h2: not proven below the tolerated 100 s: "
        "the vMotion bandwidth of h1 is unknown"
    )
    assert outcome.evidence["estimate_source"] == ""
    assert outcome.evidence["source_bandwidth_mbps"] is None


def test_a_tolerance_that_is_no_number_is_the_default() -> None:
    e = estate("grid_l40s-8q")
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "long"}
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert (outcome.evidence["tolerated_s"], outcome.evidence["tolerated_from"]) == (
        100,
        "default",
    )
    assert stun.tolerated_s(None) == (100, "default")


def test_a_tolerance_with_spaces_is_read() -> None:
    e = estate("grid_l40s-8q")
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": " 28 "}
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert not outcome.passed  # 28 s is not below 28 s
    assert outcome.evidence["tolerated_s"] == 28


def test_a_host_is_as_fast_as_its_fastest_known_vmotion_uplink() -> None:
    e = estate("grid_l40s-8q")
    host = e.inv.hosts[0]
    host.vmotion_nics = [
        VmotionNic("vmk1", uplink_speed_mbps=None),
        VmotionNic("vmk2", uplink_speed_mbps=25_000),
        VmotionNic("vmk3", uplink_speed_mbps=10_000),
    ]
    assert stun.vmotion_bandwidth_mbps(host) == 25_000
    host.vmotion_nics = [VmotionNic("vmk1", uplink_speed_mbps=0)]
    assert stun.vmotion_bandwidth_mbps(host) is None


def test_two_vgpus_are_at_least_the_larger_and_at_most_the_sum() -> None:
    e = estate("grid_l40s-8q")
    vm = vm_named(e, "v1")
    vm.gpus.append(GpuAttachment("vgpu", profile="grid_l40s-8q", migrate_data_mb=4096))
    outcome = judge(e.inv, vm)
    # 8 GB / 16 GB: 28 s; 4 GB / 16 GB: 16 s. At least 28 s, at most 28 + 16 = 44 s.
    assert (outcome.evidence["stun_s_at_least"], outcome.evidence["stun_s_at_most"]) == (28, 44)
    assert outcome.evidence["migrate_data_mb"] == 12_288
    assert outcome.evidence["data_source"] == ["profile frame buffer", "vgpuMigrateDataSizeMB"]
    assert "for 12 GB of vGPU data and 16 GB of VM memory at 10 Gb/s to h2 " in outcome.message


def test_migration_data_of_an_unknown_profile_is_unknown() -> None:
    assert stun.migrate_data_mb(GpuAttachment("vgpu", profile="mystery")) == (None, "unknown")
    assert stun.migrate_data_mb(GpuAttachment("vgpu", profile=None)) == (None, "unknown")
    assert stun.migrate_data_mb(GpuAttachment("vgpu", profile="grid_l4-8q")) == (
        8192,
        "profile frame buffer",
    )


def test_a_vgpu_of_unknown_size_is_not_proven() -> None:
    e = estate("grid_l40s-8q")
    vm = vm_named(e, "v1")
    vm.gpus.append(GpuAttachment("vgpu", profile="mystery"))
    for h in e.inv.hosts:
        h.vgpu_profiles.append(VgpuProfile("mystery"))
    outcome = judge(e.inv, vm)
    assert outcome.unproven == "the frame buffer of vGPU profile 'mystery' is unknown"
    # The 8 GB vGPU alone is 28 s: the VM is at least that.
    assert (outcome.evidence["stun_s_at_least"], outcome.evidence["stun_s_at_most"]) == (28, None)
    assert "for vGPU data of unknown size and 16 GB of VM memory" in outcome.message


def test_any_vm_memory_above_0_mb_is_a_size() -> None:
    # 0 MB is config.hardware.memoryMB not read; 1 MB is a (tiny) size, below the table's
    # first column: at most 8 GB / 4 GB, 24 s.
    e = estate("grid_l40s-8q")
    vm_named(e, "v1").memory_mb = 1
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert (outcome.evidence["stun_s_at_least"], outcome.evidence["stun_s_at_most"]) == (None, 24)
    assert "for 8 GB of vGPU data and 0.000976562 GB of VM memory at 10 Gb/s" in outcome.message
    assert stun.vm_memory_gb(vm_named(e, "v1")) == 1 / 1024


def test_an_unread_vm_memory_is_stated_unknown() -> None:
    e = estate("grid_l40s-8q")
    vm_named(e, "v1").memory_mb = 0
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert "for 8 GB of vGPU data and unknown VM memory at 10 Gb/s" in outcome.message


def test_not_judged_on_a_standalone_host_or_outside_a_cluster() -> None:
    e = estate("grid_l40s-8q")
    e.inv.vcenter.api_type = HOST_AGENT
    assert stun.stun_time(context(e.inv), vm_named(e, "v1")) is None
    lone = Estate()
    h = lone.host("solo", None)
    lone.gpu(h, model="l40s")
    lone.datastore("local", [h])
    lone.vm("v1", h, ["local"], vgpu="grid_l40s-8q")
    assert stun.stun_time(context(lone.inv), vm_named(lone, "v1")) is None


def test_a_destination_in_maintenance_is_no_destination() -> None:
    e = estate("grid_l40s-8q", speeds=(25_000, 25_000, 10_000))
    e.inv.hosts[2].in_maintenance = True
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.evidence["slowest_destination"] == "h2"
    assert outcome.evidence["stun_s_at_least"] is None  # 25 Gb/s: only at most 28 s


def test_every_esxi_70_release_reads_the_70_table() -> None:
    assert stun.table_for(stun.R.Release(7, 0)) is TABLE_70
    assert stun.table_for(stun.R.Release(7, 0, 3)) is TABLE_70
    assert stun.table_for(stun.R.Release(6, 7, 3)) is TABLE_67
    assert stun.table_for(None) is None


def test_a_point_vcenter_gives_twice_at_its_lowest_bandwidth_is_still_one_point() -> None:
    # estimates_of keeps every point vCenter gives, a repeated one too
    points = [StunEstimate(10_000, 80), StunEstimate(10_000, 80), StunEstimate(25_000, 35)]
    assert interpolate(points, 10_000) == 80
    assert interpolate(points, 17_500) == 57.5  # halfway from 80 s to 35 s


def test_vcenters_estimate_for_a_profile_of_unknown_size_whole_verdict() -> None:
    # The catalogue cannot read "mystery" (no migration data known), but vCenter
    # estimates it: 30 s at 25 Gb/s, a point it gives.
    e = Estate()
    e.cluster("c1")
    hosts = [e.host(f"h{i}", "c1", profiles=("mystery",)) for i in (1, 2, 3)]
    for h in hosts:
        e.gpu(h, model="l40s")
        h.vmotion_nics[0].uplink_speed_mbps = 25_000
        h.stun_estimates = {"mystery": [StunEstimate(25_000, 30)]}
        h.stun_estimates_host = "h1"
    e.datastore("san1", hosts)
    e.vm("v1", hosts[0], ["san1"], vgpu="mystery")
    assert judge(e.inv, vm_named(e, "v1")) == Outcome(
        True,
        "estimated stun time 30 s (vCenter's estimate) at 25 Gb/s to h2 is below the "
        "tolerated 100 s",
        {
            "migrate_data_mb": 0,
            "data_source": ["unknown"],
            "vm_memory_mb": 16_384,
            "source_bandwidth_mbps": 25_000,
            "slowest_destination": "h2",
            "destination_bandwidth_mbps": 25_000,
            "stun_s_at_least": 30,
            "stun_s_at_most": 30,
            "estimate_source": "vCenter's estimate",
            "vcenter_estimates_from": "h1",
            "unknown": [],
            "tolerated_s": 100,
            "tolerated_from": "default",
            "destinations_bandwidth_unknown": [],
        },
    )


def test_not_judged_for_a_vm_without_vgpu_or_on_a_host_the_inventory_lacks() -> None:
    e = estate("grid_l40s-8q")
    h1 = e.inv.hosts[0]
    device = e.gpu(h1, "0000:d8:00.0", model="l40s", mode="passthrough")
    pt = e.vm("pt", h1, ["san1"], passthrough=device)
    assert stun.stun_time(context(e.inv), pt) is None
    v1 = vm_named(e, "v1")
    v1.host = "gone"
    assert stun.stun_time(context(e.inv), v1) is None


def test_a_cluster_the_inventory_does_not_list_tolerates_the_default() -> None:
    e = estate("grid_l40s-8q")
    e.inv.clusters.clear()  # the hosts still name c1
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert (outcome.evidence["tolerated_s"], outcome.evidence["tolerated_from"]) == (
        100,
        "default",
    )


# stun_bounds, piece by piece.


def test_bracket_finds_the_neighbours_and_the_ends() -> None:
    points = (1, 2, 4)
    assert bracket(points, 2) == (1, 1)
    assert bracket(points, 3) == (1, 2)
    assert bracket(points, 0.5) == (None, 0)
    assert bracket(points, 5) == (2, None)


def test_the_table_bounds_at_the_published_corners() -> None:
    assert TABLE_70.bounds(1, 4) == Bounds(5, 5)
    assert TABLE_70.bounds(32, 32) == Bounds(99, 99)
    assert TABLE_70.bounds(32, 4) == Bounds(91, 91)
    assert TABLE_70.bounds(1, 32) == Bounds(12, 12)


def test_the_67_table_between_12_and_16_gb() -> None:
    assert TABLE_67.bounds(14, 16) == Bounds(
        91.2, None, ("VMware's ESXi 6.7 table gives only a least time at 16 GB",)
    )


def test_beyond_the_67_table_it_is_more_than_the_timeout() -> None:
    assert TABLE_67.bounds(48, 16) == Bounds(
        100, None, ("48 GB of vGPU data is beyond VMware's ESXi 6.7 table, which ends at 24 GB",)
    )


def test_both_a_row_and_a_column_beyond_the_table_are_named() -> None:
    assert TABLE_70.bounds(48, 64) == Bounds(
        99,
        None,
        (
            "48 GB of vGPU data is beyond VMware's ESXi 7.0 table, which ends at 32 GB",
            "64 GB of VM memory is beyond VMware's ESXi 7.0 table, which ends at 32 GB",
        ),
    )


def test_at_10_gbe_the_bounds_stand_and_elsewhere_one_side_goes() -> None:
    bounds = Bounds(25, 50, ("x",))
    assert at_bandwidth(bounds, 10_000) == bounds
    assert at_bandwidth(bounds, 10_001) == Bounds(
        None, 50, ("x", "VMware publishes stun times at 10 Gb/s only, not at 10.001 Gb/s")
    )
    assert at_bandwidth(bounds, 9_999) == Bounds(
        25, None, ("x", "VMware publishes stun times at 10 Gb/s only, not at 9.999 Gb/s")
    )


def test_combined_bounds_of_a_table_and_of_vcenter() -> None:
    parts = [Bounds(28, 28, ("a",)), Bounds(16, 16, ("a", "b"))]
    assert combined(parts, add_lows=False) == Bounds(28, 44, ("a", "b"))
    assert combined(parts, add_lows=True) == Bounds(44, 44, ("a", "b"))
    partial = [Bounds(28, None), Bounds(None, 16)]
    assert combined(partial, add_lows=False) == Bounds(28, None)
    assert combined(partial, add_lows=True) == Bounds(28, None)
    assert combined([Bounds(None, 5)], add_lows=True) == Bounds(None, 5)


def test_vcenter_bounds_take_the_nearest_faster_point() -> None:
    points = [StunEstimate(100_000, 12), StunEstimate(25_000, 35), StunEstimate(40_000, 20)]
    assert vcenter_bounds(points, 10_000).low == 35
    assert vcenter_bounds(points, 30_000).low == 20
    assert vcenter_bounds(points, 100_000) == Bounds(12, 12)
