"""Storage rules: can every host reach the shared storage that HA restarts depend on?"""

from __future__ import annotations

from gpuaudit.inventory import Datastore, Host, LunPath, StorageAdapter
from gpuaudit.model import facts as F
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.registry import Context, Outcome, rule

_DOWN = {"offline", "unbound", "fault", "linkdown", "lost"}
_FC = ("fc", "fcoe")

# The sources of the rules' guidance, title and URL, to become each rule's references.
REFERENCES = {
    "ST-04": [
        (
            "vSphere API: HostMultipathInfoPath (path states)",
            "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/data-structures/HostMultipathInfoPath",
        ),
        (
            "vSphere Storage: view datastore paths (Active, Standby, Disabled, Dead)",
            "https://docs.vmware.com/en/VMware-vSphere/6.7/com.vmware.vsphere.storage.doc/"
            "GUID-B901CF0E-6CB5-4149-9D15-EC771D5F1C9D.html",
        ),
    ],
}


def _online(adapter: StorageAdapter) -> bool:
    return adapter.status.lower() not in _DOWN


def _kinds(ds: Datastore) -> set[str]:
    """The SAN transports a datastore uses, from its transport or its paths."""
    kinds = {ds.transport} if ds.transport in F.SAN_TRANSPORTS else set()
    if ds.transport == "mixed":
        kinds |= {p.adapter_kind for m in ds.mounts for p in m.paths}
    return kinds & set(F.SAN_TRANSPORTS)


def _cluster_kinds(ctx: Context, cluster: str) -> list[tuple[Datastore, set[str]]]:
    """The datastores mounted in the cluster with their SAN transports, once per cluster."""
    return ctx.once(
        ("storage.cluster_kinds", cluster),
        lambda: [(ds, _kinds(ds)) for ds in ctx.facts.cluster_datastores(cluster)],
    )


def fc_hba(ctx: Context, host: Host) -> Outcome | None:
    needed: set[str] = set()
    for _, kinds in _cluster_kinds(ctx, host.cluster or ""):
        needed |= kinds & set(_FC)
    if not needed:
        return None
    hbas = [a for a in host.adapters if a.kind in needed]
    online = [a.device for a in hbas if _online(a)]
    evidence = {
        "needs": sorted(needed),
        "hbas": {a.device: a.status for a in hbas},
    }
    message = (
        f"online FC HBA: {', '.join(online)}"
        if online
        else f"{host.cluster} uses FC storage and this host has no online FC HBA"
    )
    return Outcome(bool(online), message, evidence)


rule(
    id="ST-01",
    title="A cluster uses FC storage and one of its hosts has no online FC HBA",
    category="storage",
    severity="high",
    scope=scopes.CLUSTER_HOSTS,
    rationale="""A Fibre Channel SAN needs an FC HBA in every host. A host without an
        online FC HBA cannot reach the cluster's FC datastores, so HA cannot restart their VMs on
        it.""",
    remediation="""Install or repair the FC HBA (cabling, zoning, driver) so that it is online, or
        take the host out of the cluster.""",
    references=(sources.FC_MULTIPATHING, sources.HA_CLUSTER),
)(fc_hba)


def iscsi_adapter(ctx: Context, host: Host) -> Outcome | None:
    f = ctx.facts
    # A host of a cluster needs what any host of its cluster mounts: HA may restart there.
    if host.cluster in f.clusters:
        datastores = [d.name for d, kinds in _cluster_kinds(ctx, host.cluster) if "iscsi" in kinds]
    else:
        datastores = [d.name for d in f.host_datastores(host.name) if "iscsi" in _kinds(d)]
    if not datastores:
        return None
    adapters = [a.device for a in host.adapters if a.kind == "iscsi"]
    message = (
        f"iSCSI adapter: {', '.join(adapters)}"
        if adapters
        else f"no iSCSI adapter, but needs {', '.join(datastores)}"
    )
    evidence = {"iscsi_datastores": datastores, "iscsi_adapters": adapters}
    return Outcome(bool(adapters), message, evidence)


rule(
    id="ST-02",
    title="A host that needs an iSCSI datastore has no iSCSI adapter",
    category="storage",
    severity="high",
    scope=scopes.CONNECTED_HOSTS_BY_CLUSTER,
    rationale="""An iSCSI SAN needs no HBA (a NIC is enough), but ESXi still needs an iSCSI
        adapter (software iSCSI over a NIC, or a hardware one). A host of a cluster with an iSCSI
        datastore and no iSCSI adapter cannot reach it, so HA cannot restart its VMs there.""",
    remediation="""Enable the software iSCSI adapter on the host, bind it to the storage NICs and
        add the targets.""",
    references=(sources.ISCSI_NETWORK, sources.HA_CLUSTER),
)(iscsi_adapter)


def datastore_everywhere(ctx: Context, use: scopes.DatastoreUse) -> Outcome:
    f = ctx.facts
    missing: dict[str, list[str]] = {}
    for cluster in use.clusters:
        lacking = [h.name for h in f.connected_hosts(cluster) if not f.can_access(h.name, use.name)]
        if lacking:
            missing[cluster] = lacking
    evidence = {"clusters": use.clusters, "hosts_without_access": missing}
    if missing:
        parts = "; ".join(f"{c}: {', '.join(h)}" for c, h in missing.items())
        message = f"not mounted and accessible on {parts}"
    else:
        message = "mounted and accessible on every connected host of " + ", ".join(use.clusters)
    return Outcome(not missing, message, evidence)


