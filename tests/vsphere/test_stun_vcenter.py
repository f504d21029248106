"""vCenter's own vGPU stun time estimates (8.0 U2): how the collector asks for them and
how VM-10 uses them in place of VMware's table.

Expected values are written out by hand from the points given, or read from the
numbers of tests/scenarios/stuntime.yaml, never computed by the code under test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyVim.connect import Disconnect, SmartConnect
from pyVmomi import vim, vmodl

from gpuaudit.inventory import GpuAttachment, Host, Inventory, StunEstimate
from gpuaudit.rules import stun
from gpuaudit.rules.registry import Outcome
from gpuaudit.rules.stun_bounds import Bounds, interpolate, vcenter_bounds
from gpuaudit.vsphere import obtain
from gpuaudit.vsphere.collect import configtarget
from tests.conftest import CASSETTES, SCENARIOS
from tests.lab.scenario import ScenarioError, load_scenario
from tests.support.builders import Estate, context

POINTS = [StunEstimate(10_000, 80), StunEstimate(25_000, 35), StunEstimate(100_000, 12)]


def test_between_two_points_the_time_is_interpolated_linearly() -> None:
    # 17.5 Gb/s is halfway from 10 to 25 Gb/s: halfway from 80 s to 35 s.
    assert interpolate(POINTS, 17_500) == pytest.approx(57.5)


def test_at_a_published_point_the_time_is_that_point() -> None:
    assert interpolate(POINTS, 25_000) == pytest.approx(35)


def test_above_the_highest_point_the_highest_points_time_stays() -> None:
    assert interpolate(POINTS, 400_000) == pytest.approx(12)


def test_below_the_lowest_point_the_time_scales_up_with_the_bandwidth() -> None:
    # 5 Gb/s is half of 10 Gb/s: twice 80 s.
    assert interpolate(POINTS, 5_000) == pytest.approx(160)


def test_the_points_need_not_come_sorted() -> None:
    assert interpolate(list(reversed(POINTS)), 17_500) == pytest.approx(57.5)


def test_at_a_published_point_vcenter_gives_the_time_exactly() -> None:
    assert vcenter_bounds(POINTS, 25_000) == Bounds(35, 35)


def test_between_two_points_the_faster_points_time_bounds_it_from_below() -> None:
    # 17.5 Gb/s: at least 35 s (25 Gb/s), at most the straight line's 57.5 s.
    assert vcenter_bounds(list(reversed(POINTS)), 17_500) == Bounds(35, 57.5)


def test_below_the_lowest_point_its_time_bounds_it_from_below() -> None:
    assert vcenter_bounds(POINTS, 5_000) == Bounds(80, 160)


def test_above_the_highest_point_nothing_bounds_it_from_below() -> None:
    assert vcenter_bounds(POINTS, 400_000) == Bounds(
        None, 12, ("vCenter estimates no bandwidth at or above 400 Gb/s",)
    )


def estate(profile: str, estimates: dict[str, list[StunEstimate]]) -> Estate:
    """Three L40S hosts with 10 Gb/s vMotion uplinks offering ``profile``, one VM on h1;
    every host carries ``estimates`` as vCenter's, read from h1."""
    e = Estate()
    e.cluster("c1")
    hosts = [e.host(f"h{i}", "c1", profiles=(profile,)) for i in (1, 2, 3)]
    for h in hosts:
        e.gpu(h, model="l40s")
        h.vmotion_nics[0].uplink_speed_mbps = 10_000
        h.stun_estimates = estimates
        h.stun_estimates_host = "h1" if estimates else None
    e.datastore("san1", hosts)
    e.vm("v1", hosts[0], ["san1"], vgpu=profile)
    return e


def judge(e: Estate) -> Outcome:
    vm = next(v for v in e.inv.vms if v.name == "v1")
    outcome = stun.stun_time(context(e.inv), vm)
    assert outcome is not None
    return outcome


