"""Storage rules: can every host reach the shared storage that HA restarts depend on?"""

from __future__ import annotations

from collections.abc import Iterator

from gpuaudit import facts as F
from gpuaudit.inventory import Datastore, Host, LunPath, StorageAdapter
from gpuaudit.rules.registry import Context, Verdict, rule

_DOWN = {"offline", "unbound", "fault", "linkdown", "lost"}
_FC = ("fc", "fcoe")


def _online(adapter: StorageAdapter) -> bool:
    return adapter.status.lower() not in _DOWN


def _kinds(ds: Datastore) -> set[str]:
    """The SAN transports a datastore uses, from its transport or its paths."""
    kinds = {ds.transport} if ds.transport in F.SAN_TRANSPORTS else set()
    if ds.transport == "mixed":
        kinds |= {p.adapter_kind for m in ds.mounts for p in m.paths}
    return kinds & set(F.SAN_TRANSPORTS)


@rule(
    id="ST-01",
    title="A cluster uses FC storage and one of its hosts has no online FC HBA",
    category="storage",
    severity="high",
    object_kind="host",
    rationale="""A Fibre Channel SAN needs an FC HBA in every host. A host without an
        online FC HBA cannot reach the cluster's FC datastores, so HA cannot restart their VMs on
        it.""",
    remediation="""Install or repair the FC HBA (cabling, zoning, driver) so that it is online, or
        take the host out of the cluster.""",
)
def fc_hba(ctx: Context) -> Iterator[Verdict]:
    f = ctx.facts
    for cluster in f.inventory.clusters:
        needed = set()
        for ds in f.cluster_datastores(cluster.name):
            needed |= _kinds(ds) & set(_FC)
        if not needed:
            continue
        for host in f.connected_hosts(cluster.name):
            hbas = [a for a in host.adapters if a.kind in needed]
            online = [a.device for a in hbas if _online(a)]
            evidence = {
                "needs": sorted(needed),
                "hbas": {a.device: a.status for a in hbas},
            }
            message = (
                f"online FC HBA: {', '.join(online)}"
                if online
                else f"{cluster.name} uses FC storage and this host has no online FC HBA"
            )
            yield Verdict(
                host.name, bool(online), message, evidence, cluster=cluster.name, host=host.name
            )


@rule(
    id="ST-02",
    title="A host that needs an iSCSI datastore has no iSCSI adapter",
    category="storage",
    severity="high",
    object_kind="host",
    rationale="""An iSCSI SAN needs no HBA (a NIC is enough), but ESXi still needs an iSCSI
        adapter (software iSCSI over a NIC, or a hardware one). A host of a cluster with an iSCSI
        datastore and no iSCSI adapter cannot reach it, so HA cannot restart its VMs there.""",
    remediation="""Enable the software iSCSI adapter on the host, bind it to the storage NICs and
        add the targets.""",
)
def iscsi_adapter(ctx: Context) -> Iterator[Verdict]:
    f = ctx.facts
    seen: set[str] = set()
    for cluster in f.inventory.clusters:
        datastores = [d.name for d in f.cluster_datastores(cluster.name) if "iscsi" in _kinds(d)]
        if datastores:
            for host in f.connected_hosts(cluster.name):
                seen.add(host.name)
                yield _iscsi_verdict(host, datastores)
    for host in f.inventory.hosts:
        if host.name in seen or not host.connected:
            continue
        datastores = [d.name for d in f.host_datastores(host.name) if "iscsi" in _kinds(d)]
        if datastores:
            yield _iscsi_verdict(host, datastores)


def _iscsi_verdict(host: Host, datastores: list[str]) -> Verdict:
    adapters = [a.device for a in host.adapters if a.kind == "iscsi"]
    message = (
        f"iSCSI adapter: {', '.join(adapters)}"
        if adapters
        else f"no iSCSI adapter, but needs {', '.join(datastores)}"
    )
    evidence = {"iscsi_datastores": datastores, "iscsi_adapters": adapters}
    return Verdict(
        host.name, bool(adapters), message, evidence, cluster=host.cluster, host=host.name
    )


