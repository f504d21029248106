"""Kill tests for gpuaudit/plan/maintenance.py and gpuaudit/rules/maintenance.py: each
changes one fact of tests/scenarios/maintenance.yaml and states, by hand, the fate it
must give (the scenario's header works out the unchanged fates)."""

from __future__ import annotations

import copy
from datetime import date
from pathlib import Path

import pytest

from gpuaudit.inventory import Cluster, Host, Inventory, Vm
from gpuaudit.model.facts import Facts
from gpuaudit.model.policy import Intent, Policy
from gpuaudit.results import AuditResult
from gpuaudit.rules.maintenance import maintenance_stops, must_stay_up, no_clean_host
from gpuaudit.rules.registry import Context, Outcome
from gpuaudit.verdict.check import run_checks
from tests.verdict.test_check_scenarios import load, maintenance_policy

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "maintenance.yaml"


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


def _context(inv: Inventory, policy: Policy) -> Context:
    """What VM-12 and VM-13 read: the estate's facts, the policy and the maintenance
    readiness the audit works out."""
    readiness = run_checks(inv, policy).maintenance
    return Context(
        facts=Facts(inv),
        policy=policy,
        simulations={},
        today=date(2027, 1, 15),
        maintenance={c.cluster: c for c in readiness},
    )


def _host(inv: Inventory, name: str) -> Host:
    return next(h for h in inv.hosts if h.name == name)


def _cluster(inv: Inventory, name: str) -> Cluster:
    return next(c for c in inv.clusters if c.name == name)


def test_vm12_says_what_each_stateful_host_stops(estate: Inventory) -> None:
    # The scenario's header: mm-esx01's clean-a moves; mm-esx03's pt-train (DirectPath) is
    # powered off while pt-desk moves; mm-esx06's full-a1 moves, full-a2 and full-a3 find
    # no L4 with room. The policy declares every mm-* cluster stateful.
    ctx = _context(estate, maintenance_policy())
    assert maintenance_stops(ctx, _host(estate, "mm-esx01")) == Outcome(
        True,
        "all 1 GPU VMs move by vMotion",
        {"moved": 1, "powered_off": [], "blocking": [], "must_stay_up": True},
    )
    assert maintenance_stops(ctx, _host(estate, "mm-esx03")) == Outcome(
        False,
        "maintenance mode stops GPU VMs: pt-train powered off, and the intent says they "
        "must stay up",
        {"moved": 1, "powered_off": ["pt-train"], "blocking": [], "must_stay_up": True},
    )
    assert maintenance_stops(ctx, _host(estate, "mm-esx06")) == Outcome(
        False,
        "maintenance mode stops GPU VMs: full-a2, full-a3 blocking, and the intent says "
        "they must stay up",
        {"moved": 1, "powered_off": [], "blocking": ["full-a2", "full-a3"], "must_stay_up": True},
    )


def test_vm12_counts_a_host_that_powers_off_and_blocks(estate: Inventory) -> None:
    # With vGPU vMotion refused, mm-esx03's pt-desk blocks beside the powered-off
    # pt-train: two VMs, none moved.
    inv = copy.deepcopy(estate)
    inv.vcenter.vgpu_hotmigrate_enabled = False
    ctx = _context(inv, maintenance_policy())
    assert maintenance_stops(ctx, _host(inv, "mm-esx03")) == Outcome(
        False,
        "maintenance mode stops GPU VMs: pt-train powered off; pt-desk blocking, and the "
        "intent says they must stay up",
        {"moved": 0, "powered_off": ["pt-train"], "blocking": ["pt-desk"], "must_stay_up": True},
    )


def test_vm12_passes_a_stop_a_stateless_intent_accepts(estate: Inventory) -> None:
    # The default intent: stateless, a 5-minute restart accepted.
    ctx = _context(estate, Policy.default())
    assert maintenance_stops(ctx, _host(estate, "mm-esx03")) == Outcome(
        True,
        "maintenance mode stops GPU VMs: pt-train powered off; the intent accepts a restart",
        {"moved": 1, "powered_off": ["pt-train"], "blocking": [], "must_stay_up": False},
    )


def test_vm13_names_the_clean_hosts_or_the_least_downtime(estate: Inventory) -> None:
    # mm-clean: both hosts evacuate. mm-full: mm-esx06 stops full-a2 and full-a3,
    # mm-esx07 stops full-b1 and full-b2: a tie of 2, the first by name.
    ctx = _context(estate, maintenance_policy())
    assert no_clean_host(ctx, _cluster(estate, "mm-clean")) == Outcome(
        True,
        "mm-esx01, mm-esx02 can enter maintenance mode with every GPU VM moved",
        {
            "hosts_with_gpu_vms": 2,
            "hosts_without_downtime": ["mm-esx01", "mm-esx02"],
            "least_downtime": {"host": "mm-esx01", "vms": 0},
        },
    )
    assert no_clean_host(ctx, _cluster(estate, "mm-full")) == Outcome(
        False,
        "each of the 2 hosts running GPU VMs stops some for maintenance; the fewest: 2 on mm-esx06",
        {
            "hosts_with_gpu_vms": 2,
            "hosts_without_downtime": [],
            "least_downtime": {"host": "mm-esx06", "vms": 2},
        },
    )
