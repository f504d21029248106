"""gpuaudit.vsphere.collect.vms on VirtualMachine and cluster properties built in memory, by hand.

Property paths, backing classes and enum values are the vSphere API's
(VirtualPCIPassthrough.VmiopBackingInfo, ClusterDasVmSettings.restartPriority, ...).
Vendor device groups (API 8.0.0.1): a VM's ``config.deviceGroups`` is a
VirtualMachineVirtualDeviceGroups whose ``deviceGroup[]`` are
VirtualMachineVirtualDeviceGroupsVendorDeviceGroup (``groupInstanceKey``,
``deviceGroupName``), and each member device carries ``deviceGroupInfo``
(VirtualDeviceDeviceGroupInfo: ``groupInstanceKey``, ``sequenceId``).
"""

from __future__ import annotations

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
from gpuaudit.vsphere.collect.retrieve import ObjectProps
from gpuaudit.vsphere.collect.vms import (
    build_cluster,
    build_vm,
    device_candidates,
    device_groups,
    gpu_attachment,
    mmio_options,
    needs_devices,
    vgpu_plugin_options,
)

PT = vim.vm.device.VirtualPCIPassthrough
HOST_NAMES = {"host-1": "esx-01", "host-2": "esx-02"}
VM_NAMES = {"vm-1": "train-01", "vm-2": "train-02"}
DS_NAMES = {"datastore-1": "ds-gpu"}


def _device(backing: Any, label: str = "PCI device 0") -> Any:
    return PT(key=13000, deviceInfo=vim.Description(label=label, summary=""), backing=backing)


def _option(key: str, value: str) -> Any:
    return vim.option.OptionValue(key=key, value=value)


def test_a_whole_vm_is_read_field_by_field() -> None:
    devices = [
        vim.vm.device.VirtualE1000e(key=4000),
        _device(
            PT.VmiopBackingInfo(
                vgpu="grid_l40s-8q", migrateSupported=True, vgpuMigrateDataSizeMB=8300
            ),
            "PCI device 0",
        ),
        _device(
            PT.DeviceBackingInfo(
                id="0000:3b:00.0",
                vendorId=0x10DE,
                deviceId="26b9",
                deviceName="L40S",
                systemId="s",
            ),
            "PCI device 1",
        ),
        # An SR-IOV NIC is a passthrough device too, but not a GPU.
        vim.vm.device.VirtualSriovEthernetCard(key=4001),
        _device(PT.PluginBackingInfo(), "PCI device 2"),
    ]
    props = {
        "name": "train%2501",
        "runtime.host": vim.HostSystem("host-2"),
        "runtime.powerState": "poweredOn",
        "config.hardware.memoryMB": 65536,
        "resourceConfig.memoryAllocation.reservation": 32768,
        "config.memoryReservationLockedToMax": True,
        "datastore": [vim.Datastore("datastore-1"), vim.Datastore("datastore-9")],
        "config.hardware.device": devices,
        "config.firmware": "efi",
        "config.extraConfig": [
            _option("PCIPASSTHRU.USE64BITMMIO", "TRUE"),
            _option("pciPassthru.64bitMMIOSizeGB", "128"),
            _option("svga.present", "TRUE"),
            _option("PCIPASSTHRU0.CFG.ENABLE_UVM", "1"),
        ],
        "runtime.minRequiredEVCModeKey": "intel-icelake",
        "config.uuid": "4212-bios",
        "config.instanceUuid": "5012-instance",
    }
    obj = ObjectProps(moref="vm-31", kind="VirtualMachine", props=props)
    assert build_vm(obj, HOST_NAMES, DS_NAMES) == Vm(
        name="train%01",
        moref="vm-31",
        host="esx-02",
        power_state="poweredOn",
        memory_mb=65536,
        memory_reservation_mb=32768,
        memory_locked_to_max=True,
        datastores=["ds-gpu", "datastore-9"],
        gpus=[
            GpuAttachment(
                kind="vgpu",
                label="PCI device 0",
                profile="grid_l40s-8q",
                migrate_supported=True,
                migrate_data_mb=8300,
            ),
            GpuAttachment(
                kind="passthrough",
                label="PCI device 1",
                pci_id="0000:3b:00.0",
                vendor_id=0x10DE,
                device_id=0x26B9,
            ),
        ],
        firmware="efi",
        mmio_options={"pciPassthru.use64bitMMIO": "TRUE", "pciPassthru.64bitMMIOSizeGB": "128"},
        vgpu_plugin_options={"pciPassthru0.cfg.enable_uvm": "1"},
        min_evc_mode="intel-icelake",
        bios_uuid="4212-bios",
        instance_uuid="5012-instance",
    )


