"""Kill tests for gpuaudit/plan/maintenance.py and gpuaudit/rules/maintenance.py: each
changes one fact of tests/scenarios/maintenance.yaml and states, by hand, the fate it
must give (the scenario's header works out the unchanged fates)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from gpuaudit.check import run_checks
from gpuaudit.inventory import Inventory, Vm
from gpuaudit.policy import Intent
from gpuaudit.results import AuditResult
from gpuaudit.rules.maintenance import must_stay_up
from tests.test_check_scenarios import load

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "maintenance.yaml"


@pytest.fixture(scope="module")
def estate() -> Inventory:
    return load(SCENARIO)[1]


def fates(result: AuditResult) -> dict[str, tuple[str, str | None, str]]:
    return {
        v.vm: (v.fate, v.to_host, v.reason)
        for c in result.maintenance
        for h in c.hosts
        for v in h.vms
    }


def notes(result: AuditResult, cluster: str) -> list[str]:
    return next(c.notes for c in result.maintenance if c.cluster == cluster)


def vm(inv: Inventory, name: str) -> Vm:
    return next(v for v in inv.vms if v.name == name)


def test_vcenter_refusing_vgpu_vmotion_blocks_every_vgpu_vm(estate: Inventory) -> None:
    inv = copy.deepcopy(estate)
    inv.vcenter.vgpu_hotmigrate_enabled = False
    found = fates(run_checks(inv))
    assert found["clean-a"][0] == "blocking"
    assert "vgpu.hotmigrate.enabled is not true" in found["clean-a"][2]
    assert found["pt-train"][0] == "powered off"  # passthrough whatever the setting


def test_a_host_without_vmotion_sends_and_takes_nothing(estate: Inventory) -> None:
    inv = copy.deepcopy(estate)
    next(h for h in inv.hosts if h.name == "mm-esx02").vmotion_nics = []
    result = run_checks(inv)
    found = fates(result)
    assert found["clean-b"][0] == "blocking"
    assert "mm-esx02 has no vMotion adapter" in found["clean-b"][2]
    # clean-a's only other host cannot receive it.
    assert found["clean-a"][:2] == ("blocking", None)
    assert notes(result, "mm-clean") == ["no vMotion adapter on mm-esx02: it takes no VM"]
    assert notes(result, "mm-full") == []


def test_drs_not_fully_automated_is_said(estate: Inventory) -> None:
    inv = copy.deepcopy(estate)
    next(c for c in inv.clusters if c.name == "mm-clean").drs_automation = "partiallyAutomated"
    said = notes(run_checks(inv), "mm-clean")
    assert len(said) == 1 and said[0].startswith("DRS is partiallyAutomated, not fully automated")


def test_drs_off_is_said(estate: Inventory) -> None:
    inv = copy.deepcopy(estate)
    next(c for c in inv.clusters if c.name == "mm-clean").drs_enabled = False
    said = notes(run_checks(inv), "mm-clean")
    assert len(said) == 1 and said[0].startswith("DRS is off, not fully automated")


def test_a_plugin_option_that_disables_migration_blocks(estate: Inventory) -> None:
    inv = copy.deepcopy(estate)
    vm(inv, "clean-a").vgpu_plugin_options = {"pciPassthru0.cfg.enable_uvm": "1"}
    fate, to, reason = fates(run_checks(inv))["clean-a"]
    assert (fate, to) == ("blocking", None)
    assert reason.startswith("DRS does not move it: pciPassthru0.cfg.enable_uvm = 1")


def test_an_unclear_plugin_option_moves_but_is_not_proven(estate: Inventory) -> None:
    inv = copy.deepcopy(estate)
    vm(inv, "clean-a").vgpu_plugin_options = {"pciPassthru0.cfg.enable_uvm": "TRUE"}
    fate, to, reason = fates(run_checks(inv))["clean-a"]
    assert (fate, to) == ("moved", "mm-esx02")
    assert reason.startswith("not proven: pciPassthru0.cfg.enable_uvm = 'TRUE'")


def test_migration_unsupported_blocks(estate: Inventory) -> None:
    inv = copy.deepcopy(estate)
    vm(inv, "clean-a").gpus[0].migrate_supported = False
    fate, _, reason = fates(run_checks(inv))["clean-a"]
    assert fate == "blocking" and "migrateSupported false" in reason


@pytest.mark.parametrize(("value", "fate"), [("true", "powered off"), ("FALSE", "moved")])
def test_the_evacuation_option_counts_only_when_true(
    estate: Inventory, value: str, fate: str
) -> None:
    inv = copy.deepcopy(estate)
    vm(inv, "clean-a").evacuation_poweroff = value
    assert fates(run_checks(inv))["clean-a"][0] == fate


def test_a_vm_ha_does_not_restart_is_still_moved(estate: Inventory) -> None:
    inv = copy.deepcopy(estate)
    vm(inv, "clean-a").restart_priority = "disabled"
    assert fates(run_checks(inv))["clean-a"][:2] == ("moved", "mm-esx02")


def test_a_device_of_unknown_backing_blocks(estate: Inventory) -> None:
    inv = copy.deepcopy(estate)
    vm(inv, "clean-a").gpus[0].kind = "unknown"
    fate, _, reason = fates(run_checks(inv))["clean-a"]
    assert (fate, reason) == (
        "blocking",
        "a GPU device of unknown backing: nothing is known to move it",
    )


@pytest.mark.parametrize(
    ("intent", "strict"),
    [
        (Intent(), False),
        (Intent(stateless=False), True),
        (Intent(max_restart_minutes=1.0), False),
        (Intent(max_restart_minutes=0.99), True),
    ],
)
def test_must_stay_up(intent: Intent, strict: bool) -> None:
    assert must_stay_up(intent) is strict


def test_vm13_passes_no_cluster_without_a_loaded_host(estate: Inventory) -> None:
    inv = copy.deepcopy(estate)
    for v in inv.vms:
        if v.host in ("mm-esx08", "mm-esx09"):
            v.power_state = "poweredOff"
    vm13 = [f for f in run_checks(inv).findings if f.rule == "VM-13"]
    assert "mm-nodrs" not in {f.object for f in vm13}


def test_drs_not_fully_automated_says_the_fates_are_drs_ones(estate: Inventory) -> None:
    inv = copy.deepcopy(estate)
    next(c for c in inv.clusters if c.name == "mm-clean").drs_automation = "manual"
    assert notes(run_checks(inv), "mm-clean") == [
        "DRS is manual, not fully automated: the fates below are those fully automated DRS "
        "would give; otherwise every VM is moved by hand"
    ]


def test_a_vcenter_before_70u3f_blocks_every_vgpu_vm(estate: Inventory) -> None:
    # vCenter 7.0 U3 before build 20051473 (U3f) never evacuates vGPU VMs in maintenance
    # mode, whatever VgpuMMAutomationTimeoutSecs says (Broadcom KB 88271).
    inv = copy.deepcopy(estate)
    inv.vcenter.version, inv.vcenter.build = "7.0.3", "19234570"
    fate, to, reason = fates(run_checks(inv))["clean-a"]
    assert (fate, to) == ("blocking", None)
    assert reason.startswith("vCenter 7.0")
    assert "predates 7.0 U3f" in reason and reason.endswith(
        "(Broadcom KB 88271: DRS recommends no host; the VM must be evacuated by hand)"
    )


def test_a_vcenter_from_70u3f_evacuates(estate: Inventory) -> None:
    inv = copy.deepcopy(estate)
    inv.vcenter.version, inv.vcenter.build = "7.0.3", "20051473"
    assert fates(run_checks(inv))["clean-a"][:2] == ("moved", "mm-esx02")


def test_each_fate_says_why_and_a_move_names_the_gpu(estate: Inventory) -> None:
    found = {
        v.vm: v
        for c in run_checks(copy.deepcopy(estate)).maintenance
        for h in c.hosts
        for v in h.vms
    }
    assert found["pt-train"].reason == "a DirectPath I/O device: vMotion cannot move the VM"
    # mm-esx02 has one L4, at 0000:3b:00.0 (the scenario's host entries).
    assert (found["clean-a"].to_host, found["clean-a"].to_gpu) == ("mm-esx02", "0000:3b:00.0")
    assert found["clean-a"].reason == ""  # nothing of its move is left not proven
    assert found["full-a2"].reason.startswith("no host takes it: ")


def test_a_vcenter_6x_blocks_every_vgpu_vm(estate: Inventory) -> None:
    # vCenter 6.7 U3 (its build tells the update): long before 7.0 U3f.
    inv = copy.deepcopy(estate)
    inv.vcenter.version, inv.vcenter.build = "6.7.0", "15976714"
    fate, _, reason = fates(run_checks(inv))["clean-a"]
    assert fate == "blocking" and "predates 7.0 U3f" in reason
