"""GPU-06 and GPU-07 (rules/devices.py): exact messages and the MMIO sizing rule, by hand.

A large-BAR GPU in passthrough needs the next power of two above its BAR1 (the A100
80GB's product brief: 128 GB, so 256; the H200 SXM: none published), the GPUs of one VM
added up and the total aligned to a power of two.
"""

from __future__ import annotations

import pytest

from gpuaudit.inventory import HOST_AGENT, GpuAttachment
from gpuaudit.rules import devices
from gpuaudit.rules.registry import Outcome
from gpuaudit.rules.scopes import HostGpu
from tests.support.builders import context, healthy
from tests.test_rules_devices import a100_vm, judge


@pytest.mark.parametrize(
    ("gigabytes", "size"),
    [(0, 1), (1, 1), (2, 2), (3, 4), (4, 4), (80, 128), (128, 128), (160, 256)],
)
def test_the_power_of_two_at_least(gigabytes: int, size: int) -> None:
    assert devices.power_of_two_at_least(gigabytes) == size


A100_80GB = {"gpu": "NVIDIA A100 PCIe 80GB", "mmio_gb": 256, "basis": "BAR1 131072 MB"}


def test_gpu06_passing_message() -> None:
    e, vm = a100_vm()
    assert judge(devices.large_bar, e.inv, vm) == Outcome(
        True,
        "EFI with 64-bit MMIO of 512 GB for the 512 GB its GPUs need",
        {
            "gpus": ["NVIDIA A100 PCIe 80GB", "NVIDIA A100 PCIe 80GB"],
            "needs": [A100_80GB, A100_80GB],
            "needed_mmio_gb": 512,
            "vm_memory_mb": 16384,
            "firmware": "efi",
            "use64bitMMIO": "TRUE",
            "mmio_size_gb": "512",
        },
    )


def test_gpu06_every_problem_in_one_message() -> None:
    e, vm = a100_vm(firmware="", mmio={"pciPassthru.use64bitMMIO": "yes"})
    outcome = judge(devices.large_bar, e.inv, vm)
    assert outcome.message == (
        "2 GPU device(s) needing 64-bit MMIO: firmware is unknown, not EFI; "
        "pciPassthru.use64bitMMIO is not TRUE; pciPassthru.64bitMMIOSizeGB is not set (needs 512)"
    )
    assert outcome.evidence["mmio_size_gb"] is None


def test_gpu06_a_window_one_size_short() -> None:
    mmio = {"pciPassthru.use64bitMMIO": " true ", "pciPassthru.64bitMMIOSizeGB": " 511 "}
    e, vm = a100_vm(firmware="bios", mmio=mmio)
    outcome = judge(devices.large_bar, e.inv, vm)
    assert outcome.message == (
        "2 GPU device(s) needing 64-bit MMIO: firmware is bios, not EFI; "
        "pciPassthru.64bitMMIOSizeGB is 511, below the 512 its GPUs need"
    )


def test_gpu06_a_device_of_no_id_is_passed_over_and_a_c_series_by_name_needs_64() -> None:
    e, vm = a100_vm()
    vm.gpus[1].device_id = None  # a passthrough device whose id the host did not give
    vm.gpus.append(GpuAttachment("vgpu", profile="grid_zz9-8c"))  # C series, by its name
    outcome = judge(devices.large_bar, e.inv, vm)
    # 256 for the A100 and 64 for a C-series vGPU in a VM below 32 GB: 320, aligned to 512.
    assert outcome.evidence["needs"] == [
        A100_80GB,
        {"gpu": "NVIDIA A100 PCIe 80GB", "mmio_gb": 64, "basis": "a C-series vGPU (NVIDIA: 64 GB)"},
    ]
    assert outcome.message == "EFI with 64-bit MMIO of 512 GB for the 512 GB its GPUs need"


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


def test_gpu06_eight_a100_gpus_add_up_to_2048_gb() -> None:
    # An HGX A100 board given whole to one VM: eight A100 SXM4 80GB, BAR1 128 GB each.
    e, vm = a100_vm(
        mmio={"pciPassthru.use64bitMMIO": "TRUE", "pciPassthru.64bitMMIOSizeGB": "2048"}
    )
    vm.gpus = [
        GpuAttachment(
            "passthrough", pci_id=f"0000:{i:02x}:00.0", vendor_id=0x10DE, device_id=0x20B2
        )
        for i in range(8)
    ]
    need = {"gpu": "NVIDIA A100 HGX 80GB (A100 SXM4 80GB)", "mmio_gb": 256}
    assert devices.large_bar(context(e.inv), vm) == Outcome(
        True,
        "EFI with 64-bit MMIO of 2048 GB for the 2048 GB its GPUs need",
        {
            "gpus": [need["gpu"]] * 8,
            "needs": [need | {"basis": "BAR1 131072 MB"}] * 8,
            "needed_mmio_gb": 2048,
            "vm_memory_mb": 16384,
            "firmware": "efi",
            "use64bitMMIO": "TRUE",
            "mmio_size_gb": "2048",
        },
    )


