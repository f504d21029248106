"""vCenter's own vMotion stun time estimates of vGPU profiles (vSphere 8.0 U2 and later).

vCenter publishes them only in ``EnvironmentBrowser.QueryConfigTarget(host)``: a
method of a cluster's environment browser, asked about one host, not a property
the bulk retrieval could read. The estimates depend on the host's ESXi build
and GPU model, so the collector asks once per distinct (ESXi build, GPU model)
among the connected 8.0.2+ hosts of each cluster that runs a powered-on vGPU VM,
about the first such host by name, and gives every host of that group its
answer. The cost is one call per group: at most clusters x builds x GPU models,
in practice one or two per vGPU cluster. Nothing is asked when the negotiated
API is older than 8.0.2 (the answer could not carry the estimates).

NotSupported means this vCenter offers none; any other fault (NoPermission, ...)
becomes a gap on the cluster. Either way the hosts keep no estimates, and VM-10
falls back to its own model.
"""

from __future__ import annotations

from typing import Any

from pyVmomi import VmomiSupport, vim, vmodl

from gpuaudit import vgpu_releases as R
from gpuaudit.inventory import Gap, Host, Inventory, StunEstimate

STUN_ESTIMATES_API = "vim.version.v8_0_2_0"
FIRST_RELEASE = R.Release(8, 0, 2)
GAP_PATH = "environmentBrowser.QueryConfigTarget().vgpuProfileInfo.stunTimeEstimates"


def estimate_groups(inv: Inventory) -> dict[str, list[list[Host]]]:
    """Per cluster that runs a powered-on vGPU VM: its connected 8.0.2+ GPU hosts,
    grouped by (ESXi build, GPU model), each group sorted by name."""
    vgpu_clusters = {
        vm.cluster
        for vm in inv.vms
        if vm.cluster and vm.power_state == "poweredOn" and any(g.kind == "vgpu" for g in vm.gpus)
    }
    groups: dict[str, dict[tuple[str, tuple[str, ...]], list[Host]]] = {}
    for host in sorted(inv.hosts, key=lambda h: h.name):
        if host.cluster not in vgpu_clusters or not host.connected or not host.gpus:
            continue
        release = R.esxi_release(host.version, host.build)
        if release is None or release < FIRST_RELEASE:
            continue
        # A tuple, not joined text: a name the host reports may itself hold the separator.
        models = tuple(sorted({g.model for g in host.gpus}))
        groups.setdefault(host.cluster, {}).setdefault((host.build, models), []).append(host)
    return {cluster: list(by_key.values()) for cluster, by_key in groups.items()}


def collect_stun_estimates(
    stub: Any, inv: Inventory, browsers: dict[str, Any], negotiated: str
) -> None:
    """Ask each cluster's environment browser once per group of estimate_groups."""
    if inv.vcenter.standalone_esxi or not VmomiSupport.IsChildVersion(
        negotiated, STUN_ESTIMATES_API
    ):
        return
    clusters = {c.name: c for c in inv.clusters}
    for cluster_name, groups in sorted(estimate_groups(inv).items()):
        browser = browsers.get(cluster_name)
        if browser is None:
            continue  # the cluster's environmentBrowser was withheld: already a gap
        for hosts in groups:
            asked = hosts[0]
            try:
                target = browser.QueryConfigTarget(host=vim.HostSystem(asked.moref, stub))
            except vmodl.fault.NotSupported:
                continue  # this vCenter offers no estimates: VM-10 keeps its own model
            except vmodl.MethodFault as exc:
                fault = type(exc).__name__.rsplit(".", 1)[-1]
                cluster = clusters.get(cluster_name)
                moref = cluster.moref if cluster else ""
                inv.gaps.append(
                    Gap(cluster_name, "ClusterComputeResource", GAP_PATH, fault, moref=moref)
                )
                continue
            table = estimates_of(target)
            for host in hosts:
                host.stun_estimates = {p: list(points) for p, points in table.items()}
                host.stun_estimates_host = asked.name if table else None


def estimates_of(target: Any) -> dict[str, list[StunEstimate]]:
    """Profile name -> its estimates by rising bandwidth; profiles without any are left out."""
    table: dict[str, list[StunEstimate]] = {}
    for info in getattr(target, "vgpuProfileInfo", None) or []:
        name = str(getattr(info, "profileName", "") or getattr(info, "name", "") or "")
        points = [
            StunEstimate(bandwidth_mbps=int(p.migrationBW), stun_s=int(p.stunTime))
            for p in getattr(info, "stunTimeEstimates", None) or []
            if p.migrationBW and p.migrationBW > 0
        ]
        if name and points:
            table[name] = sorted(points, key=lambda p: p.bandwidth_mbps)
    return table