def _member(device: Any, key: int, sequence: int) -> Any:
    device.deviceGroupInfo = vim.vm.device.VirtualDevice.DeviceGroupInfo(
        groupInstanceKey=key, sequenceId=sequence
    )
    return device


def _vendor_group(key: int, name: str) -> Any:
    return vim.vm.VirtualDeviceGroups.VendorDeviceGroup(groupInstanceKey=key, deviceGroupName=name)


def test_a_vm_s_vendor_device_groups_and_the_gpus_in_each() -> None:
    nvlink = "NVIDIA H100XM 2-GPU NVLink"
    devices = [
        _member(_device(PT.VmiopBackingInfo(vgpu="grid_h100xm-80c"), "PCI device 0"), 7, 0),
        _member(_device(PT.VmiopBackingInfo(vgpu="grid_h100xm-80c"), "PCI device 1"), 7, 1),
        _device(PT.VmiopBackingInfo(vgpu="grid_h100xm-40c"), "PCI device 2"),  # in no group
        # A NIC of a GPU-NIC group: a member, but not a GPU.
        _member(vim.vm.device.VirtualSriovEthernetCard(key=4001), 9, 1),
        _member(_device(PT.DynamicBackingInfo(allowedDevice=[]), "PCI device 3"), 9, 0),
        # A member of a group config.deviceGroups does not list: kept, without a name.
        _member(_device(PT.DeviceBackingInfo(id="0000:3b:00.0"), "PCI device 4"), 4, 0),
    ]
    groups = vim.vm.VirtualDeviceGroups(
        deviceGroup=[_vendor_group(9, "GPU-NIC"), _vendor_group(7, nvlink), _vendor_group(8, "")]
    )
    props = {"name": "llm", "config.hardware.device": devices, "config.deviceGroups": groups}
    vm = build_vm(ObjectProps("vm-40", "VirtualMachine", props), HOST_NAMES, DS_NAMES)
    assert vm.device_groups == [
        VmDeviceGroup(name="GPU-NIC", key=9, devices=2),
        VmDeviceGroup(name=nvlink, key=7, devices=2),
        VmDeviceGroup(name="", key=8, devices=0),  # listed, no device names it
        VmDeviceGroup(name="", key=4, devices=1),
    ]
    assert [(g.label, g.device_group) for g in vm.gpus] == [
        ("PCI device 0", 7),
        ("PCI device 1", 7),
        ("PCI device 2", None),
        ("PCI device 3", 9),
        ("PCI device 4", 4),
    ]


def test_device_groups_of_nothing_read_or_of_members_only() -> None:
    assert device_groups(None, None) == []
    assert device_groups(vim.vm.VirtualDeviceGroups(), []) == []
    members = [_member(vim.vm.device.VirtualE1000e(key=k), key, 0) for k, key in ((1, 5), (2, 3))]
    members.append(_member(vim.vm.device.VirtualE1000e(key=3), 5, 1))
    assert device_groups(None, members) == [
        VmDeviceGroup(name="", key=3, devices=1),
        VmDeviceGroup(name="", key=5, devices=2),
    ]


def test_a_vm_with_nothing_read_keeps_the_defaults() -> None:
    obj = ObjectProps(moref="vm-32", kind="VirtualMachine", props={"name": "idle"})
    assert build_vm(obj, HOST_NAMES, DS_NAMES) == Vm(name="idle", moref="vm-32")
    obj.props.update({"runtime.host": vim.HostSystem("host-77"), "config.firmware": ""})
    assert build_vm(obj, HOST_NAMES, DS_NAMES) == Vm(name="idle", moref="vm-32", host="host-77")


