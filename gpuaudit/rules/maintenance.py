"""Maintenance rules: can a host enter maintenance mode without stopping GPU VMs?

They judge the maintenance readiness that gpuaudit.plan.maintenance works out for each
host (``Context.maintenance``): which GPU VMs DRS moves, powers off, or leaves blocking.
"""

from __future__ import annotations

from gpuaudit.inventory import Cluster, Host
from gpuaudit.model.policy import Intent
from gpuaudit.results import BLOCKING, POWERED_OFF, HostMaintenance
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.drs import REFERENCES
from gpuaudit.rules.registry import Context, Outcome, name_few, rule


def must_stay_up(intent: Intent) -> bool:
    """The intent admits no stop of a GPU VM: its workload keeps state, or the business
    accepts no restart time (under a minute)."""
    return not intent.stateless or intent.max_restart_minutes < 1


def host_readiness(ctx: Context, host: Host) -> HostMaintenance | None:
    """The host's maintenance readiness; None when it was not worked out."""
    cluster = ctx.maintenance.get(host.cluster or "")
    if cluster is None:
        return None
    return next((h for h in cluster.hosts if h.host == host.name), None)


def maintenance_stops(ctx: Context, host: Host) -> Outcome | None:
    readiness = host_readiness(ctx, host)
    if readiness is None or not readiness.vms:
        return None
    off = [v.vm for v in readiness.vms if v.fate == POWERED_OFF]
    stuck = [v.vm for v in readiness.vms if v.fate == BLOCKING]
    strict = must_stay_up(ctx.policy.intent_for(host.cluster))
    evidence = {
        "moved": len(readiness.vms) - len(off) - len(stuck),
        "powered_off": off,
        "blocking": stuck,
        "must_stay_up": strict,
    }
    if not off and not stuck:
        return Outcome(True, f"all {len(readiness.vms)} GPU VMs move by vMotion", evidence)
    parts = [
        f"{name_few(off)} powered off" if off else "",
        f"{name_few(stuck)} blocking" if stuck else "",
    ]
    told = "maintenance mode stops GPU VMs: " + "; ".join(p for p in parts if p)
    if strict:
        return Outcome(False, f"{told}, and the intent says they must stay up", evidence)
    return Outcome(True, f"{told}; the intent accepts a restart", evidence)


rule(
    id="VM-12",
    title="A host's maintenance would stop GPU VMs that the intent says must stay up",
    category="vmotion",
    severity="high",
    scope=scopes.CLUSTER_HOSTS,
    rationale="""Entering maintenance mode, a host hands its VMs to DRS. A VM with a DirectPath
        I/O device cannot be vMotioned and one whose maintenance.vm.evacuation.poweroff is true
        is powered off; a vGPU VM moves only when vCenter allows vGPU vMotion, the cluster's
        DRS options let maintenance mode evacuate vGPU VMs (VgpuMMAutomationTimeoutSecs=-1),
        its migration is supported, its stun time is below the tolerated one and another host
        offers its profile on its GPU type with room; otherwise it blocks the host until it
        is moved or powered off by hand. Where the cluster's intent says the workload keeps
        state, or accepts no restart time (max_restart_minutes under 1), such a stop is
        downtime the design does not allow.""",
    remediation="""Make room for the stopped VMs' profiles on other hosts, set the cluster's DRS
        option VgpuMMAutomationTimeoutSecs=-1, move passthrough workloads to vGPU or to an
        application that runs active-active, or plan the host's maintenance window with the
        workload's owners.""",
    references=(sources.VGPU_VMOTION_7, REFERENCES["VM-09"][0]),
)(maintenance_stops)


def no_clean_host(ctx: Context, cluster: Cluster) -> Outcome | None:
    readiness = ctx.maintenance.get(cluster.name)
    if readiness is None:
        return None
    loaded = [h for h in readiness.hosts if h.vms]
    if not loaded:
        return None
    clean = [h.host for h in loaded if not h.downtime]
    least = min(loaded, key=lambda h: (len(h.downtime), h.host))
    evidence = {
        "hosts_with_gpu_vms": len(loaded),
        "hosts_without_downtime": clean,
        "least_downtime": {"host": least.host, "vms": len(least.downtime)},
    }
    if clean:
        return Outcome(
            True, f"{name_few(clean)} can enter maintenance mode with every GPU VM moved", evidence
        )
    return Outcome(
        False,
        f"each of the {len(loaded)} hosts running GPU VMs stops some for maintenance; the "
        f"fewest: {len(least.downtime)} on {least.host}",
        evidence,
    )


rule(
    id="VM-13",
    title="No host of a cluster can enter maintenance mode without GPU VM downtime",
    category="vmotion",
    severity="medium",
    scope=scopes.CLUSTERS_WITH_GPU_VMS,
    rationale="""Upgrades and repairs take one host at a time into maintenance mode (vSphere
        Lifecycle Manager remediates so). When every host that runs GPU VMs would power some
        off or be blocked by them, no host of the cluster can be serviced without GPU VM
        downtime, and remediation stalls until someone moves or stops them by hand.""",
    remediation="""See each host's maintenance readiness in the report: free room for the
        blocked profiles (a spare host or GPU), set VgpuMMAutomationTimeoutSecs=-1, and plan
        a window for the VMs that must be powered off.""",
    references=(sources.VGPU_VMOTION_7, REFERENCES["VM-09"][0]),
)(no_clean_host)
