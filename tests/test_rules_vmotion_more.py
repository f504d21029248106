"""vMotion of vGPU VMs: VM-07 on distributed switches (and a gap for unknown uplinks),
VM-06 against the vGPU branches' ESXi releases and vCenter's (not proven where the
branch, or its list of releases, is not known), and VM-09's DRS options.

One rule on one object through tests/support/builders.py, then tests/scenarios/vmotion.yaml:
its expectations hold on the oracle's inventory and on the recorded cassette.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuaudit.inventory import Cluster, Host, Inventory, VmotionNic
from gpuaudit.knowledge.branches import branch_for
from gpuaudit.knowledge.releases import Release, esxi_release, vcenter_release
from gpuaudit.rules import drs, vmotion
from gpuaudit.rules.registry import Outcome
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES, SCENARIOS
from tests.lab.expected import expected_inventory
from tests.lab.scenario import load_scenario
from tests.support.builders import Estate, context, healthy


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


# --- VM-09 ---------------------------------------------------------------------------------

READY = {"PassthroughDrsAutomation": "1", "LBMaxVmotionPerHost": "1"}


def _drs_estate(options: dict[str, str], vcenter: str = "8.0.3", build: str = "24022515") -> Estate:
    e = healthy()
    e.inv.vcenter.version, e.inv.vcenter.build = vcenter, build
    cluster = e.inv.clusters[0]
    cluster.drs_enabled, cluster.drs_automation = True, "fullyAutomated"
    cluster.drs_options = dict(options)
    return e


def _vm09(e: Estate) -> Outcome | None:
    cluster: Cluster = e.inv.clusters[0]
    return drs.vgpu_drs_options(context(e.inv), cluster)


def _verdict(e: Estate) -> Outcome:
    outcome = _vm09(e)
    assert outcome is not None
    return outcome


def test_vm09_every_option_set_passes() -> None:
    e = _drs_estate({**READY, "VgpuMMAutomationTimeoutSecs": "-1"})
    assert _verdict(e).passed


def test_vm09_an_unset_evacuation_timeout_fails() -> None:
    outcome = _verdict(_drs_estate(READY))
    assert not outcome.passed
    assert "VgpuMMAutomationTimeoutSecs is unset" in outcome.message


def test_vm09_an_evacuation_timeout_other_than_minus_one_fails() -> None:
    outcome = _verdict(_drs_estate({**READY, "VgpuMMAutomationTimeoutSecs": "300"}))
    assert not outcome.passed
    assert "VgpuMMAutomationTimeoutSecs is 300, not -1" in outcome.message


def test_vm09_fully_automated_drs_without_passthrough_automation_fails() -> None:
    outcome = _verdict(_drs_estate({"VgpuMMAutomationTimeoutSecs": "-1"}))
    assert not outcome.passed
    assert "PassthroughDrsAutomation is not 1: DRS never load-balances vGPU VMs" in outcome.message


def test_vm09_passthrough_automation_does_not_apply_before_vcenter_80_u2() -> None:
    e = _drs_estate({"VgpuMMAutomationTimeoutSecs": "-1"}, vcenter="8.0.1", build="21560480")
    assert _verdict(e).passed


def test_vm09_several_vmotions_per_host_fail() -> None:
    options = {**READY, "LBMaxVmotionPerHost": "4", "VgpuMMAutomationTimeoutSecs": "-1"}
    outcome = _verdict(_drs_estate(options))
    assert not outcome.passed
    assert "LBMaxVmotionPerHost is 4, not 1" in outcome.message


@pytest.mark.parametrize(("seconds", "passed"), [("50", False), ("100", True), ("180", True)])
def test_vm09_stun_time_tolerance_below_the_default_fails(seconds: str, passed: bool) -> None:
    options = {**READY, "VgpuMMAutomationTimeoutSecs": "-1", "VmDevicesStunTimeTolerated": seconds}
    assert _verdict(_drs_estate(options)).passed is passed


def test_vm09_a_vcenter_before_70_u3f_cannot_evacuate() -> None:
    e = _drs_estate({"VgpuMMAutomationTimeoutSecs": "-1"}, vcenter="7.0.3", build="19234570")
    outcome = _verdict(e)
    assert not outcome.passed
    assert "predates 7.0 U3f" in outcome.message


def test_vm09_does_not_apply_without_drs() -> None:
    e = _drs_estate({})
    e.inv.clusters[0].drs_enabled = False
    assert _vm09(e) is None


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
    _holds(obtain.obtain_inventory(obtain.Replay(CASSETTES / "vmotion.yaml")))


def test_the_collector_reads_distributed_uplinks_and_records_a_gap(no_network: None) -> None:
    inv = obtain.obtain_inventory(obtain.Replay(CASSETTES / "vmotion.yaml"))
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
