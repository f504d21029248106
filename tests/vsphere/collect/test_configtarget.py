"""gpuaudit.vsphere.collect.configtarget on inventories and environment browsers built by hand.

vCenter describes a host's vGPU profiles from vSphere 7.0 U3 (API vim.version.v7_0_3_0)
in EnvironmentBrowser.QueryConfigTarget(host).vgpuProfileInfo[]
(VirtualMachineVgpuProfileInfo: profileName, deviceVendorId, fbSizeInGib, profileSharing
timeSliced or mig, profileClass compute or quadro), and from 8.0 U2 (vim.version.v8_0_2_0)
its stun time estimates in stunTimeEstimates (VirtualMachineVMotionStunTimeInfo:
migrationBW in Mb/s, stunTime in seconds); from API 8.0.0.1 the vendor device groups the
host offers in vendorDeviceGroupInfo (below).
"""

from __future__ import annotations

from typing import Any

from pyVmomi import vim, vmodl

from gpuaudit.inventory import (
    Cluster,
    DeviceGroupComponent,
    Gap,
    Gpu,
    GpuAttachment,
    Host,
    Inventory,
    StunEstimate,
    VendorDeviceGroup,
    VgpuProfile,
    Vm,
    VmDeviceGroup,
)
from gpuaudit.vsphere.collect.configtarget import (
    collect_config_target,
    config_target_groups,
    describe,
    device_groups_of,
    estimates_of,
    profile_facts,
)

API = "vim.version.v8_0_3_0"
GAP_PATH = "environmentBrowser.QueryConfigTarget().vgpuProfileInfo"
U2_BUILD, U3_BUILD, U2_OTHER = "22380479", "24022510", "23305546"


def _host(
    name: str,
    cluster: str | None,
    version: str = "8.0.2",
    build: str = U2_BUILD,
    models: tuple[str, ...] = ("NVIDIA L40S",),
    state: str = "connected",
    profiles: tuple[str, ...] = ("grid_l40s-8q",),
) -> Host:
    gpus = [
        Gpu(pci_id=f"0000:{i:02x}:00.0", vendor_id=0x10DE, device_id=0, model=m)
        for i, m in enumerate(models)
    ]
    return Host(
        name=name,
        moref=f"host-{name}",
        cluster=cluster,
        version=version,
        build=build,
        connection_state=state,
        gpus=gpus,
        vgpu_profiles=[VgpuProfile(name=p) for p in profiles],
    )


def _vm(name: str, cluster: str | None, kind: str = "vgpu", power: str = "poweredOn") -> Vm:
    return Vm(
        name=name,
        moref=f"vm-{name}",
        cluster=cluster,
        power_state=power,
        gpus=[GpuAttachment(kind=kind, profile="grid_l40s-8q")],
    )


def _estate() -> Inventory:
    hosts = [
        _host("j-mixed", "c1", models=("NVIDIA L40S", "NVIDIA L4", "NVIDIA L40S")),
        _host("c-same", "c1"),
        _host("0-elsewhere", "c9"),  # its cluster runs no vGPU VM; sorts first
        _host("f-old", "c1", version="8.0.1", build="21495797"),
        _host("f2-seven", "c1", version="7.0.3", build="21930508"),
        _host("f3-too-old", "c1", version="7.0.2", build="17630552"),
        _host("b-first", "c1"),
        _host("a-newer", "c1", version="8.0.3", build=U3_BUILD),
        _host("g-first-release", "c1", build=U2_OTHER),
        _host("d-lost", "c1", version="8.0.3", build=U3_BUILD, state="notResponding"),
        _host("e-no-gpu", "c1", version="8.0.3", build=U3_BUILD, models=()),
        _host("h-six", "c1", version="6.7.0", build="13006603"),
        _host("i-unread", "c1", version="", build=""),
        _host("k-passthrough", "c2"),
        _host("l-off", "c3"),
        _host("m-standalone", None),
    ]
    vms = [
        _vm("v1", "c1"),
        _vm("v2", "c2", kind="passthrough"),
        _vm("v3", "c3", power="poweredOff"),
        _vm("v4", None),
        _vm("v5", "c9", kind="dynamic"),
    ]
    clusters = [Cluster(name=c, moref=f"domain-{c}") for c in ("c1", "c2", "c3", "c9")]
    return Inventory(hosts=hosts, vms=vms, clusters=clusters)


