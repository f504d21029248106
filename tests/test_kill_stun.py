"""VM-10 (rules/stun.py): exact messages, evidence and boundaries, worked out by hand.

The ESXi 7.0 model is 2.0 s + 2.8 s per GB at 10 Gb/s (the module's docstring cites
VMware's published worst-case stun times it is fitted to).
"""

from __future__ import annotations

from gpuaudit.inventory import HOST_AGENT, GpuAttachment, StunEstimate, VmotionNic
from gpuaudit.rules import stun
from gpuaudit.rules.registry import Outcome
from tests.builders import Estate, context
from tests.test_rules_stun import estate, judge, vm_named


def test_passing_message_and_whole_evidence() -> None:
    e = estate("grid_l40s-8q", speeds=(25_000, 10_000, 25_000))
    outcome = judge(e.inv, vm_named(e, "v1"))
    # 8 GB at 10 Gb/s: 2.0 + 2.8 * 8 = 24.4 s
    assert outcome == Outcome(
        True,
        "estimated stun time 24 s (gpuaudit's model) for 8 GB of vGPU data at 10 Gb/s to h2 "
        "is within the tolerated 100 s",
        {
            "migrate_data_mb": 8192,
            "data_source": ["profile frame buffer"],
            "source_bandwidth_mbps": 25_000,
            "slowest_destination": "h2",
            "destination_bandwidth_mbps": 10_000,
            "estimated_stun_s": 24,
            "estimate_source": "gpuaudit's model",
            "vcenter_estimates_from": None,
            "tolerated_s": 100,
            "tolerated_from": "default",
            "destinations_bandwidth_unknown": [],
        },
    )


def test_failing_message_names_the_path_and_the_limit() -> None:
    e = estate("grid_l40s-48q", speeds=(10_000, 25_000, 25_000))
    outcome = judge(e.inv, vm_named(e, "v1"))
    # The source is the slower end: 48 GB at 10 Gb/s, 2.0 + 2.8 * 48 = 136.4 s.
    assert outcome.message == (
        "estimated stun time 136 s (gpuaudit's model) for 48 GB of vGPU data at 10 Gb/s to h2 "
        "exceeds the tolerated 100 s"
    )
    assert outcome.evidence["destination_bandwidth_mbps"] == 25_000


def test_an_estimate_equal_to_the_limit_passes() -> None:
    e = estate("grid_l40s-24q")  # 2.0 + 2.8 * 24 = 69.2 s, rounded to 69
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": " 69 "}
    assert judge(e.inv, vm_named(e, "v1")).passed
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "68"}
    assert not judge(e.inv, vm_named(e, "v1")).passed


def test_with_no_destination_bandwidth_an_estimate_at_the_limit_is_not_judged() -> None:
    e = estate("grid_l40s-24q", speeds=(10_000, 10_000, 10_000))
    for h in e.inv.hosts[1:]:
        h.vmotion_nics[0].uplink_speed_mbps = None
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "69"}
    assert stun.stun_time(context(e.inv), vm_named(e, "v1")) is None
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "68"}
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.message == (
        "estimated stun time at least 69 s (gpuaudit's model) for 24 GB of vGPU data at "
        "10 Gb/s (the vMotion bandwidth of every destination is unknown) exceeds the "
        "tolerated 68 s"
    )
    assert outcome.evidence["slowest_destination"] is None
    assert outcome.evidence["destination_bandwidth_mbps"] is None


def test_a_tolerance_that_is_no_number_is_the_default() -> None:
    e = estate("grid_l40s-8q")
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "long"}
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert (outcome.evidence["tolerated_s"], outcome.evidence["tolerated_from"]) == (
        100,
        "default",
    )
    assert stun.tolerated_s(None) == (100, "default")


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


