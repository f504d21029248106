"""DRS rules: do the cluster's DRS options let vGPU VMs move and evacuate?"""

from __future__ import annotations

from gpuaudit.inventory import Cluster
from gpuaudit.knowledge import releases as R
from gpuaudit.model import facts as F
from gpuaudit.rules import scopes
from gpuaudit.rules.registry import Context, Outcome, rule

PASSTHROUGH_DRS = "PassthroughDrsAutomation"
MAX_VMOTIONS = "LBMaxVmotionPerHost"
MM_TIMEOUT = "VgpuMMAutomationTimeoutSecs"
STUN_TOLERATED = "VmDevicesStunTimeTolerated"
OPTIONS = (PASSTHROUGH_DRS, MAX_VMOTIONS, MM_TIMEOUT, STUN_TOLERATED)
DEFAULT_STUN_TOLERATED_S = 100

# DRS load-balances vGPU VMs only from vCenter 8.0 Update 2 (with PassthroughDrsAutomation).
LOAD_BALANCING = R.Release(8, 0, 2)

REFERENCES = {
    "VM-09": [
        (
            "Broadcom KB 88271: vGPU VM automated migration for host maintenance mode in a DRS "
            "cluster",
            "https://kb.vmware.com/s/article/88271",
        ),
        (
            "New Tuning Settings for DRS and vMotion for VMs with Virtual GPUs in vSphere 8.0 "
            "Update 2",
            "https://blogs.vmware.com/cloud-foundation/2023/09/08/"
            "new-tuning-settings-for-drs-and-vmotion-for-vms-with-virtual-gpus-in-vsphere-8-0-update-2",
        ),
        (
            "Broadcom KB 313479: DRS fails to migrate vGPU-enabled VMs automatically",
            "https://knowledge.broadcom.com/external/article/313479/"
            "drs-fails-to-migrate-vgpu-enabled-vms-au.html",
        ),
    ],
}


def vgpu_drs_options(ctx: Context, cluster: Cluster) -> Outcome | None:
    vcenter = ctx.facts.inventory.vcenter
    vgpu_vms = [vm.name for vm in ctx.facts.cluster_gpu_vms(cluster.name) if F.is_vgpu_vm(vm)]
    if vcenter.standalone_esxi or not vgpu_vms or not cluster.drs_enabled:
        return None  # without DRS nothing moves VMs automatically
    options = cluster.drs_options
    release = R.vcenter_release(vcenter.version, vcenter.build)
    evidence: dict[str, object] = {
        "drs_automation": cluster.drs_automation,
        "options": {key: options.get(key) for key in OPTIONS},
        "vcenter_release": str(release) if release else None,
        "vgpu_vms": len(vgpu_vms),
    }
    problems = evacuation_problems(options, release, vcenter.build)
    problems += _load_balancing(options, release, cluster.drs_automation)
    problems += _stun_tolerance(options)
    if problems:
        return Outcome(False, "; ".join(problems), evidence)
    return Outcome(True, f"{MM_TIMEOUT} is -1: maintenance mode evacuates vGPU VMs", evidence)


rule(
    id="VM-09",
    title="A DRS cluster's options keep its vGPU VMs from moving or evacuating",
    category="vmotion",
    severity="medium",
    scope=scopes.CLUSTERS_WITH_GPU_VMS,
    rationale=f"""DRS treats vGPU VMs apart. Maintenance mode evacuates them automatically only
        when the DRS option {MM_TIMEOUT} is -1 (vCenter 7.0 U3f and later); otherwise they must
        be moved by hand, and vLCM remediation stalls. DRS load-balances them only from vCenter
        8.0 U2, and only with {PASSTHROUGH_DRS}=1; VMware then advises {MAX_VMOTIONS}=1, so that
        one host sends one vGPU vMotion at a time. {STUN_TOLERATED} (default
        {DEFAULT_STUN_TOLERATED_S} s) is the longest stun time DRS accepts for a device VM: set
        lower, DRS and maintenance mode skip the larger vGPU VMs.""",
    remediation=f"""In the cluster's DRS advanced options set {MM_TIMEOUT}=-1; with fully
        automated DRS on vCenter 8.0 U2 or later, {PASSTHROUGH_DRS}=1 and {MAX_VMOTIONS}=1;
        leave {STUN_TOLERATED} unset or at least {DEFAULT_STUN_TOLERATED_S}.""",
    references=REFERENCES["VM-09"],
)(vgpu_drs_options)


def _number(value: str | None) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def evacuation_problems(
    options: dict[str, str], release: R.Release | None, build: str
) -> list[str]:
    """Why maintenance mode does not evacuate the cluster's vGPU VMs; [] when it does."""
    if release is not None and _before_70u3f(release, build):
        return [
            f"vCenter {release} predates 7.0 U3f: maintenance mode never evacuates vGPU VMs; "
            "they must be moved by hand"
        ]
    value = options.get(MM_TIMEOUT)
    if value is None:
        return [f"{MM_TIMEOUT} is unset: maintenance mode does not evacuate vGPU VMs"]
    if _number(value) != -1:
        return [f"{MM_TIMEOUT} is {value}, not -1: maintenance mode does not evacuate vGPU VMs"]
    return []


def _before_70u3f(release: R.Release, build: str) -> bool:
    if release.line() != (7, 0):
        return release < R.Release(7, 0)
    return release.update < 3 or (build.isdigit() and int(build) < R.VCENTER_70U3F_BUILD)


def _load_balancing(
    options: dict[str, str], release: R.Release | None, automation: str | None
) -> list[str]:
    if automation != "fullyAutomated" or release is None or release < LOAD_BALANCING:
        return []  # DRS would not load-balance vGPU VMs anyway
    if _number(options.get(PASSTHROUGH_DRS)) != 1:
        return [f"{PASSTHROUGH_DRS} is not 1: DRS never load-balances vGPU VMs"]
    max_vmotions = _number(options.get(MAX_VMOTIONS))
    if max_vmotions != 1:
        shown = options.get(MAX_VMOTIONS, "unset")
        return [f"{MAX_VMOTIONS} is {shown}, not 1: several vGPU vMotions at once per host"]
    return []


def _stun_tolerance(options: dict[str, str]) -> list[str]:
    value = options.get(STUN_TOLERATED)
    if value is None:
        return []
    seconds = _number(value)
    if seconds is None or seconds < DEFAULT_STUN_TOLERATED_S:
        return [
            f"{STUN_TOLERATED} is {value}, below {DEFAULT_STUN_TOLERATED_S} s: "
            "DRS skips vGPU VMs with longer estimated stun times"
        ]
    return []