def test_mmio_options() -> None:
    assert mmio_options(None) == {}
    assert mmio_options([_option("pcipassthru.64bitmmiosizegb", "64")]) == {
        "pciPassthru.64bitMMIOSizeGB": "64"
    }


def test_vgpu_plugin_options_keep_the_three_that_disable_migration() -> None:
    # NVIDIA vGPU User Guide 17: pciPassthru<vgpu-id>.cfg.enable_uvm (6.4.3),
    # .enable_debugging (6.5.1), .enable_profiling (6.5.2.4).
    assert vgpu_plugin_options(None) == {}
    extra = [
        _option("pciPassthru0.cfg.enable_uvm", "1"),
        _option("pcipassthru1.CFG.Enable_Debugging", "0"),
        _option("pciPassthru12.cfg.enable_profiling", "TRUE"),
        _option("pciPassthru0.cfg.frame_rate_limiter", "0"),  # not a migration blocker
        _option("pciPassthru.cfg.enable_uvm", "1"),  # no vGPU index
        _option("pciPassthru0.cfg.enable_uvm_extra", "1"),
        _option("xpciPassthru0.cfg.enable_uvm", "1"),
        _option("pciPassthru0.use64bitMMIO", "TRUE"),
    ]
    assert vgpu_plugin_options(extra) == {
        "pciPassthru0.cfg.enable_uvm": "1",
        "pciPassthru1.cfg.enable_debugging": "0",
        "pciPassthru12.cfg.enable_profiling": "TRUE",
    }


def test_dynamic_passthrough_keeps_its_allowed_devices_and_sub_ids() -> None:
    allowed = [
        PT.AllowedDevice(vendorId=0x10DE, deviceId=0x2236),
        PT.AllowedDevice(vendorId=0x10DE, deviceId=0x25B6, subVendorId=0x10DE, subDeviceId=0x157E),
        PT.AllowedDevice(vendorId=0x10DE, deviceId=0x25B6, subDeviceId=0x14A9),
        PT.AllowedDevice(vendorId=0x10DE, deviceId=0x25B6, subVendorId=0x10DE),
        PT.AllowedDevice(vendorId=0x10DE, deviceId=-0x7F48),  # 0x80b8, sent signed
    ]
    backing = PT.DynamicBackingInfo(
        assignedId="0000:5e:00.0", allowedDevice=allowed, customLabel="a2", deviceName=""
    )
    assert gpu_attachment(_device(backing, "PCI device 3")) == GpuAttachment(
        kind="dynamic",
        label="PCI device 3",
        pci_id="0000:5e:00.0",
        allowed=[
            (0x10DE, 0x2236),
            (0x10DE, 0x25B6),
            (0x10DE, 0x25B6),
            (0x10DE, 0x25B6),
            (0x10DE, 0x80B8),
        ],
        custom_label="a2",
        allowed_sub_ids=[None, (0x10DE, 0x157E), (-1, 0x14A9), (0x10DE, -1), None],
    )
    # No entry names a subsystem: no sub ids at all; nothing assigned or labelled: None.
    plain = PT.DynamicBackingInfo(
        assignedId="",
        allowedDevice=[PT.AllowedDevice(vendorId=0x10DE, deviceId=0x27B8)],
        customLabel="",
        deviceName="",
    )
    assert gpu_attachment(_device(plain, "")) == GpuAttachment(
        kind="dynamic", label="", allowed=[(0x10DE, 0x27B8)]
    )
    empty = PT.DynamicBackingInfo(deviceName="")
    assert gpu_attachment(_device(empty)) == GpuAttachment(kind="dynamic", label="PCI device 0")


