"""Headroom under N+k: per cluster, GPU model and vGPU profile (and whole GPUs by Dynamic
DirectPath), how many more VMs fit now, and how many of them fit while the cluster still
tolerates the N+k it must keep.

A new VM has one device of the row's profile on the row's GPU model (a Dynamic DirectPath
device allowing the model's vendor and device id for a passthrough row), no DRS rule, no
datastore the hosts could lack, the cluster's default restart priority, and the memory of
the largest VM of the cluster that runs the profile (of any GPU VM of the cluster where none
does). New VMs are placed one after another as the failure simulation places a restart:
on the host with the most free memory whose own GPU choice (its assignment policy) takes
one, counting NVIDIA's sharing figures, MIG geometry, memory and vCenter's remaining
capacity; ``fits_now`` is how many are placed before none fits.

``fits_nk`` is the largest n for which the failure simulation (gpuaudit.simulation.failures, the
placement model it reports N+k by) of the cluster with the first n of those VMs powered
on still tolerates k host failures. It is found by bisection between 0 and ``fits_now``:
each step simulates the cluster with the new VMs seated where they were placed.

A fact the placement needs and nobody publishes (a board no catalogue knows, a vGPU type
without NVIDIA's figures) is read as the simulation reads it for a proof: as a no. The
counts are then what can be proven, never a guess, and the row's ``not_proven`` says
what was not known.
"""

from __future__ import annotations

from collections.abc import Callable

from gpuaudit.inventory import Cluster, GpuAttachment, Vm
from gpuaudit.model.facts import Facts, vm_memory_need_mb, vm_reserved_mb
from gpuaudit.results import PASSTHROUGH, ClusterHeadroom, Headroom
from gpuaudit.simulation.failures import (
    UNLIMITED,
    ClusterModel,
    Demand,
    Guest,
    State,
    _demand,
    _policy_choice,
    _tolerance,
    _with_model,
    vcenter_room,
)

REQUIRED_FAILURES = 1  # HA-05: a GPU cluster must tolerate one host failure (N+1)
MAX_NEW = 4096  # new VMs placed per row at most


def headroom_all(facts: Facts, k: int = REQUIRED_FAILURES) -> list[ClusterHeadroom]:
    """The headroom of every cluster with a GPU."""
    return [headroom(facts, c, k) for c in facts.clusters_with_gpus()]


def headroom(facts: Facts, cluster: Cluster, k: int = REQUIRED_FAILURES) -> ClusterHeadroom:
    base = ClusterModel(facts, cluster.name, max_failures=k)
    now_ok = tolerates(base, k)
    # N+k now not proven rather than failed: it holds when every fact not known is read
    # as room. Then what the proof could not count on is every reason the new model's
    # ledger holds (met while seating the running VMs, or by tolerates).
    unknown_now: list[str] = []
    if not now_ok and base.ha_restarts and base.ledger.reasons and _loosely(facts, cluster, k):
        unknown_now = list(base.ledger.reasons)
    out = ClusterHeadroom(cluster.name, k, now_ok)
    if not base.ha_restarts:
        out.notes.append("vSphere HA restarts nothing here: no new VM fits under N+k")
    elif unknown_now:
        out.notes.append(
            f"the cluster is not proven to tolerate N+{k} now ({'; '.join(unknown_now)}): "
            "no new VM is proven to fit under it"
        )
    elif not now_ok:
        out.notes.append(f"the cluster does not tolerate N+{k} now: no new VM fits under it")
    for gpu_model, profile, demand in rows(base):
        memory = template_memory(facts, cluster.name, profile)
        with base.ledger.noting() as unknown:
            new = placements(base, demand, memory, gpu_model, profile)
            fits_nk = 0
            if now_ok:
                fits_nk = _under(base, k, new)
        remaining = vcenter_remaining(facts, cluster.name, profile)
        row = Headroom(gpu_model, profile, memory, len(new), fits_nk, remaining)
        row.below_vcenter = remaining is not None and fits_nk < remaining and fits_nk < len(new)
        # unknown_now is empty unless N+k now is not proven, and every row then rests on it.
        row.not_proven = "; ".join(
            dict.fromkeys([*unknown_boards(base, gpu_model), *unknown, *unknown_now])
        )
        out.rows.append(row)
    return out


def _loosely(facts: Facts, cluster: Cluster, k: int) -> bool:
    """The cluster tolerates N+k when every fact not known is read as room."""
    return tolerates(ClusterModel(facts, cluster.name, max_failures=k, optimistic=True), k)


def unknown_boards(model: ClusterModel, gpu_model: str) -> list[str]:
    """Why a GPU of ``gpu_model`` on an active host takes what it takes is not known: its
    board, which no catalogue knows (one reason per host)."""
    return list(
        dict.fromkeys(
            slot.unknown
            for host, node in model.nodes.items()
            if node.active
            for slot in model.initial[host]
            if slot.model == gpu_model and slot.unknown is not None
        )
    )


def _under(base: ClusterModel, k: int, new: list[tuple[Vm, tuple[str, ...]]]) -> int:
    """The most of the new VMs (a prefix) after which the cluster still tolerates N+k."""
    worst: list[str] = []  # the host whose loss failed last: tried first

    def ok(n: int) -> bool:
        return tolerates(base.plus(new[:n]), k, worst)

    return _largest(ok, len(new))


