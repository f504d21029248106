"""The scopes of per-object rules: which objects a rule is offered, in which order,
and where a finding on each one is located.

A rule that does not apply to an object it is offered returns None for it: the
scope says which objects a rule may judge, the rule which of them it does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from gpuaudit.inventory import Cluster, Datastore, Gpu, Host, Inventory, VCenter, Vm
from gpuaudit.model import facts as F
from gpuaudit.rules.registry import Context, Scope, Where

VCENTER = "vCenter"  # the object name of a finding on the vCenter
INVENTORY = "inventory"  # the object name of a finding on the whole inventory


class HostGpu(NamedTuple):
    """A GPU with the host it is in: a GPU's name and place come from its host."""

    host: Host
    gpu: Gpu


class DatastoreUse(NamedTuple):
    """A datastore's name and the clusters whose GPU VMs keep files on it."""

    name: str
    clusters: list[str]


# Hosts: located on themselves, in their cluster.


def _at_host(ctx: Context, host: Host) -> Where:
    return Where(host.name, host.cluster, host.name)


def _all_hosts(ctx: Context) -> list[Host]:
    return ctx.facts.inventory.hosts


def _connected_hosts(ctx: Context) -> Iterator[Host]:
    return (h for h in ctx.facts.inventory.hosts if h.connected)


def _cluster_hosts(ctx: Context) -> Iterator[Host]:
    for cluster in ctx.facts.inventory.clusters:
        yield from ctx.facts.connected_hosts(cluster.name)


def _cluster_hosts_then_others(ctx: Context) -> Iterator[Host]:
    yield from _cluster_hosts(ctx)
    for host in ctx.facts.inventory.hosts:
        if host.connected and host.cluster not in ctx.facts.clusters:
            yield host


HOSTS = Scope("host", _all_hosts, _at_host)
"""Every host, connected or not, in inventory order."""

CONNECTED_HOSTS = Scope("host", _connected_hosts, _at_host)
"""Every connected host, in inventory order."""

CLUSTER_HOSTS = Scope("host", _cluster_hosts, _at_host)
"""The connected hosts of each cluster, cluster by cluster."""

CONNECTED_HOSTS_BY_CLUSTER = Scope("host", _cluster_hosts_then_others, _at_host)
"""The connected hosts of each cluster, cluster by cluster, then the connected hosts
of no known cluster (standalone hosts), in inventory order."""


# GPUs: named host/pci_id, located on their host.


def _gpus(ctx: Context) -> Iterator[HostGpu]:
    for host in ctx.facts.inventory.hosts:
        for gpu in host.gpus:
            yield HostGpu(host, gpu)


def _at_gpu(ctx: Context, item: HostGpu) -> Where:
    return Where(F.gpu_name(item.host, item.gpu), item.host.cluster, item.host.name)


GPUS = Scope("gpu", _gpus, _at_gpu)
"""Every GPU of every host, host by host in inventory order."""


# VMs: located on their host, in its cluster.


def _gpu_vms(ctx: Context) -> list[Vm]:
    return ctx.facts.gpu_vms


def _at_vm(ctx: Context, vm: Vm) -> Where:
    return Where(vm.name, ctx.facts.vm_cluster(vm), vm.host)


GPU_VMS = Scope("vm", _gpu_vms, _at_vm)
"""Every VM with a GPU device (passthrough, Dynamic DirectPath or vGPU), in inventory order."""


# Clusters: located in themselves.


def _at_cluster(ctx: Context, cluster: Cluster) -> Where:
    return Where(cluster.name, cluster.name)


def _clusters_with_gpu_vms(ctx: Context) -> list[Cluster]:
    return ctx.facts.gpu_clusters()


def _clusters_with_gpus(ctx: Context) -> list[Cluster]:
    return ctx.facts.clusters_with_gpus()


CLUSTERS_WITH_GPU_VMS = Scope("cluster", _clusters_with_gpu_vms, _at_cluster)
"""The clusters that register a GPU VM, in inventory order."""

CLUSTERS_WITH_GPUS = Scope("cluster", _clusters_with_gpus, _at_cluster)
"""The clusters with a GPU VM or a host with a GPU, in inventory order."""


# Datastores


def _gpu_vm_datastores(ctx: Context) -> Iterator[Datastore]:
    f = ctx.facts
    for name in sorted({ds for vm in f.gpu_vms for ds in vm.datastores}):
        if name in f.datastores:
            yield f.datastores[name]


def _at_datastore(ctx: Context, ds: Datastore) -> Where:
    return Where(ds.name)


def _clustered_gpu_vm_datastores(ctx: Context) -> Iterator[DatastoreUse]:
    f = ctx.facts
    users: dict[str, set[str]] = {}
    for vm in f.gpu_vms:
        cluster = f.vm_cluster(vm)
        if cluster is not None:
            for ds in vm.datastores:
                users.setdefault(ds, set()).add(cluster)
    for name in sorted(users):
        yield DatastoreUse(name, sorted(users[name]))


def _in_sole_cluster(ctx: Context, use: DatastoreUse) -> Where:
    return Where(use.name, use.clusters[0] if len(use.clusters) == 1 else None)


GPU_VM_DATASTORES = Scope("datastore", _gpu_vm_datastores, _at_datastore)
"""The datastores GPU VMs keep files on that the inventory describes, by name; located
in no cluster (a datastore may serve several)."""

CLUSTERED_GPU_VM_DATASTORES = Scope("datastore", _clustered_gpu_vm_datastores, _in_sole_cluster)
"""The datastores (by name, described or not) that GPU VMs of a cluster keep files on,
with those clusters, by name; located in the cluster when only one uses it."""


# The vCenter and the inventory: one object each.


def _vcenter(ctx: Context) -> list[VCenter]:
    return [ctx.facts.inventory.vcenter]


def _inventory(ctx: Context) -> list[Inventory]:
    return [ctx.facts.inventory]


THE_VCENTER = Scope("vcenter", _vcenter, lambda ctx, vc: Where(VCENTER))
"""The vCenter (or the standalone ESXi host scanned directly), named "vCenter"."""

THE_INVENTORY = Scope("inventory", _inventory, lambda ctx, inv: Where(INVENTORY))
"""The whole inventory, named "inventory"."""
