"""Maintenance readiness: each powered-on GPU VM's fate when its host enters maintenance
mode in a cluster whose DRS is fully automated, one host at a time.

- **powered off**: a VM with a DirectPath I/O device (fixed or Dynamic), which vMotion
  cannot move, and a VM whose ``maintenance.vm.evacuation.poweroff`` is true (vSphere's VM
  Operator sets it on its GPU VMs: "ExtraConfig key to enable DRS to powerOff VMs when
  underlying host enters into maintenance mode").
- **blocking**: a vGPU VM nothing moves, so that the host's entry into maintenance mode
  waits for someone to move it or power it off: vCenter refuses vGPU vMotion (VM-01), the
  cluster's DRS options do not let maintenance mode evacuate vGPU VMs (Broadcom KB 88271:
  "If VgpuMMAutomationTimeoutSecs is not set to -1, then DRS does not recommend compatible
  hosts in the Cluster, and only option user has is to manually evacuate VMs"), the VM's
  host has no vMotion adapter (VM-04), its profile or backing says migration is not
  supported (VM-05), its vGPU plugin options disable live migration (VM-11), its stun time
  is proven not below the cluster's tolerance (VM-10: DRS then skips it), or no other host
  has room for it.
- **moved**: the VM's target, placed by gpuaudit.simulation.failures's model of a failure's
  restarts (profile and GPU type, sharing, MIG, device groups, memory, datastores, required
  DRS rules, vCenter's remaining capacity, and each host's own GPU choice), among the hosts
  that have a vMotion adapter. What the rules leave not proven (a stun time, a plugin
  option) is the move's ``reason``.

The vMotion verdicts are the rules' own check functions, asked about one VM.
"""

from __future__ import annotations

from collections.abc import Collection

from gpuaudit.inventory import Cluster, Vm
from gpuaudit.knowledge import releases as R
from gpuaudit.results import (
    BLOCKING,
    MOVED,
    POWERED_OFF,
    ClusterMaintenance,
    HostMaintenance,
    VmFate,
)
from gpuaudit.rules import drs, stun, vgpu_options, vmotion
from gpuaudit.rules.registry import Context, Outcome, name_few
from gpuaudit.simulation.failures import ClusterModel, Guest, evacuate

DIRECTPATH = ("passthrough", "dynamic")
EVACUATION_POWEROFF = "maintenance.vm.evacuation.poweroff"
KB_88271 = "Broadcom KB 88271: DRS recommends no host; the VM must be evacuated by hand"


def readiness_all(ctx: Context) -> list[ClusterMaintenance]:
    """The maintenance readiness of every cluster that runs GPU VMs."""
    return [
        readiness(ctx, cluster)
        for cluster in ctx.facts.clusters_with_gpus()
        if ctx.facts.cluster_gpu_vms(cluster.name)
    ]


def readiness(
    ctx: Context, cluster: Cluster, only: Collection[str] | None = None
) -> ClusterMaintenance:
    """Each connected host of the cluster, out of maintenance, entering maintenance mode
    on its own: where each of its powered-on GPU VMs goes, or why it stops. ``only``: the
    hosts to evaluate (the others still take VMs); every active host when None."""
    facts = ctx.facts
    model = ClusterModel(facts, cluster.name, keep_disabled=True)
    out = ClusterMaintenance(cluster.name)
    active = [h for h, node in model.nodes.items() if node.active]
    deaf = [h for h in active if not facts.hosts[h].vmotion_nics]
    model.close(deaf)  # a host without a vMotion adapter receives no vMotion
    if deaf:
        out.notes.append(f"no vMotion adapter on {name_few(deaf)}: it takes no VM")
    if cluster.drs_automation != "fullyAutomated" or not cluster.drs_enabled:
        out.notes.append(
            f"DRS is {cluster.drs_automation if cluster.drs_enabled else 'off'}, not fully "
            "automated: the fates below are those fully automated DRS would give; otherwise "
            "every VM is moved by hand"
        )
    everyone = _cluster_blocks(ctx, cluster)
    vms = {vm.name: vm for vm in facts.cluster_gpu_vms(cluster.name)}
    for host in active:
        if only is not None and host not in only:
            continue
        fates: list[VmFate] = []
        movable: list[Guest] = []
        for guest in model.by_host.get(host, []):
            stop = _stop(ctx, vms[guest.name], guest, everyone, host in deaf)
            if stop is None:
                movable.append(guest)
            else:
                fates.append(VmFate(guest.name, stop[0], stop[1]))
        fates.extend(_moves(ctx, model, host, movable, vms))
        out.hosts.append(HostMaintenance(host, sorted(fates, key=lambda f: f.vm)))
    return out


def _cluster_blocks(ctx: Context, cluster: Cluster) -> str:
    """Why no vGPU VM of the cluster moves by itself; "" when nothing cluster-wide stops
    them."""
    vcenter = ctx.facts.inventory.vcenter
    hot = vmotion.hotmigrate(ctx, vcenter)
    if hot is not None and not hot.passed:
        return hot.message
    release = R.vcenter_release(vcenter.version, vcenter.build)
    problems = drs.evacuation_problems(cluster.drs_options, release, vcenter.build)
    return f"{problems[0]} ({KB_88271})" if problems else ""


def _stop(ctx: Context, vm: Vm, guest: Guest, everyone: str, deaf: bool) -> tuple[str, str] | None:
    """The VM's fate when it cannot move, and why; None when it may move."""
    if (vm.evacuation_poweroff or "").strip().lower() == "true":
        return POWERED_OFF, f"{EVACUATION_POWEROFF} is {vm.evacuation_poweroff}: DRS powers it off"
    kinds = {d.kind for d in guest.demands}
    if kinds & set(DIRECTPATH):
        return POWERED_OFF, "a DirectPath I/O device: vMotion cannot move the VM"
    if kinds != {"vgpu"}:
        return BLOCKING, "a GPU device of unknown backing: nothing is known to move it"
    if everyone:
        return BLOCKING, everyone
    if deaf:
        return BLOCKING, f"{guest.host} has no vMotion adapter: it sends no vMotion"
    for check in (vmotion.migrate_supported, vgpu_options.migration_options, stun.stun_time):
        verdict = check(ctx, vm)
        if verdict is not None and not verdict.passed:
            return BLOCKING, f"DRS does not move it: {verdict.message}"
    return None


def _moves(
    ctx: Context, model: ClusterModel, host: str, movable: list[Guest], vms: dict[str, Vm]
) -> list[VmFate]:
    """Where DRS takes the VMs that may move, or why they find no host."""
    if not movable:
        return []
    placed = evacuate(model, host, movable)
    fates = [
        VmFate(p.vm, MOVED, _unproven(ctx, vms[p.vm]), p.to_host, p.to_gpu) for p in placed.placed
    ]
    for p in (*placed.manual_only, *placed.unplaced):
        fates.append(VmFate(p.vm, BLOCKING, f"no host takes it: {p.reason}"))
    return fates


def _unproven(ctx: Context, vm: Vm) -> str:
    """What the vMotion rules leave not proven about the VM's move."""
    verdicts: list[Outcome | None] = [
        vgpu_options.migration_options(ctx, vm),
        stun.stun_time(ctx, vm),
    ]
    return "; ".join(f"not proven: {v.unproven}" for v in verdicts if v is not None and v.unproven)
