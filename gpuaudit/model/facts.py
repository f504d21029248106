"""Facts derived from an inventory that several rules and the simulation share.

Built once per audit: lookups by name, which VMs use GPUs, which hosts can reach
which datastores, effective HA restart priorities, GPU frame buffers, and the
memory a host has for VMs and a VM needs to power on there.

The memory model is an estimate, deliberately on the high side of overhead. A VM
powers on only where the host's unreserved memory covers its reservation plus
its overhead memory (VMware, "vSphere Resource Management", "Overhead Memory on
Virtual Machines": overhead grows with the VM's memory and vCPUs, about 170 MB
for 16 GB and 8 vCPUs). The hypervisor keeps part of the host's memory for
itself. The estimate:

- host memory for VMs = memorySize - (HOST_SYSTEM_MB + memorySize / 100);
- a powered-on VM takes its reservation (all its memory for a GPU VM, which
  cannot power on with less) + VM_OVERHEAD_MB + its memory / 100.

The exact overhead of a VM is known only to vCenter per (VM, host) pair
(OverheadMemoryManager.LookupVmOverheadMemory), one call per VM, which the
collector does not make.
"""

from __future__ import annotations

import math
from functools import cached_property

from gpuaudit.inventory import Cluster, Datastore, Gpu, GpuAttachment, Host, Inventory, Vm
from gpuaudit.knowledge import catalog, vgpu_types

# HA restart priorities, first restarted first; "disabled" is never restarted by HA.
PRIORITIES = ("highest", "high", "medium", "low", "lowest", "disabled")
SAN_TRANSPORTS = ("fc", "fcoe", "iscsi")
SHARED_DIRECT = "sharedDirect"
HOST_SYSTEM_MB = 2048  # the hypervisor's own memory, plus 1% of the host's
VM_OVERHEAD_MB = 256  # per powered-on VM, plus 1% of its memory


def is_gpu_vm(vm: Vm) -> bool:
    return bool(vm.gpus)


def kinds(vm: Vm) -> set[str]:
    return {a.kind for a in vm.gpus}


def is_vgpu_vm(vm: Vm) -> bool:
    return "vgpu" in kinds(vm)


def profiles(vm: Vm) -> list[str]:
    return [a.profile for a in vm.gpus if a.kind == "vgpu" and a.profile]


def vm_reserved_mb(vm: Vm) -> int:
    """The memory reservation the VM needs to power on (a GPU VM reserves all of it)."""
    if vm.gpus or vm.memory_locked_to_max:
        return max(vm.memory_mb, vm.memory_reservation_mb)
    return vm.memory_reservation_mb


def vm_memory_need_mb(vm: Vm) -> int:
    """Reservation plus estimated overhead: what the VM takes from a host's memory."""
    return vm_reserved_mb(vm) + VM_OVERHEAD_MB + math.ceil(vm.memory_mb / 100)


def host_vm_memory_mb(host: Host) -> int | None:
    """The host's memory left for VMs after the hypervisor's share; None when unknown."""
    if host.memory_mb <= 0:
        return None
    return max(0, host.memory_mb - HOST_SYSTEM_MB - math.ceil(host.memory_mb / 100))


def offered(host: Host) -> dict[str, bool | None]:
    """Profile name (lower case) -> migrate_supported, for the profiles the host offers."""
    return {p.name.lower(): p.migrate_supported for p in host.vgpu_profiles}


def gpu_name(host: Host | str, gpu: Gpu) -> str:
    name = host if isinstance(host, str) else host.name
    return f"{name}/{gpu.pci_id}"


def gpu_memory(gpu: Gpu) -> int:
    """The frame buffer in MB: as the host reports it, else from the catalogue."""
    if gpu.memory_mb > 0:
        return gpu.memory_mb
    model = gpu_model(gpu)
    return model.memory_mb if model else 0


def gpu_prefix(gpu: Gpu) -> str | None:
    """The GPU's short name in vGPU profile names (grid_l4-4q -> l4), when known."""
    model = gpu_model(gpu)
    return model.profile_prefix if model else None


