"""HostSystem properties to inventory Hosts: GPUs, vGPU profiles, adapters, vMotion."""

from __future__ import annotations

from typing import Any

from pyVmomi import vim

from gpuaudit.inventory import Gap, Gpu, Host, StorageAdapter, VgpuProfile, VmotionNic
from gpuaudit.knowledge import catalog
from gpuaudit.vsphere.collect import functions
from gpuaudit.vsphere.collect.retrieve import ObjectProps

# Subclasses before their parents: FCoE is a kind of FC HBA.
_ADAPTER_KINDS: tuple[tuple[type, str], ...] = (
    (vim.host.FibreChannelOverEthernetHba, "fcoe"),
    (vim.host.FibreChannelHba, "fc"),
    (vim.host.InternetScsiHba, "iscsi"),
    (vim.host.SerialAttachedHba, "sas"),
    (vim.host.BlockHba, "block"),
    (vim.host.ParallelScsiHba, "pscsi"),
    (vim.host.PcieHba, "pcie"),
    (vim.host.RdmaHba, "rdma"),
    (vim.host.TcpHba, "tcp"),
)


def adapter_kind(hba: Any) -> str:
    for cls, name in _ADAPTER_KINDS:
        if isinstance(hba, cls):
            return name
    return "other"


def wwn(value: int | None) -> str | None:
    """A World Wide Name (an xsd:long, so possibly negative) as 10:00:00:..."""
    if value is None:
        return None
    text = f"{value & 0xFFFFFFFFFFFFFFFF:016x}"
    return ":".join(text[i : i + 2] for i in range(0, 16, 2))


def build_host(obj: ObjectProps, vm_names: dict[str, str]) -> Host:
    product = obj.get("summary.config.product")
    hardware = obj.get("summary.hardware")
    host = Host(
        name=obj.name,
        moref=obj.moref,
        version=str(getattr(product, "version", "") or ""),
        build=str(getattr(product, "build", "") or ""),
        vendor=str(getattr(hardware, "vendor", "") or ""),
        model=str(getattr(hardware, "model", "") or ""),
        connection_state=str(obj.get("runtime.connectionState", "unknown")),
        in_maintenance=bool(obj.get("runtime.inMaintenanceMode", False)),
        cpu_cores=int(getattr(hardware, "numCpuCores", 0) or 0),
        cpu_mhz=int(getattr(hardware, "cpuMhz", 0) or 0),
        memory_mb=int(getattr(hardware, "memorySize", 0) or 0) // (1024 * 1024),
    )
    host.gpus, vfs = _gpus(obj, vm_names)
    host.unattached_virtual_functions = functions.attach(host.gpus, vfs)
    host.vgpu_profiles = _profiles(obj)
    graphics = obj.get("config.graphicsConfig")
    if graphics is not None:
        host.default_graphics_type = graphics.hostDefaultGraphicsType or None
        host.assignment_policy = graphics.sharedPassthruAssignmentPolicy or None
        own = {d.deviceId: d.graphicsType for d in graphics.deviceType or []}
        for gpu in host.gpus:
            gpu.configured_graphics_type = own.get(gpu.pci_id) or None
    host.adapters = [_adapter(hba) for hba in obj.get("config.storageDevice.hostBusAdapter", [])]
    host.vmotion_nics = _vmotion_nics(obj)
    host.max_evc_mode = obj.get("summary.maxEVCModeKey") or None
    bios = obj.get("hardware.biosInfo")
    if bios is not None:
        host.bios_version = str(getattr(bios, "biosVersion", "") or "") or None
        released = getattr(bios, "releaseDate", None)
        host.bios_release_date = released.date().isoformat() if released else None
    return host


def _gpus(obj: ObjectProps, vm_names: dict[str, str]) -> tuple[list[Gpu], list[str]]:
    """The host's physical GPUs, and the PCI ids of the virtual functions it lists."""
    passthru = {p.id: p for p in obj.get("config.pciPassthruInfo", [])}
    graphics = {g.pciId: g for g in obj.get("config.graphicsInfo", [])}
    gpus = []
    vfs = []
    for dev in obj.get("hardware.pciDevice", []):
        if not catalog.is_gpu(dev.vendorId, dev.classId):
            continue
        vendor = catalog.unsigned16(dev.vendorId)
        device = catalog.unsigned16(dev.deviceId)
        name = dev.deviceName or ""
        # The subsystem ids tell apart boards that share a device id (A2 and A16).
        sub_vendor = catalog.unsigned16(dev.subVendorId or 0)
        sub_device = catalog.unsigned16(dev.subDeviceId or 0)
        if functions.is_virtual_function(vendor, sub_vendor, sub_device):
            vfs.append(dev.id)
            continue
        model = catalog.model_for(
            vendor, device, name, sub_vendor_id=sub_vendor, sub_device_id=sub_device
        )
        gpu = Gpu(
            pci_id=dev.id,
            vendor_id=vendor,
            device_id=device,
            sub_vendor_id=sub_vendor,
            sub_device_id=sub_device,
            vendor_name=dev.vendorName or "",
            device_name=name,
            model=model.name if model else catalog.model_name(vendor, device, name),
            known_model=model is not None,
            memory_mb=model.memory_mb if model else 0,
        )
        pt = passthru.get(dev.id)
        if pt is not None:
            gpu.passthrough_capable = bool(pt.passthruCapable)
            gpu.passthrough_enabled = bool(pt.passthruEnabled)
            gpu.passthrough_active = bool(pt.passthruActive)
            gpu.hardware_label = str(getattr(pt, "hardwareLabel", "") or "")
            if isinstance(pt, vim.host.SriovInfo):
                gpu.sriov_capable = bool(pt.sriovCapable)
                gpu.sriov_enabled = bool(pt.sriovEnabled)
                gpu.sriov_active = bool(pt.sriovActive)
                gpu.sriov_vfs = int(pt.numVirtualFunction or 0)
        info = graphics.get(dev.id)
        if info is not None:
            gpu.graphics_type = info.graphicsType or None
            gpu.vgpu_mode = getattr(info, "vgpuMode", None) or None
            if info.memorySizeInKB:
                # What the host reports beats the catalogue (and covers unknown ids).
                gpu.memory_mb = int(info.memorySizeInKB) // 1024
            gpu.vms = [vm_names.get(v._moId, v._moId) for v in info.vm or []]
        gpus.append(gpu)
    return gpus, vfs


