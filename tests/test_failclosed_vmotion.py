"""The fail-closed vMotion traps of tests/scenarios/failclosed-vmotion.yaml, judged on the
recorded lab session (cassettes/failclosed-vmotion.yaml): each trap fails or is not
proven, and its clean twin, which differs from it only in the trap, passes.

Expected verdicts are written out by hand from what NVIDIA publishes:

- NVIDIA, Virtual GPU Software User Guide 17: setting pciPassthru<vgpu-id>.cfg.enable_uvm,
  .enable_debugging or .enable_profiling "to 1" enables unified memory, CUDA debuggers or
  profilers, and a VM with them enabled cannot be migrated (6.5.1, 6.5.2.3; NVIDIA AI
  Enterprise: "migration is disabled").
"""

from __future__ import annotations

import pytest

from gpuaudit import scan
from gpuaudit.check import run_checks
from gpuaudit.inventory import Inventory
from gpuaudit.results import AuditResult
from tests.conftest import CASSETTES

CASSETTE = CASSETTES / "failclosed-vmotion.yaml"


@pytest.fixture(scope="module")
def recorded() -> Inventory:
    return scan.obtain_inventory(scan.Replay(CASSETTE))


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


def test_vm11_refuses_the_vms_whose_options_disable_migration(result: AuditResult) -> None:
    assert statuses(result, "VM-11") == {
        "opt-uvm-trap": "fail",
        "opt-debug-trap": "fail",
        "opt-prof-trap": "fail",
        "opt-true-trap": "unproven",
        "opt-off-twin": "pass",
        "opt-twin": "pass",
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
