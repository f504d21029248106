"""Datastores, their mounts, and the SAN transport behind each VMFS LUN.

The join (see docs/inventory-schema.md): datastore extent diskName -> the host's
scsiLun with that canonicalName -> its key -> multipathInfo.lun with that key ->
path.adapter (an HBA key) -> the HBA, whose class gives the transport.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuaudit.inventory import Datastore, DatastoreMount, LunPath
from gpuaudit.vsphere.collect.hosts import adapter_kind
from gpuaudit.vsphere.collect.retrieve import ObjectProps

LOCAL_ADAPTERS = {"sas", "block", "pscsi", "pcie"}


@dataclass
class HostLunPaths:
    """One host's view of its LUNs: canonical name -> paths."""

    paths: dict[str, list[LunPath]] = field(default_factory=dict)


def host_lun_paths(obj: ObjectProps) -> HostLunPaths:
    adapters = {
        hba.key: (hba.device, adapter_kind(hba))
        for hba in obj.get("config.storageDevice.hostBusAdapter", [])
    }
    names = {lun.key: lun.canonicalName for lun in obj.get("config.storageDevice.scsiLun", [])}
    multipath = obj.get("config.storageDevice.multipathInfo")
    result = HostLunPaths()
    for lun in getattr(multipath, "lun", None) or []:
        canonical = names.get(lun.lun)
        if canonical is None:
            continue
        paths = []
        for path in lun.path or []:
            device, kind = adapters.get(path.adapter, (str(path.adapter), "other"))
            state = path.state or path.pathState or "unknown"
            paths.append(LunPath(adapter=device, adapter_kind=kind, state=state))
        result.paths[canonical] = paths
    return result


def build_datastore(
    obj: ObjectProps, host_names: dict[str, str], lun_paths: dict[str, HostLunPaths]
) -> Datastore:
    summary = obj.get("summary")
    info = obj.get("info")
    vmfs = getattr(info, "vmfs", None)
    ds_type = str(getattr(summary, "type", "") or "")
    ds = Datastore(
        name=obj.name,
        moref=obj.moref,
        type=ds_type,
        capacity_mb=int(getattr(summary, "capacity", 0) or 0) // (1024 * 1024),
        free_mb=int(getattr(summary, "freeSpace", 0) or 0) // (1024 * 1024),
        multiple_host_access=getattr(summary, "multipleHostAccess", None),
    )
    if vmfs is not None:
        ds.local = bool(vmfs.local) if vmfs.local is not None else None
        ds.luns = [extent.diskName for extent in vmfs.extent or []]
    for mount in obj.get("host", []):
        host_id = mount.key._moId
        mount_info = mount.mountInfo
        paths: list[LunPath] = []
        view = lun_paths.get(host_id)
        if view is not None:
            for lun in ds.luns:
                paths.extend(view.paths.get(lun, []))
        ds.mounts.append(
            DatastoreMount(
                host=host_names.get(host_id, host_id),
                mounted=bool(getattr(mount_info, "mounted", True)),
                accessible=bool(getattr(mount_info, "accessible", True)),
                paths=paths,
            )
        )
    ds.transport = transport(ds)
    return ds


def transport(ds: Datastore) -> str:
    """How hosts reach a datastore: fc, iscsi, fcoe, local, nfs, vsan, vvol, mixed, other."""
    dtype = ds.type.upper()
    if dtype.startswith("NFS"):
        return "nfs"
    if dtype == "VSAN":
        return "vsan"
    if dtype == "VVOL":
        return "vvol"
    if dtype != "VMFS":
        return "other"
    kinds = {
        "local" if p.adapter_kind in LOCAL_ADAPTERS else p.adapter_kind
        for m in ds.mounts
        for p in m.paths
    }
    if not kinds:
        return "local" if ds.local else "other"
    return kinds.pop() if len(kinds) == 1 else "mixed"
