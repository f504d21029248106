"""The Go lab, live: it serves each scenario over SOAP as pyVmomi sees it."""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyVim.connect import Disconnect, SmartConnect
from pyVmomi import VmomiSupport, vim, vmodl

from tests.lab import lab as lab_module
from tests.lab.lab import LAB_PASSWORD, LAB_USER, Lab, LabError
from tests.lab.scenario import load_scenario

pytestmark = pytest.mark.live

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
COMMITTED = sorted(SCENARIOS.glob("*.yaml"))
TYPES = {
    "Datacenter": vim.Datacenter,
    "ClusterComputeResource": vim.ClusterComputeResource,
    "ComputeResource": vim.ComputeResource,
    "HostSystem": vim.HostSystem,
    "VirtualMachine": vim.VirtualMachine,
    "Datastore": vim.Datastore,
}


@pytest.fixture(scope="module", autouse=True)
def lab_binary() -> None:
    """Build the lab once (build.sh installs Go when it can): a skip on a laptop
    that cannot, a failure in CI."""
    try:
        lab_module.ensure_binary()
    except LabError as exc:
        if os.environ.get("CI"):
            pytest.fail(str(exc))
        pytest.skip(str(exc))


def connect(lab: Lab, **kwargs: Any) -> Any:
    return SmartConnect(
        protocol="http",
        host=lab.host,
        port=lab.port,
        user=kwargs.pop("user", lab.user),
        pwd=kwargs.pop("pwd", lab.password),
        **kwargs,
    )


@pytest.fixture
def started() -> Iterator[list[Lab]]:
    """Labs started by a test; all stopped at its end."""
    labs: list[Lab] = []
    yield labs
    for lab in labs:
        lab.stop()


def serve(started: list[Lab], scenario: str | Path | dict[str, Any], **kwargs: Any) -> Lab:
    if isinstance(scenario, str) and not scenario.endswith(".yaml"):
        scenario = SCENARIOS / f"{scenario}.yaml"
    lab = Lab(scenario, **kwargs)
    started.append(lab)
    return lab.start()


def retrieve(si: Any, kind: type, paths: list[str], max_objects: int | None = None) -> list[Any]:
    """Every object of a type under the root folder with the given properties, all pages."""
    content = si.RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [kind], True)
    try:
        pc = vmodl.query.PropertyCollector
        spec = pc.FilterSpec(
            objectSet=[
                pc.ObjectSpec(
                    obj=view,
                    skip=True,
                    selectSet=[pc.TraversalSpec(path="view", type=vim.view.ContainerView)],
                )
            ],
            propSet=[pc.PropertySpec(type=kind, pathSet=paths)],
        )
        options = pc.RetrieveOptions(maxObjects=max_objects)
        result = content.propertyCollector.RetrievePropertiesEx([spec], options)
        objects = []
        while result is not None:
            objects.extend(result.objects)
            if not result.token:
                break
            result = content.propertyCollector.ContinueRetrievePropertiesEx(result.token)
        return objects
    finally:
        view.DestroyView()


def props(obj: Any) -> dict[str, Any]:
    return {p.name: p.val for p in obj.propSet}


def by_name(si: Any, kind: type, paths: list[str]) -> dict[str, dict[str, Any]]:
    return {props(o)["name"]: props(o) for o in retrieve(si, kind, ["name", *paths])}


def vc_name(name: str) -> str:
    """How vCenter stores an entity name: '%', '/', '\\' escaped."""
    return name.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def children() -> set[int]:
    """Pids of this process's children, zombies included."""
    pids = set()
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        ppid = next(
            (line.split()[1] for line in status.splitlines() if line.startswith("PPid:")), ""
        )
        if ppid == me:
            pids.add(int(entry))
    return pids