def test_vm10_passes_a_48_gb_profile_that_vcenter_estimates_within_the_tolerance() -> None:
    # VMware's table ends at 32 GB of vGPU memory; vCenter says 80 s.
    e = estate("grid_l40s-48q", {"grid_l40s-48q": [StunEstimate(10_000, 80)]})
    outcome = judge(e)
    assert outcome.passed and not outcome.unproven
    assert (outcome.evidence["stun_s_at_least"], outcome.evidence["stun_s_at_most"]) == (80, 80)
    assert outcome.evidence["estimate_source"] == "vCenter's estimate"
    assert outcome.evidence["vcenter_estimates_from"] == "h1"
    assert "(vCenter's estimate)" in outcome.message


def test_vm10_fails_a_24_gb_profile_that_vcenter_estimates_over_the_tolerance() -> None:
    # VMware's table puts 24 GB in a 16 GB VM between 50 and 95 s; vCenter says 120 s.
    e = estate("grid_l40s-24q", {"GRID_L40S-24Q": [StunEstimate(10_000, 120)]})
    outcome = judge(e)
    assert not outcome.passed
    assert outcome.evidence["stun_s_at_least"] == 120
    assert "estimated stun time 120 s (vCenter's estimate)" in outcome.message


def test_vm10_reads_the_table_where_vcenter_gives_no_estimate_for_the_profile() -> None:
    e = estate("grid_l40s-24q", {"grid_l40s-48q": [StunEstimate(10_000, 80)]})
    outcome = judge(e)
    assert outcome.passed and not outcome.unproven
    # 24 GB in a 16 GB VM: at least 16 GB / 16 GB (50 s), at most 32 GB / 16 GB (95 s).
    assert (outcome.evidence["stun_s_at_least"], outcome.evidence["stun_s_at_most"]) == (50, 95)
    assert outcome.evidence["estimate_source"] == "VMware's ESXi 7.0 table"
    assert outcome.evidence["vcenter_estimates_from"] is None
    assert "(VMware's ESXi 7.0 table)" in outcome.message


def test_vm10_sums_vcenters_estimates_over_the_vms_vgpus() -> None:
    e = estate("grid_l40s-24q", {"grid_l40s-24q": [StunEstimate(10_000, 60)]})
    vm = next(v for v in e.inv.vms if v.name == "v1")
    vm.gpus.append(GpuAttachment(kind="vgpu", label="PCI device 1", profile="grid_l40s-24q"))
    outcome = judge(e)
    assert not outcome.passed
    assert outcome.evidence["stun_s_at_least"] == 120  # 60 s + 60 s


def test_vm10_reads_vcenters_estimate_at_the_slowest_destinations_bandwidth() -> None:
    e = estate("grid_l40s-48q", {"grid_l40s-48q": POINTS})
    for h in e.inv.hosts[:2]:
        h.vmotion_nics[0].uplink_speed_mbps = 25_000
    e.inv.hosts[2].vmotion_nics[0].uplink_speed_mbps = 17_500
    outcome = judge(e)
    assert outcome.evidence["slowest_destination"] == "h3"
    # Halfway from 80 s to 35 s at most; at least the 35 s of 25 Gb/s.
    assert (outcome.evidence["stun_s_at_least"], outcome.evidence["stun_s_at_most"]) == (
        35,
        57.5,
    )


# The collector.