def test_fixed_passthrough_device_ids_hex_or_signed_decimal() -> None:
    def fixed(device_id: str, vendor: int = 0x10DE) -> GpuAttachment | None:
        backing = PT.DeviceBackingInfo(
            id="0000:af:00.0", vendorId=vendor, deviceId=device_id, deviceName="", systemId=""
        )
        return gpu_attachment(_device(backing, "PCI device 4"))

    def expected(device_id: int | None, vendor: int = 0x10DE) -> GpuAttachment:
        return GpuAttachment(
            kind="passthrough",
            label="PCI device 4",
            pci_id="0000:af:00.0",
            vendor_id=vendor,
            device_id=device_id,
        )

    assert fixed("27b8") == expected(0x27B8)
    assert fixed("10") == expected(0x10)  # hex, not decimal ten
    assert fixed("-32584") == expected(0x80B8)  # signed decimal
    assert fixed("") == expected(None)
    assert fixed("zz") == expected(None)
    assert fixed("27b8", vendor=-0x1000) == expected(0x27B8, vendor=0xF000)
    assert fixed("27b8", vendor=0) == expected(0x27B8, vendor=0)


def test_no_label_reads_as_empty() -> None:
    device = PT(key=1, deviceInfo=None, backing=PT.VmiopBackingInfo(vgpu="grid_a16-2b"))
    assert gpu_attachment(device) == GpuAttachment(kind="vgpu", profile="grid_a16-2b")


def _cluster_config(**das: Any) -> Any:
    settings = dict(
        enabled=True,
        hostMonitoring="disabled",
        admissionControlEnabled=True,
        admissionControlPolicy=vim.cluster.FailoverResourcesAdmissionControlPolicy(
            cpuFailoverResourcesPercent=25, memoryFailoverResourcesPercent=33
        ),
        defaultVmSettings=vim.cluster.DasVmSettings(restartPriority="high"),
        option=[_option("das.isolationaddress0", "10.0.0.1"), _option("das.ignore", None)],
    )
    settings.update(das)
    return vim.cluster.ConfigInfoEx(
        dasConfig=vim.cluster.DasConfigInfo(**settings),
        drsConfig=vim.cluster.DrsConfigInfo(
            enabled=True,
            defaultVmBehavior="partiallyAutomated",
            option=[_option("LimitVMsPerESXHost", "6"), _option("Empty", None)],
        ),
        group=[
            vim.cluster.VmGroup(
                name="gpu-vms", vm=[vim.VirtualMachine("vm-1"), vim.VirtualMachine("vm-6")]
            ),
            vim.cluster.HostGroup(
                name="gpu-hosts", host=[vim.HostSystem("host-1"), vim.HostSystem("host-9")]
            ),
            vim.cluster.VmGroup(name="empty-vms", vm=None),
            vim.cluster.HostGroup(name="empty-hosts", host=None),
        ],
        rule=[
            vim.cluster.VmHostRuleInfo(
                name="must-run",
                enabled=True,
                mandatory=True,
                vmGroupName="gpu-vms",
                affineHostGroupName="gpu-hosts",
            ),
            vim.cluster.VmHostRuleInfo(
                name="should-not",
                enabled=False,
                mandatory=False,
                vmGroupName="empty-vms",
                antiAffineHostGroupName="empty-hosts",
            ),
            vim.cluster.VmHostRuleInfo(name=None, enabled=None, mandatory=None),
            vim.cluster.AffinityRuleSpec(
                name="together",
                enabled=True,
                mandatory=False,
                vm=[vim.VirtualMachine("vm-1"), vim.VirtualMachine("vm-2")],
            ),
            vim.cluster.AntiAffinityRuleSpec(
                name="apart", enabled=False, mandatory=True, vm=[vim.VirtualMachine("vm-8")]
            ),
            vim.cluster.AntiAffinityRuleSpec(
                name=None, enabled=True, mandatory=None, vm=[vim.VirtualMachine("vm-1")]
            ),
            # Another kind of rule: not read.
            vim.cluster.DependencyRuleInfo(name="dep", enabled=True, mandatory=True),
        ],
        dasVmConfig=[
            vim.cluster.DasVmConfigInfo(
                key=vim.VirtualMachine("vm-1"),
                dasSettings=vim.cluster.DasVmSettings(restartPriority="highest"),
            ),
            # The deprecated field, when the settings leave it out.
            vim.cluster.DasVmConfigInfo(key=vim.VirtualMachine("vm-2"), restartPriority="low"),
            vim.cluster.DasVmConfigInfo(
                key=vim.VirtualMachine("vm-3"),
                dasSettings=vim.cluster.DasVmSettings(restartPriority="clusterRestartPriority"),
            ),
            vim.cluster.DasVmConfigInfo(
                key=vim.VirtualMachine("vm-4"),
                dasSettings=vim.cluster.DasVmSettings(),
                restartPriority="disabled",
            ),
            vim.cluster.DasVmConfigInfo(key=vim.VirtualMachine("vm-5")),
        ],
    )