# -- every scenario ---------------------------------------------------------


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.stem)
def test_serves_exactly_the_scenario(started: list[Lab], path: Path) -> None:
    scenario = load_scenario(path)
    lab = serve(started, path)
    si = connect(lab)
    try:
        # pyVmomi negotiates the API version the scenario advertises.
        assert VmomiSupport.versionIdMap[si._stub.version] == scenario["vcenter"]["api_version"]
        content = si.RetrieveContent()
        assert content.about.apiVersion == scenario["vcenter"]["api_version"]
        assert content.about.version == scenario["vcenter"]["version"]
        dcs = scenario["datacenters"]
        expected = {
            "Datacenter": [dc["name"] for dc in dcs],
            "ClusterComputeResource": [c["name"] for dc in dcs for c in dc["clusters"]],
            "HostSystem": [
                h["name"]
                for dc in dcs
                for h in [h for c in dc["clusters"] for h in c["hosts"]] + dc["standalone_hosts"]
            ],
            "VirtualMachine": [vm["name"] for dc in dcs for vm in dc["vms"]],
            "Datastore": [ds["name"] for dc in dcs for ds in dc["datastores"]],
        }
        # A standalone host comes with a ComputeResource of its name; clusters are
        # ComputeResources too.
        expected["ComputeResource"] = expected["ClusterComputeResource"] + [
            h["name"] for dc in dcs for h in dc["standalone_hosts"]
        ]
        for kind, names in expected.items():
            served = [props(o)["name"] for o in retrieve(si, TYPES[kind], ["name"])]
            assert sorted(served) == sorted(vc_name(n) for n in names), kind
    finally:
        Disconnect(si)


def test_morefs_and_answers_repeat(started: list[Lab]) -> None:
    """Two labs of one scenario serve the same ids: recorded sessions replay."""
    first, second = serve(started, "scenario-b"), serve(started, "scenario-b")
    answers = []
    for lab in (first, second):
        si = connect(lab)
        try:
            objects = retrieve(si, vim.ManagedEntity, ["name"])
            answers.append(sorted((o.obj._moId, props(o)["name"]) for o in objects))
            host = retrieve(si, vim.HostSystem, ["config.storageDevice", "hardware.systemInfo"])
            answers.append(sorted(str(props(h)) for h in host))
        finally:
            Disconnect(si)
    assert answers[0] == answers[2]
    assert answers[1] == answers[3]


# -- GPU, storage, network and HA fields ------------------------------------


@pytest.fixture
def scenario_b(started: list[Lab]) -> Iterator[Any]:
    lab = serve(started, "scenario-b")
    si = connect(lab)
    yield si
    Disconnect(si)


def test_gpu_fields(scenario_b: Any) -> None:
    hosts = by_name(
        scenario_b,
        vim.HostSystem,
        [
            "config.graphicsInfo",
            "config.graphicsConfig",
            "config.sharedPassthruGpuTypes",
            "config.sharedGpuCapabilities",
            "hardware.pciDevice",
        ],
    )
    host = hosts["esx-b01.corp.local"]
    (info,) = host["config.graphicsInfo"]
    assert (info.pciId, info.graphicsType, info.vgpuMode) == (
        "0000:3b:00.0",
        "sharedDirect",
        "sameSize",
    )
    assert info.memorySizeInKB == 24 * 1024 * 1024
    vms = {
        o.obj._moId: props(o)["name"] for o in retrieve(scenario_b, vim.VirtualMachine, ["name"])
    }
    assert sorted(vms[v._moId] for v in info.vm) == ["vdi-design-01", "vdi-design-02"]
    assert host["config.graphicsConfig"].hostDefaultGraphicsType == "sharedDirect"
    assert "grid_l4-8q" in host["config.sharedPassthruGpuTypes"]
    caps = {c.vgpu: c for c in host["config.sharedGpuCapabilities"]}
    assert caps["grid_l4-8q"].migrateSupported is True
    gpu = next(d for d in host["hardware.pciDevice"] if d.id == "0000:3b:00.0")
    assert (gpu.vendorId, gpu.deviceId, gpu.classId) == (0x10DE, 0x27B8, 0x0302)
    # Ids above 0x7fff are signed shorts, as ESXi sends them: Intel's 0x8086.
    assert any(d.vendorId == 0x8086 - 0x10000 for d in host["hardware.pciDevice"])

    vm = by_name(scenario_b, vim.VirtualMachine, ["config.hardware.device"])["vdi-design-01"]
    (dev,) = [
        d
        for d in vm["config.hardware.device"]
        if isinstance(d, vim.vm.device.VirtualPCIPassthrough)
    ]
    assert isinstance(dev.backing, vim.vm.device.VirtualPCIPassthrough.VmiopBackingInfo)
    assert (dev.backing.vgpu, dev.backing.migrateSupported) == ("grid_l4-8q", True)


