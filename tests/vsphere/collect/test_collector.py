"""gpuaudit.vsphere.collect's collector against a vCenter faked in memory, every answer by hand.

The inventory tree is vSphere's: a datacenter's host folder holds clusters and
standalone ComputeResources; a host's parent is its compute resource. Settings are
vCenter's advanced options (vgpu.hotmigrate.enabled); API versions are pyVmomi's
(vim.version.v8_0_3_0 is 8.0.3.0).
"""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Any

from pyVmomi import vim, vmodl

from gpuaudit.common.progress import Step
from gpuaudit.inventory import (
    VGPU_MANAGER_CALL,
    VGPU_MANAGER_PRIVILEGE,
    Gap,
    Inventory,
    StunEstimate,
    VCenter,
)
from gpuaudit.vsphere.collect import (
    _assemble,
    _hotmigrate,
    _pages,
    _Tree,
    _vcenter,
    _version_gaps,
    collect,
)
from gpuaudit.vsphere.collect.retrieve import ObjectProps
from gpuaudit.vsphere.collect.slim import BuiltHost, Slimmer
from tests.support.perf_counters import perf_counter

PT = vim.vm.device.VirtualPCIPassthrough
HOTMIGRATE = "vgpu.hotmigrate.enabled"


def _ref(cls: type, moref: str) -> Any:
    return cls(moref)


def _obj(kind: str, moref: str, parent: Any = None, **props: Any) -> ObjectProps:
    values = {k.replace("__", "."): v for k, v in props.items()}
    if parent is not None:
        values["parent"] = parent
    return ObjectProps(moref=moref, kind=kind, props=values)


class _Browser:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def QueryConfigTarget(self, host: Any) -> Any:
        self.asked.append(host._moId)
        estimate = vim.vm.VMotionStunTimeInfo(name="x", migrationBW=10_000, stunTime=20)
        info = vim.vm.VgpuProfileInfo(
            name="grid_l40s-8q", profileName="grid_l40s-8q", stunTimeEstimates=[estimate]
        )
        return vim.vm.ConfigTarget(vgpuProfileInfo=[info])


