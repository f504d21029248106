"""gpuaudit.collect.stunestimates on inventories and environment browsers built by hand.

vCenter publishes stun time estimates from vSphere 8.0 U2 (API vim.version.v8_0_2_0)
in EnvironmentBrowser.QueryConfigTarget(host).vgpuProfileInfo[].stunTimeEstimates
(VirtualMachineVMotionStunTimeInfo: migrationBW in Mb/s, stunTime in seconds).
"""

from __future__ import annotations

from typing import Any

from pyVmomi import vim, vmodl

from gpuaudit.collect.stunestimates import collect_stun_estimates, estimate_groups, estimates_of
from gpuaudit.inventory import (
    Cluster,
    Gap,
    Gpu,
    GpuAttachment,
    Host,
    Inventory,
    StunEstimate,
    Vm,
)

API = "vim.version.v8_0_3_0"
GAP_PATH = "environmentBrowser.QueryConfigTarget().vgpuProfileInfo.stunTimeEstimates"
U2_BUILD, U3_BUILD, U2_OTHER = "22380479", "24022510", "23305546"


def _host(
    name: str,
    cluster: str | None,
    version: str = "8.0.2",
    build: str = U2_BUILD,
    models: tuple[str, ...] = ("NVIDIA L40S",),
    state: str = "connected",
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


def test_groups_by_build_and_models_of_the_connected_gpu_hosts_from_8_0_2() -> None:
    assert _names(estimate_groups(_estate())) == {
        "c1": [["a-newer"], ["b-first", "c-same"], ["g-first-release"], ["j-mixed"]]
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
    assert _names(estimate_groups(inv)) == {"c1": [["a-one"], ["b-two"]]}


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


def _info(profile: str, name: str, points: list[tuple[int, int]]) -> Any:
    return vim.vm.VgpuProfileInfo(
        profileName=profile,
        name=name,
        stunTimeEstimates=[
            vim.vm.VMotionStunTimeInfo(name=name, migrationBW=bw, stunTime=s) for bw, s in points
        ],
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


def _by_name(inv: Inventory) -> dict[str, Host]:
    return {h.name: h for h in inv.hosts}


def test_each_group_asks_its_first_host_and_shares_the_answer() -> None:
    inv = _estate()
    inv.hosts.append(_host("z-other-cluster", "c0"))
    inv.vms.append(_vm("v6", "c0"))
    estimate = vim.vm.ConfigTarget(vgpuProfileInfo=[_info("grid_l40s-8q", "", [(10_000, 20)])])
    browser = _Browser(
        {
            "host-a-newer": vmodl.fault.NotSupported(),
            "host-b-first": estimate,
            "host-g-first-release": vim.vm.ConfigTarget(),  # answers, but with no estimates
            "host-j-mixed": vim.fault.NoPermission(privilegeId="System.Read"),
        }
    )
    # c0 runs a vGPU VM, but its environment browser was withheld: nothing asked there.
    collect_stun_estimates(None, inv, {"c1": browser}, API)
    assert browser.asked == [
        "host-a-newer",
        "host-b-first",
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
    assert inv.gaps == [
        Gap("c1", "ClusterComputeResource", GAP_PATH, "NoPermission", moref="domain-c1")
    ]


def test_a_gap_on_a_cluster_the_inventory_does_not_hold_has_no_moref() -> None:
    inv = _estate()
    inv.clusters = []
    browser = _Browser(
        {
            m: vim.fault.NoPermission(privilegeId="System.Read")
            for m in ("host-a-newer", "host-b-first", "host-g-first-release", "host-j-mixed")
        }
    )
    collect_stun_estimates(None, inv, {"c1": browser}, API)
    assert inv.gaps == [Gap("c1", "ClusterComputeResource", GAP_PATH, "NoPermission")] * 4


def test_nothing_is_asked_of_a_standalone_host_or_before_8_0_2() -> None:
    for api, api_type in (("vim.version.v8_0_1_0", ""), (API, "HostAgent")):
        inv = _estate()
        inv.vcenter.api_type = api_type
        browser = _Browser({})
        collect_stun_estimates(None, inv, {"c1": browser}, api)
        assert browser.asked == []
    # 8.0.2 itself is asked.
    inv = _estate()
    browser = _Browser({h.moref: vim.vm.ConfigTarget() for h in inv.hosts})
    collect_stun_estimates(None, inv, {"c1": browser}, "vim.version.v8_0_2_0")
    assert len(browser.asked) == 4
