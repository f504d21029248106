"""gpuaudit.vsphere.collect.capacity on inventories and answers built by hand.

vSphere 9.0 (API vim.version.v9_0_0_0) answers DirectPathProfileManager.QueryCapacity
(pyVmomi: QueryDirectPathProfileCapacity; on the wire
DirectPathProfileManagerQueryCapacity) with one DirectPathProfileManagerCapacityResult
per query spec: a CapacityInfo (profile, consumed, remaining, max, unusedReservation;
max >= consumed + remaining + unusedReservation) or a CapacityUnknown (querySpec,
faultList).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pyVmomi import vim, vmodl

from gpuaudit.common.progress import Step
from gpuaudit.inventory import Gap, Gpu, Host, Inventory, ProfileCapacity, VCenter, VgpuProfile
from gpuaudit.vsphere.collect.capacity import (
    apply_capacity,
    capacity_hosts,
    capacity_of,
    collect_capacity,
)

API9 = "vim.version.v9_0_0_0"
D = vim.DirectPathProfileManager


def _host(name: str, profiles: tuple[str, ...] = ("nvidia_l40s-24q",), **kw: Any) -> Host:
    return Host(
        name=name,
        moref=f"host-{name}",
        gpus=[Gpu(pci_id="0000:3b:00.0", vendor_id=0x10DE, device_id=0x26B9)],
        vgpu_profiles=[VgpuProfile(name=p) for p in profiles],
        **kw,
    )


def _info(profile: str, maximum: int, consumed: int, remaining: int, reserved: int) -> Any:
    return D.CapacityInfo(
        profile=D.DirectPathProfileInfo(
            id="p1",
            name=profile,
            vendorName="NVIDIA",
            deviceConfig=D.VmiopDirectPathConfig(vgpuProfile=profile),
        ),
        max=maximum,
        consumed=consumed,
        remaining=remaining,
        unusedReservation=reserved,
    )


def _spec(profile: str) -> Any:
    return D.CapacityQueryByDeviceConfig(deviceConfig=D.VmiopDirectPathConfig(vgpuProfile=profile))


def _unknown(profile: str, *faults: Any) -> Any:
    return D.CapacityUnknown(querySpec=_spec(profile), faultList=list(faults))


class _Manager:
    """A DirectPathProfileManager that answers per host moref, or raises."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, list[str]]] = []

    def QueryDirectPathProfileCapacity(self, target: Any, querySpec: list[Any]) -> Any:
        assert isinstance(target, D.TargetHost)
        assert all(isinstance(s, D.CapacityQueryByDeviceConfig) for s in querySpec)
        assert all(isinstance(s.deviceConfig, D.VmiopDirectPathConfig) for s in querySpec)
        self.asked.append((target.host._moId, [s.deviceConfig.vgpuProfile for s in querySpec]))
        answer = self.answers[target.host._moId]
        if isinstance(answer, BaseException):
            raise answer
        return answer


def _estate() -> Inventory:
    hosts = [
        _host("b-two", profiles=("nvidia_l40s-24q", "nvidia_l40s-12q")),
        _host("a-one"),
        _host("c-lost", connection_state="notResponding"),
        _host("d-no-gpu"),
        _host("e-no-profile", profiles=()),
    ]
    hosts[3].gpus = []
    return Inventory(vcenter=VCenter(api_type="VirtualCenter"), hosts=hosts)


def test_the_hosts_asked_are_the_connected_gpu_hosts_offering_profiles_by_name() -> None:
    assert [h.name for h in capacity_hosts(_estate())] == ["a-one", "b-two"]


