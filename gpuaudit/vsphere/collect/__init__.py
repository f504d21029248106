"""The collector: the only part of gpuaudit that touches pyVmomi.

``collect(si)`` reads a vCenter (or a standalone ESXi host) in a fixed number of
SOAP requests, whatever its size, and returns a plain-data Inventory; vCenter's
description of the vGPU profiles (with its stun time estimates) adds one
QueryConfigTarget call per (cluster, ESXi build, GPU model) of the vGPU clusters on
7.0.3 or later (collect.configtarget), and on vSphere 9.0 its count of the vGPUs each
host can take one QueryCapacity call per vGPU host (collect.capacity), and the NVIDIA
vGPU manager's version one fetchSoftwarePackages call per vGPU host (collect.software,
which needs the Host.Config.Image privilege). What it
cannot read (a disconnected host, a property the account may not see, a field
the negotiated API version lacks) becomes a Gap in the inventory, never an
exception.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from pyVmomi import VmomiSupport, vim

from gpuaudit.common.gc_pause import gc_paused
from gpuaudit.common.progress import Progress, Step, ignore
from gpuaudit.inventory import Gap, Inventory, VCenter
from gpuaudit.vsphere.collect.capacity import collect_capacity
from gpuaudit.vsphere.collect.configtarget import collect_config_target
from gpuaudit.vsphere.collect.hahealth import add_cluster_health, add_host_health
from gpuaudit.vsphere.collect.hosts import build_host, vmotion_gaps
from gpuaudit.vsphere.collect.operations import collect_operations
from gpuaudit.vsphere.collect.paths import SPECS, VERSIONED_FIELDS, VM_DEVICE_PATHS, device_paths
from gpuaudit.vsphere.collect.retrieve import (
    ObjectProps,
    OnPage,
    Slim,
    merge_into,
    retrieve,
    retrieve_objects,
)
from gpuaudit.vsphere.collect.slim import BuiltHost, Slimmer
from gpuaudit.vsphere.collect.software import collect_software
from gpuaudit.vsphere.collect.storage import HostLunPaths, build_datastore, host_lun_paths
from gpuaudit.vsphere.collect.vms import build_cluster, build_vm, device_candidates

HOTMIGRATE = "vgpu.hotmigrate.enabled"


def collect(
    si: Any,
    source: str = "",
    progress: Progress | None = None,
    telemetry_window: dt.timedelta | None = None,
) -> Inventory:
    """Read the whole GPU, HA and storage inventory behind service instance ``si``, with
    GPU telemetry over ``telemetry_window`` (default 24 hours) and licences."""
    say = progress or ignore
    content = si.RetrieveContent()
    inv = Inventory(
        source=source,
        collected_at=dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
    )
    inv.vcenter = _vcenter(content.about)
    say("reading inventory")
    slim = Slimmer().slims()
    with gc_paused():
        objects = retrieve(content, SPECS, on_page=_pages(say, "reading inventory"), slim=slim)
        say(f"read {len(objects)} objects")
        _read_devices(content, objects, say, device_paths(si._stub.version), slim)
        inv.vcenter.vgpu_hotmigrate_enabled = _hotmigrate(content, inv)
        _assemble(inv, objects)
        browsers = {
            o.name: o.get("environmentBrowser")
            for o in objects.values()
            if o.kind == "ClusterComputeResource" and o.get("environmentBrowser") is not None
        }
        del objects
    collect_config_target(si._stub, inv, browsers, si._stub.version)
    collect_capacity(si._stub, content, inv, si._stub.version, say)
    collect_software(content, inv, say)
    say("reading GPU telemetry and licences")
    collect_operations(si, content, inv, telemetry_window, say)
    _version_gaps(inv, si._stub.version)
    return inv


def _pages(say: Progress, phase: str) -> OnPage:
    """Tells ``say`` the objects and pages read so far in ``phase``."""

    def on_page(objects: int, pages: int) -> None:
        unit = "page" if pages == 1 else "pages"
        say(Step(phase, objects, unit="objects", detail=f"{pages:,} {unit}"))

    return on_page


def _vcenter(about: Any) -> VCenter:
    return VCenter(
        name=about.fullName or "",
        product=about.name or "",
        version=about.version or "",
        build=about.build or "",
        api_version=about.apiVersion or "",
        api_type=about.apiType or "",
        instance_uuid=about.instanceUuid or "",
    )


def _read_devices(
    content: Any,
    objects: dict[str, ObjectProps],
    say: Progress,
    paths: tuple[str, ...] = VM_DEVICE_PATHS,
    slim: Mapping[str, Slim] | None = None,
) -> None:
    """Add the device lists (``paths``) of the VMs that may hold a GPU
    (vms.device_candidates), each reduced by ``slim`` as its page arrives."""
    wanted = device_candidates(objects)
    if not wanted:
        return
    vms = sum(1 for o in objects.values() if o.kind == "VirtualMachine")
    phase = f"reading the devices of {len(wanted)} of {vms} VMs"
    say(phase)
    devices = retrieve_objects(
        content, vim.VirtualMachine, wanted, paths, on_page=_pages(say, phase), slim=slim
    )
    merge_into(objects, devices)
    for key in wanted:
        if key not in devices:  # deleted since the first read
            objects[key].missing.setdefault(VM_DEVICE_PATHS[0], "ManagedObjectNotFound")


def _hotmigrate(content: Any, inv: Inventory) -> bool | None:
    """vgpu.hotmigrate.enabled; a key that does not exist means the feature is off.

    The setting is vCenter's: a standalone ESXi host has none (None, and no gap).
    """
    if inv.vcenter.standalone_esxi:
        return None
    try:
        options = content.setting.QueryOptions(name=HOTMIGRATE)
    except vim.fault.InvalidName:
        return False
    except vim.fault.NoPermission:
        inv.gaps.append(Gap("vCenter", "OptionManager", HOTMIGRATE, "NoPermission"))
        return None
    for option in options or []:
        if option.key == HOTMIGRATE:
            return str(option.value).strip().lower() == "true"
    return False


class _Tree:
    """Names and parents of every object, to find each one's datacenter and cluster."""

    def __init__(self, objects: dict[str, ObjectProps]) -> None:
        self.objects = objects

    def names(self, kind: str) -> dict[str, str]:
        return {k: o.name for k, o in self.objects.items() if o.kind == kind}

    def ancestor(self, moref: str, kind: str) -> ObjectProps | None:
        seen = set()
        current = self.objects.get(moref)
        while current is not None and current.moref not in seen:
            seen.add(current.moref)
            parent = current.get("parent")
            if parent is None:
                return None
            current = self.objects.get(parent._moId)
            if current is not None and current.kind == kind:
                return current
        return None

    def datacenter(self, moref: str) -> str:
        found = self.ancestor(moref, "Datacenter")
        return found.name if found else ""