def _objects(browser: Any) -> list[ObjectProps]:
    root = _ref(vim.Folder, "group-d1")
    dc = _ref(vim.Datacenter, "datacenter-1")
    host_folder = _ref(vim.Folder, "group-h4")
    cluster = _ref(vim.ClusterComputeResource, "domain-c8")
    lone = _ref(vim.ComputeResource, "domain-s9")
    gpu = vim.host.PciDevice(
        id="0000:3b:00.0",
        classId=0x0302,
        vendorId=0x10DE,
        deviceId=0x26B9,
        subVendorId=0,
        subDeviceId=0,
        vendorName="NVIDIA",
        deviceName="L40S",
    )
    config = vim.cluster.ConfigInfoEx(
        dasConfig=vim.cluster.DasConfigInfo(
            enabled=True,
            vmComponentProtecting="disabled",
            heartbeatDatastore=[vim.Datastore("datastore-1")],
            admissionControlEnabled=True,
            admissionControlPolicy=vim.cluster.FailoverHostAdmissionControlPolicy(
                failoverHosts=[vim.HostSystem("host-1")]
            ),
        ),
        dasVmConfig=[
            vim.cluster.DasVmConfigInfo(
                key=vim.VirtualMachine("vm-1"),
                dasSettings=vim.cluster.DasVmSettings(
                    restartPriority="highest", isolationResponse="powerOff"
                ),
            )
        ],
    )
    fc = vim.host.FibreChannelHba(device="vmhba2", key="key-fc")
    connected = {
        "runtime.connectionState": "connected",
        "summary.config.product": vim.AboutInfo(version="8.0.3", build="24022510"),
        "hardware.pciDevice": [gpu],
        "config.graphicsInfo": [
            vim.host.GraphicsInfo(
                pciId="0000:3b:00.0", graphicsType="sharedDirect", vm=[vim.VirtualMachine("vm-1")]
            )
        ],
        "config.storageDevice.hostBusAdapter": [fc],
        "config.storageDevice.scsiLun": [
            vim.host.ScsiDisk(key="lun-1", canonicalName="naa.1", uuid="1", lunType="disk")
        ],
        "config.storageDevice.multipathInfo": vim.host.MultipathInfo(
            lun=[
                vim.host.MultipathInfo.LogicalUnit(
                    key="lu-1",
                    id="1",
                    lun="lun-1",
                    path=[
                        vim.host.MultipathInfo.Path(
                            key="p", name="p", adapter="key-fc", pathState="active"
                        )
                    ],
                    policy=vim.host.MultipathInfo.LogicalUnitPolicy(policy="VMW_PSP_RR"),
                )
            ]
        ),
    }
    return [
        _obj("Folder", "group-d1", name="Datacenters"),
        _obj("Datacenter", "datacenter-1", root, name="dc%2f1"),
        _obj("Datacenter", "datacenter-2", root, name="dc0"),
        _obj("Folder", "group-h4", dc, name="host"),
        _obj("Folder", "group-s5", dc, name="datastore"),
        _obj(
            "ClusterComputeResource",
            "domain-c8",
            host_folder,
            name="gpu-cl",
            configurationEx=config,
            environmentBrowser=browser,
        ),
        _obj("ClusterComputeResource", "domain-c9", host_folder, name="empty-cl"),
        _obj("ComputeResource", "domain-s9", host_folder, name="esx-03"),
        _obj(
            "HostSystem",
            "host-1",
            cluster,
            name="esx-01",
            config__sharedPassthruGpuTypes=["grid_l40s-8q"],
            **{k.replace(".", "__"): v for k, v in connected.items()},
        ),
        _obj(
            "HostSystem", "host-2", cluster, name="esx-02", runtime__connectionState="disconnected"
        ),
        _obj(
            "HostSystem",
            "host-3",
            lone,
            name="esx-03",
            runtime__connectionState="connected",
            config__virtualNicManagerInfo__netConfig=[
                vim.host.VirtualNicManager.NetConfig(
                    nicType="vmotion",
                    multiSelectAllowed=True,
                    candidateVnic=[
                        vim.host.VirtualNic(
                            device="vmk1",
                            key="k1",
                            portgroup="nowhere",
                            spec=vim.host.VirtualNic.Specification(),
                        )
                    ],
                    selectedVnic=["k1"],
                )
            ],
        ),
        _obj(
            "Datastore",
            "datastore-1",
            _ref(vim.Folder, "group-s5"),
            name="ds1",
            summary=vim.Datastore.Summary(
                name="ds1", type="VMFS", capacity=0, freeSpace=0, accessible=True, url="u"
            ),
            info=vim.host.VmfsDatastoreInfo(
                name="ds1",
                url="u",
                freeSpace=0,
                vmfs=vim.host.VmfsVolume(
                    name="ds1",
                    type="VMFS",
                    capacity=0,
                    local=False,
                    extent=[vim.host.ScsiDisk.Partition(diskName="naa.1", partition=1)],
                ),
            ),
            host=[
                vim.Datastore.HostMount(
                    key=vim.HostSystem("host-1"),
                    mountInfo=vim.host.MountInfo(
                        accessMode="readWrite", mounted=True, accessible=True
                    ),
                )
            ],
        ),
        _obj(
            "Datastore",
            "datastore-0",
            _ref(vim.Folder, "group-s5"),
            name="ds0",
            summary=vim.Datastore.Summary(
                name="ds0", type="NFS41", capacity=0, freeSpace=0, accessible=True, url="u"
            ),
        ),
        _obj(
            "VirtualMachine",
            "vm-1",
            name="train-01",
            runtime__host=vim.HostSystem("host-1"),
            runtime__powerState="poweredOn",
            config__hardware__memoryMB=4096,
            resourceConfig__memoryAllocation__reservation=4096,
            datastore=[vim.Datastore("datastore-1")],
        ),
        _obj("VirtualMachine", "vm-2", name="golden", config__template=True),
        _obj(
            "VirtualMachine",
            "vm-3",
            name="plain",
            runtime__host=vim.HostSystem("host-3"),
            runtime__powerState="poweredOn",
            config__hardware__memoryMB=4096,
            resourceConfig__memoryAllocation__reservation=0,
        ),
        _obj("VirtualMachine", "vm-4", name="gone", runtime__powerState="poweredOff"),
        _obj("VirtualMachine", "vm-5", name="lost", runtime__host=vim.HostSystem("host-99")),
    ]


