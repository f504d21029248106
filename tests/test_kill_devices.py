"""GPU-06 and GPU-07 (rules/devices.py): exact messages and the MMIO sizing rule, by hand.

VMware's rule of thumb: pciPassthru.64bitMMIOSizeGB is the next power of two above the
GPUs' memory added up (two 40 GB GPUs need 128). The A100 80GB has 80 GB.
"""

from __future__ import annotations

import pytest

from gpuaudit.inventory import GpuAttachment
from gpuaudit.rules import devices
from gpuaudit.rules.scopes import HostGpu
from tests.builders import context, healthy
from tests.test_rules_devices import a100_vm, judge


@pytest.mark.parametrize(
    ("gigabytes", "size"),
    [(0, 1), (1, 2), (2, 4), (3, 4), (4, 8), (80, 128), (128, 256), (160, 256)],
)
def test_the_next_power_of_two_strictly_above(gigabytes: int, size: int) -> None:
    assert devices.next_power_of_two_above(gigabytes) == size


def test_gpu06_passing_message() -> None:
    e, vm = a100_vm()
    outcome = judge(devices.large_bar, e.inv, vm)
    assert outcome.message == "EFI with 64-bit MMIO of 256 GB for 160 GB of GPU memory"
    assert outcome.evidence == {
        "gpus": ["NVIDIA A100 PCIe 80GB", "NVIDIA A100 PCIe 80GB"],
        "gpu_memory_gb": 160,
        "needed_mmio_gb": 256,
        "firmware": "efi",
        "use64bitMMIO": "TRUE",
        "mmio_size_gb": "256",
    }


def test_gpu06_every_problem_in_one_message() -> None:
    e, vm = a100_vm(firmware="", mmio={"pciPassthru.use64bitMMIO": "yes"})
    outcome = judge(devices.large_bar, e.inv, vm)
    assert outcome.message == (
        "2 large-BAR GPU(s), 160 GB: firmware is unknown, not EFI; "
        "pciPassthru.use64bitMMIO is not TRUE; pciPassthru.64bitMMIOSizeGB is not set (needs 256)"
    )
    assert outcome.evidence["mmio_size_gb"] is None


def test_gpu06_a_window_one_size_short() -> None:
    mmio = {"pciPassthru.use64bitMMIO": " true ", "pciPassthru.64bitMMIOSizeGB": " 255 "}
    e, vm = a100_vm(firmware="bios", mmio=mmio)
    outcome = judge(devices.large_bar, e.inv, vm)
    assert outcome.message == (
        "2 large-BAR GPU(s), 160 GB: firmware is bios, not EFI; "
        "pciPassthru.64bitMMIOSizeGB is 255, below the 256 its GPUs need"
    )


def test_gpu06_counts_only_devices_it_knows_for_large_bar_gpus() -> None:
    e, vm = a100_vm()
    vm.gpus[1].device_id = None  # a passthrough device whose id the host did not give
    vm.gpus.append(GpuAttachment("vgpu", profile="grid_l4-8c"))  # the L4 has no large BAR
    vm.gpus.append(GpuAttachment("vgpu", profile="grid_zz9-8c"))  # a GPU nobody knows
    outcome = judge(devices.large_bar, e.inv, vm)
    assert outcome.message == "EFI with 64-bit MMIO of 256 GB for 80 GB of GPU memory"
    assert outcome.evidence["gpus"] == ["NVIDIA A100 PCIe 80GB"]
    assert outcome.evidence["needed_mmio_gb"] == 128


def test_gpu07_messages() -> None:
    e = healthy()
    host = e.inv.hosts[0]
    g = host.gpus[0]
    g.sriov_vfs = 32
    outcome = devices.sriov(context(e.inv), HostGpu(host, g))
    assert outcome is not None
    assert (outcome.passed, outcome.message) == (True, "SR-IOV active with 32 virtual functions")
    assert outcome.evidence == {
        "model": "NVIDIA L4",
        "sriov_capable": True,
        "sriov_enabled": True,
        "sriov_active": True,
        "virtual_functions": 32,
    }
    g.sriov_active = False
    outcome = devices.sriov(context(e.inv), HostGpu(host, g))
    assert outcome is not None
    assert outcome.message == "SR-IOV is enabled but not active: host reboot pending"
    g.sriov_enabled = False
    outcome = devices.sriov(context(e.inv), HostGpu(host, g))
    assert outcome is not None
    assert outcome.message == "SR-IOV is not enabled: vGPU VMs cannot start on it"
    g.sriov_capable = None
    outcome = devices.sriov(context(e.inv), HostGpu(host, g))
    assert outcome is not None and not outcome.passed
    assert outcome.message == "the host reports no SR-IOV for it: off in the BIOS?"