def _assemble(inv: Inventory, objects: dict[str, ObjectProps]) -> None:
    tree = _Tree(objects)
    host_names = tree.names("HostSystem")
    vm_names = tree.names("VirtualMachine")
    ds_names = tree.names("Datastore")
    by_kind: dict[str, list[ObjectProps]] = {}
    for obj in objects.values():
        by_kind.setdefault(obj.kind, []).append(obj)
        for path, fault in sorted(obj.missing.items()):
            inv.gaps.append(Gap(obj.name, obj.kind, path, fault, moref=obj.moref))

    inv.datacenters = sorted(o.name for o in by_kind.get("Datacenter", []))
    for obj in by_kind.get("ClusterComputeResource", []):
        cluster = build_cluster(obj, host_names, vm_names)
        cluster.datacenter = tree.datacenter(obj.moref)
        add_cluster_health(cluster, obj, ds_names, vm_names)
        inv.clusters.append(cluster)

    lun_paths: dict[str, HostLunPaths] = {}
    for obj in by_kind.get("HostSystem", []):
        if isinstance(obj.built, BuiltHost):  # built as its page arrived (collect.slim)
            host, lun_paths[obj.moref] = obj.built.host, obj.built.lun_paths
            for gpu in host.gpus:
                gpu.vms = [vm_names.get(v, v) for v in gpu.vms]
        else:
            host = build_host(obj, vm_names)
            add_host_health(host, obj)
            lun_paths[obj.moref] = host_lun_paths(obj)
        host.datacenter = tree.datacenter(obj.moref)
        parent_cluster = tree.ancestor(obj.moref, "ClusterComputeResource")
        host.cluster = parent_cluster.name if parent_cluster else None
        if not host.connected:
            inv.gaps.append(
                Gap(
                    host.name, "HostSystem", "config", f"host is {host.connection_state}", obj.moref
                )
            )
        inv.gaps.extend(vmotion_gaps(host))
        inv.hosts.append(host)

    for obj in by_kind.get("Datastore", []):
        ds = build_datastore(obj, host_names, lun_paths)
        ds.datacenter = tree.datacenter(obj.moref)
        inv.datastores.append(ds)

    hosts = {h.name: h for h in inv.hosts}
    clusters = {c.name: c for c in inv.clusters}
    for obj in by_kind.get("VirtualMachine", []):
        if obj.get("config.template", False):
            continue  # a template never runs: it holds no GPU
        vm = build_vm(obj, host_names, ds_names)
        vm_host = hosts.get(vm.host or "")
        if vm_host is not None:
            vm.cluster = vm_host.cluster
            vm.datacenter = vm_host.datacenter
        vm_cluster = clusters.get(vm.cluster or "")
        if vm_cluster is not None:
            vm.restart_priority = vm_cluster.restart_priority_overrides.get(vm.name)
        inv.vms.append(vm)

    inv.clusters.sort(key=lambda o: o.name)
    inv.hosts.sort(key=lambda o: o.name)
    inv.datastores.sort(key=lambda o: o.name)
    inv.vms.sort(key=lambda o: o.name)


def _version_gaps(inv: Inventory, negotiated: str) -> None:
    """Fields the negotiated API version cannot carry are gaps, not silent blanks."""
    for path, needed in VERSIONED_FIELDS.items():
        if not VmomiSupport.IsChildVersion(negotiated, needed):
            have = VmomiSupport.versionIdMap.get(negotiated, negotiated)
            reason = f"needs API {VmomiSupport.versionIdMap.get(needed, needed)}; negotiated {have}"
            inv.gaps.append(Gap("vCenter", "ServiceInstance", path, reason))