class _Collector:
    """The first RetrievePropertiesEx (through the container view) serves ``objects``;
    later ones serve the VMs' device lists, without vm-4 (deleted meanwhile)."""

    def __init__(self, objects: list[ObjectProps]) -> None:
        self.objects = objects
        self.device_reads: list[list[str]] = []
        self.manager_reads: list[list[str]] = []
        self._stub = None

    def RetrievePropertiesEx(self, specSet: list[Any], options: Any) -> Any:
        spec = specSet[0]
        if spec.objectSet[0].skip:  # the container view
            return SimpleNamespace(
                objects=[
                    SimpleNamespace(
                        obj=getattr(vim, o.kind)(o.moref),
                        propSet=[SimpleNamespace(name=k, val=v) for k, v in o.props.items()],
                        missingSet=[],
                    )
                    for o in self.objects
                ],
                token=None,
            )
        if isinstance(spec.objectSet[0].obj, vim.PerformanceManager):
            counter = perf_counter(7, "utilization", "percent", per_device_level=1)
            perf = SimpleNamespace(name="perfCounter", val=[counter])
            return SimpleNamespace(
                objects=[SimpleNamespace(obj=spec.objectSet[0].obj, propSet=[perf], missingSet=[])]
            )
        keys = [o.obj._moId for o in spec.objectSet]
        if isinstance(spec.objectSet[0].obj, vim.HostSystem):  # the vGPU hosts' managers
            self.manager_reads.append(keys)
            path = "configManager.imageConfigManager"
            return SimpleNamespace(
                objects=[
                    SimpleNamespace(
                        obj=vim.HostSystem(k),
                        propSet=[SimpleNamespace(name=path, val=_ImageManager())],
                        missingSet=[],
                    )
                    for k in keys
                ],
                token=None,
            )
        self.device_reads.append(keys)
        if "vm-4" in keys:
            raise vmodl.fault.ManagedObjectNotFound(obj=vim.VirtualMachine("vm-4"))
        vgpu = PT(
            key=13000,
            deviceInfo=vim.Description(label="PCI device 0", summary=""),
            backing=PT.VmiopBackingInfo(vgpu="grid_l40s-8q"),
        )
        devices = {"vm-1": [vgpu]}
        return SimpleNamespace(
            objects=[
                SimpleNamespace(
                    obj=vim.VirtualMachine(k),
                    propSet=[
                        SimpleNamespace(name="config.hardware.device", val=devices.get(k, []))
                    ],
                    missingSet=[],
                )
                for k in keys
            ],
            token=None,
        )


class _ImageManager:
    """A host's image config manager, to an account with the Read-only role."""

    def FetchSoftwarePackages(self) -> Any:
        raise vim.fault.NoPermission(privilegeId=VGPU_MANAGER_PRIVILEGE)


class _View(vim.view.ContainerView):  # type: ignore[misc]
    def DestroyView(self) -> None:
        pass


class _Perf(vim.PerformanceManager):  # type: ignore[misc]
    """Notes each query's window and answers nothing."""

    def QueryPerf(self, querySpec: list[Any]) -> Any:
        self.windows += [(s.startTime, s.endTime) for s in querySpec]
        return []