def test_fc_adapters_and_paths(scenario_b: Any) -> None:
    host = by_name(scenario_b, vim.HostSystem, ["config.storageDevice"])["esx-b02.corp.local"]
    storage = host["config.storageDevice"]
    hbas = {h.device: h for h in storage.hostBusAdapter}
    fc = hbas["vmhba2"]
    assert isinstance(fc, vim.host.FibreChannelHba)
    assert fc.key == "key-vim.host.FibreChannelHba-vmhba2"
    assert fc.portWorldWideName == 0x1000_0010_9B5A_0202
    assert fc.nodeWorldWideName == 0x2000_0010_9B5A_0202
    assert isinstance(hbas["vmhba0"], vim.host.BlockHba)
    (lun,) = [
        x for x in storage.scsiLun if x.canonicalName == "naa.600a098038303053453f463045726e41"
    ]
    assert isinstance(lun, vim.host.ScsiDisk)
    (multipath,) = [m for m in storage.multipathInfo.lun if m.lun == lun.key]
    assert sorted(p.adapter for p in multipath.path) == [
        "key-vim.host.FibreChannelHba-vmhba2",
        "key-vim.host.FibreChannelHba-vmhba3",
    ]
    assert {p.state for p in multipath.path} == {"active"}
    assert all(
        isinstance(p.transport, vim.host.FibreChannelTargetTransport) for p in multipath.path
    )

    ds = by_name(scenario_b, vim.Datastore, ["summary", "host", "info"])["fc-san-gold-01"]
    assert ds["summary"].type == "VMFS"
    assert ds["summary"].multipleHostAccess is True
    assert [e.diskName for e in ds["info"].vmfs.extent] == [lun.canonicalName]
    assert ds["info"].vmfs.local is False
    assert len(ds["host"]) == 3 and all(m.mountInfo.accessible for m in ds["host"])


def test_vmotion_network(scenario_b: Any) -> None:
    host = by_name(
        scenario_b,
        vim.HostSystem,
        ["config.virtualNicManagerInfo.netConfig", "config.network"],
    )["esx-b03.corp.local"]
    (vmotion,) = [
        n for n in host["config.virtualNicManagerInfo.netConfig"] if n.nicType == "vmotion"
    ]
    selected = [c for c in vmotion.candidateVnic if c.key in vmotion.selectedVnic]
    assert [(c.device, c.spec.ip.ipAddress, c.portgroup) for c in selected] == [
        ("vmk1", "10.20.30.13", "vMotion-vmk1")
    ]
    network = host["config.network"]
    (pg,) = [p for p in network.portgroup if p.spec.name == "vMotion-vmk1"]
    (switch,) = [s for s in network.vswitch if s.name == pg.spec.vswitchName]
    assert switch.name == "vSwitch-vmotion"
    speeds = {p.key: p.linkSpeed.speedMb for p in network.pnic}
    assert [speeds[k] for k in switch.pnic] == [25000]