class Browser:
    """An environment browser that answers QueryConfigTarget with ``answer`` (or raises it)."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.asked: list[str] = []

    def QueryConfigTarget(self, host: Any) -> Any:
        self.asked.append(host._moId)
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def target(profile: str, points: list[tuple[int, int]]) -> Any:
    info = vim.vm.VgpuProfileInfo(
        name=profile,
        profileName=profile,
        stunTimeEstimates=[
            vim.vm.VMotionStunTimeInfo(name=profile, migrationBW=bw, stunTime=s) for bw, s in points
        ],
    )
    return vim.vm.ConfigTarget(vgpuProfileInfo=[info])


def mixed_estate() -> Inventory:
    """Cluster c1: h1 and h2 (L40S, build 24022510), h3 (L40S, another build), h4 (L4),
    h5 (8.0.1: asked for its profiles, too old for estimates); a vGPU VM runs on h1."""
    e = Estate()
    e.cluster("c1")
    hosts = [e.host(f"h{i}", "c1", profiles=("grid_l40s-8q",)) for i in (1, 2, 3, 4, 5)]
    for h in hosts:
        e.gpu(h, model="l4" if h.name == "h4" else "l40s")
    hosts[2].build = "24280767"
    hosts[4].version, hosts[4].build = "8.0.1", "21495797"
    e.datastore("san1", hosts)
    e.vm("v1", hosts[0], ["san1"], vgpu="grid_l40s-8q")
    return e.inv


def by_name(inv: Inventory) -> dict[str, Host]:
    return {h.name: h for h in inv.hosts}


def test_the_collector_asks_once_per_esxi_build_and_gpu_model() -> None:
    inv = mixed_estate()
    browser = Browser(target("grid_l40s-8q", [(25_000, 9), (10_000, 20)]))
    configtarget.collect_config_target(None, inv, {"c1": browser}, "vim.version.v8_0_3_0")
    hosts = by_name(inv)
    assert browser.asked == [h.moref for h in (hosts["h1"], hosts["h3"], hosts["h4"], hosts["h5"])]
    assert hosts["h2"].stun_estimates_host == "h1"
    assert hosts["h2"].stun_estimates == {
        "grid_l40s-8q": [StunEstimate(10_000, 20), StunEstimate(25_000, 9)]
    }
    assert hosts["h5"].stun_estimates == {} and hosts["h5"].stun_estimates_host is None
    assert not inv.gaps


def test_the_collector_asks_nothing_of_a_cluster_without_a_running_vgpu_vm() -> None:
    inv = mixed_estate()
    inv.vms[0].power_state = "poweredOff"
    browser = Browser(target("grid_l40s-8q", [(10_000, 20)]))
    configtarget.collect_config_target(None, inv, {"c1": browser}, "vim.version.v8_0_3_0")
    assert browser.asked == []


def test_the_collector_keeps_no_estimates_when_the_api_predates_them() -> None:
    inv = mixed_estate()
    browser = Browser(target("grid_l40s-8q", [(10_000, 20)]))
    configtarget.collect_config_target(None, inv, {"c1": browser}, "vim.version.v8_0_1_0")
    assert len(browser.asked) == 4  # for the profiles (API 7.0.3), not the estimates
    assert all(h.stun_estimates == {} for h in inv.hosts)


def test_the_collector_asks_nothing_when_the_api_predates_the_profiles() -> None:
    inv = mixed_estate()
    browser = Browser(target("grid_l40s-8q", [(10_000, 20)]))
    configtarget.collect_config_target(None, inv, {"c1": browser}, "vim.version.v7_0_2_0")
    assert browser.asked == []


def test_a_refused_query_is_a_gap_on_the_cluster_not_an_exception() -> None:
    inv = mixed_estate()
    browser = Browser(vim.fault.NoPermission(privilegeId="System.View"))
    configtarget.collect_config_target(None, inv, {"c1": browser}, "vim.version.v8_0_3_0")
    assert [(g.object, g.kind, g.reason) for g in inv.gaps] == [
        ("c1", "ClusterComputeResource", "NoPermission")
    ] * 4
    assert all(h.stun_estimates == {} for h in inv.hosts)


def test_an_unsupported_query_leaves_the_estimates_absent_without_a_gap() -> None:
    inv = mixed_estate()
    browser = Browser(vmodl.fault.NotSupported())
    configtarget.collect_config_target(None, inv, {"c1": browser}, "vim.version.v8_0_3_0")
    assert not inv.gaps
    assert all(h.stun_estimates == {} for h in inv.hosts)


# The recorded lab: the stun-vc cluster of tests/scenarios/stuntime.yaml.


def scenario_estimate(host: str, profile: str, bandwidth_mbps: int) -> int:
    scenario = load_scenario(SCENARIOS / "stuntime.yaml")
    spec = next(
        h
        for dc in scenario["datacenters"]
        for c in dc["clusters"]
        for h in c["hosts"]
        if h["name"] == host
    )
    points = next(p["stun_estimates"] for p in spec["vgpu_profiles"] if p["name"] == profile)
    return int(next(e["stun_s"] for e in points if e["bandwidth_mbps"] == bandwidth_mbps))


@pytest.fixture(scope="module")
def recorded() -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(Path(CASSETTES / "stuntime.yaml")))


@pytest.mark.parametrize(
    ("vm_name", "profile", "passed"),
    [("vc-big", "grid_l40s-48q", True), ("vc-mid", "grid_l40s-24q", False)],
)
def test_vm10_judges_the_recorded_estate_by_vcenters_estimate(
    recorded: Inventory, vm_name: str, profile: str, passed: bool
) -> None:
    vm = next(v for v in recorded.vms if v.name == vm_name)
    outcome = stun.stun_time(context(recorded), vm)
    assert outcome is not None
    # Every stun-vc host's vMotion uplink runs at 10 Gb/s; vc-esx01 is the host asked.
    expected = scenario_estimate("vc-esx01", profile, 10_000)
    assert (outcome.evidence["stun_s_at_least"], outcome.evidence["stun_s_at_most"]) == (
        expected,
        expected,
    )
    assert outcome.evidence["estimate_source"] == "vCenter's estimate"
    assert outcome.passed is passed


def test_without_vcenters_estimates_the_table_would_not_decide_vc_big(
    recorded: Inventory,
) -> None:
    # VMware's table ends at 32 GB of vGPU memory: vc-big's 48 GB would be not proven;
    # vc-mid's 24 GB in 16 GB of memory lies between 50 s and 95 s and would pass. So
    # vCenter's estimate is what decides both.
    for h in recorded.hosts:
        h.stun_estimates = {}
    verdicts = {}
    for vm in recorded.vms:
        if vm.name.startswith("vc-"):
            outcome = stun.stun_time(context(recorded), vm)
            assert outcome is not None
            assert outcome.evidence["estimate_source"] == "VMware's ESXi 7.0 table"
            verdicts[vm.name] = (outcome.passed, bool(outcome.unproven))
    assert verdicts == {"vc-big": (True, True), "vc-mid": (True, False)}


# The lab: the patched simulator serves the estimates over SOAP.


def test_the_scenario_refuses_two_estimates_at_one_bandwidth(tmp_path: Path) -> None:
    text = (SCENARIOS / "stuntime.yaml").read_text(encoding="utf-8")
    doubled = text.replace(
        "{bandwidth_mbps: 25000, stun_s: 35}", "{bandwidth_mbps: 10000, stun_s: 35}"
    )
    assert doubled != text
    path = tmp_path / "doubled.yaml"
    path.write_text(doubled, encoding="utf-8")
    with pytest.raises(ScenarioError, match="two stun estimates at 10000 Mbps"):
        load_scenario(path)


@pytest.mark.live
def test_the_lab_serves_vcenters_estimates_to_query_config_target(lab_factory: Any) -> None:
    lab = lab_factory("stuntime")
    si = SmartConnect(
        protocol="http", host=lab.host, port=lab.port, user=lab.user, pwd=lab.password
    )
    try:
        content = si.RetrieveContent()
        view = content.viewManager.CreateContainerView(
            content.rootFolder, [vim.ClusterComputeResource], True
        )
        cluster = next(c for c in view.view if c.name == "stun-vc")
        host = next(h for h in cluster.host if h.name == "vc-esx02")
        answer = cluster.environmentBrowser.QueryConfigTarget(host=host)
        served = {
            p.profileName: sorted((e.migrationBW, e.stunTime) for e in p.stunTimeEstimates)
            for p in answer.vgpuProfileInfo
        }
        assert served["grid_l40s-24q"] == [
            (10_000, scenario_estimate("vc-esx02", "grid_l40s-24q", 10_000)),
            (25_000, scenario_estimate("vc-esx02", "grid_l40s-24q", 25_000)),
        ]
    finally:
        Disconnect(si)
