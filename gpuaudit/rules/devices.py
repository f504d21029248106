"""Device rules: what a large-BAR GPU needs in its VM, SR-IOV for Ampere and later vGPUs,
and the CPU (EVC) baseline a vGPU VM needs to vMotion within its cluster."""

from __future__ import annotations

from collections import Counter
from typing import Any

from gpuaudit import catalog, evc
from gpuaudit import facts as F
from gpuaudit.inventory import GpuAttachment, Vm
from gpuaudit.results import Reference
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.registry import Context, Outcome, name_few, rule
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


def next_power_of_two_above(gigabytes: int) -> int:
    """The smallest power of two strictly above ``gigabytes`` (VMware's rule of thumb
    for pciPassthru.64bitMMIOSizeGB)."""
    size = 1
    while size <= gigabytes:
        size *= 2
    return size


def _large_bar_memory_mb(gpu: GpuAttachment) -> tuple[int, str] | None:
    """(frame buffer in MB, model) of one large-BAR GPU device of the VM, else None.

    A passthrough device counts its GPU's frame buffer; a C-series vGPU its profile's.
    Other vGPU series map only a small aperture and need no 64-bit MMIO.
    """
    if gpu.kind == "vgpu":
        profile = catalog.parse_profile(gpu.profile or "")
        if profile is None or profile.series != "c":
            return None
        model = catalog.model_for_profile(profile.gpu)
        return (profile.memory_mb, model.name) if model and model.large_bar else None
    candidates: list[tuple[int, int]] = []
    if gpu.kind == "passthrough" and gpu.vendor_id is not None and gpu.device_id is not None:
        candidates = [(gpu.vendor_id, gpu.device_id)]
    elif gpu.kind == "dynamic":
        candidates = list(gpu.allowed)
    models = [m for v, d in candidates if (m := catalog.model_for(v, d)) and m.large_bar]
    if not models:
        return None
    largest = max(models, key=lambda m: m.memory_mb)  # any allowed device may be assigned
    return largest.memory_mb, largest.name


def large_bar(ctx: Context, vm: Vm) -> Outcome | None:
    devices = [d for g in vm.gpus if (d := _large_bar_memory_mb(g)) is not None]
    if not devices:
        return None
    total_gb = -(-sum(mb for mb, _ in devices) // 1024)
    needed_gb = next_power_of_two_above(total_gb)
    enabled = vm.mmio_options.get(USE_64BIT_MMIO, "").strip().lower() == "true"
    size_text = vm.mmio_options.get(MMIO_SIZE_GB, "").strip()
    size_gb = int(size_text) if size_text.isdigit() else None
    problems = []
    if vm.firmware != "efi":
        problems.append(f"firmware is {vm.firmware or 'unknown'}, not EFI")
    if not enabled:
        problems.append(f"{USE_64BIT_MMIO} is not TRUE")
    if size_gb is None:
        problems.append(f"{MMIO_SIZE_GB} is not set (needs {needed_gb})")
    elif size_gb < needed_gb:
        problems.append(f"{MMIO_SIZE_GB} is {size_gb}, below the {needed_gb} its GPUs need")
    evidence: dict[str, Any] = {
        "gpus": sorted(name for _, name in devices),
        "gpu_memory_gb": total_gb,
        "needed_mmio_gb": needed_gb,
        "firmware": vm.firmware,
        "use64bitMMIO": vm.mmio_options.get(USE_64BIT_MMIO),
        "mmio_size_gb": size_text or None,
    }
    if problems:
        message = f"{len(devices)} large-BAR GPU(s), {total_gb} GB: " + "; ".join(problems)
    else:
        message = f"EFI with 64-bit MMIO of {size_gb} GB for {total_gb} GB of GPU memory"
    return Outcome(not problems, message, evidence)


rule(
    id="GPU-06",
    title="A VM with a large-BAR GPU does not boot with EFI and 64-bit MMIO large enough",
    category="gpu",
    severity="high",
    scope=scopes.GPU_VMS,
    rationale="""GPUs with a large BAR (A100, H100, H200, L40, L40S, A40, A30 and the like,
        which NVIDIA lists as needing large MMIO space), in passthrough or as C-series vGPUs,
        need the VM to boot with EFI and to map them above 4 GB: pciPassthru.use64bitMMIO =
        TRUE, and pciPassthru.64bitMMIOSizeGB at least the next power of two above the GPUs'
        memory added up (VMware's rule of thumb: two 40 GB GPUs need 128). Otherwise the VM
        fails to power on ("Module DevicePowerOn power on failed") or the guest sees no
        GPU.""",
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