class _Settings:
    def __init__(self, hotmigrate: Any) -> None:
        self.hotmigrate = hotmigrate

    def QueryOptions(self, name: str) -> Any:
        if name != HOTMIGRATE:
            raise vim.fault.InvalidName(name=name)
        if isinstance(self.hotmigrate, BaseException):
            raise self.hotmigrate
        return self.hotmigrate


def _service_instance(browser: Any, api: str = "vim.version.v8_0_3_0") -> Any:
    about = vim.AboutInfo(
        fullName="VMware vCenter Server 8.0.3 build-24022515",
        name="VMware vCenter Server",
        version="8.0.3",
        build="24022515",
        apiVersion="8.0.3.0",
        apiType="VirtualCenter",
        instanceUuid="uuid-1",
    )
    views = SimpleNamespace(
        CreateContainerView=lambda container, type, recursive: _View("session[1]view-1")
    )
    content = SimpleNamespace(
        about=about,
        rootFolder=vim.Folder("group-d1"),
        viewManager=views,
        propertyCollector=_Collector(_objects(browser)),
        setting=_Settings([vim.option.OptionValue(key=HOTMIGRATE, value=" True ")]),
        perfManager=_Perf("PerfMgr"),
        licenseManager=None,
    )
    object.__setattr__(content.perfManager, "windows", [])
    return SimpleNamespace(
        RetrieveContent=lambda: content,
        CurrentTime=lambda: dt.datetime(2026, 3, 1, tzinfo=dt.UTC),
        _stub=SimpleNamespace(version=api),
    )


