"""Device rules: what a large-BAR GPU needs in its VM, SR-IOV for Ampere and later vGPUs,
and the CPU (EVC) baseline a vGPU VM needs to vMotion within its cluster."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from gpuaudit.inventory import GpuAttachment, Vm
from gpuaudit.knowledge import catalog, evc, vgpu_types
from gpuaudit.knowledge.vgpu_types import BoardFacts
from gpuaudit.model import facts as F
from gpuaudit.results import Reference
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.registry import Context, Outcome, name_few, not_proven, rule
from gpuaudit.rules.scopes import HostGpu

USE_64BIT_MMIO = "pciPassthru.use64bitMMIO"
MMIO_SIZE_GB = "pciPassthru.64bitMMIOSizeGB"

# Title and URL of the documents behind each rule.
REFERENCES: dict[str, list[Reference | tuple[str, str]]] = {
    "GPU-06": [
        (
            "VMware KB 2142307: VMDirectPath I/O, requirements for platforms and devices",
            "https://knowledge.broadcom.com/external/article?legacyId=2142307",
        ),
        (
            "VMware: Using GPUs with Virtual Machines on vSphere, Part 2: VMDirectPath I/O",
            "https://blogs.vmware.com/apps/2018/09/"
            "using-gpus-with-virtual-machines-on-vsphere-part-2-vmdirectpath-i-o.html",
        ),
        (
            "VMware Edge Compute Stack reference architecture: PCI passthrough of GPUs "
            "(EFI and 64-bit MMIO)",
            "https://docs.vmware.com/en/VMware-Edge-Compute-Stack/3.0/ecs-enterprise-edge-ref-arch/"
            "GUID-412AD9B3-6B9B-4BE0-B833-9205ACBCF956.html",
        ),
        sources.NVIDIA_VGPU_19_VSPHERE_NOTES,
        (
            "NVIDIA AI Enterprise: Requirements for Using NVIDIA vGPU (C-Series) on GPUs "
            "Requiring 64 GB or More of MMIO Space with Large-Memory VMs",
            "https://docs.nvidia.com/ai-enterprise/release-6/latest/appendix/vgpu.html",
        ),
    ],
    "GPU-07": [
        (
            "NVIDIA Virtual GPU Software User Guide: SR-IOV on GPUs based on the NVIDIA Ampere "
            "architecture and later",
            "https://docs.nvidia.com/vgpu/latest/grid-vgpu-user-guide/index.html",
        ),
        (
            "vSphere Web Services API: HostSriovInfo",
            "https://developer.broadcom.com/xapis/vsphere-web-services-api/8.0U3/"
            "vim.host.SriovInfo.html",
        ),
    ],
    "VM-08": [
        (
            "VMware KB 1003212: Enhanced vMotion Compatibility (EVC) processor support",
            "https://knowledge.broadcom.com/external/article?legacyId=1003212",
        ),
        (
            "vSphere 6.7: About Enhanced vMotion Compatibility (vCenter Server and Host "
            "Management)",
            "https://docs.vmware.com/en/VMware-vSphere/6.7/com.vmware.vsphere.vcenterhost.doc/"
            "GUID-9F444D9B-44A0-4967-8C07-693C6B40278A.html",
        ),
    ],
}


# NVIDIA AI Enterprise, "Requirements for Using NVIDIA vGPU (C-Series)": the VM's 64-bit
# MMIO space must be increased to 64 GB; on GPUs that need more, a VM of 32 GB or more of
# memory needs the amount NVIDIA's table gives for the GPU (the board's mmio_c_series_gb).
C_SERIES_MMIO_GB = 64
LARGE_MEMORY_VM_MB = 32 * 1024
# Below this BAR1 a GPU fits under the 4 GB a VM maps without 64-bit MMIO (NVIDIA's T4,
# 256 MB): nothing to check.
SMALL_BAR1_MB = 1024


def power_of_two_at_least(gigabytes: int) -> int:
    """The smallest power of two not below ``gigabytes``."""
    size = 1
    while size < gigabytes:
        size *= 2
    return size


@dataclass(frozen=True)
class MmioNeed:
    """What one GPU device of a VM needs of 64-bit MMIO, and from which figure."""

    gpu: str  # the board
    required: bool | None  # 64-bit MMIO needed at all; None: no published figure says
    gigabytes: int | None  # the window it needs; None: no published figure gives it
    basis: str  # the figure it follows, or why none does


Board = tuple[BoardFacts | None, catalog.GpuModel | None]


def _boards_of(ctx: Context, vm: Vm, att: GpuAttachment) -> list[Board]:
    """The boards a device may be on, with their catalogue model: the GPU it runs on for
    a vGPU, the bound or allowed devices for passthrough."""
    if att.kind == "vgpu":
        gpu = ctx.facts.gpu_of_vm(vm)
        return [(F.gpu_board(gpu), F.gpu_model(gpu))] if gpu is not None else [(None, None)]
    pairs: list[tuple[int, int]] = []
    if att.kind == "passthrough" and att.vendor_id is not None and att.device_id is not None:
        pairs = [(att.vendor_id, att.device_id)]
    elif att.kind == "dynamic":
        pairs = list(att.allowed)
    return [(vgpu_types.board_for(v, d), catalog.model_for(v, d)) for v, d in pairs]


def _need(vm: Vm, att: GpuAttachment, where: Board) -> MmioNeed | None:
    """What the device needs on its board; None when it needs no 64-bit MMIO."""
    board, model = where
    name = board.name if board is not None else model.name if model else "an unknown board"
    if att.kind == "vgpu":
        facts = board.type_for(att.profile or "") if board is not None else None
        series = facts.series if facts is not None else _series_by_name(att.profile)
        if series is not None and series != "C":
            return None  # Q, B and A types map a small aperture
        if series is None:
            return MmioNeed(name, None, None, f"the series of {att.profile} is not known")
        if vm.memory_mb < LARGE_MEMORY_VM_MB:
            return MmioNeed(name, True, C_SERIES_MMIO_GB, "a C-series vGPU (NVIDIA: 64 GB)")
        table = board.mmio_c_series_gb.value if board is not None else None
        if table is None:
            return MmioNeed(name, True, None, f"NVIDIA's MMIO table does not list {name}")
        basis = f"NVIDIA's MMIO table: {table} GB"
        return MmioNeed(name, True, max(table, C_SERIES_MMIO_GB), basis)
    if model is None:
        return MmioNeed(name, None, None, f"no published BAR figure for {name}")
    if not model.large_bar:
        return None  # not among the GPUs NVIDIA lists as needing large MMIO space
    # Passthrough maps the GPU's BARs whole: BAR1 (the frame buffer aperture) and two small
    # ones, so the window is the next power of two above BAR1 (VMware's Frank Denneman: an
    # A100 40GB's 16 MB + 64 GB + 32 MB need 128 GB). BAR1 from the board's file, else the
    # catalogue's product-brief figure.
    bar1 = board.bar1_mb.value if board is not None else None
    bar1 = bar1 if bar1 is not None else model.bar1_mb
    if bar1 is None:
        return MmioNeed(name, True, None, f"no published BAR1 size for {name}")
    return MmioNeed(name, True, power_of_two_at_least(-(-bar1 // 1024) * 2), f"BAR1 {bar1} MB")


def _series_by_name(profile: str | None) -> str | None:
    info = catalog.parse_profile(profile or "")
    return info.series.upper() if info is not None else None


def _needs(ctx: Context, vm: Vm) -> list[MmioNeed]:
    """One need per device that has one; of a Dynamic DirectPath device's allowed boards,
    the largest (any of them may be assigned), or an unknown one."""
    out = []
    for att in vm.gpus:
        needs = [n for w in _boards_of(ctx, vm, att) if (n := _need(vm, att, w)) is not None]
        if not needs:
            continue
        unknown = [n for n in needs if n.gigabytes is None]
        out.append(unknown[0] if unknown else max(needs, key=lambda n: n.gigabytes or 0))
    return out


def large_bar(ctx: Context, vm: Vm) -> Outcome | None:
    needs = _needs(ctx, vm)
    if not needs:
        return None
    known = [n.gigabytes for n in needs if n.gigabytes is not None]
    # Each GPU's BARs side by side in the VM's MMIO space, the total aligned to a power
    # of two (two A100 40GB at 128 GB each: 256).
    needed_gb = power_of_two_at_least(sum(known)) if known else None
    unknown = [f"{n.gpu}: {n.basis}" for n in needs if n.gigabytes is None]
    enabled = vm.mmio_options.get(USE_64BIT_MMIO, "").strip().lower() == "true"
    size_text = vm.mmio_options.get(MMIO_SIZE_GB, "").strip()
    size_gb = int(size_text) if size_text.isdigit() else None
    problems = []
    if vm.firmware != "efi":
        problems.append(f"firmware is {vm.firmware or 'unknown'}, not EFI")
    if not enabled:
        problems.append(f"{USE_64BIT_MMIO} is not TRUE")
    wanted = f"needs {needed_gb}" if needed_gb else "needs a size NVIDIA does not publish"
    if size_gb is None:
        problems.append(f"{MMIO_SIZE_GB} is not set ({wanted})")
    elif needed_gb is not None and size_gb < needed_gb:
        problems.append(f"{MMIO_SIZE_GB} is {size_gb}, below the {needed_gb} its GPUs need")
    evidence: dict[str, Any] = {
        "gpus": sorted(n.gpu for n in needs),
        "needs": [{"gpu": n.gpu, "mmio_gb": n.gigabytes, "basis": n.basis} for n in needs],
        "needed_mmio_gb": needed_gb,
        "vm_memory_mb": vm.memory_mb,
        "firmware": vm.firmware,
        "use64bitMMIO": vm.mmio_options.get(USE_64BIT_MMIO),
        "mmio_size_gb": size_text or None,
    }
    required = any(n.required for n in needs)
    if problems:
        message = f"{len(needs)} GPU device(s) needing 64-bit MMIO: " + "; ".join(problems)
        if required:
            return Outcome(False, message, evidence)
        # Whether these devices need 64-bit MMIO at all, no published figure says.
        return not_proven(message, "; ".join(unknown), evidence)
    message = f"EFI with 64-bit MMIO of {size_gb} GB"
    if unknown:
        what = f"{message}; what its GPUs need is not known"
        return not_proven(what, "; ".join(unknown), evidence)
    return Outcome(True, f"{message} for the {needed_gb} GB its GPUs need", evidence)


rule(
    id="GPU-06",
    title="A VM with a large-BAR GPU does not boot with EFI and 64-bit MMIO large enough",
    category="gpu",
    severity="high",
    scope=scopes.GPU_VMS,
    rationale="""A GPU maps its frame buffer aperture (BAR1) into the VM's address space.
        A C-series vGPU (NVIDIA: "the VM's MMIO space must be increased to 64 GB") and a
        large-BAR GPU in passthrough (those NVIDIA lists as needing large MMIO space) need
        the VM to boot with EFI and to map them above 4 GB: pciPassthru.use64bitMMIO = TRUE,
        and pciPassthru.64bitMMIOSizeGB large enough. For a C-series vGPU in a VM of 32 GB
        or more, that is the GPU's figure in NVIDIA's table (H200 512 GB; H100 and A100
        80GB 256 GB; A100 40GB, A40, L40 and RTX 6000 Ada 128 GB; A30, A10 and L4 64 GB),
        else 64 GB. In passthrough it is the next power of two above the GPU's BAR1 (BAR1
        and two small BARs: an A100 40GB's 64 GB BAR1 needs 128 GB), the GPUs of one VM
        added up; never the frame buffer, which is half of it or less. Otherwise the VM
        fails to power on ("Module DevicePowerOn power on failed") or the guest sees no GPU.
        Where no published figure gives a GPU's need (a board NVIDIA's table does not list,
        no published BAR1), the verdict is not proven.""",
    remediation="""Power the VM off; set its firmware to EFI (reinstall a guest that was
        installed for BIOS); add the advanced settings pciPassthru.use64bitMMIO = TRUE and
        pciPassthru.64bitMMIOSizeGB = the size in the finding.""",
    references=REFERENCES["GPU-06"],
)(large_bar)


def sriov(ctx: Context, item: HostGpu) -> Outcome | None:
    gpu = item.gpu
    model = F.gpu_model(gpu)
    if model is None or not catalog.vgpu_needs_sriov(model) or gpu.graphics_type != F.SHARED_DIRECT:
        return None
    evidence = {
        "model": model.name,
        "sriov_capable": gpu.sriov_capable,
        "sriov_enabled": gpu.sriov_enabled,
        "sriov_active": gpu.sriov_active,
        "virtual_functions": gpu.sriov_vfs,
    }
    if gpu.sriov_capable is None:
        return Outcome(False, "the host reports no SR-IOV for it: off in the BIOS?", evidence)
    if not gpu.sriov_enabled:
        return Outcome(False, "SR-IOV is not enabled: vGPU VMs cannot start on it", evidence)
    if not gpu.sriov_active:
        return Outcome(False, "SR-IOV is enabled but not active: host reboot pending", evidence)
    return Outcome(True, f"SR-IOV active with {gpu.sriov_vfs} virtual functions", evidence)


rule(
    id="GPU-07",
    title="An Ampere or later GPU in vGPU mode does not have SR-IOV enabled and active",
    category="gpu",
    severity="high",
    scope=scopes.GPUS,
    rationale="""From the Ampere architecture on (A10, A16, A30, A40, A100, L4, L40, L40S,
        H100 and later), NVIDIA vGPUs run on SR-IOV virtual functions of the GPU. With SR-IOV
        disabled in the server's BIOS, or not active on the device, vGPU VMs fail to power on
        on that GPU.""",
    remediation="""Enable SR-IOV (and Above 4G Decoding) in the host's BIOS, check that the
        NVIDIA vGPU Manager enabled the GPU's virtual functions, and reboot the host in a
        maintenance window.""",
    references=REFERENCES["GPU-07"],
)(sriov)


def evc_mode(ctx: Context, vm: Vm) -> Outcome | None:
    f = ctx.facts
    cluster_name = f.vm_cluster(vm)
    cluster = f.clusters.get(cluster_name or "")
    if not F.is_vgpu_vm(vm) or cluster is None or f.inventory.vcenter.standalone_esxi:
        return None
    hosts = [h for h in f.active_hosts(cluster.name) if h.max_evc_mode]
    if not hosts:
        return None
    # Each distinct mode is judged once: a cluster has a few, and many hosts per mode.
    modes = Counter(h.max_evc_mode or "" for h in hosts)
    problems = []
    short: list[str] = []
    if vm.min_evc_mode:
        below = {m for m in modes if evc.covers(m, vm.min_evc_mode) is False}
        short = sorted(h.name for h in hosts if h.name != vm.host and h.max_evc_mode in below)
        if short:
            verb = "offers" if len(short) == 1 else "offer"
            problems.append(
                f"it needs EVC mode {vm.min_evc_mode}, above what {name_few(short)} {verb}"
            )
    if cluster.evc_mode is None and len(modes) > 1:
        problems.append(
            f"the cluster has no EVC mode and its hosts' CPUs differ ({', '.join(sorted(modes))})"
        )
    # The hosts that block the VM by name; the rest of the cluster as hosts per mode.
    evidence = {
        "cluster_evc_mode": cluster.evc_mode,
        "vm_min_evc_mode": vm.min_evc_mode,
        "hosts_below_vm_mode": short,
        "hosts_per_max_evc_mode": dict(sorted(modes.items())),
    }
    if problems:
        return Outcome(False, "; ".join(problems), evidence)
    baseline = f"cluster EVC mode {cluster.evc_mode}" if cluster.evc_mode else "no EVC, hosts alike"
    return Outcome(True, f"every host of the cluster can run it ({baseline})", evidence)


rule(
    id="VM-08",
    title="A vGPU VM cannot vMotion to a host of its cluster for its CPU (EVC) baseline",
    category="vmotion",
    severity="medium",
    scope=scopes.GPU_VMS,
    rationale="""vMotion moves a VM only to a host that offers every CPU feature the VM was
        powered on with: the VM's minimum EVC mode must be at or below the host's maximum. A
        vGPU VM that needs a newer baseline than some host of its cluster offers cannot be
        moved there, by hand, by DRS or for maintenance. A cluster without an EVC mode whose
        hosts' CPU generations differ hands each VM the features of the host it powers on, so
        which moves work changes with every power cycle.""",
    remediation="""Enable EVC on the cluster at the baseline of its oldest host (Cluster >
        Configure > VMware EVC), then power-cycle the vGPU VMs so they take it; or keep hosts
        of one CPU generation per cluster.""",
    references=REFERENCES["VM-08"],
)(evc_mode)