def _cluster(config: Any, summary: Any = None) -> ObjectProps:
    props = {"name": "gpu-cl", "configurationEx": config}
    if summary is not None:
        props["summary"] = summary
    return ObjectProps(moref="domain-c8", kind="ClusterComputeResource", props=props)


def test_a_whole_cluster_is_read_field_by_field() -> None:
    summary = vim.ClusterComputeResource.Summary(currentEVCModeKey="intel-cascadelake")
    cluster = build_cluster(_cluster(_cluster_config(), summary), HOST_NAMES, VM_NAMES)
    assert cluster == Cluster(
        name="gpu-cl",
        moref="domain-c8",
        ha_enabled=True,
        ha_host_monitoring=False,
        admission_control=AdmissionControl(
            enabled=True, policy="percent", cpu_percent=25, memory_percent=33
        ),
        default_restart_priority="high",
        drs_enabled=True,
        drs_automation="partiallyAutomated",
        restart_priority_overrides={"train-01": "highest", "train-02": "low", "vm-4": "disabled"},
        drs_options={"LimitVMsPerESXHost": "6", "Empty": ""},
        evc_mode="intel-cascadelake",
        vm_host_rules=[
            VmHostRule(
                name="must-run",
                enabled=True,
                mandatory=True,
                affine=True,
                vm_group="gpu-vms",
                host_group="gpu-hosts",
                vms=["train-01", "vm-6"],
                hosts=["esx-01", "host-9"],
            ),
            VmHostRule(
                name="should-not",
                enabled=False,
                mandatory=False,
                affine=False,
                vm_group="empty-vms",
                host_group="empty-hosts",
            ),
            VmHostRule(name="", enabled=False, mandatory=False, affine=False),
        ],
        vm_vm_rules=[
            VmVmRule(
                name="together",
                enabled=True,
                affinity=True,
                mandatory=False,
                vms=["train-01", "train-02"],
            ),
            VmVmRule(name="apart", enabled=False, affinity=False, mandatory=True, vms=["vm-8"]),
            VmVmRule(name="", enabled=True, affinity=False, mandatory=False, vms=["train-01"]),
        ],
        ha_options={"das.isolationaddress0": "10.0.0.1", "das.ignore": ""},
    )


def test_a_cluster_without_ha_or_drs_settings_keeps_the_defaults() -> None:
    assert build_cluster(_cluster(None), HOST_NAMES, VM_NAMES) == Cluster(
        name="gpu-cl", moref="domain-c8"
    )
    das_only = vim.cluster.ConfigInfoEx(
        dasConfig=vim.cluster.DasConfigInfo(
            enabled=False, admissionControlEnabled=False, defaultVmSettings=None
        )
    )
    # hostMonitoring unset reads as vSphere's default, enabled.
    assert build_cluster(_cluster(das_only), HOST_NAMES, VM_NAMES) == Cluster(
        name="gpu-cl", moref="domain-c8", ha_enabled=False, ha_host_monitoring=True
    )
    no_priority = vim.cluster.ConfigInfoEx(
        dasConfig=vim.cluster.DasConfigInfo(
            enabled=True, hostMonitoring="enabled", defaultVmSettings=vim.cluster.DasVmSettings()
        ),
        drsConfig=vim.cluster.DrsConfigInfo(enabled=False),
    )
    assert build_cluster(_cluster(no_priority), HOST_NAMES, VM_NAMES) == Cluster(
        name="gpu-cl",
        moref="domain-c8",
        ha_enabled=True,
        ha_host_monitoring=True,
        default_restart_priority="medium",
        drs_enabled=False,
        drs_automation=None,
    )


