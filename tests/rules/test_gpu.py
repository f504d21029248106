"""GPU-01 to GPU-05 (rules/gpu.py): exact messages, evidence and boundaries, by hand.

healthy() gives h1 one L4 (PCI 0000:3b:00.0, device 10de:27b8) in Shared Direct mode
with the grid_l4-8q VM v1 on it.
"""

from __future__ import annotations

from gpuaudit.inventory import GpuAttachment
from gpuaudit.rules import gpu
from gpuaudit.rules.registry import Outcome
from gpuaudit.rules.scopes import HostGpu
from tests.support.builders import Estate, context, healthy


def _h1_with_two_gpus() -> Estate:
    """h1 with a second, idle L4 (0000:af:00.0) beside the one v1 uses."""
    e = healthy()
    e.gpu(e.inv.hosts[0], pci_id="0000:af:00.0")
    return e


def _gpu01(e: Estate) -> Outcome:
    outcome = gpu.shared_direct(context(e.inv), e.inv.hosts[0])
    assert outcome is not None
    return outcome


def test_gpu01_passing_message_and_evidence() -> None:
    e = _h1_with_two_gpus()
    e.inv.hosts[0].default_graphics_type = "sharedDirect"
    e.inv.hosts[0].gpus[1].configured_graphics_type = "shared"
    assert _gpu01(e) == Outcome(
        True,
        "vGPU GPUs are in Shared Direct mode",
        {
            "default_graphics_type": "sharedDirect",
            "graphics_types": {
                "h1/0000:3b:00.0": "sharedDirect",
                "h1/0000:af:00.0": "sharedDirect",
            },
            "configured_graphics_types": {"h1/0000:3b:00.0": None, "h1/0000:af:00.0": "shared"},
        },
    )


def test_gpu01_every_problem_in_one_message() -> None:
    e = healthy()
    host = e.inv.hosts[0]
    host.default_graphics_type = "shared"
    host.gpus[0].graphics_type = "shared"
    outcome = _gpu01(e)
    assert (outcome.passed, outcome.severity) == (False, None)
    assert outcome.message == (
        "vGPU VMs run on h1/0000:3b:00.0, not in Shared Direct mode; "
        "no graphics type of its own on h1/0000:3b:00.0 (in use by vGPU VMs): the host "
        "default, Shared (vSGA), applies at the next reboot; "
        "no GPU of the host is in Shared Direct mode"
    )


def test_gpu01_a_shared_default_beside_another_problem_is_named_too() -> None:
    e = _h1_with_two_gpus()
    host = e.inv.hosts[0]
    host.default_graphics_type = "shared"
    host.gpus[0].configured_graphics_type = "shared"
    outcome = _gpu01(e)
    assert (outcome.passed, outcome.severity) == (False, None)
    assert outcome.message == (
        "h1/0000:3b:00.0 in use by vGPU VMs set to Shared (vSGA); "
        "the host default graphics type is Shared (vSGA)"
    )


def test_gpu01_only_a_shared_default_is_medium() -> None:
    e = _h1_with_two_gpus()
    host = e.inv.hosts[0]
    host.default_graphics_type = "shared"
    host.gpus[0].configured_graphics_type = "sharedDirect"
    outcome = _gpu01(e)
    assert (outcome.passed, outcome.severity) == (False, "medium")
    assert outcome.message == (
        "the host default graphics type is Shared (vSGA), but every GPU in use by vGPU VMs "
        "is set to Shared Direct: only a GPU without its own setting falls back to vSGA"
    )


def test_gpu03_memory_reserved_to_the_last_megabyte() -> None:
    e = healthy()
    vm = e.inv.vms[0]
    vm.memory_mb, vm.memory_reservation_mb, vm.memory_locked_to_max = 16384, 16384, False
    assert gpu.memory_reserved(context(e.inv), vm) == Outcome(
        True,
        "all guest memory is reserved",
        {"memory_mb": 16384, "reservation_mb": 16384, "locked_to_max": False},
    )
    vm.memory_reservation_mb = 16383
    assert gpu.memory_reserved(context(e.inv), vm) == Outcome(
        False,
        "16383 of 16384 MB reserved: it fails to power on",
        {"memory_mb": 16384, "reservation_mb": 16383, "locked_to_max": False},
    )
    vm.memory_locked_to_max = True
    assert gpu.memory_reserved(context(e.inv), vm).passed


