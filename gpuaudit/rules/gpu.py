"""GPU rules: is each GPU in the mode its VMs need, and is its capacity usable?"""

from __future__ import annotations

from gpuaudit.inventory import Host, Vm
from gpuaudit.model import facts as F
from gpuaudit.results import Severity
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.registry import Context, Outcome, rule
from gpuaudit.rules.scopes import HostGpu

# The sources of the rules' guidance, title and URL, to become each rule's references.
REFERENCES = {
    "GPU-01": [
        (
            "vSphere API reference: HostGraphicsConfig (hostDefaultGraphicsType, deviceType)",
            "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/data-structures/HostGraphicsConfig",
        ),
        (
            "vSphere API: HostGraphicsConfigDeviceType (per-device graphics type)",
            "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/data-structures/HostGraphicsConfigDeviceType",
        ),
        (
            "vSphere Resource Management: Configuring Host Graphics",
            "https://docs.vmware.com/en/VMware-vSphere/6.5/com.vmware.vsphere.resmgmt.doc/"
            "GUID-E0862AED-BF69-4C85-A811-EEE626F63B48.html",
        ),
    ],
    "GPU-02": [
        (
            "vSphere API: HostPciPassthruInfo (passthruActive)",
            "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/data-structures/HostPciPassthruInfo",
        ),
        (
            "vSphere API: HostPciPassthruConfig (applyNow)",
            "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/data-structures/HostPciPassthruConfig",
        ),
    ],
}


def shared_direct(ctx: Context, host: Host) -> Outcome | None:
    vgpu_vms = {vm.name for vm in ctx.facts.host_gpu_vms(host.name) if F.is_vgpu_vm(vm)}
    if not vgpu_vms:
        return None
    in_use = [g for g in host.gpus if set(g.vms) & vgpu_vms]
    default_shared = host.default_graphics_type == "shared"
    running = [F.gpu_name(host, g) for g in in_use if g.graphics_type != F.SHARED_DIRECT]
    own_shared = [F.gpu_name(host, g) for g in in_use if g.configured_graphics_type == "shared"]
    inherit = [
        F.gpu_name(host, g) for g in in_use if default_shared and not g.configured_graphics_type
    ]
    ready = [F.gpu_name(host, g) for g in host.gpus if g.graphics_type == F.SHARED_DIRECT]
    problems = []
    if running:
        problems.append(f"vGPU VMs run on {', '.join(running)}, not in Shared Direct mode")
    if own_shared:
        problems.append(f"{', '.join(own_shared)} in use by vGPU VMs set to Shared (vSGA)")
    if inherit:
        problems.append(
            f"no graphics type of its own on {', '.join(inherit)} (in use by vGPU VMs): the "
            "host default, Shared (vSGA), applies at the next reboot"
        )
    if not ready:
        problems.append("no GPU of the host is in Shared Direct mode")
    severity: Severity | None = None
    if default_shared and not problems:
        severity = "medium"  # only the default is wrong: every GPU in use overrides it
        problems.append(
            "the host default graphics type is Shared (vSGA), but every GPU in use by vGPU VMs "
            "is set to Shared Direct: only a GPU without its own setting falls back to vSGA"
        )
    elif default_shared and not inherit:
        problems.append("the host default graphics type is Shared (vSGA)")
    evidence = {
        "default_graphics_type": host.default_graphics_type,
        "graphics_types": {F.gpu_name(host, g): g.graphics_type for g in host.gpus},
        "configured_graphics_types": {
            F.gpu_name(host, g): g.configured_graphics_type for g in host.gpus
        },
    }
    message = "; ".join(problems) if problems else "vGPU GPUs are in Shared Direct mode"
    return Outcome(not problems, message, evidence, severity=severity)


rule(
    id="GPU-01",
    title="vGPU VMs run on a GPU not in Shared Direct mode, or the host default is Shared (vSGA)",
    category="gpu",
    severity="high",
    scope=scopes.CONNECTED_HOSTS,
    rationale="""NVIDIA vGPU needs the GPU in Shared Direct mode. Each GPU may carry its own
        graphics type, which overrides the host's default; a GPU without one takes the default.
        A GPU in use by vGPU VMs whose effective type is Shared (vSGA), by its own setting or by
        a Shared default, is in vSGA after the next reboot, and its vGPU VMs then fail to power
        on. A Shared default under GPUs that are all set to Shared Direct is a latent fault
        (medium): only a GPU added or reset to the default falls back to vSGA.""",
    remediation="""Set the host's default graphics type to Shared Direct (Configure > Graphics) and
        each vGPU GPU's type to Shared Direct, then restart the X.Org/NVIDIA services or reboot.""",
    references=(
        sources.API_HOST_GRAPHICS_CONFIG,
        sources.NVIDIA_VGPU_USER_GUIDE,
        *REFERENCES["GPU-01"],
    ),
)(shared_direct)


