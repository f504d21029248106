"""The fail-closed vMotion traps of tests/scenarios/failclosed-vmotion.yaml, judged on the
recorded lab session (cassettes/failclosed-vmotion.yaml): each trap fails or is not
proven, and its clean twin, which differs from it only in the trap, passes.

Expected verdicts are written out by hand from the published figures:

- VMware, vCenter Server and Host Management 7.0, "Migrating Virtual Machines with vGPU",
  Estimated Worst-Case Stun Times at 10 Gb/s: 16 GB of vGPU memory is 47 s with 4 GB of
  VM memory and 54 s with 32 GB; 8 GB of vGPU memory is 32 s with 32 GB of VM memory,
  and the table's last column is 32 GB. DRS moves a vGPU VM only when the estimate "is
  lower than" the limit (Broadcom KB 313479); the cluster fc-stun tolerates 50 s.
- NVIDIA, Virtual GPU Software User Guide 17: setting pciPassthru<vgpu-id>.cfg.enable_uvm,
  .enable_debugging or .enable_profiling "to 1" enables unified memory, CUDA debuggers or
  profilers, and a VM with them enabled cannot be migrated (6.5.1, 6.5.2.3; NVIDIA AI
  Enterprise: "migration is disabled").
"""

from __future__ import annotations

import pytest

from gpuaudit.inventory import Inventory
from gpuaudit.results import AuditResult
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES

CASSETTE = CASSETTES / "failclosed-vmotion.yaml"


@pytest.fixture(scope="module")
def recorded() -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(CASSETTE))


@pytest.fixture(scope="module")
def result(recorded: Inventory) -> AuditResult:
    checked = run_checks(recorded)
    assert checked.errors == []
    return checked


def statuses(result: AuditResult, rule: str) -> dict[str, str]:
    return {f.object: f.status for f in result.findings if f.rule == rule}


def finding(result: AuditResult, rule: str, vm: str) -> dict[str, object]:
    found = next(f for f in result.findings if f.rule == rule and f.object == vm)
    return {"status": found.status, "message": found.message, **found.evidence}


def test_the_collector_read_the_vgpu_plugin_parameters(recorded: Inventory) -> None:
    options = {vm.name: vm.vgpu_plugin_options for vm in recorded.vms}
    assert options["opt-uvm-trap"] == {"pciPassthru0.cfg.enable_uvm": "1"}
    assert options["opt-debug-trap"] == {"pciPassthru0.cfg.enable_debugging": "1"}
    assert options["opt-prof-trap"] == {"pciPassthru0.cfg.enable_profiling": "1"}
    assert options["opt-true-trap"] == {"pciPassthru0.cfg.enable_uvm": "TRUE"}
    assert options["opt-off-twin"] == {"pciPassthru0.cfg.enable_uvm": "0"}
    assert options["opt-twin"] == {}


def test_vm10_the_vms_memory_fails_the_trap_and_passes_its_twin(result: AuditResult) -> None:
    trap = finding(result, "VM-10", "stun-mem-trap")
    twin = finding(result, "VM-10", "stun-mem-twin")
    # 16 GB of vGPU memory: 54 s in the 32 GB VM, not lower than 50 s; 47 s in the 4 GB one.
    assert (trap["status"], trap["stun_s_at_least"], trap["stun_s_at_most"]) == ("fail", 54, 54)
    assert (twin["status"], twin["stun_s_at_least"], twin["stun_s_at_most"]) == ("pass", 47, 47)
    assert trap["tolerated_s"] == twin["tolerated_s"] == 50
    assert trap["estimate_source"] == "VMware's ESXi 7.0 table"


def test_vm10_a_vm_beyond_the_tables_memory_is_not_proven(result: AuditResult) -> None:
    trap = finding(result, "VM-10", "stun-beyond-trap")
    twin = finding(result, "VM-10", "stun-beyond-twin")
    # 64 GB of VM memory is past the 32 GB column: at least its 32 s, at most unknown.
    assert (trap["status"], trap["stun_s_at_least"], trap["stun_s_at_most"]) == (
        "unproven",
        32,
        None,
    )
    assert trap["not_proven"] == (
        "64 GB of VM memory is beyond VMware's ESXi 7.0 table, which ends at 32 GB"
    )
    assert (twin["status"], twin["stun_s_at_least"], twin["stun_s_at_most"]) == ("pass", 32, 32)


def test_vm10_verdicts_of_the_whole_scenario(result: AuditResult) -> None:
    assert statuses(result, "VM-10") == {
        "stun-mem-trap": "fail",
        "stun-mem-twin": "pass",
        "stun-beyond-trap": "unproven",
        "stun-beyond-twin": "pass",
        # 8 GB of vGPU memory in 16 GB VMs at 10 Gb/s: 28 s, below the default 100 s.
        "opt-uvm-trap": "pass",
        "opt-debug-trap": "pass",
        "opt-prof-trap": "pass",
        "opt-true-trap": "pass",
        "opt-off-twin": "pass",
        "opt-twin": "pass",
    }


def test_vm11_refuses_the_vms_whose_options_disable_migration(result: AuditResult) -> None:
    assert statuses(result, "VM-11") == {
        "opt-uvm-trap": "fail",
        "opt-debug-trap": "fail",
        "opt-prof-trap": "fail",
        "opt-true-trap": "unproven",
        "opt-off-twin": "pass",
        "opt-twin": "pass",
        "stun-mem-trap": "pass",
        "stun-mem-twin": "pass",
        "stun-beyond-trap": "pass",
        "stun-beyond-twin": "pass",
    }
    assert finding(result, "VM-11", "opt-uvm-trap")["message"] == (
        "pciPassthru0.cfg.enable_uvm = 1 (unified memory): NVIDIA disables the live "
        "migration of such a vGPU VM"
    )
    assert finding(result, "VM-11", "opt-debug-trap")["enabled"] == [
        "pciPassthru0.cfg.enable_debugging"
    ]
    assert finding(result, "VM-11", "opt-prof-trap")["enabled"] == [
        "pciPassthru0.cfg.enable_profiling"
    ]
    assert finding(result, "VM-11", "opt-true-trap")["not_proven"] == (
        "pciPassthru0.cfg.enable_uvm = 'TRUE': NVIDIA documents 1 (enabled) and 0 (disabled) only"
    )
