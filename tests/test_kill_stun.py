"""VM-10 (rules/stun.py, rules/stun_bounds.py): exact messages, evidence and boundaries,
worked out by hand from VMware's ESXi 7.0 worst-case table (quoted in
tests/test_rules_stun.py): 8 GB of vGPU memory in a 16 GB VM is 28 s at 10 Gb/s.
"""

from __future__ import annotations

from gpuaudit.inventory import HOST_AGENT, GpuAttachment, StunEstimate, VgpuProfile, VmotionNic
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
from tests.support.builders import Estate, context
from tests.test_rules_stun import estate, judge, vm_named


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