def rows(model: ClusterModel) -> list[tuple[str, str, Demand]]:
    """(GPU model, profile, the device of a new VM) for each profile an active host offers
    on a GPU model it has in Shared Direct mode, and each model with a passthrough GPU."""
    found: dict[tuple[str, str], Demand] = {}
    for host, node in model.nodes.items():
        if not node.active:
            continue
        for slot in model.initial[host]:
            if slot.vgpu_ok:
                for profile in sorted(node.offers):
                    d = _demand("vgpu", profile, None, [])
                    if d.prefix is None or slot.prefix is None or d.prefix == slot.prefix:
                        found.setdefault((slot.model, profile), _with_model(d, slot.model))
            if slot.pt_ok:
                found.setdefault(
                    (slot.model, PASSTHROUGH),
                    Demand(kind="dynamic", allowed=((slot.vendor, slot.device),)),
                )
    return [(m, p, d) for (m, p), d in sorted(found.items())]


def template_memory(facts: Facts, cluster: str, profile: str) -> int:
    """The memory a new VM reserves: the most a VM of the cluster that runs the profile (a
    passthrough device, for PASSTHROUGH) reserves, else the most any GPU VM reserves."""
    vms = facts.cluster_gpu_vms(cluster)

    def runs(vm: Vm) -> bool:
        if profile == PASSTHROUGH:
            return any(a.kind in ("passthrough", "dynamic") for a in vm.gpus)
        return any((a.profile or "").lower() == profile for a in vm.gpus)

    same = [vm_reserved_mb(vm) for vm in vms if runs(vm)]
    return max(same or [vm_reserved_mb(vm) for vm in vms] or [0])


def new_vm(
    index: int, host: str, demand: Demand, profile: str, memory: int, seats: tuple[str, ...]
) -> Vm:
    """The ``index``-th new VM of a row, powered on on ``host`` (its device on ``seats``)."""
    if demand.kind == "dynamic":
        att = GpuAttachment(kind="dynamic", pci_id=seats[0], allowed=list(demand.allowed))
    else:
        att = GpuAttachment(kind="vgpu", profile=profile)
    return Vm(
        name=f"new-{profile}-{index + 1}",
        moref=f"new-{index + 1}",
        host=host,
        power_state="poweredOn",
        memory_mb=memory,
        gpus=[att],
    )


def placements(
    model: ClusterModel, demand: Demand, memory: int, gpu_model: str, profile: str
) -> list[tuple[Vm, tuple[str, ...]]]:
    """New VMs placed one after another, each on the host with the most free memory whose
    own GPU choice takes it (the first in the cluster's order on a tie), until none fits."""
    state = State(dict(model.initial), model.free)
    state.apart = {}
    need = vm_memory_need_mb(new_vm(0, "", demand, profile, memory, ("",)))
    guest = Guest(-1, "new", "", 0, (demand,), frozenset(), need)
    hosts = [h for h in model.nodes if not model.why_not(guest, h)]
    placed: list[tuple[Vm, tuple[str, ...]]] = []
    while len(placed) < MAX_NEW:
        fitting = [h for h in hosts if state.free[h] >= need]
        fitting.sort(key=lambda h: _room(model, state, h), reverse=True)
        for host in fitting:
            idx = _policy_choice(state[host], (demand,), model.nodes[host].policy)
            if idx is None:
                continue
            slots = state.writable(host)
            seats = tuple(slots[i].pci_id for i in idx)
            vm = new_vm(len(placed), host, demand, profile, memory, seats)
            for i in idx:
                slots[i].take(vm.name, demand)
            state.free[host] -= need
            placed.append((vm, seats))
            break
        else:
            break
    return placed


def _room(model: ClusterModel, state: State, host: str) -> float:
    return float("inf") if model.nodes[host].memory == UNLIMITED else state.free[host]


def tolerates(model: ClusterModel, k: int, worst: list[str] | None = None) -> bool:
    """The cluster tolerates k host failures, as the simulation reports N+k: every loss
    of k hosts leaves every GPU VM restarted where the hosts' own GPU choice takes it.
    ``worst``: hosts to fail first, and where the host whose loss failed is put."""
    if k > min(model.max_failures, len(model.nodes)):
        return False
    if not model.guests and not model.disabled:
        return True
    if not model.ha_restarts:
        return False
    first = [h for h in worst or [] if h in model.nodes]
    for host in dict.fromkeys([*first, *model.nodes]):
        if len(model.by_policy([host]).assignment) < len(model.by_host.get(host, [])):
            if worst is not None:
                worst[:] = [host]
            return False
    return k <= 1 or _tolerance(model, True, by_policy=True)[0] >= k


def _largest(ok: Callable[[int], bool], top: int) -> int:
    """The largest n in [0, top] with ok(n), ok(0) holding: by bisection."""
    if ok(top):
        return top
    lo, hi = 0, top  # ok(lo), not ok(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


def vcenter_remaining(facts: Facts, cluster: str, profile: str) -> int | None:
    """vCenter's remaining capacity of the profile over the active hosts that answered."""
    answers = [
        room[profile] for h in facts.active_hosts(cluster) if profile in (room := vcenter_room(h))
    ]
    return sum(answers) if answers else None
