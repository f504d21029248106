"""vCenter's own count of the vGPUs each host can still take (vSphere 9.0 and later).

``DirectPathProfileManager.QueryCapacity`` (``ServiceContent.directPathProfileManager``,
API 9.0.0.0) answers, for a target host and a list of query specs, one result per spec:
a ``DirectPathProfileManagerCapacityInfo`` (``max``, ``consumed``, ``remaining``,
``unusedReservation``) or a ``DirectPathProfileManagerCapacityUnknown`` with the faults
that kept vCenter from counting. No property carries it.

The collector asks once per connected GPU host that offers vGPU profiles, with one
``CapacityQueryByDeviceConfig`` spec per profile the host offers (a
``VmiopDirectPathConfig`` naming the profile), and keeps each answer on that profile.
The cost is one call per such host: at most the number of vGPU hosts. Nothing is asked
of a standalone ESXi host, when the negotiated API is older than 9.0, or when the
vCenter has no DirectPathProfileManager.

An unknown answer, an answer that does not add up (``max`` below the sum of the others,
a negative count, a missing number) or that names another profile, and a fault of the
whole call (NotSupported, NoPermission, ...) leave the capacity unknown and become a gap
on the host: the verdicts then rest on NVIDIA's figures alone.
"""

from __future__ import annotations

from typing import Any

from pyVmomi import VmomiSupport, vim, vmodl

from gpuaudit.common.progress import Progress, Step, ignore
from gpuaudit.inventory import Gap, Host, Inventory, ProfileCapacity

CAPACITY_API = "vim.version.v9_0_0_0"
CALL = "directPathProfileManager.QueryCapacity"
PHASE = "reading vCenter's vGPU capacity"
UNKNOWN = "CapacityUnknown"  # the reason of an unknown answer that names no fault
# ProfileCapacity's fields and the CapacityInfo properties they come from.
_NUMBERS = {
    "max": "max",
    "consumed": "consumed",
    "remaining": "remaining",
    "unused_reservation": "unusedReservation",
}


def capacity_hosts(inv: Inventory) -> list[Host]:
    """The hosts to ask, by name: connected, with a GPU, offering vGPU profiles."""
    return sorted(
        (h for h in inv.hosts if h.connected and h.gpus and h.vgpu_profiles),
        key=lambda h: h.name,
    )


def collect_capacity(
    stub: Any,
    content: Any,
    inv: Inventory,
    negotiated: str,
    progress: Progress | None = None,
) -> None:
    """One QueryCapacity per host of capacity_hosts, one spec per profile it offers."""
    if inv.vcenter.standalone_esxi or not VmomiSupport.IsChildVersion(negotiated, CAPACITY_API):
        return
    manager = getattr(content, "directPathProfileManager", None)
    hosts = capacity_hosts(inv)
    if manager is None or not hosts:
        return
    say = progress or ignore
    say(Step(PHASE, 0, len(hosts), "hosts"))
    for done, host in enumerate(hosts, 1):
        specs = [
            vim.DirectPathProfileManager.CapacityQueryByDeviceConfig(
                deviceConfig=vim.DirectPathProfileManager.VmiopDirectPathConfig(vgpuProfile=p.name)
            )
            for p in host.vgpu_profiles
        ]
        target = vim.DirectPathProfileManager.TargetHost(host=vim.HostSystem(host.moref, stub))
        try:
            answers = manager.QueryDirectPathProfileCapacity(target=target, querySpec=specs)
        except vmodl.MethodFault as exc:
            inv.gaps.append(_gap(host, f"{CALL}()", _fault_name(exc)))
        else:
            apply_capacity(inv, host, list(answers or []))
        say(Step(PHASE, done, len(hosts), "hosts"))


def apply_capacity(inv: Inventory, host: Host, answers: list[Any]) -> None:
    """Give each profile of ``host`` its answer, the one at its position; a gap for each
    answer that gives no capacity, or one for the call when the count is wrong."""
    profiles = host.vgpu_profiles
    if len(answers) != len(profiles):
        reason = f"{len(answers)} answers to {len(profiles)} queries"
        inv.gaps.append(_gap(host, f"{CALL}()", reason))
        return
    for profile, answer in zip(profiles, answers, strict=True):
        capacity, why = capacity_of(answer, profile.name)
        profile.capacity = capacity
        if capacity is None:
            inv.gaps.append(_gap(host, f"{CALL}({profile.name})", why))


def capacity_of(answer: Any, asked: str) -> tuple[ProfileCapacity | None, str]:
    """The capacity an answer gives for profile ``asked``, or None and why not."""
    named = _profile_named(answer)
    if named is not None and named.lower() != asked.lower():
        return None, f"the answer is for {named}"
    if hasattr(answer, "faultList"):  # a CapacityUnknown
        faults = sorted({_fault_name(f) for f in getattr(answer, "faultList", None) or []})
        return None, ", ".join(faults) or UNKNOWN
    values: dict[str, int] = {}
    for field, wire in _NUMBERS.items():
        value = getattr(answer, wire, None)
        if isinstance(value, bool) or not isinstance(value, int):
            return None, f"the answer has no {wire}"
        if value < 0:
            return None, f"the answer's {wire} is negative ({value})"
        values[field] = value
    used = values["consumed"] + values["remaining"] + values["unused_reservation"]
    if values["max"] < used:
        return None, (
            f"the answer does not add up: max {values['max']} < consumed + remaining + "
            f"unusedReservation {used}"
        )
    return ProfileCapacity(**values), ""


def _profile_named(answer: Any) -> str | None:
    """The vGPU profile the answer itself names (its profile's or its query's device
    configuration), if any."""
    holder = getattr(answer, "profile", None) or getattr(answer, "querySpec", None)
    config = getattr(holder, "deviceConfig", None)
    name = getattr(config, "vgpuProfile", None)
    return str(name) if name else None


def _fault_name(fault: Any) -> str:
    return type(fault).__name__.rsplit(".", 1)[-1]


def _gap(host: Host, path: str, reason: str) -> Gap:
    return Gap(host.name, "HostSystem", path, reason, moref=host.moref)