def test_cluster_ha_and_settings(scenario_b: Any) -> None:
    cluster = by_name(
        scenario_b,
        vim.ClusterComputeResource,
        ["configurationEx.dasConfig", "configurationEx.dasVmConfig", "configurationEx.drsConfig"],
    )["scen-b"]
    das = cluster["configurationEx.dasConfig"]
    assert das.enabled and das.admissionControlEnabled and das.hostMonitoring == "enabled"
    policy = das.admissionControlPolicy
    assert isinstance(policy, vim.cluster.FailoverResourcesAdmissionControlPolicy)
    assert (policy.cpuFailoverResourcesPercent, policy.memoryFailoverResourcesPercent) == (34, 34)
    assert das.defaultVmSettings.restartPriority == "medium"
    vms = {
        o.obj._moId: props(o)["name"] for o in retrieve(scenario_b, vim.VirtualMachine, ["name"])
    }
    overrides = {
        vms[c.key._moId]: c.dasSettings.restartPriority
        for c in cluster["configurationEx.dasVmConfig"]
    }
    assert overrides == {"vdi-design-01": "high", "vdi-design-03": "high"}
    assert cluster["configurationEx.drsConfig"].defaultVmBehavior == "fullyAutomated"

    (option,) = scenario_b.RetrieveContent().setting.QueryOptions("vgpu.hotmigrate.enabled")
    assert option.value is True
    vm = by_name(
        scenario_b,
        vim.VirtualMachine,
        ["resourceConfig.memoryAllocation.reservation", "config.hardware.memoryMB"],
    )["ml-notebook-01"]
    assert (
        vm["resourceConfig.memoryAllocation.reservation"] == vm["config.hardware.memoryMB"] == 65536
    )


def test_missing_setting_raises_invalid_name(started: list[Lab]) -> None:
    si = connect(serve(started, "scenario-a"))
    try:
        with pytest.raises(vim.fault.InvalidName):
            si.RetrieveContent().setting.QueryOptions("vgpu.hotmigrate.enabled")
    finally:
        Disconnect(si)


def test_passthrough_backings_and_iscsi(started: list[Lab]) -> None:
    si = connect(serve(started, "scenario-c"))
    try:
        vms = by_name(si, vim.VirtualMachine, ["config.hardware.device", "runtime.powerState"])
        (running,) = [
            d
            for d in vms["cv-line-01"]["config.hardware.device"]
            if isinstance(d, vim.vm.device.VirtualPCIPassthrough)
        ]
        backing = running.backing
        assert isinstance(backing, vim.vm.device.VirtualPCIPassthrough.DynamicBackingInfo)
        assert [(a.vendorId, a.deviceId) for a in backing.allowedDevice] == [(0x10DE, 0x27B8)]
        assert (backing.customLabel, backing.assignedId) == ("l4-inference", "0000:3b:00.0")
        (standby,) = [
            d
            for d in vms["cv-line-04-standby"]["config.hardware.device"]
            if isinstance(d, vim.vm.device.VirtualPCIPassthrough)
        ]
        assert standby.backing.assignedId is None  # only a powered-on VM holds a device
        hosts = by_name(
            si, vim.HostSystem, ["config.storageDevice.hostBusAdapter", "config.graphicsInfo"]
        )
        (hba,) = [
            h
            for h in hosts["gpu-c01.plant.local"]["config.storageDevice.hostBusAdapter"]
            if h.device == "vmhba64"
        ]
        assert isinstance(hba, vim.host.InternetScsiHba) and hba.isSoftwareBased is True
        (spare,) = hosts["buffer-c04.plant.local"]["config.graphicsInfo"]
        assert (spare.graphicsType, list(spare.vm)) == ("direct", [])
    finally:
        Disconnect(si)

    si = connect(serve(started, "scenario-a"))
    try:
        vm = by_name(si, vim.VirtualMachine, ["config.hardware.device"])["cv-inference-02"]
        (dev,) = [
            d
            for d in vm["config.hardware.device"]
            if isinstance(d, vim.vm.device.VirtualPCIPassthrough)
        ]
        assert isinstance(dev.backing, vim.vm.device.VirtualPCIPassthrough.DeviceBackingInfo)
        # ESXi writes the device id as lower-case hex and the vendor id as a short.
        assert (dev.backing.id, dev.backing.deviceId, dev.backing.vendorId) == (
            "0000:3b:00.0",
            "27b8",
            0x10DE,
        )
        assert dev.backing.systemId
    finally:
        Disconnect(si)