def test_a_whole_vcenter_is_collected() -> None:
    browser = _Browser()
    si = _service_instance(browser)
    said: list[Any] = []
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    inv = collect(si, source="vc.lab.local", progress=said.append)
    after = dt.datetime.now(dt.UTC)
    assert inv.source == "vc.lab.local"
    assert before <= dt.datetime.fromisoformat(inv.collected_at) <= after
    assert inv.collected_at.endswith("+00:00") and "." not in inv.collected_at
    assert inv.vcenter == VCenter(
        name="VMware vCenter Server 8.0.3 build-24022515",
        product="VMware vCenter Server",
        version="8.0.3",
        build="24022515",
        api_version="8.0.3.0",
        api_type="VirtualCenter",
        instance_uuid="uuid-1",
        vgpu_hotmigrate_enabled=True,
    )
    assert inv.datacenters == ["dc/1", "dc0"]
    assert [(c.name, c.datacenter, c.ha_enabled) for c in inv.clusters] == [
        ("empty-cl", "dc/1", False),
        ("gpu-cl", "dc/1", True),
    ]
    gpu_cl = inv.clusters[1]
    assert gpu_cl.heartbeat_datastores == ["ds1"]
    assert gpu_cl.isolation_response_overrides == {"train-01": "powerOff"}
    assert gpu_cl.admission_control.failover_hosts == ["esx-01"]
    assert gpu_cl.restart_priority_overrides == {"train-01": "highest"}
    assert inv.hosts[0].gpus[0].vms == ["train-01"]
    assert [(h.name, h.cluster, h.datacenter, h.ha_state) for h in inv.hosts] == [
        ("esx-01", "gpu-cl", "dc/1", ""),
        ("esx-02", "gpu-cl", "dc/1", ""),
        ("esx-03", None, "dc/1", ""),
    ]
    assert [(d.name, d.datacenter, d.transport) for d in inv.datastores] == [
        ("ds0", "dc/1", "nfs"),
        ("ds1", "dc/1", "fc"),
    ]
    assert [(m.host, [p.adapter for p in m.paths]) for m in inv.datastores[1].mounts] == [
        ("esx-01", ["vmhba2"])
    ]
    assert [
        (v.name, v.host, v.cluster, v.datacenter, v.restart_priority, len(v.gpus), v.datastores)
        for v in inv.vms
    ] == [
        ("gone", None, None, "", None, 0, []),
        ("lost", "host-99", None, "", None, 0, []),
        ("plain", "esx-03", None, "dc/1", None, 0, []),
        ("train-01", "esx-01", "gpu-cl", "dc/1", "highest", 1, ["ds1"]),
    ]
    # Only the VMs that may hold a GPU have their devices read, the deleted one stepped round.
    assert si.RetrieveContent().propertyCollector.device_reads == [
        ["vm-1", "vm-4", "vm-5"],
        ["vm-1", "vm-5"],
    ]
    # The image config manager of the one vGPU host, esx-01, is read and asked.
    assert si.RetrieveContent().propertyCollector.manager_reads == [["host-1"]]
    assert browser.asked == ["host-1"]
    assert inv.hosts[0].stun_estimates == {"grid_l40s-8q": [StunEstimate(10_000, 20)]}
    assert inv.gaps == [
        Gap("gone", "VirtualMachine", "config.hardware.device", "ManagedObjectNotFound", "vm-4"),
        Gap("esx-02", "HostSystem", "config", "host is disconnected", "host-2"),
        Gap(
            "esx-03",
            "HostSystem",
            "config.network.vswitch",
            "vmk1: port group nowhere is on no standard switch",
            "host-3",
        ),
        Gap(
            "esx-01",
            "HostSystem",
            f"vGPU manager version ({VGPU_MANAGER_CALL})",
            f"needs the {VGPU_MANAGER_PRIVILEGE} privilege, which the Read-only role lacks",
            moref="host-1",
            privilege=VGPU_MANAGER_PRIVILEGE,
        ),
    ]
    phases = [s if isinstance(s, str) else (s.phase, s.done, s.unit, s.detail) for s in said]
    assert phases[:4] == [
        "reading inventory",
        ("reading inventory", 18, "objects", "1 page"),
        "read 18 objects",
        "reading the devices of 3 of 5 VMs",
    ]
    assert phases[4:] == [
        ("reading the devices of 3 of 5 VMs", 2, "objects", "1 page"),
        ("reading the vGPU managers' versions", 0, "hosts", ""),
        ("reading the vGPU managers' versions", 1, "hosts", ""),
        "reading GPU telemetry and licences",
        ("reading GPU counters", 0, "hosts", ""),
        ("reading GPU counters", 1, "hosts", ""),
    ]
    # A day of counters to the server's clock.
    server_now = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    assert si.RetrieveContent().perfManager.windows == [
        (server_now - dt.timedelta(hours=24), server_now)
    ]


def test_a_window_asked_for_and_an_older_api() -> None:
    si = _service_instance(_Browser(), api="vim.version.v8_0_2_0")
    inv = collect(si, telemetry_window=dt.timedelta(hours=6))
    assert inv.source == ""
    assert inv.telemetry.window_hours == 6.0
    # After the vGPU manager's gap: the version gaps come last.
    assert inv.gaps[-1] == Gap(
        "vCenter",
        "ServiceInstance",
        "config.graphicsInfo.vgpuMode",
        "needs API 8.0.3.0; negotiated 8.0.2.0",
    )


def test_an_about_with_empty_fields_reads_as_empty() -> None:
    about = vim.AboutInfo(
        fullName="", name="", version="", build="", apiVersion="", apiType="", instanceUuid=None
    )
    assert _vcenter(about) == VCenter()


def test_fields_the_negotiated_api_cannot_carry_are_gaps() -> None:
    inv = Inventory()
    _version_gaps(inv, "vim.version.v7_0_1_0")
    assert inv.gaps == [
        Gap(
            "vCenter",
            "ServiceInstance",
            "config.graphicsInfo.vgpuMode",
            "needs API 8.0.3.0; negotiated 7.0.1.0",
        ),
        Gap(
            "vCenter",
            "ServiceInstance",
            "config.hardware.device.backing.migrateSupported",
            "needs API 7.0.2.0; negotiated 7.0.1.0",
        ),
    ]
    inv = Inventory()
    _version_gaps(inv, "vim.version.v8_0_2_0")
    assert [g.property for g in inv.gaps] == ["config.graphicsInfo.vgpuMode"]
    inv = Inventory()
    _version_gaps(inv, "vim.version.v8_0_3_0")
    assert inv.gaps == []