def test_one_call_per_host_one_spec_per_profile_each_answer_on_its_profile() -> None:
    inv = _estate()
    manager = _Manager(
        {
            "host-a-one": [_info("nvidia_l40s-24q", 2, 1, 0, 1)],
            "host-b-two": [
                _info("nvidia_l40s-24q", 2, 1, 1, 0),
                _unknown("nvidia_l40s-12q", vim.fault.InvalidState(), vmodl.fault.NotSupported()),
            ],
        }
    )
    steps: list[Any] = []
    collect_capacity(
        None, SimpleNamespace(directPathProfileManager=manager), inv, API9, steps.append
    )
    assert manager.asked == [
        ("host-a-one", ["nvidia_l40s-24q"]),
        ("host-b-two", ["nvidia_l40s-24q", "nvidia_l40s-12q"]),
    ]
    hosts = {h.name: h for h in inv.hosts}
    assert [p.capacity for p in hosts["a-one"].vgpu_profiles] == [ProfileCapacity(2, 1, 0, 1)]
    assert [p.capacity for p in hosts["b-two"].vgpu_profiles] == [ProfileCapacity(2, 1, 1, 0), None]
    assert inv.gaps == [
        Gap(
            "b-two",
            "HostSystem",
            "directPathProfileManager.QueryCapacity(nvidia_l40s-12q)",
            "InvalidState, NotSupported",  # the fault names, sorted
            moref="host-b-two",
        )
    ]
    phase = "reading vCenter's vGPU capacity"
    assert steps == [
        Step(phase, 0, 2, "hosts"),
        Step(phase, 1, 2, "hosts"),
        Step(phase, 2, 2, "hosts"),
    ]


@pytest.mark.parametrize(
    ("api", "api_type", "content"),
    [
        ("vim.version.v8_0_3_0", "VirtualCenter", "manager"),  # before vSphere 9.0
        (API9, "HostAgent", "manager"),  # a standalone ESXi host
        (API9, "VirtualCenter", "none"),  # a vCenter without the manager
    ],
)
def test_nothing_is_asked_before_9_0_of_an_esxi_host_or_without_the_manager(
    api: str, api_type: str, content: str
) -> None:
    inv = _estate()
    inv.vcenter.api_type = api_type
    manager = _Manager({})
    served = SimpleNamespace(directPathProfileManager=manager if content == "manager" else None)
    steps: list[Any] = []
    collect_capacity(None, served, inv, api, steps.append)
    assert manager.asked == [] and steps == [] and inv.gaps == []
    assert all(p.capacity is None for h in inv.hosts for p in h.vgpu_profiles)


def test_nothing_is_asked_without_a_vgpu_host() -> None:
    inv = Inventory(hosts=[_host("a", profiles=())])
    manager = _Manager({})
    steps: list[Any] = []
    collect_capacity(
        None, SimpleNamespace(directPathProfileManager=manager), inv, API9, steps.append
    )
    assert manager.asked == [] and steps == []


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (vmodl.fault.NotSupported(), "NotSupported"),
        (vim.fault.NoPermission(privilegeId="System.Read"), "NoPermission"),
        (vmodl.fault.InvalidArgument(invalidProperty="target"), "InvalidArgument"),
    ],
)
def test_a_fault_of_the_call_is_a_gap_on_the_host_and_the_others_are_still_asked(
    fault: Exception, reason: str
) -> None:
    inv = _estate()
    manager = _Manager(
        {
            "host-a-one": fault,
            "host-b-two": [
                _info("nvidia_l40s-24q", 2, 0, 2, 0),
                _info("nvidia_l40s-12q", 4, 0, 4, 0),
            ],
        }
    )
    collect_capacity(None, SimpleNamespace(directPathProfileManager=manager), inv, API9)
    assert inv.gaps == [
        Gap(
            "a-one",
            "HostSystem",
            "directPathProfileManager.QueryCapacity()",
            reason,
            moref="host-a-one",
        )
    ]
    hosts = {h.name: h for h in inv.hosts}
    assert hosts["a-one"].vgpu_profiles[0].capacity is None
    assert hosts["b-two"].vgpu_profiles[1].capacity == ProfileCapacity(4, 0, 4, 0)