def test_gpu04_messages() -> None:
    e = _h1_with_two_gpus()
    host = e.inv.hosts[0]
    used, idle = host.gpus
    used.vms = ["v9", "v1", "v1"]
    assert gpu.idle_gpu(context(e.inv), HostGpu(host, used)) == Outcome(
        True, "in use (v1, v9)", {"mode": "vGPU", "vms": ["v1", "v9"]}
    )
    assert gpu.idle_gpu(context(e.inv), HostGpu(host, idle)) == Outcome(
        False,
        "enabled for vGPU but no VM uses it: idle or buffer capacity",
        {"mode": "vGPU", "vms": []},
    )
    idle.graphics_type = "basic"
    assert gpu.idle_gpu(context(e.inv), HostGpu(host, idle)) is None


def test_gpu04_a_passthrough_gpu_bound_to_a_powered_off_vm_is_in_use() -> None:
    e = Estate()
    e.cluster("pt")
    h = e.host("p1", "pt", profiles=(), fc=0)
    g = e.gpu(h, mode="passthrough")
    spare = e.gpu(h, pci_id="0000:af:00.0", mode="passthrough")
    e.datastore("local", [h])
    vm = e.vm("pv1", h, ["local"], passthrough=g)
    g.vms.clear()
    assert vm.gpus[0].pci_id == "0000:3b:00.0"
    assert gpu.idle_gpu(context(e.inv), HostGpu(h, g)) == Outcome(
        True, "in use (bound to a powered-off VM)", {"mode": "passthrough", "vms": []}
    )
    vm.gpus.append(GpuAttachment("vgpu", profile="grid_l4-8q"))
    outcome = gpu.idle_gpu(context(e.inv), HostGpu(h, spare))
    assert outcome is not None
    assert outcome.message == "enabled for passthrough but no VM uses it: idle or buffer capacity"


def test_gpu05_messages() -> None:
    e = healthy()
    host = e.inv.hosts[0]
    known = host.gpus[0]
    assert gpu.unknown_model(context(e.inv), HostGpu(host, known)) == Outcome(
        True,
        "NVIDIA L4 (10de:27b8)",
        {"ids": "10de:27b8", "device_name": "NVIDIA L4", "memory_mb": 24576},
    )
    known.known_model, known.device_id, known.device_name = False, 0x0ABC, ""
    outcome = gpu.unknown_model(context(e.inv), HostGpu(host, known))
    assert (outcome.passed, outcome.message) == (False, "unknown GPU 10de:0abc (no name)")
    known.device_name = "Mystery"
    outcome = gpu.unknown_model(context(e.inv), HostGpu(host, known))
    assert outcome.message == "unknown GPU 10de:0abc (Mystery)"


def _h1_with_two_gpus_in_use() -> Estate:
    """h1 with v1 on its first L4 and v4 on a second one (0000:af:00.0)."""
    e = _h1_with_two_gpus()
    h1 = e.inv.hosts[0]
    e.vm("v4", h1, ["san1"], vgpu="grid_l4-8q", gpu=h1.gpus[1])
    return e


def test_gpu01_names_every_gpu_in_use_that_is_not_ready() -> None:
    e = _h1_with_two_gpus_in_use()
    host = e.inv.hosts[0]
    host.default_graphics_type = "shared"
    for g in host.gpus:
        g.graphics_type = "shared"
    assert _gpu01(e).message == (
        "vGPU VMs run on h1/0000:3b:00.0, h1/0000:af:00.0, not in Shared Direct mode; "
        "no graphics type of its own on h1/0000:3b:00.0, h1/0000:af:00.0 (in use by vGPU "
        "VMs): the host default, Shared (vSGA), applies at the next reboot; "
        "no GPU of the host is in Shared Direct mode"
    )


def test_gpu01_names_every_gpu_in_use_set_to_shared() -> None:
    e = _h1_with_two_gpus_in_use()
    for g in e.inv.hosts[0].gpus:
        g.configured_graphics_type = "shared"
    assert _gpu01(e).message == (
        "h1/0000:3b:00.0, h1/0000:af:00.0 in use by vGPU VMs set to Shared (vSGA)"
    )


def test_gpu02_messages_and_evidence() -> None:
    e = healthy()
    host = e.inv.hosts[0]
    g = e.gpu(host, pci_id="0000:af:00.0", mode="passthrough")
    assert gpu.passthrough_pending(context(e.inv), HostGpu(host, g)) == Outcome(
        True, "passthrough is active", {"enabled": True, "active": True}
    )
    g.passthrough_active = False
    assert gpu.passthrough_pending(context(e.inv), HostGpu(host, g)) == Outcome(
        False,
        "passthrough is enabled but not active: a host reboot is pending, or passthrough "
        "failed to claim the device",
        {"enabled": True, "active": False},
    )
