"""Vendor device groups: where a VM whose GPUs form one may restart, and when that is proven.

vSphere API reference, VirtualMachineVirtualDeviceGroups (API 8.0.0.1): "Vendor Device
Groups allow third-parties to define collections of devices that must be allocated to a
virtual machine as a unit. Typically, this is because the set of devices are related in
a some way, e.g. a physical link connects the devices." A VM names each of its groups
(VirtualMachineVirtualDeviceGroupsVendorDeviceGroup.deviceGroupName) after one "defined
in the VirtualMachineVendorDeviceGroupInfo", which a host lists in its ConfigTarget
(vendorDeviceGroupInfo): a host that does not list the name cannot take the group.

NVIDIA AI Enterprise 8.0, "Device Groups"
(https://docs.nvidia.com/ai-enterprise/release-8/8.0/infra-software/vgpu/features/device-groups.html):
"Platforms can detect sets of physically connected devices (for example GPUs on NVLink
or GPU-NIC pairs), then present them as one logical unit to the VM", devices "that share
a common PCIe switch or a direct interconnect". So a group's GPUs restart only on GPUs
the host links; no API reports which GPUs of a host those are. NVIDIA AI Enterprise 8.0,
"NVIDIA NVSwitch"
(https://docs.nvidia.com/ai-enterprise/release-8/8.0/infra-software/vgpu/features/nvswitch.html):
"a high-bandwidth, low-latency fabric that connects multiple GPUs in one system ... The
switch behaves as a crossbar", on the HGX baseboards NVIDIA lists (gpuaudit's board data
names the fabric: vgpu_types.BoardFacts.nvswitch).

A restart of the group on a host that offers it is proven only where any free GPUs are
linked ones:

- every GPU of the host is of one board whose GPUs NVIDIA puts on an NVSwitch fabric:
  each reaches every other; or
- the group takes every GPU of the host, and all are free: whichever the host links,
  they are those.

Anything else (an NVLink bridge between some of the GPUs, a board NVIDIA names no
fabric for, a group that also holds a NIC, an offer vCenter did not report) is not
proven, with the reason ``unproven`` gives; never a refusal, never a pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gpuaudit.inventory import Host, Vm


@dataclass(frozen=True)
class GroupNeed:
    """A vendor device group of a VM, as a restart must honour it."""

    name: str  # deviceGroupName; "" when a device names a group config.deviceGroups lacks
    key: int  # groupInstanceKey
    gpus: int  # the VM's GPU devices in the group
    devices: int  # the VM's devices in the group, GPUs or not


@dataclass(frozen=True)
class HostGpu:
    """What decides whether a host's GPUs are linked: one GPU of the host."""

    board: str | None  # NVIDIA's name for the board; None when gpuaudit's data lacks it
    nvswitch: bool  # NVIDIA puts the board's GPUs on an NVSwitch fabric
    free: bool  # nothing runs on it


def needs_of(vm: Vm) -> dict[int, GroupNeed]:
    """The VM's groups that hold at least one of its GPUs, by groupInstanceKey."""
    counts: dict[int, int] = {}
    for gpu in vm.gpus:
        if gpu.device_group is not None:
            counts[gpu.device_group] = counts.get(gpu.device_group, 0) + 1
    named = {g.key: g for g in vm.device_groups}
    needs = {}
    for key, gpus in counts.items():
        group = named.get(key)
        name = group.name if group is not None else ""
        devices = group.devices if group is not None else gpus
        needs[key] = GroupNeed(name, key, gpus, max(devices, gpus))
    return needs


def offered(host: Host) -> frozenset[str] | None:
    """The names of the device groups vCenter says the host offers; None when not read."""
    if host.device_groups is None:
        return None
    return frozenset(g.name for g in host.device_groups)


def refusal(need: GroupNeed, offer: frozenset[str] | None) -> str:
    """Why a host never takes the group: it is known not to offer its name; "" otherwise."""
    if offer is None or not need.name or need.name in offer:
        return ""
    return f"does not offer the device group '{need.name}'"


def unproven(need: GroupNeed, offer: frozenset[str] | None, gpus: Sequence[HostGpu]) -> str:
    """Why a restart of the group on a host whose offer ``refusal`` does not refuse is not
    proven to get linked GPUs; "" when it is proven."""
    if not need.name:
        return (
            "a device of the VM names a vendor device group its config.deviceGroups does not list"
        )
    if offer is None:
        return f"vCenter did not report which hosts offer the device group '{need.name}'"
    if need.devices > need.gpus:
        return (
            f"the device group '{need.name}' also holds devices other than GPUs, which the "
            "simulation does not place"
        )
    if one_fabric(gpus):
        return ""
    if need.gpus == len(gpus) and all(g.free for g in gpus):
        return ""
    return (
        f"no API reports which GPUs of {_boards(gpus)} the device group '{need.name}' links, "
        "and NVIDIA names no NVSwitch fabric for them: free GPUs may not be the linked ones"
    )


def one_fabric(gpus: Sequence[HostGpu]) -> bool:
    """Every GPU is of one board whose GPUs NVIDIA puts on an NVSwitch fabric."""
    return all(g.nvswitch for g in gpus) and len({g.board for g in gpus}) == 1


def _boards(gpus: Iterable[HostGpu]) -> str:
    return " and ".join(sorted({g.board or "a board gpuaudit has no data for" for g in gpus}))
