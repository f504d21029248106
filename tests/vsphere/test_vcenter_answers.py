"""vCenter's own answers about vGPU types: its description of each profile
(QueryConfigTarget's vgpuProfileInfo) and, on vSphere 9.0, its count of each profile per
host (DirectPathProfileManager.QueryCapacity).

tests/scenarios/vcenter-answers.yaml declares the answers, recorded from the lab as
cassettes/vcenter-answers.yaml. Expectations come from that file, read by the lab's own
loader (tests/lab/scenario.py, which fills in what the file leaves to the lab), or are
written out here; never from gpuaudit's code. NVIDIA's figure used: vGPU user guide,
A.1, NVIDIA L40S: at most 2 of L40S-24Q per GPU.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from pyVim.connect import Disconnect, SmartConnect
from pyVmomi import vim, vmodl

from gpuaudit.inventory import Host, Inventory, ProfileCapacity
from gpuaudit.results import AuditResult
from gpuaudit.vsphere import cassette, obtain
from gpuaudit.vsphere.credentials import Credentials
from tests.conftest import CASSETTES, SCENARIOS
from tests.lab.scenario import load_scenario
from tests.support.checked_estates import assert_expectations, recorded

SCENARIO = SCENARIOS / "vcenter-answers.yaml"
L40S_24Q_PER_GPU = 2
TRAP, TWIN = "ans-l40s-esx02", "ans-l40stw-esx02"
CAPACITY_CALL = "DirectPathProfileManagerQueryCapacity"  # QueryCapacity on the wire


@pytest.fixture(scope="module")
def result() -> AuditResult:
    return recorded("vcenter-answers")


@pytest.fixture(scope="module")
def inventory(result: AuditResult) -> Inventory:
    return result.inventory


def scenario() -> dict[str, Any]:
    data: dict[str, Any] = load_scenario(SCENARIO)
    return data


def clusters() -> list[dict[str, Any]]:
    return [c for dc in scenario()["datacenters"] for c in dc["clusters"]]


def host_specs() -> dict[str, dict[str, Any]]:
    return {h["name"]: h for c in clusters() for h in c["hosts"]}


def by_name(inventory: Inventory) -> dict[str, Host]:
    return {h.name: h for h in inventory.hosts}


def test_the_expectations_of_the_scenario_hold(result: AuditResult) -> None:
    assert_expectations(result, scenario()["expect"])


def test_the_vcenter_speaks_api_9(inventory: Inventory) -> None:
    assert inventory.vcenter.api_version == scenario()["vcenter"]["api_version"] == "9.0.0.0"


# QueryConfigTarget: each cluster runs a vGPU VM and its hosts share one ESXi build and GPU
# model, so vCenter is asked about the first host of each cluster by name.


def test_each_profile_has_vcenters_description_from_the_host_asked(inventory: Inventory) -> None:
    hosts = by_name(inventory)
    specs = host_specs()
    for cluster in clusters():
        asked = min(h["name"] for h in cluster["hosts"])
        described = {p["name"]: p for p in specs[asked]["vgpu_profiles"]}
        for spec in cluster["hosts"]:
            host = hosts[spec["name"]]
            assert host.vgpu_profile_info_host == asked
            assert host.unlisted_vgpu_profiles == []
            collected = {
                p.name: (p.frame_buffer_gib, p.sharing, p.profile_class, p.device_vendor_id)
                for p in host.vgpu_profiles
            }
            assert collected == {
                name: (p["fb_gib"], p["sharing"], p["class"], p["device_vendor_id"])
                for name, p in described.items()
            }, spec["name"]


def test_the_facts_are_the_ones_the_file_gives_or_the_names_say(inventory: Inventory) -> None:
    raw = yaml.safe_load(SCENARIO.read_text(encoding="utf-8"))
    given = {
        (h["name"], p["name"]): p["fb_gib"]
        for c in raw["datacenters"][0]["clusters"]
        for h in c["hosts"]
        for p in h["vgpu_profiles"]
        if "fb_gib" in p
    }
    # Given explicitly: the H100's 1g.10gb profile, 10 GiB.
    assert given == {("ans-h100-esx01", "nvidia_h100xm-1-10c"): 10} | {
        ("ans-h100-esx02", "nvidia_h100xm-1-10c"): 10
    }
    hosts = by_name(inventory)
    facts = {
        (h.name, p.name): (p.frame_buffer_gib, p.sharing, p.profile_class, p.device_vendor_id)
        for h in hosts.values()
        for p in h.vgpu_profiles
    }
    l40s, h100 = 0x26B9 << 16 | 0x10DE, 0x2330 << 16 | 0x10DE  # 10de:26b9, 10de:2330
    assert facts[("ans-h100-esx02", "nvidia_h100xm-1-10c")] == (10, "mig", "compute", h100)
    # Left to the lab: what the names say, and the hosts' GPUs.
    assert facts[("ans-h100-esx01", "nvidia_h100xm-3-40c")] == (40, "mig", "compute", h100)
    assert facts[(TRAP, "nvidia_l40s-24q")] == (24, "timeSliced", "quadro", l40s)
    assert facts[(TWIN, "nvidia_l40s-48q")] == (48, "timeSliced", "quadro", l40s)


# QueryCapacity: one call per vGPU host, one query per profile.


def test_capacity_is_what_vcenter_answers_per_profile(inventory: Inventory) -> None:
    hosts = by_name(inventory)
    gaps = {(g.object, g.property): g.reason for g in inventory.gaps if not g.privilege}
    expected_gaps = {}
    for name, spec in host_specs().items():
        for declared, profile in zip(spec["vgpu_profiles"], hosts[name].vgpu_profiles, strict=True):
            assert declared["name"] == profile.name
            answer = declared["capacity"]
            if "unknown" in answer:
                assert profile.capacity is None, (name, profile.name)
                path = f"directPathProfileManager.QueryCapacity({profile.name})"
                expected_gaps[(name, path)] = ", ".join(answer["unknown"])
            else:
                assert profile.capacity == ProfileCapacity(
                    max=answer["max"],
                    consumed=answer["consumed"],
                    remaining=answer["remaining"],
                    unused_reservation=answer["unused_reservation"],
                ), (name, profile.name)
    assert gaps == expected_gaps
    # The host vCenter cannot count: every profile unknown, the undeclared one NotSupported.
    assert expected_gaps == {
        ("ans-h100-esx02", "directPathProfileManager.QueryCapacity(nvidia_h100xm-1-10c)"): (
            "InvalidState"
        ),
        ("ans-h100-esx02", "directPathProfileManager.QueryCapacity(nvidia_h100xm-3-40c)"): (
            "InvalidState"
        ),
        ("ans-h100-esx02", "directPathProfileManager.QueryCapacity(nvidia_h100xm-7-80c)"): (
            "NotSupported"
        ),
    }


def test_the_trap_leaves_less_than_nvidias_figures_and_its_twin_does_not(
    inventory: Inventory,
) -> None:
    vms = [vm for dc in scenario()["datacenters"] for vm in dc["vms"]]
    hosts = by_name(inventory)
    for host in (TRAP, TWIN):
        running = [v["gpus"][0]["vgpu"] for v in vms if v["host"] == host]
        assert running == ["nvidia_l40s-24q"]
        nvidia_free = L40S_24Q_PER_GPU - len(running)  # one GPU per host
        assert nvidia_free == 1
        capacity = next(p.capacity for p in hosts[host].vgpu_profiles if p.name == running[0])
        assert capacity is not None
        if host == TRAP:
            assert capacity.remaining < nvidia_free
            assert capacity.unused_reservation == 1
        else:
            assert capacity.remaining == nvidia_free


def test_the_twin_cluster_differs_from_the_trap_only_in_the_trap() -> None:
    trap, twin = (
        next(c for c in clusters() if c["name"] == n) for n in ("ans-l40s", "ans-l40s-twin")
    )
    vms = [vm for dc in scenario()["datacenters"] for vm in dc["vms"]]

    def shape(cluster: dict[str, Any], prefix: str, datastore: str) -> Any:
        text = repr(
            (
                cluster["hosts"],
                [v for v in vms if v["host"].startswith(prefix)],
                {k: v for k, v in cluster.items() if k not in ("name", "hosts")},
            )
        )
        text = re.sub(r"'ip': '10\.0\.10\.\d+'", "'ip': IP", text)
        return text.replace(f"'{datastore}'", "DATASTORE").replace(prefix, "PREFIX")

    trap_text = shape(trap, "ans-l40s-", "nfs-ans-l40s").replace(
        "'remaining': 0, 'unused_reservation': 1", "'remaining': 1, 'unused_reservation': 0"
    )
    assert shape(twin, "ans-l40stw-", "nfs-ans-l40s-twin") == trap_text


def test_the_collector_asked_once_per_vgpu_host_one_query_per_profile(
    inventory: Inventory,
) -> None:
    names = {h.moref: h.name for h in inventory.hosts}
    asked = []
    for item in cassette.interactions(CASSETTES / "vcenter-answers.yaml"):
        operation, _, args = cassette.soap_call(item["request"].get("body"))
        if operation != CAPACITY_CALL:
            continue
        (moref,) = re.findall(r'<ns0:host type="HostSystem">([^<]+)</ns0:host>', args)
        assert 'xsi:type="DirectPathProfileManagerTargetHost"' in args
        assert args.count('xsi:type="DirectPathProfileManagerVmiopDirectPathConfig"') == len(
            re.findall(r"<ns0:vgpuProfile>", args)
        )
        asked.append((names[moref], re.findall(r"<ns0:vgpuProfile>([^<]+)<", args)))
    specs = host_specs()
    assert sorted(asked) == sorted(
        (name, [p["name"] for p in spec["vgpu_profiles"]]) for name, spec in specs.items()
    )


# The lab itself, to a pyVmomi client.


def _connect(lab: Any) -> Any:
    return SmartConnect(
        protocol="http", host=lab.host, port=lab.port, user=lab.user, pwd=lab.password
    )


def _host(content: Any, name: str) -> Any:
    view = content.viewManager.CreateContainerView(content.rootFolder, [vim.HostSystem], True)
    try:
        return next(h for h in view.view if h.name == name)
    finally:
        view.DestroyView()


@pytest.mark.live
def test_the_labs_answers_deserialize_in_pyvmomi(lab_factory: Any) -> None:
    lab = lab_factory("vcenter-answers")
    si = _connect(lab)
    try:
        assert si._stub.version == "vim.version.v9_0_0_0"
        content = si.RetrieveContent()
        manager = content.directPathProfileManager
        assert isinstance(manager, vim.DirectPathProfileManager)
        D = vim.DirectPathProfileManager
        specs = host_specs()

        # QueryConfigTarget: the enums are values pyVmomi knows, the numbers whole.
        h100 = _host(content, "ans-h100-esx01")
        cluster = h100.parent
        target = cluster.environmentBrowser.QueryConfigTarget(host=h100)
        served = {p.profileName: p for p in target.vgpuProfileInfo}
        assert set(served) == {p["name"] for p in specs["ans-h100-esx01"]["vgpu_profiles"]}
        for spec in specs["ans-h100-esx01"]["vgpu_profiles"]:
            info = served[spec["name"]]
            assert isinstance(info, vim.vm.VgpuProfileInfo)
            assert info.profileSharing in vim.vm.VgpuProfileInfo.ProfileSharing.values
            assert info.profileClass in vim.vm.VgpuProfileInfo.ProfileClass.values
            assert (info.fbSizeInGib, info.profileSharing, info.profileClass) == (
                spec["fb_gib"],
                spec["sharing"],
                spec["class"],
            )
            assert info.deviceVendorId == spec["device_vendor_id"]
            assert (info.deviceVendorId & 0xFFFF, info.deviceVendorId >> 16) == (0x10DE, 0x2330)

        # QueryCapacity: one polymorphic result per spec, in order (xsi:type).
        trap = _host(content, TRAP)
        asked = ["nvidia_l40s-24q", "nvidia_l40s-12q", "nvidia_x-1q"]
        query = [
            D.CapacityQueryByDeviceConfig(deviceConfig=D.VmiopDirectPathConfig(vgpuProfile=p))
            for p in asked
        ] + [D.CapacityQueryByName(name="nvidia_l40s-24q")]
        results = manager.QueryDirectPathProfileCapacity(
            target=D.TargetHost(host=trap), querySpec=query
        )
        assert [type(r) for r in results] == [
            D.CapacityInfo,
            D.CapacityInfo,
            D.CapacityUnknown,
            D.CapacityUnknown,
        ]
        declared = {p["name"]: p["capacity"] for p in specs[TRAP]["vgpu_profiles"]}
        for result, profile in zip(results[:2], asked, strict=False):
            assert isinstance(result.profile, D.DirectPathProfileInfo)
            assert isinstance(result.profile.deviceConfig, D.VmiopDirectPathConfig)
            assert result.profile.deviceConfig.vgpuProfile == profile
            assert (
                result.max,
                result.consumed,
                result.remaining,
                result.unusedReservation,
            ) == tuple(
                declared[profile][k] for k in ("max", "consumed", "remaining", "unused_reservation")
            )
        # A profile the host does not offer, and a query by name: NotFound, with the spec.
        for result, spec in zip(results[2:], query[2:], strict=True):
            assert [type(f) for f in result.faultList] == [vim.fault.NotFound]
            assert type(result.querySpec) is type(spec)
        assert results[2].querySpec.deviceConfig.vgpuProfile == "nvidia_x-1q"

        # The host whose capacity vCenter cannot count: the declared faults.
        lost = _host(content, "ans-h100-esx02")
        names = [p["name"] for p in specs["ans-h100-esx02"]["vgpu_profiles"]]
        results = manager.QueryDirectPathProfileCapacity(
            target=D.TargetHost(host=lost),
            querySpec=[
                D.CapacityQueryByDeviceConfig(deviceConfig=D.VmiopDirectPathConfig(vgpuProfile=n))
                for n in names
            ],
        )
        assert [[type(f) for f in r.faultList] for r in results] == [
            [vim.fault.InvalidState],
            [vim.fault.InvalidState],
            [vmodl.fault.NotSupported],  # declares nothing
        ]
        # A cluster as the target is refused.
        with pytest.raises(vmodl.fault.InvalidArgument):
            manager.QueryDirectPathProfileCapacity(
                target=D.TargetCluster(cluster=cluster), querySpec=query[:1]
            )
    finally:
        Disconnect(si)


@pytest.mark.live
def test_older_vcenters_serve_no_manager_and_no_profiles_before_7_0_3(lab_factory: Any) -> None:
    for api, profiles in (("8.0.3.0", True), ("7.0.2.0", False)):
        older = load_scenario(SCENARIO)
        older["vcenter"]["api_version"] = api
        for dc in older["datacenters"]:
            for c in dc["clusters"]:
                for h in c["hosts"]:
                    for p in h["vgpu_profiles"]:
                        p["capacity"] = None  # no DirectPathProfileManager below 9.0
        lab = lab_factory(older)
        si = _connect(lab)
        try:
            content = si.RetrieveContent()
            assert content.directPathProfileManager is None
            host = _host(content, "ans-l40s-esx01")
            target = host.parent.environmentBrowser.QueryConfigTarget(host=host)
            assert bool(target.vgpuProfileInfo) is profiles, api
        finally:
            Disconnect(si)


@pytest.mark.live
def test_a_live_collection_reads_vcenters_answers(lab_factory: Any) -> None:
    lab = lab_factory("vcenter-answers")
    creds = Credentials(server=lab.url, user=lab.user, password=lab.password)
    live = obtain.obtain_inventory(obtain.Live(credentials=creds))
    hosts = by_name(live)
    assert hosts[TRAP].vgpu_profiles[1].capacity == ProfileCapacity(2, 1, 0, 1)
    assert hosts[TWIN].vgpu_profiles[1].capacity == ProfileCapacity(2, 1, 1, 0)
    assert [p.capacity for p in hosts["ans-h100-esx02"].vgpu_profiles] == [None, None, None]
    assert hosts["ans-h100-esx02"].vgpu_profiles[0].frame_buffer_gib == 10
    assert hosts["ans-h100-esx02"].vgpu_profile_info_host == "ans-h100-esx01"