def test_the_hotmigrate_setting_in_each_answer() -> None:
    def read(answer: Any, api_type: str = "VirtualCenter") -> tuple[bool | None, list[Gap]]:
        inv = Inventory(vcenter=VCenter(api_type=api_type))
        content = SimpleNamespace(setting=_Settings(answer))
        return _hotmigrate(content, inv), inv.gaps

    def option(key: str, value: Any) -> Any:
        return vim.option.OptionValue(key=key, value=value)

    assert read([option(HOTMIGRATE, "TRUE")]) == (True, [])
    assert read([option(HOTMIGRATE, "false")]) == (False, [])
    assert read([option("other", "true"), option(HOTMIGRATE, True)]) == (True, [])
    assert read([option("other", "true")]) == (False, [])
    assert read(None) == (False, [])
    assert read(vim.fault.InvalidName(name=HOTMIGRATE)) == (False, [])
    assert read(vim.fault.NoPermission(privilegeId="System.Read")) == (
        None,
        [Gap("vCenter", "OptionManager", HOTMIGRATE, "NoPermission")],
    )
    assert read(vim.fault.NoPermission(privilegeId="x"), api_type="HostAgent") == (None, [])


def test_the_tree_finds_datacenters_and_clusters_and_survives_loops() -> None:
    folder = _obj("Folder", "group-1", vim.Folder("group-2"), name="a")
    loop = _obj("Folder", "group-2", vim.Folder("group-1"), name="b")
    dc = _obj("Datacenter", "datacenter-1", None, name="dc")
    host = _obj("HostSystem", "host-1", vim.Folder("group-1"), name="esx")
    inside = _obj("HostSystem", "host-2", vim.Datacenter("datacenter-1"), name="esx2")
    orphan = _obj("HostSystem", "host-3", vim.Folder("group-404"), name="esx3")
    tree = _Tree({o.moref: o for o in (folder, loop, dc, host, inside, orphan)})
    assert tree.ancestor("host-1", "Datacenter") is None
    assert tree.datacenter("host-2") == "dc"
    assert tree.datacenter("host-3") == ""
    assert tree.datacenter("nothing") == ""
    assert tree.ancestor("datacenter-1", "Datacenter") is None
    assert tree.names("HostSystem") == {"host-1": "esx", "host-2": "esx2", "host-3": "esx3"}


def test_a_vm_whose_host_is_unknown_or_whose_cluster_has_no_override() -> None:
    objects = {
        o.moref: o
        for o in [
            _obj("ClusterComputeResource", "domain-c1", None, name="cl"),
            _obj("HostSystem", "host-1", vim.ClusterComputeResource("domain-c1"), name="esx"),
            _obj("VirtualMachine", "vm-1", None, name="v", runtime__host=vim.HostSystem("host-1")),
            _obj("VirtualMachine", "vm-2", None, name="w"),
        ]
    }
    inv = Inventory()
    _assemble(inv, objects)
    assert [(v.name, v.host, v.cluster, v.restart_priority) for v in inv.vms] == [
        ("v", "esx", "cl", None),
        ("w", None, None, None),
    ]
    assert inv.hosts[0].connection_state == "unknown"
    assert inv.gaps == [Gap("esx", "HostSystem", "config", "host is unknown", "host-1")]


