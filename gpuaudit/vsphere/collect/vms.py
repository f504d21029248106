"""VirtualMachine properties to inventory VMs, and clusters with their HA settings."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pyVmomi import vim

from gpuaudit.inventory import (
    AdmissionControl,
    Cluster,
    GpuAttachment,
    Vm,
    VmDeviceGroup,
    VmHostRule,
    VmVmRule,
)
from gpuaudit.knowledge import catalog
from gpuaudit.vsphere.collect.retrieve import ObjectProps

_Passthrough = vim.vm.device.VirtualPCIPassthrough


def build_vm(obj: ObjectProps, host_names: dict[str, str], ds_names: dict[str, str]) -> Vm:
    host_ref = obj.get("runtime.host")
    reservation = obj.get("resourceConfig.memoryAllocation.reservation")
    return Vm(
        name=obj.name,
        moref=obj.moref,
        host=host_names.get(host_ref._moId, host_ref._moId) if host_ref is not None else None,
        power_state=str(obj.get("runtime.powerState", "poweredOff")),
        memory_mb=int(obj.get("config.hardware.memoryMB", 0)),
        memory_reservation_mb=int(reservation or 0),
        memory_locked_to_max=bool(obj.get("config.memoryReservationLockedToMax", False)),
        datastores=[ds_names.get(d._moId, d._moId) for d in obj.get("datastore", [])],
        gpus=[
            gpu
            for dev in obj.get("config.hardware.device", [])
            if (gpu := gpu_attachment(dev)) is not None
        ],
        firmware=obj.get("config.firmware") or None,
        mmio_options=mmio_options(obj.get("config.extraConfig", [])),
        vgpu_plugin_options=vgpu_plugin_options(obj.get("config.extraConfig", [])),
        evacuation_poweroff=evacuation_poweroff(obj.get("config.extraConfig", [])),
        min_evc_mode=obj.get("runtime.minRequiredEVCModeKey") or None,
        bios_uuid=str(obj.get("config.uuid") or ""),
        instance_uuid=str(obj.get("config.instanceUuid") or ""),
        device_groups=device_groups(
            obj.get("config.deviceGroups"), obj.get("config.hardware.device", [])
        ),
    )


def device_groups(groups: Any, devices: Any) -> list[VmDeviceGroup]:
    """The vendor device groups of a VM (config.deviceGroups), each with how many of its
    devices name it in their deviceGroupInfo; a group a device names that
    config.deviceGroups lacks is kept without a name."""
    members: dict[int, int] = {}
    for device in devices or []:
        info = getattr(device, "deviceGroupInfo", None)
        if info is not None:
            members[int(info.groupInstanceKey)] = members.get(int(info.groupInstanceKey), 0) + 1
    found = []
    for group in getattr(groups, "deviceGroup", None) or []:
        key = int(group.groupInstanceKey)
        name = str(getattr(group, "deviceGroupName", "") or "")
        found.append(VmDeviceGroup(name=name, key=key, devices=members.pop(key, 0)))
    found.extend(VmDeviceGroup(name="", key=key, devices=n) for key, n in sorted(members.items()))
    return found


MMIO_KEYS = ("pciPassthru.use64bitMMIO", "pciPassthru.64bitMMIOSizeGB")
_MMIO_LOWERED = frozenset(k.lower() for k in MMIO_KEYS)


def mmio_options(extra_config: Any) -> dict[str, str]:
    """The 64-bit MMIO entries of a VM's extraConfig; keys match case-insensitively, as
    the VMX file's do."""
    wanted = {k.lower(): k for k in MMIO_KEYS}
    found = {}
    for option in extra_config or []:
        key = wanted.get(str(option.key).lower())
        if key is not None:
            found[key] = str(option.value)
    return found


# The vGPU plugin parameters that disable a VM's live migration when set to 1 (NVIDIA
# Virtual GPU Software User Guide 17: 6.4.3 unified memory, 6.5.1 CUDA debuggers, 6.5.2.4
# CUDA profilers), pciPassthru<vgpu-id>.cfg.<name>, one per vGPU of the VM.
PLUGIN_OPTION = re.compile(
    r"pcipassthru(\d+)\.cfg\.(enable_uvm|enable_debugging|enable_profiling)", re.IGNORECASE
)


def vgpu_plugin_options(extra_config: Any) -> dict[str, str]:
    """The migration-disabling vGPU plugin parameters of a VM's extraConfig, under their
    documented spelling; keys match case-insensitively, as the VMX file's do."""
    found = {}
    for option in extra_config or []:
        match = PLUGIN_OPTION.fullmatch(str(option.key))
        if match is not None:
            found[f"pciPassthru{match[1]}.cfg.{match[2].lower()}"] = str(option.value)
    return found


EVACUATION_POWEROFF = "maintenance.vm.evacuation.poweroff"


def evacuation_poweroff(extra_config: Any) -> str | None:
    """The VM's maintenance.vm.evacuation.poweroff as set; the key matches
    case-insensitively, as the VMX file's do."""
    for option in extra_config or []:
        if str(option.key).lower() == EVACUATION_POWEROFF:
            return str(option.value)
    return None