def test_two_vgpus_add_their_data() -> None:
    e = estate("grid_l40s-8q", speeds=(25_000, 25_000, 25_000))
    vm = vm_named(e, "v1")
    vm.gpus.append(GpuAttachment("vgpu", profile="grid_l40s-8q", migrate_data_mb=4096))
    outcome = judge(e.inv, vm)
    # 12 GB at 25 Gb/s: 2.0 + 2.8 * 12 * 0.4 = 15.44 s
    assert outcome.evidence["migrate_data_mb"] == 12_288
    assert outcome.evidence["estimated_stun_s"] == 15
    assert outcome.evidence["data_source"] == ["profile frame buffer", "vgpuMigrateDataSizeMB"]
    assert "for 12 GB of vGPU data at 25 Gb/s to h2 " in outcome.message


def test_migration_data_of_an_unknown_profile_is_unknown() -> None:
    assert stun.migrate_data_mb(GpuAttachment("vgpu", profile="mystery")) == (None, "unknown")
    assert stun.migrate_data_mb(GpuAttachment("vgpu", profile=None)) == (None, "unknown")
    assert stun.migrate_data_mb(GpuAttachment("vgpu", profile="grid_l4-8q")) == (
        8192,
        "profile frame buffer",
    )
    e = estate("grid_l40s-8q")
    vm = vm_named(e, "v1")
    vm.gpus.append(GpuAttachment("vgpu", profile="mystery"))
    assert stun.stun_time(context(e.inv), vm) is None


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
    e = estate("grid_l40s-48q", speeds=(25_000, 25_000, 10_000))
    e.inv.hosts[2].in_maintenance = True
    outcome = judge(e.inv, vm_named(e, "v1"))
    assert outcome.passed
    assert outcome.evidence["slowest_destination"] == "h2"


def test_every_esxi_70_release_gets_the_70_model() -> None:
    assert stun.model_for(stun.R.Release(7, 0)) is stun.ESXI_70
    assert stun.model_for(stun.R.Release(7, 0, 3)) is stun.ESXI_70
    assert stun.model_for(stun.R.Release(6, 7, 3)) is stun.ESXI_67


def test_a_point_vcenter_gives_twice_at_its_lowest_bandwidth_is_still_one_point() -> None:
    # estimates_of keeps every point vCenter gives, a repeated one too
    points = [StunEstimate(10_000, 80), StunEstimate(10_000, 80), StunEstimate(25_000, 35)]
    assert stun.interpolate(points, 10_000) == 80
    assert stun.interpolate(points, 17_500) == 57.5  # halfway from 80 s to 35 s


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
        "estimated stun time 30 s (vCenter's estimate) at 25 Gb/s to h2 is within the "
        "tolerated 100 s",
        {
            "migrate_data_mb": 0,
            "data_source": ["unknown"],
            "source_bandwidth_mbps": 25_000,
            "slowest_destination": "h2",
            "destination_bandwidth_mbps": 25_000,
            "estimated_stun_s": 30,
            "estimate_source": "vCenter's estimate",
            "vcenter_estimates_from": "h1",
            "tolerated_s": 100,
            "tolerated_from": "default",
            "destinations_bandwidth_unknown": [],
        },
    )


def test_with_no_destination_bandwidth_the_whole_failing_verdict() -> None:
    e = estate("grid_l40s-24q", speeds=(10_000, 10_000, 10_000))
    for h in e.inv.hosts[1:]:
        h.vmotion_nics[0].uplink_speed_mbps = None
    e.inv.clusters[0].drs_options = {"VmDevicesStunTimeTolerated": "68"}
    # 24 GB at 10 Gb/s: 2.0 + 2.8 * 24 = 69.2 s
    assert judge(e.inv, vm_named(e, "v1")) == Outcome(
        False,
        "estimated stun time at least 69 s (gpuaudit's model) for 24 GB of vGPU data at "
        "10 Gb/s (the vMotion bandwidth of every destination is unknown) exceeds the "
        "tolerated 68 s",
        {
            "migrate_data_mb": 24_576,
            "data_source": ["profile frame buffer"],
            "source_bandwidth_mbps": 10_000,
            "slowest_destination": None,
            "destination_bandwidth_mbps": None,
            "estimated_stun_s": 69,
            "estimate_source": "gpuaudit's model",
            "vcenter_estimates_from": None,
            "tolerated_s": 68,
            "tolerated_from": "VmDevicesStunTimeTolerated",
            "destinations_bandwidth_unknown": ["h2", "h3"],
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