def _names(groups: dict[str, list[list[Host]]]) -> dict[str, list[list[str]]]:
    return {c: [[h.name for h in group] for group in g] for c, g in groups.items()}


def test_groups_by_build_and_models_of_the_connected_gpu_hosts_from_7_0_3() -> None:
    assert _names(config_target_groups(_estate())) == {
        "c1": [
            ["a-newer"],
            ["b-first", "c-same"],
            ["f-old"],
            ["f2-seven"],
            ["g-first-release"],
            ["j-mixed"],
        ]
    }


def test_gpu_model_names_holding_a_comma_stay_apart() -> None:
    # Unknown boards keep the name the host reports, which may hold a comma: one GPU
    # named "X,rev 2" is not the pair of GPUs "X" and "rev 2".
    inv = Inventory(
        hosts=[
            _host("a-one", "c1", models=("X,rev 2",)),
            _host("b-two", "c1", models=("X", "rev 2")),
        ],
        vms=[_vm("v1", "c1")],
    )
    assert _names(config_target_groups(inv)) == {"c1": [["a-one"], ["b-two"]]}


class _Browser:
    """Answers QueryConfigTarget per host moref: a ConfigTarget or a fault to raise."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def QueryConfigTarget(self, host: Any) -> Any:
        self.asked.append(host._moId)
        answer = self.answers[host._moId]
        if isinstance(answer, BaseException):
            raise answer
        return answer


def _info(
    profile: str,
    name: str,
    points: list[tuple[int, int]],
    fb: int = 0,
    sharing: str = "",
    klass: str = "",
    ids: int = 0,
) -> Any:
    """A VirtualMachineVgpuProfileInfo; the enums left out where empty (unset)."""
    enums = {"profileSharing": sharing, "profileClass": klass}
    return vim.vm.VgpuProfileInfo(
        profileName=profile,
        name=name,
        fbSizeInGib=fb,
        deviceVendorId=ids,
        stunTimeEstimates=[
            vim.vm.VMotionStunTimeInfo(name=name, migrationBW=bw, stunTime=s) for bw, s in points
        ],
        **{k: v for k, v in enums.items() if v},
    )


def test_estimates_by_profile_name_with_usable_points_sorted_by_bandwidth() -> None:
    target = vim.vm.ConfigTarget(
        vgpuProfileInfo=[
            _info("grid_l40s-8q", "the target's name", [(25_000, 9), (10_000, 20), (1, 90)]),
            _info("", "grid_l40s-4q", [(10_000, 12), (0, 99), (-5, 99)]),
            _info("", "", [(10_000, 5)]),  # no name at all: left out
            _info("grid_l40s-2q", "", []),  # no estimates: left out
            _info("grid_l40s-1q", "", [(0, 7)]),  # no usable estimate: left out
        ]
    )
    assert estimates_of(target) == {
        "grid_l40s-8q": [StunEstimate(1, 90), StunEstimate(10_000, 20), StunEstimate(25_000, 9)],
        "grid_l40s-4q": [StunEstimate(10_000, 12)],
    }
    assert estimates_of(vim.vm.ConfigTarget()) == {}


# The L40S (PCI 10de:26b9) as deviceVendorId: the vendor in the low 16 bits, the device
# in the next 16: 9913 x 65536 + 4318 = 649,662,686.
L40S_IDS = 0x26B9 << 16 | 0x10DE


def test_profile_facts_in_vcenters_order_the_first_of_each_name() -> None:
    target = vim.vm.ConfigTarget(
        vgpuProfileInfo=[
            _info(
                "grid_l40s-24q", "t", [], fb=24, sharing="timeSliced", klass="quadro", ids=L40S_IDS
            ),
            _info("", "grid_a100-3-20c", [], fb=20, sharing="mig", klass="compute"),
            _info("GRID_L40S-24Q", "", [], fb=99),  # the same name again: the first stays
            _info("", "", [], fb=8),  # no name: left out
            _info("grid_l40s-48q", "", [(10_000, 80)]),  # vCenter says nothing else
        ]
    )
    facts = profile_facts(target)
    assert [
        (f.name, f.frame_buffer_gib, f.sharing, f.profile_class, f.device_vendor_id) for f in facts
    ] == [
        ("grid_l40s-24q", 24, "timeSliced", "quadro", 649_662_686),
        ("grid_a100-3-20c", 20, "mig", "compute", None),
        ("grid_l40s-48q", None, None, None, None),
    ]
    assert profile_facts(vim.vm.ConfigTarget()) == []


def test_a_frame_buffer_or_pci_ids_of_zero_or_below_is_no_fact() -> None:
    class Info:  # a plain answer, as another SOAP stack might build it
        profileName = "grid_x-1q"
        fbSizeInGib = -1
        deviceVendorId = True  # not a number
        profileSharing = ""
        profileClass = None

    (fact,) = profile_facts(type("Target", (), {"vgpuProfileInfo": [Info()]})())
    assert (fact.frame_buffer_gib, fact.device_vendor_id, fact.sharing, fact.profile_class) == (
        None,
        None,
        None,
        None,
    )


def _by_name(inv: Inventory) -> dict[str, Host]:
    return {h.name: h for h in inv.hosts}


def _facts(host: Host) -> dict[str, tuple[Any, ...]]:
    return {
        p.name: (p.frame_buffer_gib, p.sharing, p.profile_class, p.device_vendor_id)
        for p in host.vgpu_profiles
    }


def test_each_group_asks_its_first_host_and_shares_the_answer() -> None:
    inv = _estate()
    inv.hosts.append(_host("z-other-cluster", "c0"))
    inv.vms.append(_vm("v6", "c0"))
    answer = vim.vm.ConfigTarget(
        vgpuProfileInfo=[
            _info(
                "grid_l40s-8q",
                "",
                [(10_000, 20)],
                fb=8,
                sharing="timeSliced",
                klass="quadro",
                ids=L40S_IDS,
            )
        ]
    )
    browser = _Browser(
        {
            "host-a-newer": vmodl.fault.NotSupported(),
            "host-b-first": answer,
            "host-f-old": answer,  # an 8.0.1 host: its estimates are not kept, its facts are
            "host-f2-seven": vim.vm.ConfigTarget(
                vgpuProfileInfo=[_info("grid_l40s-8q", "", [], fb=8)]
            ),
            "host-g-first-release": vim.vm.ConfigTarget(),  # answers, but with no profile
            "host-j-mixed": vim.fault.NoPermission(privilegeId="System.Read"),
        }
    )
    # c0 runs a vGPU VM, but its environment browser was withheld: nothing asked there.
    collect_config_target(None, inv, {"c1": browser}, API)
    assert browser.asked == [
        "host-a-newer",
        "host-b-first",
        "host-f-old",
        "host-f2-seven",
        "host-g-first-release",
        "host-j-mixed",
    ]
    hosts = _by_name(inv)
    table = {"grid_l40s-8q": [StunEstimate(10_000, 20)]}
    assert {n: (h.stun_estimates, h.stun_estimates_host) for n, h in hosts.items()} == {
        **{n: ({}, None) for n in hosts},
        "b-first": (table, "b-first"),
        "c-same": (table, "b-first"),
    }
    # Each host has its own copy.
    assert (
        hosts["b-first"].stun_estimates["grid_l40s-8q"]
        is not (hosts["c-same"].stun_estimates["grid_l40s-8q"])
    )
    described = (8, "timeSliced", "quadro", L40S_IDS)
    assert {n: (_facts(h), h.vgpu_profile_info_host) for n, h in hosts.items()} == {
        **{n: ({"grid_l40s-8q": (None, None, None, None)}, None) for n in hosts},
        "b-first": ({"grid_l40s-8q": described}, "b-first"),
        "c-same": ({"grid_l40s-8q": described}, "b-first"),
        "f-old": ({"grid_l40s-8q": described}, "f-old"),
        "f2-seven": ({"grid_l40s-8q": (8, None, None, None)}, "f2-seven"),
    }
    assert hosts["b-first"].vgpu_profiles[0] is not hosts["c-same"].vgpu_profiles[0]
    assert inv.gaps == [
        Gap("c1", "ClusterComputeResource", GAP_PATH, "NoPermission", moref="domain-c1")
    ]


def test_a_gap_on_a_cluster_the_inventory_does_not_hold_has_no_moref() -> None:
    inv = _estate()
    inv.clusters = []
    asked = ("host-a-newer", "host-b-first", "host-f-old", "host-f2-seven")
    asked += ("host-g-first-release", "host-j-mixed")
    browser = _Browser({m: vim.fault.NoPermission(privilegeId="System.Read") for m in asked})
    collect_config_target(None, inv, {"c1": browser}, API)
    assert inv.gaps == [Gap("c1", "ClusterComputeResource", GAP_PATH, "NoPermission")] * 6


def test_nothing_is_asked_of_a_standalone_host_or_before_7_0_3() -> None:
    for api, api_type in (("vim.version.v7_0_2_0", ""), (API, "HostAgent")):
        inv = _estate()
        inv.vcenter.api_type = api_type
        browser = _Browser({})
        collect_config_target(None, inv, {"c1": browser}, api)
        assert browser.asked == []
    # 7.0.3 itself is asked, for the profiles alone: the answer can hold no estimates.
    inv = _estate()
    answer = vim.vm.ConfigTarget(vgpuProfileInfo=[_info("grid_l40s-8q", "", [(10_000, 20)], fb=8)])
    browser = _Browser({h.moref: answer for h in inv.hosts})
    collect_config_target(None, inv, {"c1": browser}, "vim.version.v7_0_3_0")
    assert len(browser.asked) == 6
    hosts = _by_name(inv)
    assert hosts["b-first"].stun_estimates == {}
    assert _facts(hosts["b-first"]) == {"grid_l40s-8q": (8, None, None, None)}


def test_estimates_from_8_0_2_of_the_api_and_of_the_host_asked() -> None:
    inv = _estate()
    answer = vim.vm.ConfigTarget(vgpuProfileInfo=[_info("grid_l40s-8q", "", [(10_000, 20)])])
    browser = _Browser({h.moref: answer for h in inv.hosts})
    collect_config_target(None, inv, {"c1": browser}, "vim.version.v8_0_2_0")
    hosts = _by_name(inv)
    with_estimates = {n for n, h in hosts.items() if h.stun_estimates}
    # f-old (8.0.1) and f2-seven (7.0.3) were asked, but their estimates are not kept.
    assert with_estimates == {"a-newer", "b-first", "c-same", "g-first-release", "j-mixed"}


def test_profiles_match_by_name_in_any_case_and_the_asked_hosts_others_are_kept_apart() -> None:
    asked = _host("a", "c1", profiles=("GRID_L40S-8Q", "grid_l40s-4q"))
    other = _host("b", "c1", profiles=("grid_l40s-8q",))
    facts = profile_facts(
        vim.vm.ConfigTarget(
            vgpuProfileInfo=[
                _info("grid_l40s-8q", "", [], fb=8, sharing="timeSliced"),
                _info("grid_l40s-48q", "", [], fb=48, sharing="timeSliced", klass="quadro"),
            ]
        )
    )
    describe(asked, facts, "a", unlisted=True)
    describe(other, facts, "a", unlisted=False)
    assert _facts(asked) == {
        "GRID_L40S-8Q": (8, "timeSliced", None, None),
        "grid_l40s-4q": (None, None, None, None),  # vCenter lists it not
    }
    assert asked.unlisted_vgpu_profiles == [
        VgpuProfile(
            name="grid_l40s-48q", frame_buffer_gib=48, sharing="timeSliced", profile_class="quadro"
        )
    ]
    assert [p.name for p in asked.vgpu_profiles] == ["GRID_L40S-8Q", "grid_l40s-4q"]
    # Another host of the group offers what it offers: vCenter spoke of the host asked.
    assert other.unlisted_vgpu_profiles == []
    assert (asked.vgpu_profile_info_host, other.vgpu_profile_info_host) == ("a", "a")


def test_an_answer_listing_no_profile_names_no_host() -> None:
    host = _host("a", "c1")
    describe(host, [], "a", unlisted=True)
    assert host.vgpu_profile_info_host is None
    assert host.unlisted_vgpu_profiles == []


# Vendor device groups (API vim.version.v8_0_0_1): ConfigTarget.vendorDeviceGroupInfo[] is
# VirtualMachineVendorDeviceGroupInfo (deviceGroupName, deviceGroupDescription,
# componentDeviceInfo[]), each component a
# VirtualMachineVendorDeviceGroupInfoComponentDeviceInfo (type: pciPassthru, nvidiaVgpu,
# sriovNic or dvx; vendorName, deviceName, isConfigurable, device: a VirtualDevice).
DEVICE_GROUPS_PATH = "environmentBrowser.QueryConfigTarget().vendorDeviceGroupInfo"
NVLINK = "NVIDIA H100XM 2-GPU NVLink"
PT = vim.vm.device.VirtualPCIPassthrough


def _component(
    kind: str, device: str, backing: Any = None, configurable: bool = False, vendor: str = "NV"
) -> Any:
    return vim.vm.VendorDeviceGroupInfo.ComponentDeviceInfo(
        type=kind,
        vendorName=vendor,
        deviceName=device,
        isConfigurable=configurable,
        device=PT(key=0, backing=backing),
    )


def _group(name: str, *components: Any, description: str = "") -> Any:
    return vim.vm.VendorDeviceGroupInfo(
        name="target",
        deviceGroupName=name,
        deviceGroupDescription=description,
        componentDeviceInfo=list(components),
    )


def _nvlink_target() -> Any:
    vgpu = PT.VmiopBackingInfo(vgpu="grid_h100xm-80c")
    return vim.vm.ConfigTarget(
        vendorDeviceGroupInfo=[
            _group(
                NVLINK,
                _component("nvidiaVgpu", "H100XM-80C", vgpu),
                _component("nvidiaVgpu", "H100XM-80C", vgpu, configurable=True),
                description="two H100 SXM5 linked by NVLink",
            )
        ]
    )


def test_vendor_device_groups_in_vcenters_order_with_their_components() -> None:
    target = vim.vm.ConfigTarget(
        vendorDeviceGroupInfo=[
            *_nvlink_target().vendorDeviceGroupInfo,
            _group("", _component("nvidiaVgpu", "x")),  # no name: no VM can name it
            _group(
                "GPU-NIC",
                _component("nvidiaVgpu", "H100XM-80C"),  # a device without a backing
                # A profile only for an nvidiaVgpu component.
                _component("sriovNic", "ConnectX-7", PT.VmiopBackingInfo(vgpu="grid_x-1c")),
                _component("pciPassthru", "H100", PT.DynamicBackingInfo(allowedDevice=[])),
                _component("nvidiaVgpu", "H100XM", PT.VmiopBackingInfo()),  # names none
            ),
        ]
    )
    assert device_groups_of(target) == [
        VendorDeviceGroup(
            name=NVLINK,
            description="two H100 SXM5 linked by NVLink",
            components=[
                DeviceGroupComponent("nvidiaVgpu", "NV", "H100XM-80C", False, "grid_h100xm-80c"),
                DeviceGroupComponent("nvidiaVgpu", "NV", "H100XM-80C", True, "grid_h100xm-80c"),
            ],
        ),
        VendorDeviceGroup(
            name="GPU-NIC",
            components=[
                DeviceGroupComponent("nvidiaVgpu", "NV", "H100XM-80C"),
                DeviceGroupComponent("sriovNic", "NV", "ConnectX-7"),
                DeviceGroupComponent("pciPassthru", "NV", "H100"),
                DeviceGroupComponent("nvidiaVgpu", "NV", "H100XM"),
            ],
        ),
    ]
    assert device_groups_of(vim.vm.ConfigTarget()) == []


def _linked_estate() -> Inventory:
    """Cluster c5 runs a VM whose two vGPUs form a vendor device group; c1 a vGPU VM."""
    inv = Inventory(
        hosts=[
            _host("p1", "c5", models=("NVIDIA H100 SXM5",)),
            _host("p2", "c5", models=("NVIDIA H100 SXM5",)),
            _host("p3", "c5", models=("NVIDIA H100 SXM5",)),
            _host("p4", "c5", models=("NVIDIA H100 SXM5",)),
            _host("q1", "c1"),
            _host("q2", "c1"),
        ],
        vms=[
            Vm(
                name="llm",
                moref="vm-llm",
                cluster="c5",
                power_state="poweredOn",
                gpus=[
                    GpuAttachment(kind="vgpu", profile="grid_h100xm-80c", device_group=7),
                    GpuAttachment(kind="vgpu", profile="grid_h100xm-80c", device_group=7),
                ],
                device_groups=[VmDeviceGroup(NVLINK, 7, 2)],
            ),
            _vm("v1", "c1"),
        ],
        clusters=[Cluster(name=c, moref=f"domain-{c}") for c in ("c1", "c5")],
    )
    return inv


def test_each_gpu_host_of_a_cluster_using_a_device_group_is_asked_on_its_own() -> None:
    inv = _linked_estate()
    assert _names(config_target_groups(inv)) == {
        "c1": [["q1", "q2"]],
        "c5": [["p1"], ["p2"], ["p3"], ["p4"]],
    }
    # A powered-off VM using a group, or one in a cluster running no vGPU VM: as before.
    inv.vms[0].power_state = "poweredOff"
    assert _names(config_target_groups(inv)) == {"c1": [["q1", "q2"]]}
    inv = _linked_estate()
    inv.vms[0].gpus = [GpuAttachment(kind="dynamic", device_group=7)]
    assert _names(config_target_groups(inv))["c5"] == [["p1"], ["p2"], ["p3"], ["p4"]]


def test_each_host_keeps_the_device_groups_of_its_own_answer() -> None:
    inv = _linked_estate()
    browser = _Browser(
        {
            "host-p1": _nvlink_target(),
            "host-p2": vim.vm.ConfigTarget(),  # offers none
            "host-p3": vmodl.fault.NotSupported(),
            "host-p4": vim.fault.NoPermission(privilegeId="System.Read"),
        }
    )
    other = _Browser({"host-q1": _nvlink_target()})
    collect_config_target(None, inv, {"c5": browser, "c1": other}, API)
    assert browser.asked == ["host-p1", "host-p2", "host-p3", "host-p4"]
    assert other.asked == ["host-q1"]
    hosts = _by_name(inv)
    assert {
        n: ([g.name for g in h.device_groups or []], h.device_groups_host) for n, h in hosts.items()
    } == {
        "p1": ([NVLINK], "p1"),
        "p2": ([], "p2"),
        "p3": ([], None),
        "p4": ([], None),
        "q1": ([NVLINK], "q1"),
        "q2": ([NVLINK], "q1"),  # a group's answer, with the host it is about
    }
    assert hosts["p3"].device_groups is None and hosts["p4"].device_groups is None
    assert hosts["q1"].device_groups is not hosts["q2"].device_groups
    # NotSupported: absent, no gap; another fault: the cluster's gap, and the host's.
    assert inv.gaps == [
        Gap("c5", "ClusterComputeResource", GAP_PATH, "NoPermission", moref="domain-c5"),
        Gap("p4", "HostSystem", DEVICE_GROUPS_PATH, "NoPermission", moref="host-p4"),
    ]


def test_no_device_groups_before_api_8_0_0_1_and_no_host_gap_where_no_vm_uses_one() -> None:
    inv = _linked_estate()
    browser = _Browser({f"host-p{i}": _nvlink_target() for i in (1, 2, 3, 4)})
    other = _Browser({"host-q1": vim.fault.NoPermission(privilegeId="System.Read")})
    collect_config_target(None, inv, {"c5": browser, "c1": other}, "vim.version.v8_0_0_0")
    assert all(h.device_groups is None and h.device_groups_host is None for h in inv.hosts)
    assert inv.gaps == [
        Gap("c1", "ClusterComputeResource", GAP_PATH, "NoPermission", moref="domain-c1")
    ]
    inv = _linked_estate()
    collect_config_target(None, inv, {"c5": browser, "c1": other}, "vim.version.v8_0_0_1")
    assert [h.device_groups_host for h in inv.hosts] == ["p1", "p2", "p3", "p4", None, None]
    assert inv.gaps == [
        Gap("c1", "ClusterComputeResource", GAP_PATH, "NoPermission", moref="domain-c1")
    ]
