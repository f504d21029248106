"""vGPU plugin parameters that disable live migration: unified memory, CUDA debuggers and
profilers.

NVIDIA enables each per vGPU with a VM option, pciPassthru<vgpu-id>.cfg.enable_uvm,
.enable_debugging or .enable_profiling = 1 (Virtual GPU Software User Guide 17, 6.4.3,
6.5.1 and 6.5.2.4; 0, the default, leaves it off), and "NVIDIA vGPU (C-Series) migration
is disabled for a VM for which any of the following NVIDIA CUDA Toolkit features is
enabled: Unified memory, Debuggers, Profilers" (NVIDIA AI Enterprise, "NVIDIA AI
Enterprise and NVIDIA vGPU (C-Series)", Release Notes: Limitations with NVIDIA vGPU
(C-Series) Migration Support). The user guide says it of debuggers ("When NVIDIA CUDA
Toolkit debuggers are enabled for a VM, the VM cannot be migrated", 6.5.1) and of
profilers ("A VM for which NVIDIA CUDA Toolkit profilers are enabled cannot be
migrated", 6.5.2.3).
"""

from __future__ import annotations

from gpuaudit.inventory import Vm
from gpuaudit.model import facts as F
from gpuaudit.results import Reference
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.registry import Context, Outcome, name_few, not_proven, rule

EXTRA_CONFIG = "config.extraConfig"
FEATURES = {
    "enable_uvm": "unified memory",
    "enable_debugging": "CUDA debuggers",
    "enable_profiling": "CUDA profilers",
}
ENABLED, DISABLED = "1", "0"  # the values NVIDIA documents

NVIDIA_VGPU_USER_GUIDE_17 = Reference(
    "NVIDIA Virtual GPU Software User Guide 17: 6.4 unified memory, 6.5 CUDA debuggers and "
    "profilers (a VM with them enabled cannot be migrated)",
    "https://docs.nvidia.com/grid/17.0/grid-vgpu-user-guide/index.html",
)


def feature(key: str) -> str:
    """What a plugin parameter enables: "pciPassthru0.cfg.enable_uvm" is unified memory."""
    return FEATURES[key.rpartition(".")[2]]


def unread_extra_config(ctx: Context) -> set[str]:
    """The VMs whose extraConfig the collector could not read (a gap names them)."""
    gaps = ctx.facts.inventory.gaps
    return {g.object for g in gaps if g.kind == "VirtualMachine" and g.property == EXTRA_CONFIG}


def migration_options(ctx: Context, vm: Vm) -> Outcome | None:
    if ctx.facts.inventory.vcenter.standalone_esxi or not F.is_vgpu_vm(vm):
        return None  # live migration needs a vCenter, and these are vGPU parameters
    options = dict(sorted(vm.vgpu_plugin_options.items()))
    enabled = [k for k, v in options.items() if v.strip() == ENABLED]
    unclear = [k for k, v in options.items() if v.strip() not in (ENABLED, DISABLED)]
    evidence = {"options": options, "enabled": enabled, "unclear": unclear}
    if enabled:
        named = ", ".join(f"{k} = 1 ({feature(k)})" for k in enabled)
        message = f"{named}: NVIDIA disables the live migration of such a vGPU VM"
        return Outcome(False, message, evidence)
    if unclear:
        named = ", ".join(f"{k} = {options[k]!r}" for k in unclear)
        reason = f"{named}: NVIDIA documents 1 (enabled) and 0 (disabled) only"
        return not_proven(f"{reason}; its live migration may be disabled", reason, evidence)
    if vm.name in ctx.once("vgpu_options.unread", lambda: unread_extra_config(ctx)):
        reason = f"the VM's {EXTRA_CONFIG} could not be read"
        return not_proven(f"{reason}: its vGPU plugin parameters are unknown", reason, evidence)
    message = "unified memory, CUDA debuggers and CUDA profilers are off"
    if options:
        message += f" ({name_few(list(options))} = 0)"
    return Outcome(True, message, evidence)


rule(
    id="VM-11",
    title="A vGPU VM has unified memory, CUDA debuggers or profilers enabled: it cannot be "
    "live-migrated",
    category="vmotion",
    severity="medium",
    scope=scopes.GPU_VMS,
    rationale="""NVIDIA disables the live migration (vMotion, suspend-resume) of a vGPU VM for
        which unified memory, CUDA debuggers or CUDA profilers are enabled. Each is enabled
        per vGPU by a VM option, pciPassthru<vgpu-id>.cfg.enable_uvm, .enable_debugging or
        .enable_profiling = 1, which gpuaudit reads from the VM's config.extraConfig. Such a
        VM must be powered off for host maintenance, and DRS cannot move it. A value other
        than 1 or 0, or an extraConfig that could not be read, is not proven.""",
    remediation="""Unless the workload needs the feature, power the VM off and set the
        parameter to 0 (or remove it); otherwise plan the host's maintenance with the VM
        powered off, and waive this finding for it.""",
    references=(NVIDIA_VGPU_USER_GUIDE_17, sources.NVIDIA_VGPU_USER_GUIDE),
)(migration_options)