def test_hostile_names_and_signed_ids(started: list[Lab]) -> None:
    si = connect(serve(started, "hostile"))
    try:
        hosts = by_name(si, vim.HostSystem, ["hardware.pciDevice", "config.graphicsInfo"])
        # '/' and '\' come back escaped, as vCenter stores them.
        assert "esx%2f01%5c..%5c..%5cetc" in hosts
        assert "hôte-é-日本-🚀" in hosts
        unknown = next(
            d for d in hosts["+host-plus.lab"]["hardware.pciDevice"] if d.id == "0000:af:00.0"
        )
        assert unknown.deviceId == 0x9999 - 0x10000 and unknown.deviceName == ""
        names = {
            g.deviceName
            for g in hosts["<img src=x onerror=alert(document.domain)>"]["config.graphicsInfo"]
        }
        assert names == {"<script>alert('gpu')</script>", '=GPU()+"x"'}
        datastores = by_name(si, vim.Datastore, ["summary.type"])
        assert "50%25 full %5c back%2fslash" in datastores
        assert datastores["..%2f..%2fetc%2fpasswd"]["summary.type"] == "NFS"
        vms = by_name(si, vim.VirtualMachine, ["config.hardware.device"])
        long_name = next(n for n in vms if n.startswith("vm-255-"))
        assert len(long_name) == 255
        (dev,) = [
            d
            for d in vms["@SUM(1+1)"]["config.hardware.device"]
            if isinstance(d, vim.vm.device.VirtualPCIPassthrough)
        ]
        # Dynamic DirectPath ids are ints that carry the signed short.
        assert [a.deviceId for a in dev.backing.allowedDevice] == [0x9999 - 0x10000]
        assert dev.backing.customLabel == "<svg onload=alert(1)>"
    finally:
        Disconnect(si)


def test_disconnected_host_has_no_config_or_hardware(started: list[Lab]) -> None:
    scenario = {
        "datacenters": [
            {
                "name": "dc",
                "clusters": [
                    {
                        "name": "c",
                        "hosts": [
                            {
                                "name": "up",
                                "gpus": [{"pci_id": "0000:3b:00.0", "device_id": 0x27B8}],
                            },
                            {"name": "down", "connection": "notResponding"},
                        ],
                    }
                ],
                "vms": [{"name": "orphan", "host": "down"}],
            }
        ]
    }
    si = connect(serve(started, scenario))
    try:
        hosts = by_name(
            si,
            vim.HostSystem,
            ["config", "hardware", "runtime.connectionState", "summary.hardware"],
        )
        assert hosts["down"]["runtime.connectionState"] == "notResponding"
        assert "config" not in hosts["down"] and "hardware" not in hosts["down"]
        assert hosts["down"]["summary.hardware"].model == "PowerEdge R760"
        assert "config" in hosts["up"] and "hardware" in hosts["up"]
        vm = by_name(si, vim.VirtualMachine, ["runtime.connectionState"])["orphan"]
        assert vm["runtime.connectionState"] == "disconnected"
    finally:
        Disconnect(si)


def test_older_api_version_drops_newer_fields(started: list[Lab]) -> None:
    scenario = load_scenario(SCENARIOS / "scenario-b.yaml")
    scenario["vcenter"]["api_version"] = "7.0.3.0"
    si = connect(serve(started, scenario))
    try:
        assert si._stub.version == "vim.version.v7_0_3_0"
        host = by_name(si, vim.HostSystem, ["config.graphicsInfo"])["esx-b01.corp.local"]
        assert host["config.graphicsInfo"][0].vgpuMode is None  # an 8.0 U3 field
        vm = by_name(si, vim.VirtualMachine, ["config.hardware.device"])["vdi-design-01"]
        (dev,) = [
            d
            for d in vm["config.hardware.device"]
            if isinstance(d, vim.vm.device.VirtualPCIPassthrough)
        ]
        assert dev.backing.migrateSupported is True  # 7.0 U2
    finally:
        Disconnect(si)