def test_gpu06_passthrough_of_a_small_gpu_is_not_examined_and_of_an_unknown_not_proven() -> None:
    e, vm = a100_vm()
    # An L4: NVIDIA does not list it among the GPUs needing large MMIO space in passthrough.
    vm.gpus = [
        GpuAttachment("passthrough", pci_id="0000:3b:00.0", vendor_id=0x10DE, device_id=0x27B8)
    ]
    assert devices.large_bar(context(e.inv), vm) is None
    # A device the catalogue does not know: whether it needs 64-bit MMIO is not known.
    vm.gpus = [
        GpuAttachment("passthrough", pci_id="0000:af:00.0", vendor_id=0x10DE, device_id=0x0001)
    ]
    vm.mmio_options = {}
    outcome = devices.large_bar(context(e.inv), vm)
    assert outcome is not None and (outcome.passed, outcome.unproven) == (
        True,
        "an unknown board: no published BAR figure for an unknown board",
    )


SRIOV_STATES = [
    (None, None, None, "the host reports no SR-IOV for it: off in the BIOS?"),
    (True, False, False, "SR-IOV is not enabled: vGPU VMs cannot start on it"),
    (True, True, False, "SR-IOV is enabled but not active: host reboot pending"),
]


@pytest.mark.parametrize(("capable", "enabled", "active", "message"), SRIOV_STATES)
def test_gpu07_each_failing_state_with_its_whole_verdict(
    capable: bool | None, enabled: bool | None, active: bool | None, message: str
) -> None:
    e = healthy()
    host = e.inv.hosts[0]
    g = host.gpus[0]
    g.sriov_capable, g.sriov_enabled, g.sriov_active = capable, enabled, active
    assert devices.sriov(context(e.inv), HostGpu(host, g)) == Outcome(
        False,
        message,
        {
            "model": "NVIDIA L4",
            "sriov_capable": capable,
            "sriov_enabled": enabled,
            "sriov_active": active,
            "virtual_functions": 16,
        },
    )


def test_vm08_passes_on_the_clusters_evc_mode_with_the_whole_verdict() -> None:
    e = healthy()  # h1..h3: intel-sapphirerapids at most
    e.inv.clusters[0].evc_mode = "intel-cascadelake"
    vm = e.inv.vms[0]  # powered on before EVC: no minimum mode read
    assert devices.evc_mode(context(e.inv), vm) == Outcome(
        True,
        "every host of the cluster can run it (cluster EVC mode intel-cascadelake)",
        {
            "cluster_evc_mode": "intel-cascadelake",
            "vm_min_evc_mode": None,
            "hosts_below_vm_mode": [],
            "hosts_per_max_evc_mode": {"intel-sapphirerapids": 3},
        },
    )
    e.inv.clusters[0].evc_mode = None
    assert devices.evc_mode(context(e.inv), vm) == Outcome(
        True,
        "every host of the cluster can run it (no EVC, hosts alike)",
        {
            "cluster_evc_mode": None,
            "vm_min_evc_mode": None,
            "hosts_below_vm_mode": [],
            "hosts_per_max_evc_mode": {"intel-sapphirerapids": 3},
        },
    )


def test_vm08_fails_with_both_problems_in_its_whole_verdict() -> None:
    e = healthy()
    e.inv.hosts[2].max_evc_mode = "intel-cascadelake"
    vm = e.inv.vms[0]  # on h1
    vm.min_evc_mode = "intel-icelake"
    assert devices.evc_mode(context(e.inv), vm) == Outcome(
        False,
        "it needs EVC mode intel-icelake, above what h3 offers; the cluster has no EVC mode "
        "and its hosts' CPUs differ (intel-cascadelake, intel-sapphirerapids)",
        {
            "cluster_evc_mode": None,
            "vm_min_evc_mode": "intel-icelake",
            "hosts_below_vm_mode": ["h3"],
            "hosts_per_max_evc_mode": {"intel-cascadelake": 1, "intel-sapphirerapids": 2},
        },
    )


def test_vm08_needs_a_cluster_in_vcenter() -> None:
    e = healthy()
    e.inv.hosts[2].max_evc_mode = "intel-cascadelake"  # a cluster VM-08 would fail
    e.inv.vcenter.api_type = HOST_AGENT  # the server is one ESXi host
    assert devices.evc_mode(context(e.inv), e.inv.vms[0]) is None
    e.inv.vcenter.api_type = "VirtualCenter"
    assert devices.evc_mode(context(e.inv), e.inv.vms[0]) is not None
    # A VM on a host outside any cluster: none is judged, whatever the clusters are called.
    standalone = e.host("s1", None)
    e.gpu(standalone)
    e.datastore("local-s1", [standalone], transport="local")
    alone = e.vm("s1-vm", standalone, ["local-s1"], vgpu="grid_l4-8q")
    alone.min_evc_mode = "intel-icelake"
    xxxx = e.cluster("XXXX")
    e.host("x1", "XXXX").max_evc_mode = "intel-cascadelake"
    assert xxxx.evc_mode is None
    assert devices.evc_mode(context(e.inv), alone) is None