rule(
    id="ST-03",
    title="A datastore used by GPU VMs is not accessible on every connected host of the cluster",
    category="storage",
    severity="high",
    scope=scopes.CLUSTERED_GPU_VM_DATASTORES,
    rationale="""A VM's disks must be reachable from every host of the cluster. HA restarts a VM
        only on a host that mounts and can access all of its datastores, so every host without the
        datastore is one fewer restart target.""",
    remediation="""Mount the datastore on every host of the cluster (present the LUN, fix zoning,
        masking or NFS exports), or move the VMs' files to a datastore that is.""",
    references=(sources.HA_CLUSTER, sources.HA_HOW_IT_WORKS),
)(datastore_everywhere)


def multipath(ctx: Context, ds: Datastore) -> Outcome | None:
    if not _kinds(ds):
        return None
    problems: dict[str, str] = {}
    checked = []
    for mount in ds.mounts:
        host = ctx.facts.hosts.get(mount.host)
        if host is None or not host.connected or not mount.paths:
            continue
        checked.append(mount.host)
        problem = _path_problem(host, mount.paths)
        if problem:
            problems[mount.host] = problem
    if not checked:
        return None
    evidence = {
        "luns": ds.luns,
        "paths": {
            m.host: [f"{p.adapter}:{p.state}" for p in m.paths] for m in ds.mounts if m.paths
        },
        "problems": problems,
    }
    if problems:
        message = "; ".join(f"{h}: {p}" for h, p in problems.items())
    else:
        message = f"redundant paths from {', '.join(checked)}"
    return Outcome(not problems, message, evidence)


rule(
    id="ST-04",
    title="A SAN LUN of a GPU VM's datastore has fewer than two usable paths, a dead or disabled "
    "path, or all paths through one adapter",
    category="storage",
    severity="medium",
    scope=scopes.GPU_VM_DATASTORES,
    rationale="""One failed cable, switch port or HBA takes a single-path LUN away, and with it
        every VM on it: shared storage that is itself a single point of failure defeats HA. An
        active path carries I/O and a standby path takes over when it fails (an active/passive
        array shows one active path and the others standby), so both count as usable. A dead or
        disabled path is redundancy already lost.""",
    remediation="""Give each host at least two usable (active or standby) paths to the LUN through
        two adapters (two FC HBAs on two fabrics, or iSCSI port binding on two NICs), and repair or
        re-enable dead and disabled paths.""",
    references=(sources.FC_MULTIPATHING, sources.ISCSI_MULTIPLE_ADAPTERS, *REFERENCES["ST-04"]),
)(multipath)


_USABLE = ("active", "standby")  # a standby path takes over when the active one fails
_BROKEN = ("dead", "disabled")


def _path_problem(host: Host, paths: list[LunPath]) -> str:
    """What is wrong with a host's paths to a LUN, or "" when they are redundant."""
    usable = [p for p in paths if p.state in _USABLE]
    problems = [
        f"{state} path{'s' if len(broken) > 1 else ''} through {', '.join(broken)}"
        for state in _BROKEN
        if (broken := [p.adapter for p in paths if p.state == state])
    ]
    if not usable:
        problems.append("no usable (active or standby) path")
    elif len(usable) == 1:
        problems.append(f"a single usable path ({usable[0].adapter}, {usable[0].state})")
    elif not any(p.state == "active" for p in usable):
        problems.append("no active path, only standby ones")
    else:
        adapters = {p.adapter for p in usable}
        software = {a.device for a in host.adapters if a.kind == "iscsi" and a.iscsi_software}
        if len(adapters) == 1 and not adapters <= software:
            problems.append(f"all usable paths go through {next(iter(adapters))}")
    return ", ".join(problems)


def unused_hba(ctx: Context, host: Host) -> Outcome | None:
    hbas = [a.device for a in host.adapters if a.kind in _FC]
    if not hbas:
        return None
    fc = [
        d.name
        for d in ctx.facts.host_datastores(host.name)
        if d.transport in _FC
        or any(p.adapter_kind in _FC for m in d.mounts if m.host == host.name for p in m.paths)
    ]
    message = (
        f"FC HBA {', '.join(hbas)} serves {', '.join(fc)}"
        if fc
        else f"FC HBA {', '.join(hbas)} but no FC datastore"
    )
    evidence = {"fc_hbas": hbas, "fc_datastores": fc}
    return Outcome(bool(fc), message, evidence)


rule(
    id="ST-05",
    title="A host has an FC HBA but uses no FC storage",
    category="storage",
    severity="info",
    scope=scopes.CONNECTED_HOSTS,
    rationale="""An HBA has nothing to do with GPUs: it exists only for shared storage
        access. An FC HBA with no FC datastore behind it is cost without purpose, or a sign of a
        missing LUN.""",
    remediation="""Present the intended FC LUNs to the host, or drop the HBA from the design.""",
    references=(sources.FC_MULTIPATHING,),
)(unused_hba)
