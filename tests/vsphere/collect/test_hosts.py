"""gpuaudit.vsphere.collect.hosts on HostSystem properties built in memory, every field by hand.

The property paths and enum values are the vSphere API's (HostSystem.hardware,
config.graphicsInfo, config.network, ...); PCI ids are pci.ids' (10de NVIDIA, 26b9
L40S, 25b6 A2/A16 told apart by subsystem 157e/14a9, 1b06 GeForce GTX 1080 Ti, 8086
Intel).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pyVmomi import vim

from gpuaudit.inventory import (
    Gap,
    Gpu,
    Host,
    StorageAdapter,
    VgpuProfile,
    VmotionNic,
)
from gpuaudit.vsphere.collect.hosts import adapter_kind, build_host, vmotion_gaps, wwn
from gpuaudit.vsphere.collect.retrieve import ObjectProps

GIB = 1024**3
DISPLAY_3D = 0x0302  # PCI class 03 (display), subclass 02 (3D controller)
ETHERNET = 0x0200


def _pci(pci_id: str, device: int, sub_device: int = 0, name: str = "", **more: Any) -> Any:
    return vim.host.PciDevice(
        id=pci_id,
        classId=DISPLAY_3D,
        vendorId=0x10DE,
        deviceId=device,
        subVendorId=0x10DE if sub_device else 0,
        subDeviceId=sub_device,
        vendorName="NVIDIA Corporation",
        deviceName=name,
        **more,
    )


def _vnic(device: str, key: str, portgroup: str = "", ip: str = "", dvs: str = "") -> Any:
    spec = vim.host.VirtualNic.Specification(ip=vim.host.IpConfig(ipAddress=ip, dhcp=False))
    if dvs:
        spec.distributedVirtualPort = vim.dvs.PortConnection(switchUuid=dvs, portKey="1")
    return vim.host.VirtualNic(device=device, key=key, portgroup=portgroup, spec=spec)


def _pnic(key: str, speed: int | None) -> Any:
    link = vim.host.PhysicalNic.LinkSpeedDuplex(speedMb=speed, duplex=True) if speed else None
    return vim.host.PhysicalNic(key=key, device=key.rsplit("-", 1)[-1], linkSpeed=link)


def _portgroup(name: str, vswitch: str) -> Any:
    spec = vim.host.PortGroup.Specification(name=name, vswitchName=vswitch, vlanId=0)
    return vim.host.PortGroup(spec=spec)


def _host_props() -> dict[str, Any]:
    return {
        "name": "esx%2f01.lab.local",
        "summary.config.product": vim.AboutInfo(version="8.0.3", build="24022510"),
        "summary.hardware": vim.host.Summary.HardwareSummary(
            vendor="Dell Inc.",
            model="PowerEdge R760",
            numCpuCores=64,
            cpuMhz=2600,
            memorySize=512 * GIB + 5,  # rounded down to whole MB
        ),
        "runtime.connectionState": "connected",
        "runtime.inMaintenanceMode": True,
        "hardware.pciDevice": [
            _pci("0000:3b:00.0", 0x26B9, name="AD102GL [L40S]"),
            vim.host.PciDevice(
                id="0000:18:00.0",
                classId=ETHERNET,
                vendorId=0x8086,
                deviceId=0x1593,
                vendorName="Intel",
                deviceName="E810",
            ),
            _pci("0000:5e:00.0", 0x25B6, 0x157E, name="GA107GL [A2 / A16]"),
            # An id the catalogue does not know keeps the host's name for it.
            _pci("0000:af:00.0", 0x1B06, name="GP102 [GeForce GTX 1080 Ti]"),
        ],
        "config.pciPassthruInfo": [
            vim.host.SriovInfo(
                id="0000:3b:00.0",
                passthruCapable=True,
                passthruEnabled=True,
                passthruActive=False,
                hardwareLabel="slot-2",
                sriovCapable=True,
                sriovEnabled=True,
                sriovActive=True,
                numVirtualFunction=32,
                maxVirtualFunctionSupported=32,
            ),
            vim.host.PciPassthruInfo(
                id="0000:5e:00.0", passthruCapable=True, passthruEnabled=False, passthruActive=True
            ),
        ],
        "config.graphicsInfo": [
            vim.host.GraphicsInfo(
                pciId="0000:3b:00.0",
                graphicsType="sharedDirect",
                vgpuMode="mixedSize",
                memorySizeInKB=46 * 1024 * 1024 + 1023,  # the host's figure, in KB
                vm=[vim.VirtualMachine("vm-7"), vim.VirtualMachine("vm-unknown")],
            ),
            vim.host.GraphicsInfo(pciId="0000:5e:00.0", graphicsType="direct", vm=[]),
        ],
        "config.graphicsConfig": vim.host.GraphicsConfig(
            hostDefaultGraphicsType="sharedDirect",
            sharedPassthruAssignmentPolicy="consolidation",
            deviceType=[
                vim.host.GraphicsConfig.DeviceType(deviceId="0000:5e:00.0", graphicsType="direct")
            ],
        ),
        "config.sharedPassthruGpuTypes": ["grid_l40s-8q", "grid_l40s-4q"],
        "config.sharedGpuCapabilities": [
            vim.host.SharedGpuCapabilities(
                vgpu="grid_l40s-4q",
                diskSnapshotSupported=True,
                memorySnapshotSupported=True,
                suspendSupported=False,
                migrateSupported=True,
            ),
            vim.host.SharedGpuCapabilities(
                vgpu="grid_l40s-48q",
                diskSnapshotSupported=True,
                memorySnapshotSupported=True,
                suspendSupported=True,
                migrateSupported=False,
            ),
        ],
        "config.storageDevice.hostBusAdapter": [
            vim.host.FibreChannelHba(
                device="vmhba2",
                key="key-vim.host.FibreChannelHba-vmhba2",
                model="QLogic 2772",
                driver="qlnativefc",
                status="online",
                bus=0,
                pci="0000:d8:00.0",
                portWorldWideName=0x2100F4E9D4A1B2C3,
                nodeWorldWideName=-0x1,  # an xsd:long with the top bit set
                portType="fabric",
                speed=32,
            ),
            vim.host.InternetScsiHba(
                device="vmhba64",
                key="key-vim.host.InternetScsiHba-vmhba64",
                model="iSCSI Software Adapter",
                driver="iscsi_vmk",
                status="online",
                bus=0,
                pci="",
                isSoftwareBased=True,
                iScsiName="iqn.1998-01.com.vmware:esx01",
            ),
            vim.host.BlockHba(
                device="vmhba0", key="", model="", driver="", status="", bus=0, pci=""
            ),
        ],
        "config.network.pnic": [
            _pnic("key-vim.host.PhysicalNic-vmnic0", 25000),
            _pnic("key-vim.host.PhysicalNic-vmnic1", 10000),
            _pnic("key-vim.host.PhysicalNic-vmnic2", None),  # link down
            _pnic("key-vim.host.PhysicalNic-vmnic3", 100000),
            _pnic("key-vim.host.PhysicalNic-vmnic4", 40000),
        ],
        "config.network.vswitch": [
            vim.host.VirtualSwitch(
                name="vSwitch1",
                pnic=[
                    "key-vim.host.PhysicalNic-vmnic0",
                    "key-vim.host.PhysicalNic-vmnic1",
                    "key-vim.host.PhysicalNic-vmnic2",
                ],
            ),
            vim.host.VirtualSwitch(name="vSwitch2", pnic=["key-vim.host.PhysicalNic-vmnic2"]),
        ],
        "config.network.portgroup": [
            _portgroup("vMotion-A", "vSwitch1"),
            _portgroup("vMotion-B", "vSwitch2"),
            _portgroup("Orphan", "vSwitch9"),
        ],
        "config.network.proxySwitch": [
            vim.host.HostProxySwitch(
                dvsUuid="50 2a dv s1",
                dvsName="dvs-gpu",
                pnic=["key-vim.host.PhysicalNic-vmnic3", "key-vim.host.PhysicalNic-vmnic4"],
            ),
            vim.host.HostProxySwitch(dvsUuid="50 2a dv s2", dvsName="", pnic=[]),
        ],
        "config.virtualNicManagerInfo.netConfig": [
            vim.host.VirtualNicManager.NetConfig(
                nicType="management",
                multiSelectAllowed=True,
                candidateVnic=[_vnic("vmk0", "management.key-vim.host.VirtualNic-vmk0", "Mgmt")],
                selectedVnic=["management.key-vim.host.VirtualNic-vmk0"],
            ),
            vim.host.VirtualNicManager.NetConfig(
                nicType="vmotion",
                multiSelectAllowed=True,
                candidateVnic=[
                    _vnic("vmk0", "vmotion.key-vim.host.VirtualNic-vmk0", "Mgmt", "10.0.0.1"),
                    _vnic("vmk1", "vmotion.key-vim.host.VirtualNic-vmk1", "vMotion-A", "10.1.0.1"),
                    _vnic(
                        "vmk2",
                        "vmotion.key-vim.host.VirtualNic-vmk2",
                        "",
                        "10.2.0.1",
                        "50 2a dv s1",
                    ),
                    _vnic("vmk3", "vmotion.key-vim.host.VirtualNic-vmk3", "vMotion-B"),
                    _vnic("vmk4", "vmotion.key-vim.host.VirtualNic-vmk4", "", "", "50 2a dv s2"),
                    _vnic("vmk5", "vmotion.key-vim.host.VirtualNic-vmk5", "", "", "50 2a ff ff"),
                    _vnic("vmk6", "vmotion.key-vim.host.VirtualNic-vmk6", "Orphan"),
                ],
                selectedVnic=[
                    f"vmotion.key-vim.host.VirtualNic-vmk{n}" for n in (1, 2, 3, 4, 5, 6)
                ],
            ),
        ],
        "summary.maxEVCModeKey": "intel-sapphirerapids",
        "hardware.biosInfo": vim.host.BIOSInfo(
            biosVersion="2.1.5",
            releaseDate=dt.datetime(2024, 3, 14, 23, 0, tzinfo=dt.UTC),
        ),
    }


def _obj(props: dict[str, Any], moref: str = "host-12") -> ObjectProps:
    return ObjectProps(moref=moref, kind="HostSystem", props=props)


VM_NAMES = {"vm-7": "train-01"}

EXPECTED_GPUS = [
    Gpu(
        pci_id="0000:3b:00.0",
        vendor_id=0x10DE,
        device_id=0x26B9,
        vendor_name="NVIDIA Corporation",
        device_name="AD102GL [L40S]",
        model="NVIDIA L40S",
        known_model=True,
        memory_mb=46 * 1024,  # the host's figure, not the catalogue's 48 GB
        passthrough_capable=True,
        passthrough_enabled=True,
        passthrough_active=False,
        graphics_type="sharedDirect",
        vgpu_mode="mixedSize",
        vms=["train-01", "vm-unknown"],
        configured_graphics_type=None,
        sriov_capable=True,
        sriov_enabled=True,
        sriov_active=True,
        sriov_vfs=32,
        hardware_label="slot-2",
    ),
    Gpu(
        pci_id="0000:5e:00.0",
        vendor_id=0x10DE,
        device_id=0x25B6,
        sub_vendor_id=0x10DE,
        sub_device_id=0x157E,
        vendor_name="NVIDIA Corporation",
        device_name="GA107GL [A2 / A16]",
        model="NVIDIA A2",
        known_model=True,
        memory_mb=16 * 1024,  # no memorySizeInKB: the catalogue's
        passthrough_capable=True,
        passthrough_enabled=False,
        passthrough_active=True,
        graphics_type="direct",
        vgpu_mode=None,
        configured_graphics_type="direct",
    ),
    Gpu(
        pci_id="0000:af:00.0",
        vendor_id=0x10DE,
        device_id=0x1B06,
        vendor_name="NVIDIA Corporation",
        device_name="GP102 [GeForce GTX 1080 Ti]",
        model="GP102 [GeForce GTX 1080 Ti]",
        known_model=False,
        memory_mb=0,
    ),
]

EXPECTED_NICS = [
    VmotionNic(
        device="vmk1",
        ip="10.1.0.1",
        portgroup="vMotion-A",
        uplink_speed_mbps=10000,  # the slower of vmnic0 and vmnic1; vmnic2 is down
        switch="vSwitch1",
    ),
    VmotionNic(
        device="vmk2", ip="10.2.0.1", uplink_speed_mbps=40000, switch="dvs-gpu", distributed=True
    ),
    VmotionNic(device="vmk3", portgroup="vMotion-B", switch="vSwitch2"),
    # A proxy switch without a name is named by its uuid.
    VmotionNic(device="vmk4", switch="50 2a dv s2", distributed=True),
    VmotionNic(device="vmk5", distributed=True),
    VmotionNic(device="vmk6", portgroup="Orphan"),
]


def test_a_whole_host_is_read_field_by_field() -> None:
    host = build_host(_obj(_host_props()), VM_NAMES)
    assert host == Host(
        name="esx/01.lab.local",
        moref="host-12",
        version="8.0.3",
        build="24022510",
        vendor="Dell Inc.",
        model="PowerEdge R760",
        connection_state="connected",
        in_maintenance=True,
        cpu_cores=64,
        cpu_mhz=2600,
        memory_mb=512 * 1024,
        gpus=EXPECTED_GPUS,
        vgpu_profiles=[
            # The offered list first, in its order; then capabilities of other profiles.
            VgpuProfile("grid_l40s-8q", None, None),
            VgpuProfile("grid_l40s-4q", migrate_supported=True, suspend_supported=False),
            VgpuProfile("grid_l40s-48q", migrate_supported=False, suspend_supported=True),
        ],
        default_graphics_type="sharedDirect",
        assignment_policy="consolidation",
        vmotion_nics=EXPECTED_NICS,
        adapters=[
            StorageAdapter(
                device="vmhba2",
                kind="fc",
                key="key-vim.host.FibreChannelHba-vmhba2",
                model="QLogic 2772",
                driver="qlnativefc",
                status="online",
                port_wwn="21:00:f4:e9:d4:a1:b2:c3",
                node_wwn="ff:ff:ff:ff:ff:ff:ff:ff",
            ),
            StorageAdapter(
                device="vmhba64",
                kind="iscsi",
                key="key-vim.host.InternetScsiHba-vmhba64",
                model="iSCSI Software Adapter",
                driver="iscsi_vmk",
                status="online",
                iscsi_software=True,
            ),
            StorageAdapter(device="vmhba0", kind="block"),
        ],
        max_evc_mode="intel-sapphirerapids",
        bios_version="2.1.5",
        bios_release_date="2024-03-14",
    )


def test_a_host_with_nothing_read_keeps_the_defaults() -> None:
    # A disconnected host: vCenter returns the name and connection state only.
    obj = _obj({"name": "esx-02", "runtime.connectionState": "disconnected"}, "host-13")
    assert build_host(obj, {}) == Host(
        name="esx-02", moref="host-13", connection_state="disconnected"
    )
    # Not even a name or connection state: the moref names it, its state is unknown.
    assert build_host(_obj({}, "host-14"), {}) == Host(
        name="host-14", moref="host-14", connection_state="unknown"
    )


def test_empty_answers_read_as_unset() -> None:
    props = {
        "name": "esx-03",
        "runtime.connectionState": "connected",
        "summary.config.product": vim.AboutInfo(version="", build=""),
        "hardware.pciDevice": [_pci("0000:3b:00.0", 0x26B9, name="")],
        "config.pciPassthruInfo": [vim.host.PciPassthruInfo(id="0000:3b:00.0")],
        "config.graphicsInfo": [
            vim.host.GraphicsInfo(pciId="0000:3b:00.0", graphicsType="", vgpuMode="")
        ],
        "config.graphicsConfig": vim.host.GraphicsConfig(
            hostDefaultGraphicsType="", sharedPassthruAssignmentPolicy="", deviceType=None
        ),
        "hardware.biosInfo": vim.host.BIOSInfo(biosVersion=""),
    }
    host = build_host(_obj(props), {})
    assert host == Host(
        name="esx-03",
        moref="host-12",
        gpus=[
            Gpu(
                pci_id="0000:3b:00.0",
                vendor_id=0x10DE,
                device_id=0x26B9,
                vendor_name="NVIDIA Corporation",
                model="NVIDIA L40S",
                known_model=True,
                memory_mb=48 * 1024,
            )
        ],
    )


def test_each_adapter_class_names_its_transport() -> None:
    kinds = {
        vim.host.FibreChannelOverEthernetHba: "fcoe",
        vim.host.FibreChannelHba: "fc",
        vim.host.InternetScsiHba: "iscsi",
        vim.host.SerialAttachedHba: "sas",
        vim.host.BlockHba: "block",
        vim.host.ParallelScsiHba: "pscsi",
        vim.host.PcieHba: "pcie",
        vim.host.RdmaHba: "rdma",
        vim.host.TcpHba: "tcp",
        vim.host.HostBusAdapter: "other",
    }
    assert {cls: adapter_kind(cls(device="vmhba1")) for cls in kinds} == kinds


def test_fcoe_adapters_keep_their_world_wide_names() -> None:
    hba = vim.host.FibreChannelOverEthernetHba(
        device="vmhba33",
        key="k",
        model="m",
        driver="d",
        status="online",
        portWorldWideName=0x1000000000000001,
        nodeWorldWideName=0x2000000000000002,
    )
    obj = _obj({"name": "esx", "config.storageDevice.hostBusAdapter": [hba]})
    assert build_host(obj, {}).adapters == [
        StorageAdapter(
            device="vmhba33",
            kind="fcoe",
            key="k",
            model="m",
            driver="d",
            status="online",
            port_wwn="10:00:00:00:00:00:00:01",
            node_wwn="20:00:00:00:00:00:00:02",
        )
    ]


def test_world_wide_names() -> None:
    assert wwn(None) is None
    assert wwn(0) == "00:00:00:00:00:00:00:00"
    assert wwn(0x500143802426BAF4) == "50:01:43:80:24:26:ba:f4"
    assert wwn(-0x7FFFFFFFFFFFFFFF) == "80:00:00:00:00:00:00:01"


def test_each_unreadable_vmotion_uplink_is_a_gap_that_says_why() -> None:
    host = build_host(_obj(_host_props()), VM_NAMES)

    def gap(path: str, why: str) -> Gap:
        return Gap("esx/01.lab.local", "HostSystem", path, why, moref="host-12")

    assert vmotion_gaps(host) == [
        gap("config.network.vswitch", "vmk3: no connected uplink on vSwitch2"),
        gap(
            "config.network.proxySwitch",
            "vmk4: no connected uplink on distributed switch 50 2a dv s2",
        ),
        gap(
            "config.network.proxySwitch",
            "vmk5: its distributed switch is not among the host's proxy switches",
        ),
        gap("config.network.vswitch", "vmk6: port group Orphan is on no standard switch"),
    ]
    host.vmotion_nics = [VmotionNic(device="vmk9")]
    assert vmotion_gaps(host) == [
        gap("config.network.vswitch", "vmk9: port group ? is on no standard switch")
    ]


def test_unset_names_counts_and_addresses_read_as_empty() -> None:
    # Without subsystem ids, a 25b6 board whose name names only the A2 is the A2.
    a2 = _pci("0000:5e:00.0", 0x25B6, name="GA107GL [A2]")
    a2.vendorName = ""
    props = {
        "name": "esx-04",
        "hardware.pciDevice": [a2],
        "config.pciPassthruInfo": [
            vim.host.SriovInfo(
                id="0000:5e:00.0",
                passthruCapable=True,
                passthruEnabled=True,
                passthruActive=True,
                sriovCapable=True,
                sriovEnabled=False,
                sriovActive=False,
                numVirtualFunction=0,
                maxVirtualFunctionSupported=16,
            )
        ],
        "config.virtualNicManagerInfo.netConfig": [
            vim.host.VirtualNicManager.NetConfig(
                nicType="vmotion",
                multiSelectAllowed=True,
                candidateVnic=[
                    vim.host.VirtualNic(
                        device="vmk1",
                        key="k1",
                        portgroup="",
                        spec=vim.host.VirtualNic.Specification(ip=None),
                    )
                ],
                selectedVnic=["k1"],
            )
        ],
    }
    host = build_host(_obj(props), {})
    assert host.gpus == [
        Gpu(
            pci_id="0000:5e:00.0",
            vendor_id=0x10DE,
            device_id=0x25B6,
            device_name="GA107GL [A2]",
            model="NVIDIA A2",
            known_model=True,
            memory_mb=16 * 1024,
            passthrough_capable=True,
            passthrough_enabled=True,
            passthrough_active=True,
            sriov_capable=True,
            sriov_enabled=False,
            sriov_active=False,
            sriov_vfs=0,
        )
    ]
    assert host.vmotion_nics == [VmotionNic(device="vmk1")]