@rule(
    id="ST-03",
    title="A datastore used by GPU VMs is not accessible on every connected host of the cluster",
    category="storage",
    severity="high",
    object_kind="datastore",
    rationale="""A VM's disks must be reachable from every host of the cluster. HA restarts a VM
        only on a host that mounts and can access all of its datastores, so every host without the
        datastore is one fewer restart target.""",
    remediation="""Mount the datastore on every host of the cluster (present the LUN, fix zoning,
        masking or NFS exports), or move the VMs' files to a datastore that is.""",
)
def datastore_everywhere(ctx: Context) -> Iterator[Verdict]:
    f = ctx.facts
    users: dict[str, set[str]] = {}
    for vm in f.gpu_vms:
        cluster = f.vm_cluster(vm)
        if cluster is None:
            continue
        for ds in vm.datastores:
            users.setdefault(ds, set()).add(cluster)
    for name in sorted(users):
        missing: dict[str, list[str]] = {}
        for cluster in sorted(users[name]):
            lacking = [h.name for h in f.connected_hosts(cluster) if not f.can_access(h.name, name)]
            if lacking:
                missing[cluster] = lacking
        clusters = sorted(users[name])
        evidence = {"clusters": clusters, "hosts_without_access": missing}
        if missing:
            parts = "; ".join(f"{c}: {', '.join(h)}" for c, h in missing.items())
            message = f"not mounted and accessible on {parts}"
        else:
            message = "mounted and accessible on every connected host of " + ", ".join(clusters)
        cluster_name = clusters[0] if len(clusters) == 1 else None
        yield Verdict(name, not missing, message, evidence, cluster=cluster_name)


@rule(
    id="ST-04",
    title="A SAN LUN of a GPU VM's datastore has one active path, or all paths through one adapter",
    category="storage",
    severity="medium",
    object_kind="datastore",
    rationale="""One failed cable, switch port or HBA takes a single-path LUN away, and with it
        every VM on it: shared storage that is itself a single point of failure defeats HA.""",
    remediation="""Give each host at least two active paths to the LUN through two adapters (two FC
        HBAs on two fabrics, or iSCSI port binding on two NICs).""",
)
def multipath(ctx: Context) -> Iterator[Verdict]:
    f = ctx.facts
    used = sorted({ds for vm in f.gpu_vms for ds in vm.datastores})
    for name in used:
        ds = f.datastores.get(name)
        if ds is None or not _kinds(ds):
            continue
        problems: dict[str, str] = {}
        checked = []
        for mount in ds.mounts:
            host = f.hosts.get(mount.host)
            if host is None or not host.connected or not mount.paths:
                continue
            checked.append(mount.host)
            problem = _path_problem(host, mount.paths)
            if problem:
                problems[mount.host] = problem
        if not checked:
            continue
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
        yield Verdict(name, not problems, message, evidence)


def _path_problem(host: Host, paths: list[LunPath]) -> str:
    active = [p for p in paths if p.state == "active"]
    adapters = {p.adapter for p in paths}
    software = {a.device for a in host.adapters if a.kind == "iscsi" and a.iscsi_software}
    if not active:
        return "no active path"
    if len(active) == 1:
        return f"a single active path ({active[0].adapter})"
    if len(adapters) == 1 and not adapters <= software:
        return f"all paths go through {next(iter(adapters))}"
    return ""


@rule(
    id="ST-05",
    title="A host has an FC HBA but uses no FC storage",
    category="storage",
    severity="info",
    object_kind="host",
    rationale="""An HBA has nothing to do with GPUs: it exists only for shared storage
        access. An FC HBA with no FC datastore behind it is cost without purpose, or a sign of a
        missing LUN.""",
    remediation="""Present the intended FC LUNs to the host, or drop the HBA from the design.""",
)
def unused_hba(ctx: Context) -> Iterator[Verdict]:
    f = ctx.facts
    for host in f.inventory.hosts:
        hbas = [a.device for a in host.adapters if a.kind in _FC]
        if not hbas or not host.connected:
            continue
        fc = [
            d.name
            for d in f.host_datastores(host.name)
            if d.transport in _FC
            or any(p.adapter_kind in _FC for m in d.mounts if m.host == host.name for p in m.paths)
        ]
        message = (
            f"FC HBA {', '.join(hbas)} serves {', '.join(fc)}"
            if fc
            else f"FC HBA {', '.join(hbas)} but no FC datastore"
        )
        evidence = {"fc_hbas": hbas, "fc_datastores": fc}
        yield Verdict(host.name, bool(fc), message, evidence, cluster=host.cluster, host=host.name)
