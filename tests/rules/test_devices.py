"""GPU-06, GPU-07 and VM-08 as one rule on one object, and the data they rest on.

The expectations follow docs/rules.md and the figures written out below: a C-series vGPU
needs EFI, use64bitMMIO and a 64-bit MMIO window of 64 GB, and in a VM of 32 GB or more
the GPU's figure in NVIDIA's table (AI Enterprise, "GPUs Requiring 64 GB or More of
MMIO Space": A100 80GB 256 GB, A40 128 GB, H100 256 GB); a large-BAR GPU in passthrough
needs the next power of two above its BAR1 (the A100 80GB's product brief: 128 GB, so
256), the GPUs of one VM added up; an Ampere or
later GPU in vGPU mode needs SR-IOV enabled and active; a vGPU VM needs an EVC baseline
every other active host of its cluster offers, and a cluster without EVC needs hosts of
one CPU baseline. The estates come from tests/support/builders.py.

Then GPU-06's and GPU-07's exact messages and the MMIO sizing rule
(rules/devices.py), by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import TypeVar

import pytest

from gpuaudit.inventory import HOST_AGENT, GpuAttachment, Inventory, Vm
from gpuaudit.knowledge import catalog, evc
from gpuaudit.rules import devices
from gpuaudit.rules.registry import Context, Outcome
from gpuaudit.rules.scopes import HostGpu
from gpuaudit.vsphere.collect.vms import mmio_options
from tests.support.builders import Estate, context, healthy, passthrough_estate

T = TypeVar("T")

GOOD_MMIO = {"pciPassthru.use64bitMMIO": "TRUE", "pciPassthru.64bitMMIOSizeGB": "512"}


def judge(check: Callable[[Context, T], Outcome | None], inv: Inventory, obj: T) -> Outcome:
    outcome = check(context(inv), obj)
    assert outcome is not None, "the rule does not apply to the object"
    return outcome


def a100_vm(firmware: str = "efi", mmio: dict[str, str] | None = None) -> tuple[Estate, Vm]:
    """A VM with two A100 80GB GPUs in passthrough: BAR1 128 GB each, so 256 GB each and a
    512 GB window."""
    e = Estate()
    e.cluster("c1")
    h = e.host("h1", "c1", profiles=())
    g1 = e.gpu(h, "0000:3b:00.0", model="a100", mode="passthrough")
    g2 = e.gpu(h, "0000:af:00.0", model="a100", mode="passthrough")
    e.datastore("san1", [h])
    vm = e.vm("big", h, ["san1"], passthrough=g1)
    vm.gpus += e.vm("other", h, ["san1"], passthrough=g2).gpus
    e.inv.vms.remove(next(v for v in e.inv.vms if v.name == "other"))
    vm.firmware = firmware
    vm.mmio_options = dict(GOOD_MMIO if mmio is None else mmio)
    return e, vm


# --- GPU-06 ---------------------------------------------------------------------------


def test_gpu06_passes_efi_with_a_window_for_both_gpus_bars() -> None:
    e, vm = a100_vm()
    outcome = judge(devices.large_bar, e.inv, vm)
    assert outcome.passed
    assert outcome.evidence["needed_mmio_gb"] == 2 * 256


def test_gpu06_fails_bios_firmware() -> None:
    e, vm = a100_vm(firmware="bios")
    outcome = judge(devices.large_bar, e.inv, vm)
    assert not outcome.passed
    assert "not EFI" in outcome.message


def test_gpu06_fails_without_use64bitmmio() -> None:
    e, vm = a100_vm(mmio={"pciPassthru.64bitMMIOSizeGB": "512"})
    outcome = judge(devices.large_bar, e.inv, vm)
    assert not outcome.passed
    assert "use64bitMMIO is not TRUE" in outcome.message


def test_gpu06_fails_the_window_frame_buffer_arithmetic_gives() -> None:
    # 160 GB of frame buffer: the power of two above it, 256, is half what the BARs need.
    e, vm = a100_vm(mmio={**GOOD_MMIO, "pciPassthru.64bitMMIOSizeGB": "256"})
    outcome = judge(devices.large_bar, e.inv, vm)
    assert not outcome.passed
    assert "is 256, below the 512" in outcome.message


def test_gpu06_fails_an_unset_window() -> None:
    e, vm = a100_vm(mmio={"pciPassthru.use64bitMMIO": "TRUE"})
    outcome = judge(devices.large_bar, e.inv, vm)
    assert not outcome.passed
    assert "not set (needs 512)" in outcome.message


def c_series_vm(memory_mb: int, mmio_gb: str) -> tuple[Estate, Vm]:
    e = Estate()
    e.cluster("c1")
    h = e.host("h1", "c1", profiles=("grid_a100d-40c",))
    e.gpu(h, model="a100")
    e.datastore("san1", [h])
    vm = e.vm("c-vm", h, ["san1"], vgpu="grid_a100d-40c")
    vm.memory_mb = memory_mb
    vm.mmio_options = {"pciPassthru.use64bitMMIO": "TRUE", "pciPassthru.64bitMMIOSizeGB": mmio_gb}
    return e, vm


def test_gpu06_a_c_series_vgpu_needs_64_gb_and_nvidias_figure_in_a_large_memory_vm() -> None:
    # Below 32 GB of VM memory: 64 GB (NVIDIA: "The VM's MMIO space must be increased to
    # 64 GB"). From 32 GB: the A100 80GB's 256 GB (NVIDIA's table).
    e, vm = c_series_vm(16 * 1024, "64")
    assert judge(devices.large_bar, e.inv, vm).passed
    e, vm = c_series_vm(32 * 1024, "64")
    outcome = judge(devices.large_bar, e.inv, vm)
    assert not outcome.passed and "is 64, below the 256" in outcome.message
    e, vm = c_series_vm(32 * 1024, "256")
    assert judge(devices.large_bar, e.inv, vm).passed
    vm.mmio_options = {}
    assert not judge(devices.large_bar, e.inv, vm).passed


def test_gpu06_a_c_series_vgpu_of_any_board_needs_64_bit_mmio() -> None:
    # The L4 is no large-BAR GPU in passthrough, but a C-series vGPU on it needs EFI and
    # 64-bit MMIO as every C-series vGPU does.
    e = Estate()
    e.cluster("c1")
    h = e.host("h1", "c1", profiles=("grid_l4-8c",))
    e.gpu(h)
    e.datastore("san1", [h])
    vm = e.vm("c-vm", h, ["san1"], vgpu="grid_l4-8c")
    outcome = judge(devices.large_bar, e.inv, vm)
    assert not outcome.passed and "use64bitMMIO is not TRUE" in outcome.message


def test_gpu06_ignores_small_gpus_and_q_series_vgpus() -> None:
    e = healthy()  # L4 vGPUs, Q series
    assert all(devices.large_bar(context(e.inv), vm) is None for vm in e.inv.vms)
    e = Estate()
    e.cluster("c1")
    h = e.host("h1", "c1", profiles=("grid_l40s-24q",))
    e.gpu(h, model="l40s")
    e.datastore("san1", [h])
    vm = e.vm("q-vm", h, ["san1"], vgpu="grid_l40s-24q")
    assert devices.large_bar(context(e.inv), vm) is None


def test_gpu06_takes_the_largest_board_a_dynamic_device_allows() -> None:
    e = Estate()
    e.cluster("c1")
    h = e.host("h1", "c1", profiles=())
    g = e.gpu(h, model="l40s", mode="passthrough")
    e.datastore("san1", [h])
    vm = e.vm("dyn", h, ["san1"], dynamic=g)
    vm.gpus[0].allowed.append((catalog.NVIDIA, 0x20B5))  # A100 80GB
    vm.mmio_options = {"pciPassthru.use64bitMMIO": "TRUE", "pciPassthru.64bitMMIOSizeGB": "128"}
    outcome = judge(devices.large_bar, e.inv, vm)
    # An L40S (BAR1 64 GB: 128) or an A100 80GB (BAR1 128 GB: 256) may be assigned.
    assert not outcome.passed
    assert outcome.evidence["needed_mmio_gb"] == 256


def test_gpu06_a_gpu_of_no_published_bar_is_not_proven() -> None:
    # The H200 NVL: NVIDIA lists it as a large-BAR GPU, but gpuaudit has no BAR1 figure.
    e, vm = a100_vm(mmio={**GOOD_MMIO, "pciPassthru.64bitMMIOSizeGB": "4096"})
    vm.gpus = [
        GpuAttachment("passthrough", pci_id="0000:3b:00.0", vendor_id=0x10DE, device_id=0x233B)
    ]
    outcome = judge(devices.large_bar, e.inv, vm)
    assert (outcome.passed, outcome.unproven) == (
        True,
        "NVIDIA H200 PCIe 141GB (H200 NVL): no published BAR1 size for NVIDIA H200 PCIe 141GB "
        "(H200 NVL)",
    )


@pytest.mark.parametrize(("gigabytes", "window"), [(1, 1), (3, 4), (32, 32), (40, 64), (80, 128)])
def test_power_of_two_at_least(gigabytes: int, window: int) -> None:
    assert devices.power_of_two_at_least(gigabytes) == window


# --- GPU-07 ---------------------------------------------------------------------------


def l4_gpu() -> tuple[Estate, HostGpu]:
    e = healthy()
    host = e.inv.hosts[0]
    return e, HostGpu(host, host.gpus[0])


def test_gpu07_passes_active_sriov() -> None:
    e, item = l4_gpu()
    assert judge(devices.sriov, e.inv, item).passed


def test_gpu07_fails_when_the_host_reports_no_sriov() -> None:
    e, item = l4_gpu()
    gpu = item.gpu
    gpu.sriov_capable = gpu.sriov_enabled = gpu.sriov_active = gpu.sriov_vfs = None
    outcome = judge(devices.sriov, e.inv, item)
    assert not outcome.passed
    assert "no SR-IOV" in outcome.message


def test_gpu07_fails_sriov_disabled() -> None:
    e, item = l4_gpu()
    item.gpu.sriov_enabled = item.gpu.sriov_active = False
    assert not judge(devices.sriov, e.inv, item).passed


def test_gpu07_fails_sriov_enabled_but_not_active() -> None:
    e, item = l4_gpu()
    item.gpu.sriov_active = False
    outcome = judge(devices.sriov, e.inv, item)
    assert not outcome.passed
    assert "reboot pending" in outcome.message


def test_gpu07_ignores_turing_and_gpus_not_in_vgpu_mode() -> None:
    e = Estate()
    e.cluster("c1")
    h = e.host("h1", "c1")
    t4 = e.gpu(h, "0000:3b:00.0", model="t4")
    passthrough = e.gpu(h, "0000:af:00.0", model="l4", mode="passthrough")
    assert devices.sriov(context(e.inv), HostGpu(h, t4)) is None
    assert devices.sriov(context(e.inv), HostGpu(h, passthrough)) is None


# --- VM-08 ----------------------------------------------------------------------------


def test_vm08_passes_when_every_host_offers_the_vms_baseline() -> None:
    e = healthy()
    vm = e.inv.vms[0]
    vm.min_evc_mode = "intel-icelake"
    assert judge(devices.evc_mode, e.inv, vm).passed


def test_vm08_fails_a_vm_needing_more_than_another_host_offers() -> None:
    e = healthy()
    e.inv.clusters[0].evc_mode = "intel-cascadelake"
    e.inv.hosts[2].max_evc_mode = "intel-cascadelake"
    vm = e.inv.vms[0]  # on h1
    vm.min_evc_mode = "intel-sapphirerapids"
    outcome = judge(devices.evc_mode, e.inv, vm)
    assert not outcome.passed
    assert "above what h3 offers" in outcome.message
    # The blocking host by name; the cluster as hosts per mode (h1, h2 sapphirerapids).
    assert outcome.evidence == {
        "cluster_evc_mode": "intel-cascadelake",
        "vm_min_evc_mode": "intel-sapphirerapids",
        "hosts_below_vm_mode": ["h3"],
        "hosts_per_max_evc_mode": {"intel-cascadelake": 1, "intel-sapphirerapids": 2},
    }


def test_vm08_names_at_most_three_blocking_hosts() -> None:
    e = healthy()
    e.inv.clusters[0].evc_mode = "intel-cascadelake"
    for i in (4, 5, 6):
        e.gpu(e.host(f"h{i}", "c1"))
    for host in e.inv.hosts[1:]:
        host.max_evc_mode = "intel-cascadelake"
    vm = e.inv.vms[0]  # on h1
    vm.min_evc_mode = "intel-sapphirerapids"
    outcome = judge(devices.evc_mode, e.inv, vm)
    assert not outcome.passed
    assert outcome.message == (
        "it needs EVC mode intel-sapphirerapids, above what h2, h3, h4 and 2 more offer"
    )
    assert outcome.evidence["hosts_below_vm_mode"] == ["h2", "h3", "h4", "h5", "h6"]
    assert outcome.evidence["hosts_per_max_evc_mode"] == {
        "intel-cascadelake": 5,
        "intel-sapphirerapids": 1,
    }


def test_vm08_fails_a_cluster_without_evc_whose_hosts_differ() -> None:
    e = healthy()
    e.inv.hosts[2].max_evc_mode = "intel-icelake"
    vm = e.inv.vms[0]
    vm.min_evc_mode = "intel-icelake"  # fits every host today
    outcome = judge(devices.evc_mode, e.inv, vm)
    assert not outcome.passed
    assert "no EVC mode" in outcome.message


def test_vm08_leaves_out_hosts_in_maintenance_and_passthrough_vms() -> None:
    e = healthy()
    e.inv.hosts[2].max_evc_mode = "intel-icelake"
    e.inv.hosts[2].in_maintenance = True
    vm = e.inv.vms[0]
    vm.min_evc_mode = "intel-sapphirerapids"
    assert judge(devices.evc_mode, e.inv, vm).passed
    pt = passthrough_estate()
    assert devices.evc_mode(context(pt.inv), pt.inv.vms[0]) is None


@pytest.mark.parametrize(
    ("offered", "required", "covers"),
    [
        ("intel-sapphirerapids", "intel-icelake", True),
        ("intel-cascadelake", "intel-icelake", False),
        ("amd-zen4", "amd-zen2", True),
        ("amd-zen4", "intel-merom", False),
        ("intel-future", "intel-icelake", None),
        ("intel-future", "intel-future", True),
    ],
)
def test_evc_baselines_cover_older_ones_of_their_vendor(
    offered: str, required: str, covers: bool | None
) -> None:
    assert evc.covers(offered, required) is covers


# --- the collector's reading and the catalogue ------------------------------------------


def test_mmio_options_keeps_the_two_keys_whatever_their_case() -> None:
    options = [
        SimpleNamespace(key="pcipassthru.use64bitmmio", value="TRUE"),
        SimpleNamespace(key="pciPassthru.64bitMMIOSizeGB", value="128"),
        SimpleNamespace(key="guestinfo.other", value="x"),
    ]
    assert mmio_options(options) == {
        "pciPassthru.use64bitMMIO": "TRUE",
        "pciPassthru.64bitMMIOSizeGB": "128",
    }
    assert mmio_options(None) == {}


def test_catalogue_marks_large_bar_models_and_sriov_architectures() -> None:
    large = {m.name for m in catalog.MODELS.values() if m.large_bar}
    assert {"NVIDIA A100 PCIe 80GB", "NVIDIA H100 PCIe", "NVIDIA L40S", "NVIDIA A30"} <= large
    assert {"NVIDIA L4", "NVIDIA T4", "NVIDIA A16"}.isdisjoint(large)
    t4 = catalog.model_for(catalog.NVIDIA, 0x1EB8)
    l4 = catalog.model_for(catalog.NVIDIA, 0x27B8)
    assert t4 is not None and not catalog.vgpu_needs_sriov(t4)
    assert l4 is not None and catalog.vgpu_needs_sriov(l4)
    a100d = catalog.model_for_profile("a100d")
    assert a100d is not None and a100d.name == "NVIDIA A100 PCIe 80GB"


# --- exact messages and the MMIO sizing rule, by hand -------------------------------------


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