def gpu_model(gpu: Gpu) -> catalog.GpuModel | None:
    """The catalogue's model of a GPU, told by its ids and subsystem ids."""
    return catalog.model_for(
        gpu.vendor_id,
        gpu.device_id,
        gpu.device_name,
        sub_vendor_id=gpu.sub_vendor_id,
        sub_device_id=gpu.sub_device_id,
    )


def gpu_board(gpu: Gpu) -> vgpu_types.BoardFacts | None:
    """NVIDIA's published vGPU facts for the GPU's board: the catalogue tells the board
    (by subsystem id, or by name for the A2 and A16), else its PCI ids alone."""
    model = gpu_model(gpu)
    if model is not None:
        return vgpu_types.board_of_model(model)
    return vgpu_types.board_for(gpu.vendor_id, gpu.device_id, gpu.sub_vendor_id, gpu.sub_device_id)


def board_unknown(gpu: Gpu) -> bool:
    """Nothing tells the GPU's board: no catalogue model and no PCI ids (a what-if's new
    host of a model no catalogue knows). Whether it is of a given type is not known."""
    return not gpu.known_model and not gpu.vendor_id and not gpu.device_id


def gpu_type(gpu: Gpu) -> str:
    """The physical GPU type, as NVIDIA's "a physical GPU of the same type" means it: the
    board of NVIDIA's data where it is known (a board may have several PCI device ids),
    else the PCI vendor and device id."""
    board = gpu_board(gpu)
    if board is not None:
        return board.name
    return f"PCI {gpu.vendor_id:04x}:{gpu.device_id:04x}"


def gpu_usable(gpu: Gpu) -> bool:
    """Capacity a GPU VM can use now: passthrough active, or in vGPU (Shared Direct) mode."""
    return gpu.passthrough_active or gpu.graphics_type == SHARED_DIRECT