def test_withheld_properties_are_gaps_in_path_order() -> None:
    vm = _obj("VirtualMachine", "vm-1", None, name="v")
    vm.missing = {"datastore": "NoPermission", "config.firmware": "NotAuthenticated"}
    inv = Inventory()
    _assemble(inv, {})
    assert inv == Inventory()
    _assemble(inv, {"vm-1": vm})
    assert inv.gaps == [
        Gap("v", "VirtualMachine", "config.firmware", "NotAuthenticated", moref="vm-1"),
        Gap("v", "VirtualMachine", "datastore", "NoPermission", moref="vm-1"),
    ]


def test_progress_counts_pages_in_the_plural() -> None:
    said: list[Any] = []
    on_page = _pages(said.append, "phase")
    on_page(500, 1)
    on_page(1500, 1234)
    assert said == [
        Step("phase", 500, unit="objects", detail="1 page"),
        Step("phase", 1500, unit="objects", detail="1,234 pages"),
    ]


def test_a_namesake_cluster_without_a_browser_does_not_hide_the_others() -> None:
    # Two datacenters may each hold a cluster of the same name; the second's
    # environmentBrowser withheld must not stop the first's from being asked.
    browser = _Browser()
    si = _service_instance(browser)
    namesake = _obj("ClusterComputeResource", "domain-c10", vim.Folder("group-h4"), name="gpu-cl")
    si.RetrieveContent().propertyCollector.objects.append(namesake)
    collect(si)
    # The image config manager of the one vGPU host, esx-01, is read and asked.
    assert si.RetrieveContent().propertyCollector.manager_reads == [["host-1"]]
    assert browser.asked == ["host-1"]


def test_objects_slimmed_as_their_pages_arrive_assemble_the_same_inventory() -> None:
    raw, slimmed = Inventory(), Inventory()
    _assemble(raw, {o.moref: o for o in _objects(_Browser())})
    objects = {o.moref: o for o in _objects(_Browser())}
    slims = Slimmer().slims()
    for obj in objects.values():
        if obj.kind in slims:
            slims[obj.kind](obj)
    host = objects["host-1"]
    assert isinstance(host.built, BuiltHost)
    assert sorted(host.props) == [
        "config.graphicsInfo",
        "name",
        "parent",
        "runtime.connectionState",
    ]
    _assemble(slimmed, objects)
    assert slimmed == raw
    assert raw.hosts[0].gpus[0].vms == ["train-01"]


def test_a_slimmed_vm_keeps_only_the_devices_and_options_it_is_built_from() -> None:
    gpu = PT(key=1, backing=PT.VmiopBackingInfo(vgpu="grid_l40s-8q"))
    nic = vim.vm.device.VirtualVmxnet3(key=2)
    member = vim.vm.device.VirtualVmxnet3(
        key=3, deviceGroupInfo=vim.vm.device.VirtualDevice.DeviceGroupInfo(groupInstanceKey=5)
    )
    options = [
        vim.option.OptionValue(key=k, value="1")
        for k in (
            "pciPassthru.use64bitMMIO",
            "PCIPASSTHRU0.cfg.enable_uvm",
            "Maintenance.VM.Evacuation.PowerOff",
            "guestinfo.other",
        )
    ]
    obj = ObjectProps(
        "vm-1",
        "VirtualMachine",
        {
            "runtime.host": vim.HostSystem("host-1"),
            "datastore": [vim.Datastore("datastore-1")],
            "runtime.powerState": vim.VirtualMachine.PowerState.poweredOn,
            "config.hardware.device": [gpu, nic, member],
            "config.extraConfig": options,
        },
    )
    slimmer = Slimmer()
    slimmer.vm(obj)
    slimmer.vm(obj)  # a second page's properties of the same VM: the first stay as they are
    assert obj.props["config.hardware.device"] == [gpu, member]
    assert obj.props["config.extraConfig"] == options[:3]
    assert obj.props["runtime.host"] is slimmer.ref(vim.HostSystem("host-1"))
    assert [d._moId for d in obj.props["datastore"]] == ["datastore-1"]
    assert type(obj.props["runtime.powerState"]) is str