def wanted_option(option: Any) -> bool:
    """Whether build_vm reads this extraConfig option: mmio_options',
    vgpu_plugin_options' or evacuation_poweroff's."""
    key = str(option.key)
    lowered = key.lower()
    return (
        lowered in _MMIO_LOWERED
        or lowered == EVACUATION_POWEROFF
        or PLUGIN_OPTION.fullmatch(key) is not None
    )


def wanted_device(device: Any) -> bool:
    """Whether build_vm reads this device: gpu_attachment's PCI passthrough devices,
    and device_groups' members of a device group."""
    return isinstance(device, _Passthrough) or getattr(device, "deviceGroupInfo", None) is not None


def device_candidates(objects: Mapping[str, ObjectProps]) -> list[str]:
    """The VMs whose device lists are read: every VM that may hold a GPU.

    A VM's devices are a third of everything the collector reads, and most VMs
    hold no GPU, yet no cheaper property says which do. Three facts narrow it
    without missing one:

    - vSphere powers on no VM with a passthrough or vGPU device unless all its
      memory is reserved, so a powered-on VM without that reservation holds none;
    - a host's ``config.graphicsInfo[].vm`` lists the powered-on VMs using each
      graphics device (the vGPU VMs among them), whatever their reservation;
    - a VM that is not powered on can hold anything: it is always read.

    Any doubt reads the VM: a property the server withheld, no host, or a host
    whose graphics devices could not be read (disconnected, or NoPermission).
    """
    using_graphics: set[str] = set()
    unread_hosts: set[str] = set()
    for obj in objects.values():
        if obj.kind != "HostSystem":
            continue
        unread = obj.get("runtime.connectionState") != "connected"
        if unread or "config.graphicsInfo" in obj.missing:
            unread_hosts.add(obj.moref)
        for info in obj.get("config.graphicsInfo", []):
            using_graphics.update(vm._moId for vm in info.vm or [])
    return [
        obj.moref
        for obj in objects.values()
        if obj.kind == "VirtualMachine" and needs_devices(obj, using_graphics, unread_hosts)
    ]


def needs_devices(vm: ObjectProps, using_graphics: set[str], unread_hosts: set[str]) -> bool:
    """Whether ``vm`` may hold a GPU, judged by device_candidates' rules."""
    if vm.get("config.template", False):
        return False  # never runs, and is left out of the inventory
    if vm.missing or vm.get("runtime.powerState") != "poweredOn":
        return True
    host = vm.get("runtime.host")
    if vm.moref in using_graphics or host is None or host._moId in unread_hosts:
        return True
    if vm.get("config.memoryReservationLockedToMax", False):
        return True
    memory = vm.get("config.hardware.memoryMB")
    reservation = vm.get("resourceConfig.memoryAllocation.reservation")
    return memory is None or reservation is None or int(reservation) >= int(memory)


def gpu_attachment(device: Any) -> GpuAttachment | None:
    """A VM device as a GPU attachment, or None for any other device."""
    if not isinstance(device, _Passthrough):
        return None
    backing = device.backing
    label = getattr(device.deviceInfo, "label", "") or ""
    info = getattr(device, "deviceGroupInfo", None)
    group = int(info.groupInstanceKey) if info is not None else None
    if isinstance(backing, _Passthrough.VmiopBackingInfo):
        return GpuAttachment(
            kind="vgpu",
            label=label,
            profile=backing.vgpu,
            migrate_supported=getattr(backing, "migrateSupported", None),
            migrate_data_mb=getattr(backing, "vgpuMigrateDataSizeMB", None),
            device_group=group,
        )
    if isinstance(backing, _Passthrough.DynamicBackingInfo):
        return GpuAttachment(
            kind="dynamic",
            label=label,
            pci_id=backing.assignedId or None,
            allowed=[
                (catalog.unsigned16(a.vendorId), catalog.unsigned16(a.deviceId))
                for a in backing.allowedDevice or []
            ],
            custom_label=backing.customLabel or None,
            allowed_sub_ids=_allowed_sub_ids(backing.allowedDevice or []),
            device_group=group,
        )
    if isinstance(backing, _Passthrough.DeviceBackingInfo):
        return GpuAttachment(
            kind="passthrough",
            label=label,
            pci_id=backing.id,
            vendor_id=catalog.unsigned16(backing.vendorId or 0),
            device_id=_device_id(backing.deviceId),
            device_group=group,
        )
    return None  # another kind of PCI device (e.g. SR-IOV NIC): not a GPU


def _allowed_sub_ids(allowed: Any) -> list[tuple[int, int] | None]:
    """Each allowed entry's (subVendorId, subDeviceId); -1 for an id the entry leaves
    unset, None when it sets neither. Empty when no entry sets any."""
    subs: list[tuple[int, int] | None] = []
    for a in allowed:
        vendor, device = getattr(a, "subVendorId", None), getattr(a, "subDeviceId", None)
        if vendor is None and device is None:
            subs.append(None)
            continue
        subs.append(
            (
                -1 if vendor is None else catalog.unsigned16(vendor),
                -1 if device is None else catalog.unsigned16(device),
            )
        )
    return subs if any(s is not None for s in subs) else []