def _profiles(obj: ObjectProps) -> list[VgpuProfile]:
    caps = {c.vgpu: c for c in obj.get("config.sharedGpuCapabilities", [])}
    names = list(obj.get("config.sharedPassthruGpuTypes", []))
    names += [n for n in caps if n not in names]
    profiles = []
    for name in names:
        cap = caps.get(name)
        profiles.append(
            VgpuProfile(
                name=name,
                migrate_supported=bool(cap.migrateSupported) if cap is not None else None,
                suspend_supported=bool(cap.suspendSupported) if cap is not None else None,
            )
        )
    return profiles


def _adapter(hba: Any) -> StorageAdapter:
    kind = adapter_kind(hba)
    adapter = StorageAdapter(
        device=hba.device,
        kind=kind,
        key=hba.key or "",
        model=hba.model or "",
        driver=hba.driver or "",
        status=hba.status or "",
    )
    if kind in ("fc", "fcoe"):
        adapter.port_wwn = wwn(hba.portWorldWideName)
        adapter.node_wwn = wwn(hba.nodeWorldWideName)
    if kind == "iscsi":
        adapter.iscsi_software = bool(hba.isSoftwareBased)
    return adapter


def _vmotion_nics(obj: ObjectProps) -> list[VmotionNic]:
    """vmknics selected for vMotion, with the speed of their switch's slowest uplink.

    A vmknic sits on a standard switch's port group, or on a distributed switch's
    port (``spec.distributedVirtualPort``), whose uplinks on this host are the pnics
    of the host's proxy switch for that distributed switch.
    """
    standard = _portgroup_switches(obj)
    proxies = {p.dvsUuid: p for p in obj.get("config.network.proxySwitch", [])}
    speeds = _pnic_speeds(obj)
    nics = []
    for net in obj.get("config.virtualNicManagerInfo.netConfig", []):
        if net.nicType != "vmotion":
            continue
        selected = set(net.selectedVnic or [])
        for cand in net.candidateVnic or []:
            if cand.key not in selected:
                continue
            ip = getattr(getattr(cand.spec, "ip", None), "ipAddress", "") or ""
            nic = VmotionNic(device=cand.device, ip=ip, portgroup=cand.portgroup or "")
            port = getattr(cand.spec, "distributedVirtualPort", None)
            if port is not None:
                nic.distributed = True
                proxy = proxies.get(port.switchUuid)
                nic.switch = (proxy.dvsName or port.switchUuid) if proxy else ""
                pnics = list(proxy.pnic or []) if proxy else []
            else:
                name, pnics = standard.get(nic.portgroup, ("", []))
                nic.switch = name
            nic.uplink_speed_mbps = _slowest(speeds, pnics)
            nics.append(nic)
    return nics


def vmotion_gaps(host: Host) -> list[Gap]:
    """A gap for each vMotion vmknic whose uplinks could not be determined."""
    gaps = []
    for nic in host.vmotion_nics:
        if nic.uplink_speed_mbps is not None:
            continue
        if nic.distributed:
            path = "config.network.proxySwitch"
            why = (
                f"{nic.device}: no connected uplink on distributed switch {nic.switch}"
                if nic.switch
                else f"{nic.device}: its distributed switch is not among the host's proxy switches"
            )
        else:
            path = "config.network.vswitch"
            why = (
                f"{nic.device}: no connected uplink on {nic.switch}"
                if nic.switch
                else f"{nic.device}: port group {nic.portgroup or '?'} is on no standard switch"
            )
        gaps.append(Gap(host.name, "HostSystem", path, why, moref=host.moref))
    return gaps


def _pnic_speeds(obj: ObjectProps) -> dict[str, int]:
    """pnic key -> link speed (Mb/s), for the pnics whose link is up."""
    return {
        p.key: p.linkSpeed.speedMb
        for p in obj.get("config.network.pnic", [])
        if p.linkSpeed and p.linkSpeed.speedMb
    }


def _slowest(speeds: dict[str, int], pnics: list[str]) -> int | None:
    connected = [speeds[k] for k in pnics if k in speeds]
    return min(connected) if connected else None


def _portgroup_switches(obj: ObjectProps) -> dict[str, tuple[str, list[str]]]:
    """Portgroup name -> (its standard switch, that switch's pnic keys)."""
    switches = {s.name: list(s.pnic or []) for s in obj.get("config.network.vswitch", [])}
    result = {}
    for pg in obj.get("config.network.portgroup", []):
        name = pg.spec.vswitchName
        if name in switches:
            result[pg.spec.name] = (name, switches[name])
    return result
