"""Each page of a retrieval reduced, as it arrives, to what the assembly reads.

pyVmomi parses a property into objects that carry every field of their type, set or
not, and that sit in reference cycles; kept until the inventory is assembled, those of
an estate at vCenter's limits outweigh everything else the scan holds. So the
collector hands ``Slimmer.slims()`` to the retrievals (retrieve.Slim), and each object
keeps only the values the assembly goes on to read, in the form it reads them:

- a host is built into its inventory Host (hosts.build_host, its HA health and its LUN
  paths) at once, since that needs nothing of other objects but the names of the VMs
  on its GPUs: those stay morefs until the assembly names them;
- a VM keeps its scalar properties, its references as ``Ref`` (one per referenced
  object, shared), its devices only those the assembly reads (PCI passthrough devices
  and the members of device groups) and its extraConfig only the options it reads.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from gpuaudit.inventory import Host
from gpuaudit.vsphere.collect.hahealth import add_host_health
from gpuaudit.vsphere.collect.hosts import build_host
from gpuaudit.vsphere.collect.retrieve import ObjectProps, Slim
from gpuaudit.vsphere.collect.storage import HostLunPaths, host_lun_paths
from gpuaudit.vsphere.collect.vms import wanted_device, wanted_option


class Ref:
    """A managed object reference as the assembly reads one: its moref id."""

    __slots__ = ("_moId",)

    def __init__(self, moref: str) -> None:
        self._moId = moref

    def __repr__(self) -> str:
        return f"Ref({self._moId!r})"


class GraphicsVms:
    """A host's config.graphicsInfo entry as vms.device_candidates reads it: its VMs."""

    __slots__ = ("vm",)

    def __init__(self, vm: tuple[Ref, ...]) -> None:
        self.vm = vm


@dataclass(slots=True)
class BuiltHost:
    """A host built as its page arrived; its GPUs' VMs are morefs until named."""

    host: Host
    lun_paths: HostLunPaths


# What the assembly and device_candidates read of a host once it is built.
_HOST_KEEPS = ("name", "parent", "runtime.connectionState")
# VM properties whose values are enumerations or keys shared by many VMs.
_VM_SHARED_TEXT = ("runtime.powerState", "config.firmware", "runtime.minRequiredEVCModeKey")


class Slimmer:
    """The reductions of one collection, sharing one Ref per referenced object."""

    def __init__(self) -> None:
        self._refs: dict[str, Ref] = {}

    def slims(self) -> dict[str, Slim]:
        return {"HostSystem": self.host, "VirtualMachine": self.vm}

    def ref(self, obj: Any) -> Ref:
        key = str(obj._moId)
        found = self._refs.get(key)
        if found is None:
            found = self._refs[key] = Ref(sys.intern(key))
        return found

    def host(self, obj: ObjectProps) -> None:
        if obj.built is not None:
            return
        host = build_host(obj, {})
        add_host_health(host, obj)
        obj.built = BuiltHost(host, host_lun_paths(obj))
        props = obj.props
        kept: dict[str, Any] = {path: props[path] for path in _HOST_KEEPS if path in props}
        if kept.get("parent") is not None:
            kept["parent"] = self.ref(kept["parent"])
        state = kept.get("runtime.connectionState")
        if state is not None:
            kept["runtime.connectionState"] = sys.intern(str(state))
        if "config.graphicsInfo" in props:
            infos = props["config.graphicsInfo"]
            kept["config.graphicsInfo"] = (
                None
                if infos is None
                else [GraphicsVms(tuple(self.ref(v) for v in info.vm or [])) for info in infos]
            )
        obj.props = kept

    def vm(self, obj: ObjectProps) -> None:
        props = obj.props
        host = props.get("runtime.host")
        if host is not None:
            props["runtime.host"] = self.ref(host)
        datastores = props.get("datastore")
        if datastores is not None:
            props["datastore"] = [self.ref(d) for d in datastores]
        for path in _VM_SHARED_TEXT:
            value = props.get(path)
            if isinstance(value, str):
                props[path] = sys.intern(str(value))
        devices = props.get("config.hardware.device")
        if devices is not None:
            props["config.hardware.device"] = [d for d in devices if wanted_device(d)]
        options = props.get("config.extraConfig")
        if options is not None:
            props["config.extraConfig"] = [o for o in options if wanted_option(o)]