def _device_id(text: str | None) -> int | None:
    """DeviceBackingInfo.deviceId is a hex string ("27b8"); some hosts send a signed decimal."""
    if not text:
        return None
    try:
        value = int(text, 10) if text.startswith("-") else int(text, 16)
    except ValueError:
        return None
    return catalog.unsigned16(value)


_POLICIES: tuple[tuple[type, str], ...] = (
    (vim.cluster.FailoverLevelAdmissionControlPolicy, "slots"),
    (vim.cluster.FailoverResourcesAdmissionControlPolicy, "percent"),
    (vim.cluster.FailoverHostAdmissionControlPolicy, "dedicated-hosts"),
)


def build_cluster(
    obj: ObjectProps, host_names: dict[str, str], vm_names: dict[str, str]
) -> Cluster:
    config = obj.get("configurationEx")
    das = getattr(config, "dasConfig", None)
    drs = getattr(config, "drsConfig", None)
    cluster = Cluster(name=obj.name, moref=obj.moref)
    if das is not None:
        cluster.ha_enabled = bool(das.enabled)
        cluster.ha_host_monitoring = (das.hostMonitoring or "enabled") == "enabled"
        cluster.admission_control = _admission(das, host_names)
        defaults = das.defaultVmSettings
        if defaults is not None and defaults.restartPriority:
            cluster.default_restart_priority = defaults.restartPriority
    summary = obj.get("summary")
    cluster.evc_mode = getattr(summary, "currentEVCModeKey", None) or None
    if drs is not None:
        cluster.drs_enabled = bool(drs.enabled)
        cluster.drs_automation = str(drs.defaultVmBehavior) if drs.defaultVmBehavior else None
        cluster.drs_options = {
            str(o.key): "" if o.value is None else str(o.value) for o in drs.option or []
        }
    if das is not None:
        cluster.ha_options = {
            str(o.key): "" if o.value is None else str(o.value) for o in das.option or []
        }
    _add_rules(cluster, config, host_names, vm_names)
    for vm_config in getattr(config, "dasVmConfig", None) or []:
        settings = vm_config.dasSettings
        priority = (settings.restartPriority if settings else None) or vm_config.restartPriority
        if priority and priority != "clusterRestartPriority":
            name = vm_names.get(vm_config.key._moId, vm_config.key._moId)
            cluster.restart_priority_overrides[name] = priority
    return cluster


def _add_rules(
    cluster: Cluster, config: Any, host_names: dict[str, str], vm_names: dict[str, str]
) -> None:
    """The cluster's DRS rules, with each group's VMs and hosts resolved to names."""
    vm_groups: dict[str, list[str]] = {}
    host_groups: dict[str, list[str]] = {}
    for group in getattr(config, "group", None) or []:
        if isinstance(group, vim.cluster.VmGroup):
            vm_groups[group.name] = [vm_names.get(v._moId, v._moId) for v in group.vm or []]
        elif isinstance(group, vim.cluster.HostGroup):
            host_groups[group.name] = [host_names.get(h._moId, h._moId) for h in group.host or []]
    for rule in getattr(config, "rule", None) or []:
        enabled, mandatory = bool(rule.enabled), bool(rule.mandatory)
        if isinstance(rule, vim.cluster.VmHostRuleInfo):
            affine = bool(rule.affineHostGroupName)
            host_group = (rule.affineHostGroupName or rule.antiAffineHostGroupName) or ""
            cluster.vm_host_rules.append(
                VmHostRule(
                    name=rule.name or "",
                    enabled=enabled,
                    mandatory=mandatory,
                    affine=affine,
                    vm_group=rule.vmGroupName or "",
                    host_group=host_group,
                    vms=vm_groups.get(rule.vmGroupName or "", []),
                    hosts=host_groups.get(host_group, []),
                )
            )
        elif isinstance(rule, (vim.cluster.AffinityRuleSpec, vim.cluster.AntiAffinityRuleSpec)):
            cluster.vm_vm_rules.append(
                VmVmRule(
                    name=rule.name or "",
                    enabled=enabled,
                    affinity=isinstance(rule, vim.cluster.AffinityRuleSpec),
                    mandatory=mandatory,
                    vms=[vm_names.get(v._moId, v._moId) for v in rule.vm or []],
                )
            )


def _admission(das: Any, host_names: dict[str, str]) -> AdmissionControl:
    ac = AdmissionControl(enabled=bool(das.admissionControlEnabled))
    policy = das.admissionControlPolicy
    if policy is None:
        return ac
    ac.policy = next((name for cls, name in _POLICIES if isinstance(policy, cls)), "other")
    if ac.policy == "slots":
        ac.failover_level = policy.failoverLevel
    elif ac.policy == "percent":
        ac.cpu_percent = policy.cpuFailoverResourcesPercent
        ac.memory_percent = policy.memoryFailoverResourcesPercent
    elif ac.policy == "dedicated-hosts":
        ac.failover_hosts = [host_names.get(h._moId, h._moId) for h in policy.failoverHosts or []]
    return ac