def test_each_admission_control_policy() -> None:
    def admission(policy: Any) -> AdmissionControl:
        config = _cluster_config(admissionControlPolicy=policy, admissionControlEnabled=False)
        return build_cluster(_cluster(config), HOST_NAMES, VM_NAMES).admission_control

    assert admission(None) == AdmissionControl(enabled=False)
    assert admission(
        vim.cluster.FailoverLevelAdmissionControlPolicy(failoverLevel=2)
    ) == AdmissionControl(policy="slots", failover_level=2)
    assert admission(
        vim.cluster.FailoverHostAdmissionControlPolicy(
            failoverHosts=[vim.HostSystem("host-2"), vim.HostSystem("host-5")]
        )
    ) == AdmissionControl(policy="dedicated-hosts", failover_hosts=["esx-02", "host-5"])
    assert admission(
        vim.cluster.FailoverHostAdmissionControlPolicy(failoverHosts=None)
    ) == AdmissionControl(policy="dedicated-hosts")
    assert admission(vim.cluster.DasAdmissionControlPolicy()) == AdmissionControl(policy="other")


def _vm_props(moref: str, **props: Any) -> ObjectProps:
    values = {
        "name": moref,
        "runtime.powerState": "poweredOn",
        "runtime.host": vim.HostSystem("host-1"),
        "config.hardware.memoryMB": 8192,
        "resourceConfig.memoryAllocation.reservation": 4096,
    }
    values.update({k.replace("__", "."): v for k, v in props.items()})
    return ObjectProps(moref=moref, kind="VirtualMachine", props=values)


def test_which_vms_may_hold_a_gpu() -> None:
    # The reservation decides at its edge: all memory reserved reads the VM.
    assert needs_devices(
        _vm_props("a", resourceConfig__memoryAllocation__reservation=8192), set(), set()
    )
    assert not needs_devices(
        _vm_props("b", resourceConfig__memoryAllocation__reservation=8191), set(), set()
    )
    assert needs_devices(_vm_props("c", config__hardware__memoryMB=None), set(), set())
    assert needs_devices(_vm_props("d"), set(), {"host-1"})
    assert needs_devices(_vm_props("e"), {"e"}, set())
    assert not needs_devices(_vm_props("f", config__template=True), {"f"}, {"host-1"})
    assert needs_devices(_vm_props("g", runtime__powerState="poweredOff"), set(), set())
    assert needs_devices(_vm_props("h", runtime__host=None), set(), set())
    assert needs_devices(_vm_props("i", config__memoryReservationLockedToMax=True), set(), set())
    withheld = _vm_props("j")
    withheld.missing["config.hardware.memoryMB"] = "NoPermission"
    assert needs_devices(withheld, set(), set())
    # A host counts as unread unless its state is "connected"; other kinds are not VMs,
    # wherever they come in the answer.
    host = ObjectProps(
        moref="host-1", kind="HostSystem", props={"runtime.connectionState": "connected"}
    )
    folder = ObjectProps(moref="group-v3", kind="Folder", props={})
    objects = {"group-v3": folder, "host-1": host, "b": _vm_props("b")}
    assert device_candidates(objects) == []
    host.missing["config.graphicsInfo"] = "NoPermission"
    assert device_candidates(objects) == ["b"]
    host.missing.clear()
    host.props["config.graphicsInfo"] = [
        vim.host.GraphicsInfo(pciId="0000:3b:00.0", vm=[vim.VirtualMachine("b")])
    ]
    assert device_candidates(objects) == ["b"]
    del host.props["config.graphicsInfo"]
    host.props["runtime.connectionState"] = "disconnected"
    assert device_candidates(objects) == ["b"]
    host.props.pop("runtime.connectionState")
    assert device_candidates(objects) == ["b"]
    host.props["runtime.connectionState"] = "connected"
    host.props["config.graphicsInfo"] = [vim.host.GraphicsInfo(pciId="0000:3b:00.0", vm=None)]
    assert device_candidates(objects) == []