class Facts:
    """Lookups over one inventory."""

    def __init__(self, inventory: Inventory) -> None:
        self.inventory = inventory
        self.hosts = {h.name: h for h in inventory.hosts}
        self.datastores = {d.name: d for d in inventory.datastores}
        self.clusters = {c.name: c for c in inventory.clusters}
        self._access: dict[str, set[str]] = {
            d.name: {m.host for m in d.mounts if m.mounted and m.accessible}
            for d in inventory.datastores
        }
        self._connected_names: dict[str, frozenset[str]] = {}
        self._offering: dict[tuple[str, tuple[str, ...]], tuple[Host, ...]] = {}
        self._offered: dict[int, dict[str, bool | None]] = {}
        self._gpu_types: dict[int, frozenset[str]] = {}

    # VMs
    def vm_host(self, vm: Vm) -> Host | None:
        return self.hosts.get(vm.host) if vm.host else None

    def vm_cluster(self, vm: Vm) -> str | None:
        """The cluster of the VM's host (the VM's own field when the host is unknown)."""
        host = self.vm_host(vm)
        if host is not None:
            return host.cluster
        return vm.cluster

    @cached_property
    def gpu_vms(self) -> list[Vm]:
        return [vm for vm in self.inventory.vms if is_gpu_vm(vm)]

    @cached_property
    def vgpu_vms(self) -> list[Vm]:
        """The GPU VMs with a vGPU: asked per cluster (maintenance readiness's VM-01)."""
        return [vm for vm in self.gpu_vms if is_vgpu_vm(vm)]

    @cached_property
    def _cluster_gpu_vms(self) -> dict[str, list[Vm]]:
        out: dict[str, list[Vm]] = {}
        for vm in self.gpu_vms:
            cluster = self.vm_cluster(vm)
            if cluster is not None:
                out.setdefault(cluster, []).append(vm)
        return out

    def cluster_gpu_vms(self, cluster: str) -> list[Vm]:
        return self._cluster_gpu_vms.get(cluster, [])

    @cached_property
    def _host_gpu_vms(self) -> dict[str, list[Vm]]:
        out: dict[str, list[Vm]] = {}
        for vm in self.gpu_vms:
            if vm.host is not None:
                out.setdefault(vm.host, []).append(vm)
        return out

    def host_gpu_vms(self, host: str) -> list[Vm]:
        return list(self._host_gpu_vms.get(host, []))

    def restart_priority(self, vm: Vm) -> str:
        """The VM's effective HA restart priority."""
        cluster = self.clusters.get(self.vm_cluster(vm) or "")
        value = vm.restart_priority
        if not value and cluster is not None:
            value = cluster.restart_priority_overrides.get(vm.name)
        if (not value or value == "clusterRestartPriority") and cluster is not None:
            value = cluster.default_restart_priority
        return value if value in PRIORITIES else "medium"

    @cached_property
    def _host_running(self) -> dict[str, list[Vm]]:
        out: dict[str, list[Vm]] = {}
        for vm in self.inventory.vms:
            if vm.powered_on and vm.host is not None:
                out.setdefault(vm.host, []).append(vm)
        return out

    def host_running_vms(self, host: str) -> list[Vm]:
        """The host's powered-on VMs (GPU or not), in inventory order."""
        return list(self._host_running.get(host, []))

    def host_memory_used_mb(self, host: str) -> int:
        """The memory the host's powered-on VMs (GPU or not) take, by the estimate above."""
        return sum(vm_memory_need_mb(vm) for vm in self._host_running.get(host, []))

    # Clusters and hosts
    def ha_restarts(self, cluster: str) -> bool:
        """Whether vSphere HA restarts the VMs of a failed host: HA on, host monitoring on."""
        c = self.clusters.get(cluster)
        return c is not None and c.ha_enabled and c.ha_host_monitoring

    @cached_property
    def _cluster_hosts(self) -> dict[str, list[Host]]:
        out: dict[str, list[Host]] = {}
        for host in self.inventory.hosts:
            if host.cluster is not None:
                out.setdefault(host.cluster, []).append(host)
        return out

    def cluster_hosts(self, cluster: str) -> list[Host]:
        return list(self._cluster_hosts.get(cluster, []))

    # Per-VM rules ask these of the VM's cluster: built once per cluster, not once per VM.
    @cached_property
    def _connected_hosts(self) -> dict[str, list[Host]]:
        return {c: [h for h in hosts if h.connected] for c, hosts in self._cluster_hosts.items()}

    @cached_property
    def _active_hosts(self) -> dict[str, list[Host]]:
        return {
            c: [h for h in hosts if not h.in_maintenance]
            for c, hosts in self._connected_hosts.items()
        }

    def connected_hosts(self, cluster: str) -> list[Host]:
        return list(self._connected_hosts.get(cluster, []))

    def connected_host_names(self, cluster: str) -> frozenset[str]:
        found = self._connected_names.get(cluster)
        if found is None:
            found = frozenset(h.name for h in self._connected_hosts.get(cluster, []))
            self._connected_names[cluster] = found
        return found

    def active_hosts(self, cluster: str) -> list[Host]:
        """Hosts that can run VMs now: connected and not in maintenance mode."""
        return list(self._active_hosts.get(cluster, []))

    def hosts_offering(self, cluster: str, wanted: tuple[str, ...]) -> tuple[Host, ...]:
        """The active hosts of the cluster that offer every profile (lower case) in ``wanted``,
        in the cluster's order."""
        key = (cluster, wanted)
        found = self._offering.get(key)
        if found is None:
            found = tuple(
                h
                for h in self._active_hosts.get(cluster, [])
                if all(p in self._offered_by(h) for p in wanted)
            )
            self._offering[key] = found
        return found

    def _offered_by(self, host: Host) -> dict[str, bool | None]:
        found = self._offered.get(id(host))
        if found is None:
            found = self._offered[id(host)] = offered(host)
        return found

    def gpu_types(self, host: Host) -> frozenset[str]:
        """The physical GPU types (gpu_type) of the host's GPUs."""
        found = self._gpu_types.get(id(host))
        if found is None:
            found = self._gpu_types[id(host)] = frozenset(gpu_type(g) for g in host.gpus)
        return found

    def gpu_clusters(self) -> list[Cluster]:
        """Clusters that register at least one GPU VM."""
        return [c for c in self.inventory.clusters if self.cluster_gpu_vms(c.name)]

    def clusters_with_gpus(self) -> list[Cluster]:
        """Clusters with a GPU VM or a host that has a GPU."""
        return [
            c
            for c in self.inventory.clusters
            if self.cluster_gpu_vms(c.name) or any(h.gpus for h in self.cluster_hosts(c.name))
        ]

    # Storage
    def can_access(self, host: str, datastore: str) -> bool:
        return host in self._access.get(datastore, set())

    def accessible_from(self, datastore: str) -> set[str]:
        return self._access.get(datastore, set())

    @cached_property
    def _host_datastores(self) -> dict[str, list[Datastore]]:
        out: dict[str, list[Datastore]] = {}
        for d in self.inventory.datastores:
            for host in dict.fromkeys(m.host for m in d.mounts):
                out.setdefault(host, []).append(d)
        return out

    def host_datastores(self, host: str) -> list[Datastore]:
        """Datastores with a mount entry for the host, in inventory order."""
        return list(self._host_datastores.get(host, []))

    def cluster_datastores(self, cluster: str) -> list[Datastore]:
        """Datastores mounted by at least one host of the cluster, in inventory order."""
        names = {
            d.name
            for h in self.cluster_hosts(cluster)
            for d in self._host_datastores.get(h.name, [])
        }
        return [d for d in self.inventory.datastores if d.name in names]

    def shared_in_cluster(self, datastore: str, cluster: str) -> bool:
        """Mounted and accessible on at least two hosts of the cluster."""
        names = {h.name for h in self.cluster_hosts(cluster)}
        return len(self.accessible_from(datastore) & names) >= 2

    # GPUs
    def gpu_of_vm(self, vm: Vm) -> Gpu | None:
        """A GPU of the VM's host that lists the VM, or that a passthrough device names."""
        host = self.vm_host(vm)
        if host is None:
            return None
        pci_ids = {a.pci_id for a in vm.gpus if a.pci_id}
        for gpu in host.gpus:
            if vm.name in gpu.vms or gpu.pci_id in pci_ids:
                return gpu
        return None

    def attachment_fraction(self, vm: Vm, attachment: GpuAttachment) -> float | None:
        """The share of one physical GPU that an attachment takes (1.0 for passthrough);
        None for a vGPU whose frame buffer neither vCenter nor the profile's name gives."""
        if attachment.kind != "vgpu":
            return 1.0
        host = self.vm_host(vm)
        size = profile_memory_mb(host, attachment.profile or "")
        if size is None:
            return None
        info = catalog.parse_profile(attachment.profile or "")
        gpu = self.gpu_of_vm(vm)
        memory = gpu_memory(gpu) if gpu is not None else 0
        if memory <= 0 and info is not None:
            # Only a prefix that tells the frame buffer: Blackwell's "dc" names several boards.
            sizes = {m.memory_mb for m in catalog.MODELS.values() if m.profile_prefix == info.gpu}
            memory = sizes.pop() if len(sizes) == 1 else 0
        return min(1.0, size / memory) if memory > 0 else 1.0


def profile_memory_mb(host: Host | None, profile: str) -> int | None:
    """A vGPU profile's frame buffer in MB: vCenter's (vgpuProfileInfo's fbSizeInGib,
    read for the host's offered profiles) where it gives one, else what the name says
    (gpuaudit/knowledge/type_names.py); None when neither does."""
    key = profile.strip().lower()
    for p in host.vgpu_profiles if host is not None else []:
        if p.name.lower() == key and p.frame_buffer_gib:
            return p.frame_buffer_gib * 1024
    info = catalog.parse_profile(profile)
    return info.memory_mb if info is not None else None


UNKNOWN_EDITION = "unknown (profile not recognised)"


def vm_edition(vm: Vm) -> str | None:
    """The NVIDIA licence edition a VM's vGPU needs; None for a VM without vGPU."""
    names = profiles(vm)
    if not names:
        return None
    editions = []
    for profile in names:
        info = catalog.parse_profile(profile)
        editions.append(info.edition if info else UNKNOWN_EDITION)
    return editions[0] if len(set(editions)) == 1 else " + ".join(sorted(set(editions)))
