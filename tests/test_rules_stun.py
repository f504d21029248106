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
"""

from __future__ import annotations

import pytest
from pyVmomi import vim

from gpuaudit.inventory import Inventory, Vm
from gpuaudit.rules import stun
from gpuaudit.rules.registry import Outcome
from gpuaudit.rules.stun_bounds import TABLE_67, TABLE_70, Bounds
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