def test_answers_that_do_not_match_the_queries_one_for_one_give_nothing() -> None:
    inv = Inventory()
    host = _host("a", profiles=("nvidia_l40s-24q", "nvidia_l40s-12q"))
    apply_capacity(inv, host, [_info("nvidia_l40s-24q", 2, 0, 2, 0)])
    assert [p.capacity for p in host.vgpu_profiles] == [None, None]
    assert inv.gaps == [
        Gap(
            "a",
            "HostSystem",
            "directPathProfileManager.QueryCapacity()",
            "1 answers to 2 queries",
            moref="host-a",
        )
    ]
    apply_capacity(inv, _host("b"), [])
    assert inv.gaps[-1].reason == "0 answers to 1 queries"


def test_an_answer_naming_another_profile_is_not_taken() -> None:
    assert capacity_of(_info("nvidia_l40s-12q", 4, 0, 4, 0), "nvidia_l40s-24q") == (
        None,
        "the answer is for nvidia_l40s-12q",
    )
    assert capacity_of(_unknown("nvidia_l40s-12q"), "nvidia_l40s-24q")[1] == (
        "the answer is for nvidia_l40s-12q"
    )
    # The name in any case is the same profile.
    assert capacity_of(_info("NVIDIA_L40S-24Q", 2, 0, 2, 0), "nvidia_l40s-24q") == (
        ProfileCapacity(2, 0, 2, 0),
        "",
    )


def test_an_unknown_answer_without_faults_says_so() -> None:
    assert capacity_of(_unknown("nvidia_l40s-24q"), "nvidia_l40s-24q") == (None, "CapacityUnknown")
    # The same fault twice is named once.
    twice = _unknown("nvidia_l40s-24q", vim.fault.NotFound(), vim.fault.NotFound())
    assert capacity_of(twice, "nvidia_l40s-24q") == (None, "NotFound")


def test_plain_answers_are_read_by_their_fields() -> None:
    # Another SOAP stack's objects: a CapacityUnknown is the answer with a faultList.
    unknown = SimpleNamespace(faultList=[vim.fault.InvalidState()])
    assert capacity_of(unknown, "x") == (None, "InvalidState")
    info = SimpleNamespace(max=3, consumed=1, remaining=1, unusedReservation=1)
    assert capacity_of(info, "x") == (ProfileCapacity(3, 1, 1, 1), "")
    # A profile without a device configuration names no profile.
    named_nothing = SimpleNamespace(
        profile=SimpleNamespace(deviceConfig=None),
        max=1,
        consumed=0,
        remaining=1,
        unusedReservation=0,
    )
    assert capacity_of(named_nothing, "x") == (ProfileCapacity(1, 0, 1, 0), "")


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"consumed": 1, "remaining": 1, "unusedReservation": 0}, "the answer has no max"),
        ({"max": 2, "remaining": 1, "unusedReservation": 0}, "the answer has no consumed"),
        ({"max": 2, "consumed": 0, "unusedReservation": 0}, "the answer has no remaining"),
        ({"max": 2, "consumed": 0, "remaining": 1}, "the answer has no unusedReservation"),
        (
            {"max": 2, "consumed": "1", "remaining": 1, "unusedReservation": 0},
            "the answer has no consumed",
        ),
        (
            {"max": True, "consumed": 0, "remaining": 1, "unusedReservation": 0},
            "the answer has no max",
        ),
        (
            {"max": 2, "consumed": -1, "remaining": 1, "unusedReservation": 0},
            "the answer's consumed is negative (-1)",
        ),
        (
            {"max": 2, "consumed": 1, "remaining": 1, "unusedReservation": 1},
            "the answer does not add up: max 2 < consumed + remaining + unusedReservation 3",
        ),
    ],
)
def test_an_incomplete_or_inconsistent_answer_gives_no_capacity(
    fields: dict[str, Any], reason: str
) -> None:
    assert capacity_of(SimpleNamespace(**fields), "x") == (None, reason)


def test_max_may_equal_the_sum_and_leave_nothing() -> None:
    assert capacity_of(_info("x", 2, 1, 0, 1), "x") == (ProfileCapacity(2, 1, 0, 1), "")
    assert capacity_of(_info("x", 0, 0, 0, 0), "x") == (ProfileCapacity(0, 0, 0, 0), "")