def passthrough_pending(ctx: Context, item: HostGpu) -> Outcome | None:
    gpu = item.gpu
    if not gpu.passthrough_enabled:
        return None
    ok = gpu.passthrough_active
    message = (
        "passthrough is active"
        if ok
        else "passthrough is enabled but not active: a host reboot is pending, or passthrough "
        "failed to claim the device"
    )
    evidence = {"enabled": gpu.passthrough_enabled, "active": gpu.passthrough_active}
    return Outcome(ok, message, evidence)


rule(
    id="GPU-02",
    title="Passthrough is enabled on a GPU but not active (host reboot pending, or the device "
    "was not claimed)",
    category="gpu",
    severity="medium",
    scope=scopes.GPUS,
    rationale="""ESXi applies a change to PCI passthrough only at the next reboot, and at boot
        the passthrough driver must claim the device. A GPU enabled for passthrough but not
        active is waiting for that reboot, or failed to be claimed by passthrough (a host driver
        such as the NVIDIA vGPU manager holds it, or the device or its firmware refused). Until
        it is active the GPU counts in the inventory but no passthrough VM can use it: capacity
        that HA and DRS cannot use.""",
    remediation="""Reboot the host in a maintenance window (or revert the passthrough setting). If
        it is still not active after the reboot, find why passthrough did not claim it: the
        host's vmkernel log, a host driver that claims the device, and the server's BIOS
        settings for the slot.""",
    references=(sources.DIRECTPATH_IO, *REFERENCES["GPU-02"]),
)(passthrough_pending)


def memory_reserved(ctx: Context, vm: Vm) -> Outcome:
    ok = vm.memory_locked_to_max or vm.memory_reservation_mb >= vm.memory_mb
    evidence = {
        "memory_mb": vm.memory_mb,
        "reservation_mb": vm.memory_reservation_mb,
        "locked_to_max": vm.memory_locked_to_max,
    }
    message = (
        "all guest memory is reserved"
        if ok
        else f"{vm.memory_reservation_mb} of {vm.memory_mb} MB reserved: it fails to power on"
    )
    return Outcome(ok, message, evidence)


rule(
    id="GPU-03",
    title="A GPU VM does not have its full memory reserved",
    category="gpu",
    severity="high",
    scope=scopes.GPU_VMS,
    rationale="""A VM with a PCI passthrough or vGPU device must have all its memory reserved;
        without the reservation it fails to power on, and so HA fails to restart it.""",
    remediation="""Reserve all guest memory ("Reserve all guest memory (All locked)") in the VM's
        memory settings.""",
    references=(sources.PCI_DEVICES_7, sources.PCI_DEVICE_ON_VM_7),
)(memory_reserved)


def idle_gpu(ctx: Context, item: HostGpu) -> Outcome | None:
    host, gpu = item
    if not (gpu.passthrough_enabled or gpu.graphics_type == F.SHARED_DIRECT):
        return None
    users = sorted(set(gpu.vms))
    # A powered-off VM's passthrough device still names the GPU it is bound to.
    bound = {a.pci_id for vm in ctx.facts.host_gpu_vms(host.name) for a in vm.gpus if a.pci_id}
    ok = bool(users) or gpu.pci_id in bound
    mode = "passthrough" if gpu.passthrough_enabled else "vGPU"
    message = (
        f"in use ({', '.join(users) or 'bound to a powered-off VM'})"
        if ok
        else f"enabled for {mode} but no VM uses it: idle or buffer capacity"
    )
    return Outcome(ok, message, {"mode": mode, "vms": users})


rule(
    id="GPU-04",
    title="A GPU enabled for passthrough or vGPU has no VM",
    category="gpu",
    severity="info",
    scope=scopes.GPUS,
    rationale="""An idle GPU is either waste or, deliberately, the buffer capacity the N+1
        rule needs (one node's worth of GPUs kept free for failover). Listed so that the buffer
        is a decision, not an accident.""",
    remediation="""Keep it as failover capacity (and check HA-05/HA-06 count it), or put it to
        work.""",
    references=(sources.HA_ADMISSION_CONTROL, sources.HA_HOW_IT_WORKS),
)(idle_gpu)


def unknown_model(ctx: Context, item: HostGpu) -> Outcome:
    gpu = item.gpu
    ids = f"{gpu.vendor_id:04x}:{gpu.device_id:04x}"
    evidence = {"ids": ids, "device_name": gpu.device_name, "memory_mb": gpu.memory_mb}
    message = (
        f"{gpu.model} ({ids})"
        if gpu.known_model
        else f"unknown GPU {ids} ({gpu.device_name or 'no name'})"
    )
    return Outcome(gpu.known_model, message, evidence)


rule(
    id="GPU-05",
    title="A GPU's PCI id is not in gpuaudit's catalogue",
    category="gpu",
    severity="info",
    scope=scopes.GPUS,
    rationale="""Capacity checks need each GPU's frame buffer and model. For a PCI id the catalogue
        does not know, gpuaudit uses what the host reports, which may be incomplete.""",
    remediation="""Check the reported model and frame buffer; report the id so the catalogue can
        learn it.""",
    references=(sources.NVIDIA_SUPPORTED_GPUS, sources.NVIDIA_SUPPORT_MATRIX),
)(unknown_model)