# -- the property collector --------------------------------------------------


def test_paging_and_nested_paths(scenario_b: Any) -> None:
    paths = ["name", "config.storageDevice.multipathInfo", "summary.config.product.version"]
    hosts = retrieve(scenario_b, vim.HostSystem, paths, max_objects=2)
    assert len(hosts) == 3
    first = props(hosts[0])
    assert first["summary.config.product.version"] == "8.0.3"
    assert len(first["config.storageDevice.multipathInfo"].lun) == 1

    content = scenario_b.RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [vim.VirtualMachine], True)
    pc = vmodl.query.PropertyCollector
    spec = pc.FilterSpec(
        objectSet=[
            pc.ObjectSpec(
                obj=view,
                skip=True,
                selectSet=[pc.TraversalSpec(path="view", type=vim.view.ContainerView)],
            )
        ],
        propSet=[pc.PropertySpec(type=vim.VirtualMachine, pathSet=["name"])],
    )
    page = content.propertyCollector.RetrievePropertiesEx([spec], pc.RetrieveOptions(maxObjects=3))
    assert len(page.objects) == 3 and page.token
    rest = content.propertyCollector.ContinueRetrievePropertiesEx(page.token)
    assert len(rest.objects) == 3 and rest.token
    content.propertyCollector.CancelRetrievePropertiesEx(rest.token)
    with pytest.raises(vmodl.fault.InvalidArgument):
        content.propertyCollector.ContinueRetrievePropertiesEx(rest.token)

    # A path cannot step into list elements; vCenter refuses it as invalid.
    spec.propSet[0].pathSet = ["config.hardware.device.backing"]
    with pytest.raises(vmodl.query.InvalidProperty):
        content.propertyCollector.RetrievePropertiesEx([spec], pc.RetrieveOptions())
    view.DestroyView()


# -- credentials, TLS and start-up failures -----------------------------------


def test_wrong_password_is_refused(started: list[Lab]) -> None:
    lab = serve(started, "scenario-a")
    assert (lab.user, lab.password) == (LAB_USER, LAB_PASSWORD)
    with pytest.raises(vim.fault.InvalidLogin):
        connect(lab, pwd="not-the-password")
    with pytest.raises(vim.fault.InvalidLogin):
        connect(lab, user="root")
    Disconnect(connect(lab))


def test_https_with_the_lab_certificate(started: list[Lab]) -> None:
    lab = serve(started, "scenario-a", tls=True)
    assert lab.url.startswith("https://127.0.0.1:")
    assert lab.cert_file and Path(lab.cert_file).read_text().startswith(
        "-----BEGIN CERTIFICATE-----"
    )
    context = ssl.create_default_context(cafile=lab.cert_file)
    si = SmartConnect(
        host=lab.host, port=lab.port, user=lab.user, pwd=lab.password, sslContext=context
    )
    assert si.RetrieveContent().about.apiVersion == "8.0.3.0"
    Disconnect(si)
    si = SmartConnect(
        host="localhost",
        port=lab.port,
        user=lab.user,
        pwd=lab.password,
        disableSslCertValidation=True,
    )
    Disconnect(si)
    with pytest.raises(ssl.SSLError):  # an unknown CA is refused
        SmartConnect(
            host=lab.host,
            port=lab.port,
            user=lab.user,
            pwd=lab.password,
            sslContext=ssl.create_default_context(),
        )


def test_stop_ends_the_process(started: list[Lab]) -> None:
    before = children()
    lab = serve(started, "scenario-a")
    assert lab.running
    lab.stop()
    lab.stop()  # idempotent
    assert not lab.running and children() == before


def test_port_taken(started: list[Lab]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        before = children()
        lab = Lab(SCENARIOS / "scenario-a.yaml", port=port)
        started.append(lab)
        with pytest.raises(LabError) as info:
            lab.start()
    message = str(info.value)
    assert "\n" not in message
    assert f"127.0.0.1:{port}" in message and "address already in use" in message
    assert lab.process is None and children() == before


def test_malformed_and_unknown_fields(started: list[Lab], tmp_path: Path) -> None:
    before = children()
    broken = tmp_path / "broken.yaml"
    broken.write_text("datacenters:\n  - name: dc\n    clusters: [\n", encoding="utf-8")
    with pytest.raises(LabError, match=r"broken.yaml:\d+: not valid YAML"):
        Lab(broken).start()
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("datacenters:\n  - name: dc\n    gpuz: 1\n", encoding="utf-8")
    with pytest.raises(LabError, match=r"unknown.yaml:3: unknown key 'gpuz' in datacenter dc"):
        Lab(unknown).start()
    assert children() == before


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ('{"datacenters": [{"name": "dc"}], "gpuz": 1', "unexpected EOF"),
        (
            '{"description": "", "vcenter": {}, "datacenters": [{"name": "dc"}], '
            '"expect": [], "gpuz": 1}',
            'unknown field "gpuz"',
        ),
    ],
    ids=["malformed-json", "unknown-field"],
)
def test_binary_reports_one_error_line(tmp_path: Path, document: str, message: str) -> None:
    """The Go side refuses what the loader would never write, in one stderr line."""
    path = tmp_path / "scenario.json"
    path.write_text(document, encoding="utf-8")
    result = subprocess.run(
        [str(lab_module.BINARY), "-scenario", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode != 0 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.stderr


def test_json_written_for_the_lab_round_trips(tmp_path: Path) -> None:
    scenario = load_scenario(SCENARIOS / "hostile.yaml")
    assert json.loads(json.dumps(scenario)) == scenario


def test_installed_software_needs_host_config_image(started: list[Lab]) -> None:
    host = {
        "name": "esx01",
        "gpus": [{"pci_id": "0000:3b:00.0", "device_id": 0x27B8}],
        "vgpu_profiles": [{"name": "grid_l4-8q"}],
        "vgpu_manager": "550.54.16",
    }
    bare = {"name": "esx02"}
    base = {"datacenters": [{"name": "dc", "clusters": [{"name": "c", "hosts": [host, bare]}]}]}
    # The Read-only role: NoPermission, naming the privilege the call requires.
    si = connect(serve(started, base))
    try:
        hosts = by_name(si, vim.HostSystem, ["configManager.imageConfigManager"])
        managers = {n: h["configManager.imageConfigManager"] for n, h in hosts.items()}
        # Each host has a manager of its own.
        assert len({m._moId for m in managers.values()}) == 2
        with pytest.raises(vim.fault.NoPermission) as refused:
            managers["esx01"].FetchSoftwarePackages()
        assert refused.value.privilegeId == "Host.Config.Image"
    finally:
        Disconnect(si)
    # Granted: ESXi's own VIBs, and NVIDIA's two on the host with a vGPU manager.
    si = connect(serve(started, {**base, "role": {"privileges": ["Host.Config.Image"]}}))
    try:
        hosts = by_name(si, vim.HostSystem, ["configManager.imageConfigManager"])
        packages = {
            n: {
                p.name: p.version
                for p in h["configManager.imageConfigManager"].FetchSoftwarePackages()
            }
            for n, h in hosts.items()
        }
        assert (
            packages["esx01"]["NVD-VMware_ESXi_8.0.0_Driver"] == "550.54.16-1OEM.800.1.0.20613240"
        )
        assert packages["esx01"]["nvdgpumgmtdaemon"].startswith("550.54.16-")
        assert packages["esx01"]["esx-base"] == "8.0.3-0.0.24022510"
        assert "NVD-VMware_ESXi_8.0.0_Driver" not in packages["esx02"]
        assert "nvdgpumgmtdaemon" not in packages["esx02"]
    finally:
        Disconnect(si)
