"""Host-failure simulation: where would vSphere HA restart a failed host's GPU VMs?

For every host of a cluster, the host is removed and each displaced powered-on GPU
VM is placed on a surviving host (connected, not in maintenance mode), in HA
restart-priority order. A VM whose restart priority is ``disabled`` is never
restarted by vSphere HA: it is not placed, and each failure lists it apart. On a
cluster where HA is off, or host monitoring is disabled, HA restarts nothing: the
cluster tolerates no failure (N+0), and the placements only say where the VMs
could be restarted by hand (``manual_tolerates`` gives that N+k).

A placement is valid only if the target host has the memory for the VM: the
reservations of the VMs powered on there and of those restarted onto it, plus
their overhead, within the host's memory less the hypervisor's share (the
estimate of gpuaudit.model.facts, after VMware's "vSphere Resource Management",
"Overhead Memory on Virtual Machines"); a host whose memory size is unknown is
not checked, and the notes say so. The target host must also mount and access
all the VM's datastores and, per GPU device of the VM:

- vGPU: the host offers the profile, on a GPU of the same model in Shared Direct
  mode, and that GPU can take it, counting the vGPUs already there, by the rule of
  the host's ESXi release and the GPU's vGPU mode and by NVIDIA's published figures
  for the type (gpuaudit.simulation.sharing, gpuaudit.knowledge.vgpu_types): before 8.0 U2 one exact
  profile per GPU; from 8.0 U2 one frame-buffer size of any series, at most the
  type's maximum per GPU; different sizes only in mixed-size mode (8.0 U3), at the
  type's placement IDs within its mixed-size maximum. MIG-backed profiles follow
  the board's MIG geometry (instances per GPU and start slices), on a GPU in MIG
  mode or, where the mode is unreadable, one that runs no time-sliced vGPU.

Where NVIDIA's figures do not decide a fit (a board or type without data, a maximum
or placement not published, or a fit that depends on where ESXi placed the vGPUs
already running, which no API reports), the simulation proves nothing it does not
know. It reads such an answer as "no" (a type without figures runs alone on a GPU
and takes all of it; a placement must fit every layout) and, where VMs are then left
without room, again as "yes" (Ledger): a VM that only the second reading restarts
is "not proven" (HostFailure.unproven), and the N+k only that reading reaches is
``tolerates_unproven``. ``tolerates`` is always proven. A GPU whose board nothing
identifies (no catalogue model, no PCI ids: a what-if's new host of a model no
catalogue knows) is read the same way: whether it is of the VM's GPU type, or among
the ids a Dynamic DirectPath device allows, is not known.
- Dynamic DirectPath: a free passthrough-active GPU whose vendor/device id is
  allowed, and its sub vendor/sub device id where the allowed entry gives them; a
  device with a custom label takes only a GPU whose host hardware label
  (``pciPassthruInfo.hardwareLabel``, vSphere 8.0) is that label
  (VirtualPCIPassthroughDynamicBackingInfo.customLabel: "If set, the device must
  also have the same customLabel attribute set"). When the GPU the VM runs on now
  reports no such label (a vCenter before 8.0 serves none), labels are unknown and
  the label is not checked.
- Fixed DirectPath: never; the VM is bound to a device of the failed host.

The devices of one VM go to distinct GPUs of one host. Devices that form a vendor
device group (NVLink-connected GPUs) go only to a host that offers a group of that
name, on GPUs the host links; where that is not proven (gpuaudit.simulation.device_groups), the
Ledger reads it as the figures NVIDIA does not publish.

DRS rules bind the placement as vSphere HA honours them (gpuaudit.simulation.placement_rules,
after VMware's "vSphere Availability", "vSphere HA and DRS Affinity Rules"): an
enabled required ("must") VM-Host rule keeps the VM on the hosts of an affine group
and off those of an anti-affine one; an enabled VM-VM anti-affinity rule, unless the
HA advanced option das.respectVmVmAntiAffinityRules is false (true by default from
vSphere 6.5), keeps two of its VMs off one host, counting the VMs powered on there
(with or without GPU) and those restarted onto it. "Should" VM-Host rules and VM-VM
affinity rules never block a restart: HA restarts the VM where it fits and DRS
corrects later. A VM that fits on a surviving host only if a rule is ignored is
reported as blocked by that rule.

Guarantee: a VM is reported as unplaceable only when no valid placement exists.
A greedy best-fit pass runs first. When it leaves VMs unplaced and a bound does not
already prove it optimal, an exact branch-and-bound search finds the
lexicographically largest placement by priority class (as many highest-priority
VMs as possible, then as many high, and so on). The search is bounded; if it hits
the bound, the unplaced VMs are reported as "not proven" rather than as having no
room.

Which GPU a restarted VM gets is not HA's choice but ESXi's, by the host's
``config.graphicsConfig.sharedPassthruAssignmentPolicy`` (vSphere API reference,
HostGraphicsConfigSharedPassthruAssignmentPolicy): ``performance`` (the default)
assigns a vGPU to the GPU with the fewest VMs that can take it, ``consolidation``
groups like VMs on a GPU until it is full. Spreading locks an empty GPU to the first
profile that lands on it, and can strand room that another choice would have used.
So the reported verdict comes from a policy pass: the VMs in restart-priority order
(then by name), each host choosing its GPUs by its own policy, the first in the
host's order on a tie; a Dynamic DirectPath device takes the first free allowed GPU,
as no policy governs that choice. Which host HA picks is not something gpuaudit can
know: it assumes the surviving host with the most free memory among those whose own
GPU choice can take the VM (HA places by unreserved capacity). That host choice is a
guess, but the GPU choice is never better than the host's own: a VM is counted as
restarted only where a host, choosing by its policy, takes it. A VM that the policy
pass leaves out but the exact search places is "restartable only with manual
placement" (HostFailure.manual_only); N+k (``tolerates``) counts it as not restarted,
while ``manual_tolerates`` counts any valid placement.

Mixing GPU models in a cluster is supported; what matters is the spare capacity of
each model. ``spare`` lists, per GPU model and per profile family on it (the profile
name's GPU and series, "l4 q"; "<gpu> mig" for MIG-backed profiles; "passthrough"
for DirectPath devices), the usable and idle GPUs, how many more of the family's
largest device fit now, and the N+k of those VMs alone by the policy pass.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gpuaudit.inventory import Gpu, GpuAttachment, Host, Inventory, Vm
from gpuaudit.knowledge import catalog
from gpuaudit.model.facts import (
    PRIORITIES,
    SHARED_DIRECT,
    Facts,
    board_unknown,
    gpu_board,
    gpu_memory,
    gpu_prefix,
    host_vm_memory_mb,
    vm_memory_need_mb,
)
from gpuaudit.results import ClusterSimulation, GpuSlots, HostFailure, Placement, SpareCapacity
from gpuaudit.simulation import device_groups, sharing
from gpuaudit.simulation.placement_rules import HostRule, PlacementRules

MAX_FAILURES = 3  # N+k is computed for k up to 3
SEARCH_WORK = 400_000  # GPU fit checks one exact search may spend
COMBINATION_LIMIT = 200  # distinct host combinations checked per k before sampling
MAX_SEARCH_GUESTS = 400
PERFORMANCE = "performance"  # ESXi's default assignment policy: spread
CONSOLIDATION = "consolidation"  # pack
UNLIMITED = 1 << 60  # the free memory of a host whose memory size is unknown
_UNKNOWN: Any = object()  # not yet in a memo

Option = tuple[str, tuple[int, ...]]  # (host, indices of the GPUs taken)
Assignment = dict[int, Option]  # guest index -> option


@dataclass(frozen=True)
class Demand:
    """One GPU device of a VM."""

    kind: str  # vgpu, dynamic, passthrough or unknown
    profile: str | None = None  # vGPU profile, lower case
    size: int = 0  # vGPU frame buffer in MB; 0 when the profile name gives none
    model: str | None = None  # vGPU: the model of the GPU it runs on now
    prefix: str | None = None  # vGPU: the GPU short name in the profile name
    allowed: tuple[tuple[int, int], ...] = ()  # Dynamic DirectPath
    device: str | None = None  # fixed DirectPath: the bound host device
    label: str | None = None  # Dynamic DirectPath: the hardware label it asks for
    # Dynamic DirectPath entries with sub ids: (vendor, device, sub vendor, sub device),
    # -1 for any; empty when no allowed entry gives sub ids (then ``allowed`` decides).
    allowed_sub: tuple[tuple[int, int, int, int], ...] = ()
    # The vendor device group the device belongs to: its GPUs go to GPUs the host links.
    group: device_groups.GroupNeed | None = None


@dataclass(frozen=True)
class Guest:
    """A powered-on GPU VM of the cluster."""

    index: int
    name: str
    host: str
    rank: int  # index into PRIORITIES
    demands: tuple[Demand, ...]
    datastores: frozenset[str]
    memory: int = 0  # MB a host must have free: reservation plus overhead
    host_rules: tuple[HostRule, ...] = ()  # enabled "must" VM-Host rules naming the VM
    apart: frozenset[str] = frozenset()  # the anti-affinity rules HA honours for it

    @property
    def key(self) -> tuple[Any, ...]:
        """Equal keys mean interchangeable VMs."""
        return (
            self.rank,
            self.demands,
            tuple(sorted(self.datastores)),
            self.memory,
            self.host_rules,
            tuple(sorted(self.apart)),
        )

    @property
    def priority(self) -> str:
        return PRIORITIES[self.rank]

    @property
    def size(self) -> int:
        return sum(d.size or 1 << 20 for d in self.demands)


class Ledger:
    """What NVIDIA's published figures left undecided in one simulation, and how it is
    read. A proof that VMs restart reads every undecided answer as a no: a type without
    figures runs alone on a GPU and takes all of it. A proof that they do not reads it as
    a yes: such a type fits wherever its host offers it and takes nothing. Placements
    that only the second reading allows are "not proven"."""

    def __init__(self, optimistic: bool = False) -> None:
        self.optimistic = optimistic
        self.reasons: dict[str, None] = {}  # what was missing, in the order first met

    def undecided(
        self, share: sharing.GpuRule, placed: sharing.Placed, profile: str, seated: int
    ) -> bool:
        names = [p for _, p, _ in placed]
        key = (tuple(sorted(names[:seated])), tuple(sorted(names[seated:])))
        self.reasons.setdefault(_unknown_reason(share, *key, profile))
        return self.optimistic

    def unknown(self, reason: str) -> bool:
        """A fact outside NVIDIA's figures is not known (``reason``): read as the others."""
        self.reasons.setdefault(reason)
        return self.optimistic

    @contextlib.contextmanager
    def noting(self) -> Iterator[list[str]]:
        """The reasons met inside, each once, those met before as well (``reasons`` keeps
        a reason only the first time): what one part of a simulation could not count on."""
        before = self.reasons
        self.reasons = {}
        met: list[str] = []
        try:
            yield met
        finally:
            met.extend(self.reasons)
            self.reasons = {**before, **self.reasons}


def _unknown_board(host: Host, gpu: Gpu) -> str | None:
    """Why a GPU's board is not known, when neither a catalogue nor its PCI ids tell it."""
    if not board_unknown(gpu):
        return None
    return (
        f"no catalogue knows the board {gpu.model or gpu.device_name or '?'} of {host.name}: "
        "which GPU VMs it takes is not known"
    )


@functools.lru_cache(maxsize=4096)
def _unknown_reason(
    share: sharing.GpuRule, running: tuple[str, ...], arrived: tuple[str, ...], profile: str
) -> str:
    placed = [("", p, 0) for p in (*running, *arrived)]
    return sharing.unknown(share, placed, profile, len(running))


class Slot:
    """One physical GPU and what runs on it."""

    __slots__ = (
        "caps",
        "device",
        "groups",
        "host",
        "label",
        "ledger",
        "memory",
        "model",
        "owner",
        "pci_id",
        "prefix",
        "pt_ok",
        "seated",
        "share",
        "static",
        "subsystem",
        "unknown",
        "used",
        "vendor",
        "vgpu_ok",
        "vgpus",
    )

    def __init__(
        self,
        host: Host,
        gpu: Gpu,
        ledger: Ledger | None = None,
        caps: Mapping[str, int] | None = None,
    ) -> None:
        """The GPU as its host reports it, with nothing placed on it yet. ``caps``: how
        many more vGPUs of each profile (lower case) vCenter says the whole host takes
        (vcenter_room), shared by the host's GPUs."""
        self.host = host.name
        self.caps: Mapping[str, int] = caps if caps is not None else {}
        # The names of the vendor device groups the host offers; None when not read.
        self.groups = device_groups.offered(host)
        self.pci_id = gpu.pci_id
        self.model = gpu.model or f"{gpu.vendor_id:04x}:{gpu.device_id:04x}"
        self.prefix = gpu_prefix(gpu)
        self.vendor = gpu.vendor_id
        self.device = gpu.device_id
        self.subsystem = (gpu.sub_vendor_id, gpu.sub_device_id)
        self.label = gpu.hardware_label  # the host's hardware label for the device
        self.memory = sharing.nominal_memory(gpu) or gpu_memory(gpu)
        self.pt_ok = gpu.passthrough_active
        self.vgpu_ok = gpu.graphics_type == SHARED_DIRECT and not gpu.passthrough_active
        # What may share the GPU: ESXi's rule, the vGPU mode, NVIDIA's figures for the board.
        self.share = sharing.gpu_rule(
            sharing.policy(host, gpu),
            sharing.mode_known(gpu),
            self.memory,
            gpu_board(gpu),
            sharing.vcenter_told(host),
        )
        self.ledger = ledger or Ledger()
        # A board whose identity is not known (a what-if's host of a model no catalogue
        # knows has no PCI ids): whether it takes a VM is a fact not known, never a no.
        self.unknown = _unknown_board(host, gpu)
        self.static = self._static()
        self.owner: str | None = None  # the passthrough VM that holds it
        self.vgpus: list[tuple[str, str, int]] = []  # (vm, profile, frame buffer)
        self.used = 0  # frame buffer taken by vGPUs
        # The first ``seated`` of vgpus ran before any failure: where they sit is unknown.
        # The others arrive in a simulation, each where ESXi chooses.
        self.seated = 0

    def _static(self) -> tuple[Any, ...]:
        """What never changes in a simulation: equal for interchangeable GPUs."""
        return (
            self.model,
            self.prefix,
            self.vendor,
            self.device,
            self.memory,
            self.pt_ok,
            self.vgpu_ok,
            self.share.rule,
            self.share.known,
            self.share.board.key if self.share.board is not None else "",
            self.subsystem,
            self.label,
            tuple(sorted(self.caps.items())),
            self.groups is None,
            tuple(sorted(self.groups or ())),
        )

    def with_caps(self, caps: Mapping[str, int]) -> Slot:
        """A copy whose host vCenter says takes ``caps`` more of each profile."""
        new = self.copy()
        new.caps = caps
        new.static = new._static()
        return new

    def copy(self) -> Slot:
        new = Slot.__new__(Slot)
        new.host, new.pci_id, new.model = self.host, self.pci_id, self.model
        new.prefix, new.vendor, new.device = self.prefix, self.vendor, self.device
        new.subsystem, new.label = self.subsystem, self.label
        new.memory, new.vgpu_ok = self.memory, self.vgpu_ok
        new.pt_ok, new.static, new.owner = self.pt_ok, self.static, self.owner
        new.vgpus, new.used = list(self.vgpus), self.used
        new.share, new.ledger, new.seated = self.share, self.ledger, self.seated
        new.caps, new.groups, new.unknown = self.caps, self.groups, self.unknown
        return new

    @property
    def rule(self) -> str:
        return self.share.rule

    def key(self) -> tuple[Any, ...]:
        size = self.vgpus[0][2] if self.vgpus else 0
        profiles = tuple(sorted(p for _, p, _ in self.vgpus))
        return (self.static, self.owner is not None, size, len(self.vgpus), self.used, profiles)

    def compatible(self, d: Demand) -> bool:
        """Could this GPU ever take the device (ignoring what runs on it now)?"""
        if d.kind == "vgpu":
            if not self.vgpu_ok:
                return False
            if self.unknown is not None:
                return self.ledger.unknown(self.unknown)
            if d.model is not None:
                return self.model == d.model
            return d.prefix is None or self.prefix is None or self.prefix == d.prefix
        if d.kind == "dynamic":
            if self.pt_ok and self.unknown is not None:
                return self.ledger.unknown(self.unknown)
            return self.pt_ok and self._dynamic_match(d)
        return False

    def _dynamic_match(self, d: Demand) -> bool:
        """The device's ids are allowed, sub ids included where given, and its label fits."""
        if d.label is not None and self.label != d.label:
            return False
        if d.allowed_sub:
            return any(
                (v, dev) == (self.vendor, self.device)
                and sv in (-1, self.subsystem[0])
                and sd in (-1, self.subsystem[1])
                for v, dev, sv, sd in d.allowed_sub
            )
        return not d.allowed or (self.vendor, self.device) in d.allowed

    def fits(self, d: Demand, vouched: bool = False) -> bool:
        """Could the GPU take the device now? ``vouched``: vCenter says its host takes one
        more of the profile (_vouched), which decides where NVIDIA's figures do not."""
        if self.owner is not None or not self.compatible(d):
            return False
        if d.kind == "dynamic":
            return not self.vgpus
        answer = sharing.judge(self.share, self.vgpus, d.profile or "", self.seated)
        if answer is None:  # NVIDIA's figures do not decide it: vCenter, or the ledger's bound
            if vouched:
                return True
            return self.ledger.undecided(self.share, self.vgpus, d.profile or "", self.seated)
        return answer

    def room(self, d: Demand) -> int:
        """How many more vGPUs like ``d`` this GPU takes, on its own."""
        if not self.fits(d):
            return 0
        optimistic = self.ledger.optimistic
        return sharing.room(self.share, self.vgpus, d.profile or "", optimistic, self.seated)

    def score(self, d: Demand) -> tuple[int, int]:
        """Best fit: join a GPU already in use, and leave as little room as possible."""
        if d.kind != "vgpu":
            return (1, 0)
        left = self.memory - self.used - self.frame_buffer(d.profile or "")
        return (0 if self.vgpus else 1, left)

    def take(self, vm: str, d: Demand) -> None:
        if d.kind == "vgpu":
            size = self.frame_buffer(d.profile or "")
            self.vgpus.append((vm, d.profile or "", size))
            self.used += size
        else:
            self.owner = vm

    def frame_buffer(self, profile: str) -> int:
        """A vGPU's frame buffer on this GPU: NVIDIA's figure for the type; where NVIDIA's
        data has none, the whole GPU for a proof of a pass, nothing for one of a failure."""
        size = sharing.frame_buffer_of(self.share, profile)
        if size is not None:
            return size
        return 0 if self.ledger.optimistic else self.memory

    def release(self, vm: str, d: Demand) -> None:
        if d.kind == "vgpu":
            for i in range(len(self.vgpus) - 1, -1, -1):
                if self.vgpus[i][0] == vm:
                    self.used -= self.vgpus[i][2]
                    del self.vgpus[i]
                    return
        elif self.owner == vm:
            self.owner = None


@dataclass
class Node:
    """A host of the cluster: what never changes during a simulation (keyed by its name
    in ``ClusterModel.nodes``)."""

    active: bool
    offers: frozenset[str]
    datastores: frozenset[str]
    static: int = 0
    memory: int = UNLIMITED  # MB for VMs; UNLIMITED when the host's size is unknown
    policy: str = PERFORMANCE  # sharedPassthruAssignmentPolicy: how the host picks a GPU


class State(dict[str, list[Slot]]):
    """The GPUs and free memory of the surviving hosts. Copy-on-write: a host's GPUs are
    copied from the cluster's initial state only when a placement first changes them."""

    def __init__(self, hosts: dict[str, list[Slot]], free: dict[str, int]) -> None:
        super().__init__(hosts)
        self.owned: set[str] = set()
        self.free = {h: free[h] for h in hosts}  # MB of memory left for restarted VMs
        # host -> anti-affinity rule -> VMs of the rule running there
        self.apart: dict[str, dict[str, int]] = {}

    def writable(self, host: str) -> list[Slot]:
        if host not in self.owned:
            self[host] = [s.copy() for s in self[host]]
            self.owned.add(host)
        return self[host]


@dataclass
class Outcome:
    assignment: Assignment
    state: State
    exact: bool = True


@dataclass
class _Search:
    work: int = 0
    aborted: bool = False
    seen: set[tuple[Any, ...]] = field(default_factory=set)


class ClusterModel:
    """A cluster's hosts, GPUs and powered-on GPU VMs, ready to fail hosts."""

    def __init__(
        self,
        facts: Facts,
        cluster: str,
        max_failures: int = MAX_FAILURES,
        optimistic: bool = False,
        keep_disabled: bool = False,
    ) -> None:
        """``keep_disabled``: VMs whose HA restart priority is disabled are placed too (DRS
        moves them for maintenance, where HA would not restart them)."""
        self.facts = facts
        self.keep_disabled = keep_disabled
        # How undecided capacity is read, and what was undecided (Ledger).
        self.ledger = Ledger(optimistic)
        self.max_failures = max_failures  # N+k is searched for k up to this
        hosts = facts.cluster_hosts(cluster)
        self.nodes: dict[str, Node] = {}
        self.initial: dict[str, list[Slot]] = {}
        self.free: dict[str, int] = {}  # MB left by the VMs powered on now (may be < 0)
        self.unsized: list[str] = []  # hosts whose memory size is unknown
        statics: dict[tuple[Any, ...], int] = {}
        self.rules = PlacementRules(facts.inventory, cluster)
        self.apart_now = self._apart_now(hosts)
        for host in hosts:
            memory = host_vm_memory_mb(host)
            if memory is None:
                self.unsized.append(host.name)
            node = Node(
                active=host.connected and not host.in_maintenance,
                offers=frozenset(p.name.lower() for p in host.vgpu_profiles),
                datastores=frozenset(
                    d.name
                    for d in facts.inventory.datastores
                    if facts.can_access(host.name, d.name)
                ),
            )
            node.memory = UNLIMITED if memory is None else memory
            node.policy = host.assignment_policy or PERFORMANCE
            self.nodes[host.name] = node
            caps = vcenter_room(host)
            self.initial[host.name] = [Slot(host, g, self.ledger, caps) for g in host.gpus]
            self.free[host.name] = node.memory - facts.host_memory_used_mb(host.name)
            sig: tuple[Any, ...] = (
                node.active,
                node.offers,
                node.datastores,
                node.memory,
                node.policy,
            )
            groups = self.rules.host_groups(host.name)
            if groups or self.apart_now.get(host.name):
                sig = (*sig, groups, tuple(sorted(self.apart_now.get(host.name, {}).items())))
            node.static = statics.setdefault(sig, len(statics))
        vms = [
            vm for vm in facts.cluster_gpu_vms(cluster) if vm.powered_on and vm.host in self.nodes
        ]
        self.ha_restarts = facts.ha_restarts(cluster)
        # HA never restarts these: they keep their GPUs and memory, and are never placed.
        self.disabled: dict[str, list[Vm]] = {}
        for vm in vms:
            if facts.restart_priority(vm) == "disabled" and not keep_disabled:
                self.disabled.setdefault(vm.host or "", []).append(vm)
        self.seated_vms = len(vms)  # the next VM's index (ClusterModel.plus)
        # Every VM is seated (a disabled one keeps its GPU); guest indices stay those of vms.
        self.guests = [g for g in self._seat(vms) if keep_disabled or g.priority != "disabled"]
        for slots in self.initial.values():
            for slot in slots:
                slot.seated = len(slot.vgpus)  # running now: where each sits is unknown
        self.by_host: dict[str, list[Guest]] = {}
        for guest in self.guests:
            self.by_host.setdefault(guest.host, []).append(guest)
        self._eligible_cache: dict[tuple[Any, ...], list[str]] = {}
        self.eligible = {g.index: self._eligible(g) for g in self.guests}
        # _best_on and _policy_choice per demands and host, for a host's GPUs as they are
        # now: every failure starts from them, and most hosts take no VM in a failure, so
        # in a cluster of 96 hosts each answer is asked for again by the next failures.
        self._best_now: dict[tuple[Demand, ...], dict[str, Any]] = {}
        self._choice_now: dict[tuple[Demand, ...], dict[str, Any]] = {}

    def close(self, hosts: Iterable[str]) -> None:
        """Take no VM onto these hosts (they cannot receive one: no vMotion adapter)."""
        for host in hosts:
            self.nodes[host].active = False
        self._eligible_cache.clear()
        self.eligible = {g.index: self._eligible(g) for g in self.guests}

    def plus(self, extra: Sequence[tuple[Vm, tuple[str, ...]]]) -> ClusterModel:
        """A copy of the model with more powered-on GPU VMs that the inventory does not hold
        (new VMs a plan deploys), each with its host and the GPUs (PCI ids, one per device)
        it runs on: as if the inventory listed them after its own VMs, on those GPUs. They
        take memory and vCenter's remaining capacity; they are in no DRS rule."""
        new = copy.copy(self)
        new.initial = dict(self.initial)
        new.free = dict(self.free)
        new.guests = list(self.guests)
        new.by_host = {h: list(g) for h, g in self.by_host.items()}
        new.disabled = {h: list(v) for h, v in self.disabled.items()}
        new.eligible = dict(self.eligible)
        new._best_now, new._choice_now = {}, {}
        new.seated_vms = self.seated_vms + len(extra)
        touched = list(dict.fromkeys(vm.host or "" for vm, _ in extra))
        for host in touched:
            caps = _less(
                vcenter_room(self.facts.hosts[host]), [v for v, _ in extra if v.host == host]
            )
            new.initial[host] = [s.with_caps(caps) for s in self.initial[host]]
        for i, (vm, seats) in enumerate(extra):
            host = vm.host or ""
            by_id = {s.pci_id: s for s in new.initial[host]}
            demands = []
            for att, pci in zip(vm.gpus, seats, strict=True):
                d = _dynamic_wants(_demand(att.kind, att.profile, att.pci_id, att.allowed), att)
                slot = by_id[pci]
                slot.take(vm.name, d)
                if d.kind == "vgpu":
                    d = _with_model(d, slot.model)
                demands.append(_label_as_seen(d, slot))
            new.free[host] -= vm_memory_need_mb(vm)
            guest = new._guest(self.seated_vms + i, vm, demands)
            if guest.priority == "disabled" and not self.keep_disabled:
                new.disabled.setdefault(host, []).append(vm)
                continue
            new.guests.append(guest)
            new.by_host.setdefault(host, []).append(guest)
            new.eligible[guest.index] = new._eligible(guest)
        for host in touched:
            for slot in new.initial[host]:
                slot.seated = len(slot.vgpus)
        return new

    # Building the initial state
    def _apart_now(self, hosts: list[Host]) -> dict[str, dict[str, int]]:
        """Per host, how many of its powered-on VMs each honoured anti-affinity rule names."""
        counts: dict[str, dict[str, int]] = {}
        if not self.rules.apart_rules:
            return counts  # no rule to count: the usual case, and it skips every VM
        # The cluster's own running VMs, not the inventory's: a model is built per cluster.
        for host in dict.fromkeys(h.name for h in hosts):
            for vm in self.facts.host_running_vms(host):
                for rule in self.rules.apart(vm.name):
                    per_host = counts.setdefault(host, {})
                    per_host[rule] = per_host.get(rule, 0) + 1
        return counts

    def _seat(self, vms: list[Vm]) -> list[Guest]:
        """Record where each VM's GPU devices run now and build its placement demands."""
        guests = []
        unseated: list[tuple[int, Vm, list[int]]] = []
        for i, vm in enumerate(vms):
            slots = self.initial[vm.host or ""]
            by_id = {s.pci_id: s for s in slots}
            gpus = self.facts.hosts[vm.host or ""].gpus
            listed = [s for s, g in zip(slots, gpus, strict=True) if vm.name in g.vms]
            needs = device_groups.needs_of(vm)
            demands: list[Demand] = []
            missing = []
            for j, att in enumerate(vm.gpus):
                d = _dynamic_wants(_demand(att.kind, att.profile, att.pci_id, att.allowed), att)
                if att.device_group is not None:
                    d = dataclasses.replace(d, group=needs[att.device_group])
                slot = None
                if att.kind in ("passthrough", "dynamic") and att.pci_id in by_id:
                    slot = by_id[att.pci_id]
                elif att.kind == "vgpu" and listed:
                    slot = listed.pop(0) if len(listed) > 1 else listed[0]
                if slot is not None:
                    slot.take(vm.name, d)
                    if d.kind == "vgpu":
                        d = _with_model(d, slot.model)
                    d = _label_as_seen(d, slot)
                elif d.kind in ("vgpu", "dynamic"):
                    missing.append(j)
                demands.append(d)
            guests.append(self._guest(i, vm, demands))
            if missing:
                unseated.append((i, vm, missing))
        for i, vm, missing in unseated:
            guests[i] = self._seat_by_fit(guests[i], vm, missing)
        return guests

    def _seat_by_fit(self, guest: Guest, vm: Vm, missing: list[int]) -> Guest:
        """Devices the data does not locate on a GPU: seat them where they fit on the host."""
        slots = self.initial[guest.host]
        demands = list(guest.demands)
        for j in missing:
            d = demands[j]
            for slot in slots:
                if slot.fits(d):
                    slot.take(vm.name, d)
                    if d.kind == "vgpu":
                        demands[j] = _with_model(d, slot.model)
                    break
        return self._guest(guest.index, vm, demands)

    def _guest(self, index: int, vm: Vm, demands: list[Demand]) -> Guest:
        return Guest(
            index=index,
            name=vm.name,
            host=vm.host or "",
            rank=PRIORITIES.index(self.facts.restart_priority(vm)),
            demands=tuple(demands),
            datastores=frozenset(vm.datastores),
            memory=vm_memory_need_mb(vm),
            host_rules=self.rules.for_vm(vm.name),
            apart=self.rules.apart(vm.name),
        )

    def _eligible(self, guest: Guest) -> list[str]:
        """Hosts that could ever take the VM, whatever runs on them."""
        key = (guest.demands, guest.datastores, guest.memory, guest.host_rules)
        if key not in self._eligible_cache:
            self._eligible_cache[key] = [n for n in self.nodes if not self.why_not(guest, n)]
        return self._eligible_cache[key]

    def why_not(self, guest: Guest, host: str, rules: bool = True) -> str:
        """Why a host can never take the VM; "" when it could. Without ``rules``, the
        VM-Host rules are left out."""
        node = self.nodes[host]
        if not node.active:
            return "not connected or in maintenance mode"
        missing = sorted(guest.datastores - node.datastores)
        if missing:
            return f"cannot access datastore {', '.join(missing)}"
        if guest.memory > node.memory:
            return (
                f"too little memory: the VM needs {guest.memory} MB (reservation and overhead), "
                f"the host has {node.memory} MB for VMs"
            )
        slots = self.initial[host]
        for d in guest.demands:
            if d.kind == "passthrough":
                return "fixed DirectPath I/O device"
            if d.kind == "unknown":
                return "unknown GPU backing"
            if d.kind == "vgpu" and d.profile not in node.offers:
                return f"does not offer {d.profile}"
            if not any(s.compatible(d) for s in slots):
                if d.kind == "vgpu":
                    return f"no Shared Direct GPU of model {d.model or d.prefix or '?'}"
                label = f" labelled '{d.label}'" if d.label is not None else ""
                return f"no passthrough-active GPU{label} matching the allowed devices"
            if d.group is not None and (why := device_groups.refusal(d.group, slots[0].groups)):
                return why
        if sum(1 for s in slots if any(s.compatible(d) for d in guest.demands)) < len(
            guest.demands
        ):
            return "fewer suitable GPUs than the VM has GPU devices"
        broken = [r for r in guest.host_rules if not r.allows(host)] if rules else []
        return f"{broken[0].describe()} forbids it" if broken else ""

    # Failing hosts
    def fail(self, failed: Iterable[str], require_all: bool = False) -> Outcome:
        """Remove hosts and place their GPU VMs on the survivors.

        With ``require_all`` the only question is whether every VM can be placed.
        """
        down = set(failed)
        state = State({h: slots for h, slots in self.initial.items() if h not in down}, self.free)
        state.apart = {h: dict(self.apart_now.get(h, {})) for h in state}
        guests = [g for h in sorted(down) for g in self.by_host.get(h, [])]
        if not guests:
            return Outcome({}, state)
        full = _vector(guests, {g.index: ("", ()) for g in guests})
        start = self._greedy(guests, state, down)
        found = _vector(guests, start)
        if found == full:
            return Outcome(start, state)
        for gi, (host, idx) in start.items():
            self._undo(self._guest_by(guests, gi), host, idx, state)
        bound = self._bound(guests, state, down, {}, _Search())
        proven = _below(bound, full) if require_all else found >= bound
        if proven or len(guests) > MAX_SEARCH_GUESTS:
            for gi, (host, idx) in start.items():
                self._apply(self._guest_by(guests, gi), host, idx, state)
            # the bound proves the greedy answer optimal, or the problem is too big to search
            return Outcome(start, state, exact=proven)
        best, exact = self._search(guests, state, down, start, require_all)
        for gi, (host, idx) in best.items():
            self._apply(self._guest_by(guests, gi), host, idx, state)
        return Outcome(best, state, exact)

    @staticmethod
    def _guest_by(guests: list[Guest], index: int) -> Guest:
        return next(g for g in guests if g.index == index)

    def _order(self, guests: list[Guest], down: set[str]) -> list[Guest]:
        def hardness(g: Guest) -> tuple[Any, ...]:
            # The eligible hosts less the failed ones among them: a few failed hosts are
            # looked up in the list, not every eligible host in the failed ones.
            eligible = self.eligible[g.index]
            options = len(eligible) - len(down.intersection(eligible))
            return (g.rank, options, -g.size, g.name)

        return sorted(guests, key=hardness)

    def _greedy(self, guests: list[Guest], state: State, down: set[str]) -> Assignment:
        placed: Assignment = {}
        # _best_on per demands and host. A placement changes one host, so only that
        # host's entries are dropped; the others stay what _best_on would return.
        memo: dict[tuple[Demand, ...], dict[str, Any]] = {}
        for guest in self._order(guests, down):
            best: tuple[tuple[int, int], str, tuple[int, ...]] | None = None
            known = memo.setdefault(guest.demands, {})
            now = self._best_now.setdefault(guest.demands, {})
            for host in self.eligible[guest.index]:
                if host in down or state.free[host] < guest.memory:
                    continue
                if guest.apart and _kept_apart(guest, state, host):
                    continue
                found = known.get(host, _UNKNOWN)
                if found is _UNKNOWN:
                    found = known[host] = self._answer(_best_on, now, state, host, guest.demands)
                if found is not None and (best is None or found[0] < best[0]):
                    best = (found[0], host, found[1])
                    if found[0] == (0, 0):
                        break
            if best is not None:
                self._apply(guest, best[1], best[2], state)
                placed[guest.index] = (best[1], best[2])
                for entries in memo.values():
                    entries.pop(best[1], None)
        return placed

    def _answer(
        self,
        ask: Callable[[list[Slot], tuple[Demand, ...]], Any],
        now: dict[str, Any],
        state: State,
        host: str,
        demands: tuple[Demand, ...],
    ) -> Any:
        """``ask`` about the host's GPUs; kept in ``now`` while they are as they run now."""
        slots = state[host]
        if slots is not self.initial[host]:
            return ask(slots, demands)
        found = now.get(host, _UNKNOWN)
        if found is _UNKNOWN:
            found = now[host] = ask(slots, demands)
        return found

    @staticmethod
    def _apply(guest: Guest, host: str, idx: tuple[int, ...], state: State) -> None:
        for d, i in zip(guest.demands, idx, strict=True):
            state.writable(host)[i].take(guest.name, d)
        state.free[host] -= guest.memory
        _count_apart(guest, state, host, 1)

    @staticmethod
    def _undo(guest: Guest, host: str, idx: tuple[int, ...], state: State) -> None:
        for d, i in zip(guest.demands, idx, strict=True):
            state.writable(host)[i].release(guest.name, d)
        state.free[host] += guest.memory
        _count_apart(guest, state, host, -1)

    # Exact search
    def _options(self, guest: Guest, state: State, down: set[str], search: _Search) -> list[Option]:
        """Every distinct way to place the VM now (symmetric hosts and GPUs tried once)."""
        seen_hosts: set[tuple[Any, ...]] = set()
        scored: list[tuple[tuple[int, int], Option]] = []
        for host in self.eligible[guest.index]:
            if host in down or state.free[host] < guest.memory:
                continue
            if _kept_apart(guest, state, host):
                continue
            slots = state[host]
            search.work += len(slots)
            hkey = (
                self.nodes[host].static,
                state.free[host],
                tuple(sorted(s.key() for s in slots)),
                _apart_key(state, host),
            )
            if hkey in seen_hosts:
                continue
            seen_hosts.add(hkey)
            for score, idx in _assignments(slots, guest.demands):
                scored.append((score, (host, idx)))
        scored.sort(key=lambda item: item[0])
        return [option for _, option in scored]

    def _fits_somewhere(self, guest: Guest, state: State, down: set[str], search: _Search) -> bool:
        for host in self.eligible[guest.index]:
            if host in down or state.free[host] < guest.memory:
                continue
            search.work += len(state[host])
            if _assignments(state[host], guest.demands, first_only=True):
                return True
        return False

    def _bound(
        self,
        rest: list[Guest],
        state: State,
        down: set[str],
        placed: dict[int, int],
        search: _Search,
    ) -> tuple[int, ...]:
        counts = [placed.get(r, 0) for r in range(len(PRIORITIES))]
        fit: dict[tuple[Any, ...], bool] = {}
        pools: dict[tuple[Any, ...], list[int]] = {}
        loose = [0] * len(PRIORITIES)
        for guest in rest:
            if guest.key not in fit:
                fit[guest.key] = self._fits_somewhere(guest, state, down, search)
            if not fit[guest.key]:
                continue
            if len(guest.demands) == 1:
                pool = pools.setdefault(_pool(guest.demands[0]), [0] * len(PRIORITIES))
                pool[guest.rank] += 1
            else:
                loose[guest.rank] += 1
        for pool_key, per_rank in pools.items():
            cap = _pool_capacity(pool_key, state, self.nodes)
            for rank, n in enumerate(per_rank):
                counts[rank] += min(n, cap)
        for rank, n in enumerate(loose):
            counts[rank] += n
        return tuple(counts)

    def _search(
        self,
        guests: list[Guest],
        state: State,
        down: set[str],
        start: Assignment,
        require_all: bool,
    ) -> tuple[Assignment, bool]:
        order = self._order(guests, down)
        full = _vector(guests, {g.index: ("", ()) for g in guests})
        best: list[Any] = [_vector(guests, start), dict(start)]
        current: Assignment = {}
        placed: dict[int, int] = {}
        search = _Search()

        def dfs(i: int, prev_skipped: bool) -> None:
            if search.work > SEARCH_WORK:
                search.aborted = True
                return
            if i == len(order):
                vec = tuple(placed.get(r, 0) for r in range(len(PRIORITIES)))
                if vec > best[0]:
                    best[0], best[1] = vec, dict(current)
                return
            memo = (i, prev_skipped, tuple(sorted(placed.items())), self._state_key(state))
            if memo in search.seen:
                return
            bound = self._bound(order[i:], state, down, placed, search)
            if _below(bound, full) if require_all else bound <= best[0]:
                return
            guest = order[i]
            twin = i > 0 and order[i - 1].key == guest.key
            if not (twin and prev_skipped):
                for host, idx in self._options(guest, state, down, search):
                    self._apply(guest, host, idx, state)
                    current[guest.index] = (host, idx)
                    placed[guest.rank] = placed.get(guest.rank, 0) + 1
                    dfs(i + 1, False)  # noqa: F821 (its cycle is deleted below)
                    placed[guest.rank] -= 1
                    del current[guest.index]
                    self._undo(guest, host, idx, state)
                    if search.aborted or best[0] == full:
                        return
            if not require_all:
                dfs(i + 1, True)  # noqa: F821 (its cycle is deleted below)
            if not search.aborted:
                search.seen.add(memo)

        dfs(0, False)
        del dfs  # a nested function calling itself is a reference cycle: broken
        return best[1], not search.aborted

    def _state_key(self, state: State) -> tuple[Any, ...]:
        return tuple(
            sorted(
                (
                    self.nodes[h].static,
                    state.free[h],
                    tuple(sorted(s.key() for s in slots)),
                    _apart_key(state, h),
                )
                for h, slots in state.items()
            )
        )

    # Reporting
    def reason(self, guest: Guest, down: set[str], outcome: Outcome) -> str:
        fixed = [d.device for d in guest.demands if d.kind == "passthrough"]
        if fixed:
            return (
                f"fixed DirectPath I/O: bound to device {', '.join(str(f) for f in fixed)} of "
                f"{guest.host}; vSphere HA cannot restart it on another host"
            )
        targets = [h for h in self.nodes if h not in down]
        if not targets:
            return "no surviving host in the cluster"
        blocked = self._blocked_by_rules(guest, targets, outcome)
        if blocked:
            return blocked
        eligible = [h for h in self.eligible[guest.index] if h not in down]
        if not eligible:
            why: dict[str, list[str]] = {}
            for host in targets:
                why.setdefault(self.why_not(guest, host), []).append(host)
            parts = [f"{', '.join(_few(hosts))}: {text}" for text, hosts in why.items()]
            return "no surviving host can take it (" + "; ".join(parts) + ")"
        need = ", ".join(_describe(d) for d in guest.demands)
        if not outcome.exact:
            return (
                f"not placed within the search limit; eligible hosts {', '.join(_few(eligible))} "
                f"may still have room for {need} and {guest.memory} MB of memory"
            )
        short = [h for h in eligible if outcome.state.free[h] < guest.memory]
        roomy = [h for h in eligible if h not in short]
        parts = []
        if short:
            free = ", ".join(f"{h}: {max(outcome.state.free[h], 0)} MB" for h in _few(short))
            parts.append(
                f"not enough memory for its {guest.memory} MB (reservation and overhead) on "
                f"the eligible hosts {', '.join(_few(short))} (free {free})"
            )
        if roomy:
            parts.append(f"no GPU capacity left for {need} on {', '.join(_few(roomy))}")
            parts.extend(_sharing_refusals(guest, roomy, outcome.state))
            parts.extend(_link_refusals(guest, roomy, outcome.state))
            parts.extend(_vcenter_refusals(guest, roomy, outcome.state))
        return (
            "; ".join(parts) + " (counting the VMs running there and restarts of equal or "
            "higher priority)"
        )

    def _blocked_by_rules(self, guest: Guest, targets: list[str], outcome: Outcome) -> str:
        """The rules that keep the VM off every surviving host that has room for it; ""
        when no host has room, or one has room that no rule forbids."""
        state = outcome.state
        rules: dict[str, list[str]] = {}
        for host in targets:
            if self.why_not(guest, host, rules=False) or state.free[host] < guest.memory:
                continue
            if not _assignments(state[host], guest.demands, first_only=True):
                continue
            broken = [r.describe() for r in guest.host_rules if not r.allows(host)]
            broken += [
                f"VM-VM anti-affinity rule '{name}' (apart from "
                f"{', '.join(_few([v for v in self.rules.apart_rules[name] if v != guest.name]))})"
                for name in sorted(guest.apart)
                if state.apart.get(host, {}).get(name)
            ]
            if not broken:
                return ""
            for text in broken:
                rules.setdefault(text, []).append(host)
        if not rules:
            return ""
        parts = [
            f"{text}, though {', '.join(_few(h))} {'has' if len(h) == 1 else 'have'} room"
            for text, h in rules.items()
        ]
        return "blocked by " + "; ".join(parts)

    def gpu_slots(self, state: dict[str, list[Slot]]) -> list[GpuSlots]:
        out = []
        for host in self.nodes:
            for slot in state.get(host, []):
                out.append(_view(slot))
        return out

    # What ESXi itself would do
    def by_policy(self, failed: Iterable[str]) -> Outcome:
        """Place the VMs in restart-priority order, each host picking the GPUs by its policy.

        Of the surviving hosts whose own choice can take a VM, the one with the most free
        memory takes it (the first in the cluster's order on a tie; a host of unknown memory
        size counts as having the most).
        """
        down = set(failed)
        state = State({h: slots for h, slots in self.initial.items() if h not in down}, self.free)
        state.apart = {h: dict(self.apart_now.get(h, {})) for h in state}
        guests = sorted(
            (g for h in sorted(down) for g in self.by_host.get(h, [])),
            key=lambda g: (g.rank, g.name),
        )
        placed: Assignment = {}
        # _policy_choice per demands and host; a placement changes one host only.
        memo: dict[tuple[Demand, ...], dict[str, Any]] = {}

        def room(host: str) -> float:
            return math.inf if self.nodes[host].memory == UNLIMITED else state.free[host]

        free = state.free
        # Every host's size known: its free memory itself orders it, without a call per host.
        most_free = room if self.unsized else free.__getitem__

        for guest in guests:
            # Required VM-Host rules are in eligible; anti-affinity depends on who is where.
            hosts = [
                h for h in self.eligible[guest.index] if h not in down and free[h] >= guest.memory
            ]
            if guest.apart:
                hosts = [h for h in hosts if not _kept_apart(guest, state, h)]
            hosts.sort(key=most_free, reverse=True)  # stable: the cluster's order on a tie
            known = memo.setdefault(guest.demands, {})
            now = self._choice_now.setdefault(guest.demands, {})
            for host in hosts:
                idx = known.get(host, _UNKNOWN)
                if idx is _UNKNOWN:
                    choose = partial(_policy_choice, policy=self.nodes[host].policy)
                    idx = known[host] = self._answer(choose, now, state, host, guest.demands)
                if idx is not None:
                    self._apply(guest, host, idx, state)
                    placed[guest.index] = (host, idx)
                    for entries in memo.values():
                        entries.pop(host, None)
                    break
        return Outcome(placed, state)


def _demand(
    kind: str, profile: str | None, pci_id: str | None, allowed: list[tuple[int, int]]
) -> Demand:
    if kind == "vgpu":
        info = catalog.parse_profile(profile or "")
        return Demand(
            kind="vgpu",
            profile=(profile or "").lower(),
            size=info.memory_mb if info else 0,
            prefix=info.gpu if info else None,
        )
    if kind == "dynamic":
        pairs = sorted((int(a[0]), int(a[1])) for a in allowed)
        return Demand(kind="dynamic", allowed=tuple(pairs))
    if kind == "passthrough":
        return Demand(kind="passthrough", device=pci_id or "?")
    return Demand(kind="unknown")


def _with_model(d: Demand, model: str) -> Demand:
    return dataclasses.replace(d, model=model)


def _dynamic_wants(d: Demand, att: GpuAttachment) -> Demand:
    """A Dynamic DirectPath demand with the VM's hardware label and allowed sub ids."""
    if d.kind != "dynamic":
        return d
    subs: tuple[tuple[int, int, int, int], ...] = ()
    if att.allowed_sub_ids and len(att.allowed_sub_ids) == len(att.allowed):
        subs = tuple(
            sorted(
                (int(a[0]), int(a[1]), *(sub if sub is not None else (-1, -1)))
                for a, sub in zip(att.allowed, att.allowed_sub_ids, strict=True)
            )
        )
    return dataclasses.replace(d, label=att.custom_label or None, allowed_sub=subs)


def _label_as_seen(d: Demand, slot: Slot) -> Demand:
    """A label the GPU the device runs on does not carry cannot be checked: vCenters before
    8.0 serve no hardware label, so "" there means unknown. The VM runs, so the label
    holds where it is; it is then not required elsewhere either."""
    if d.kind == "dynamic" and d.label is not None and slot.label != d.label:
        return dataclasses.replace(d, label=None)
    return d


def _kept_apart(guest: Guest, state: State, host: str) -> bool:
    """An anti-affinity rule of the VM already has a VM on the host."""
    if not guest.apart:
        return False
    here = state.apart.get(host, {})
    return any(here.get(rule) for rule in guest.apart)


def _count_apart(guest: Guest, state: State, host: str, step: int) -> None:
    here = state.apart.setdefault(host, {})
    for rule in guest.apart:
        here[rule] = here.get(rule, 0) + step


def _apart_key(state: State, host: str) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((r, n) for r, n in state.apart.get(host, {}).items() if n))


def _best_on(
    slots: list[Slot], demands: tuple[Demand, ...]
) -> tuple[tuple[int, int], tuple[int, ...]] | None:
    """Greedy: the best distinct GPU for each device in turn."""
    if _unlinked(slots, demands):
        return None
    chosen: list[int] = []
    total = (0, 0)
    for j, d in enumerate(demands):
        if _capped(slots, d, demands[:j]):
            return None
        vouched = _vouched(slots, d, demands[:j])
        pick = None
        for i, slot in enumerate(slots):
            if i in chosen or not slot.fits(d, vouched):
                continue
            score = slot.score(d)
            if pick is None or score < pick[0]:
                pick = (score, i)
        if pick is None:
            return None
        chosen.append(pick[1])
        total = (total[0] + pick[0][0], total[1] + pick[0][1])
    return total, tuple(chosen)


def _policy_choice(
    slots: list[Slot], demands: tuple[Demand, ...], policy: str
) -> tuple[int, ...] | None:
    """The GPUs ESXi picks for the devices, one after another, under the host's policy.

    ``performance`` takes the GPU with the fewest VMs that can take the device,
    ``consolidation`` the one with the most; the first in the host's order on a tie.
    """
    if _unlinked(slots, demands):
        return None
    chosen: list[int] = []
    for j, d in enumerate(demands):
        if _capped(slots, d, demands[:j]):
            return None
        vouched = _vouched(slots, d, demands[:j])
        fitting = [i for i, slot in enumerate(slots) if i not in chosen and slot.fits(d, vouched)]
        if not fitting:
            return None
        sign = -1 if policy == CONSOLIDATION else 1
        chosen.append(min(fitting, key=lambda i: sign * _residents(slots[i])))
    return tuple(chosen)


def _unlinked(slots: Sequence[Slot], demands: tuple[Demand, ...]) -> bool:
    """A vendor device group of the devices is not proven to get GPUs the host links
    (device_groups.unproven), and the ledger reads that as a no."""
    for need in dict.fromkeys(d.group for d in demands if d.group is not None):
        why = device_groups.unproven(need, slots[0].groups, [_host_gpu(s) for s in slots])
        if why and not slots[0].ledger.unknown(why):
            return True
    return False


def _host_gpu(slot: Slot) -> device_groups.HostGpu:
    board = slot.share.board
    return device_groups.HostGpu(
        board=board.name if board is not None else None,
        nvswitch=board is not None and board.nvswitch,
        free=not slot.vgpus and slot.owner is None,
    )


def _residents(slot: Slot) -> int:
    return len(slot.vgpus) + (slot.owner is not None)


def vcenter_room(host: Host) -> dict[str, int]:
    """How many more vGPUs of each profile (lower case) vCenter says the host takes:
    ``remaining`` of DirectPathProfileManager.QueryCapacity (vSphere 9.0), for the
    profiles it answered. Units reserved for other VMs (``unusedReservation``) are not
    room. Empty where vCenter was not asked."""
    return {
        p.name.lower(): max(p.capacity.remaining, 0)
        for p in host.vgpu_profiles
        if p.capacity is not None
    }


def _less(room: dict[str, int], new: Sequence[Vm]) -> dict[str, int]:
    """vCenter's remaining capacity less one unit for each vGPU of the new VMs."""
    for vm in new:
        for att in vm.gpus:
            name = (att.profile or "").lower()
            if att.kind == "vgpu" and name in room:
                room[name] = max(room[name] - 1, 0)
    return room


def _arrivals(slots: Sequence[Slot]) -> Iterator[str]:
    """The profiles (lower case) of the vGPUs placed on the host since it was read."""
    for slot in slots:
        for _, profile, _ in slot.vgpus[slot.seated :]:
            yield profile.lower()


def _left(slots: Sequence[Slot], d: Demand, earlier: Sequence[Demand] = ()) -> int | None:
    """How many more of the device's profile vCenter lets the host take now (its count
    less the arrivals of that profile and the VM's ``earlier`` devices of it); None when
    vCenter gave no count."""
    if d.kind != "vgpu" or not slots:
        return None
    profile = (d.profile or "").lower()
    count = slots[0].caps.get(profile)
    if count is None:
        return None
    arrived = sum(1 for p in _arrivals(slots) if p == profile)
    arrived += sum(1 for e in earlier if (e.profile or "").lower() == profile)
    return max(count - arrived, 0)


def _capped(slots: Sequence[Slot], d: Demand, earlier: Sequence[Demand] = ()) -> bool:
    """vCenter says the host takes no more of the device's profile."""
    return _left(slots, d, earlier) == 0


def _vouched(slots: Sequence[Slot], d: Demand, earlier: Sequence[Demand] = ()) -> bool:
    """vCenter's count proves room for the device on the host: it counts room left, and
    nothing but vGPUs of that profile arrived since vCenter counted (an arrival of
    another profile may take what it counted)."""
    left = _left(slots, d, earlier)
    if not left:
        return False
    profile = (d.profile or "").lower()
    mine = [*_arrivals(slots), *((e.profile or "").lower() for e in earlier)]
    return all(p == profile for p in mine)


def _assignments(
    slots: list[Slot], demands: tuple[Demand, ...], first_only: bool = False
) -> list[tuple[tuple[int, int], tuple[int, ...]]]:
    """Each distinct assignment of the devices to distinct GPUs that fit them.

    GPUs in the same state are interchangeable, so only the first of them is tried.
    """
    out: list[tuple[tuple[int, int], tuple[int, ...]]] = []
    if _unlinked(slots, demands):
        return out
    used: list[int] = []

    def walk(j: int, score: tuple[int, int]) -> bool:
        if j == len(demands):
            out.append((score, tuple(used)))
            return first_only
        d = demands[j]
        if _capped(slots, d):  # the devices placed so far are on the GPUs already
            return False
        vouched = _vouched(slots, d)
        keys: set[tuple[Any, ...]] = set()
        for i, slot in enumerate(slots):
            if i in used or not slot.fits(d, vouched):
                continue
            key = slot.key()
            if key in keys:
                continue
            keys.add(key)
            s = slot.score(d)
            slot.take("\0", d)
            used.append(i)
            done = walk(j + 1, (score[0] + s[0], score[1] + s[1]))  # noqa: F821 (its cycle is deleted below)
            used.pop()
            slot.release("\0", d)
            if done:
                return True
        return False

    walk(0, (0, 0))
    del walk  # a nested function calling itself is a reference cycle: broken
    return out


def _pool(d: Demand) -> tuple[Any, ...]:
    return (d.kind, d.model, d.prefix, d.size, d.allowed, d.profile, d.label, d.allowed_sub)


def _pool_capacity(pool: tuple[Any, ...], state: State, nodes: dict[str, Node]) -> int:
    """How many devices of one kind the surviving GPUs could take, each GPU on its own."""
    kind, model, prefix, size, allowed, profile, label, allowed_sub = pool
    d = Demand(
        kind=kind,
        size=size,
        model=model,
        prefix=prefix,
        allowed=allowed,
        profile=profile,
        label=label,
        allowed_sub=allowed_sub,
    )
    total = 0
    for host, slots in state.items():
        if not nodes[host].active:
            continue
        vouched = _vouched(slots, d)
        room = 0
        for slot in slots:
            if not slot.fits(d, vouched):
                continue
            if kind != "vgpu":
                room += 1
                continue
            room += slot.room(d)
        left = _left(slots, d)
        if left is not None:
            # vCenter's count bounds the host; where it vouches, it is the room.
            room = left if vouched else min(room, left)
        total += room
    return total


def _vector(guests: list[Guest], assignment: Assignment) -> tuple[int, ...]:
    counts = [0] * len(PRIORITIES)
    for guest in guests:
        if guest.index in assignment:
            counts[guest.rank] += 1
    return tuple(counts)


def _below(bound: tuple[int, ...], full: tuple[int, ...]) -> bool:
    """Some priority class cannot be placed in full."""
    return any(b < f for b, f in zip(bound, full, strict=True))


def _describe(d: Demand) -> str:
    if d.kind == "vgpu":
        profile = d.profile or "a vGPU of unknown profile"
        return f"{profile} on {d.model or d.prefix or 'its GPU model'}"
    if d.kind == "dynamic":
        ids = ", ".join(f"{v:04x}:{dev:04x}" for v, dev in d.allowed) or "any device"
        if d.allowed_sub:
            ids = ", ".join(_sub_ids(*entry) for entry in d.allowed_sub)
        label = f" labelled '{d.label}'" if d.label is not None else ""
        return f"a free passthrough GPU{label} ({ids})"
    return d.kind


def _sub_ids(vendor: int, device: int, sub_vendor: int, sub_device: int) -> str:
    def part(value: int) -> str:
        return "*" if value < 0 else f"{value:04x}"

    if sub_vendor < 0 and sub_device < 0:
        return f"{vendor:04x}:{device:04x}"
    return f"{vendor:04x}:{device:04x} {part(sub_vendor)}:{part(sub_device)}"


def _few(names: list[str], limit: int = 4) -> list[str]:
    if len(names) <= limit:
        return names
    return [*names[:limit], f"{len(names) - limit} more"]


def _view(slot: Slot) -> GpuSlots:
    view = GpuSlots(
        host=slot.host, pci_id=slot.pci_id, model=slot.model, memory_mb=slot.memory, mode="idle"
    )
    if slot.owner is not None:
        view.mode, view.capacity, view.used, view.vms = "passthrough", 1, 1, [slot.owner]
    elif slot.vgpus:
        sizes = [size for _, _, size in slot.vgpus]
        view.mode = "vgpu"
        view.profile = slot.vgpus[0][1]
        view.used = len(sizes)
        view.used_mb = sum(sizes)
        view.capacity = _capacity(slot)
        view.vms = [vm for vm, _, _ in slot.vgpus]
    return view


def _sharing_refusals(guest: Guest, hosts: list[str], state: State) -> list[str]:
    """Where the sharing rule of a GPU, not its frame buffer, refuses the VM's vGPUs."""
    out = []
    for d in guest.demands:
        if d.kind != "vgpu":
            continue
        for host in hosts:
            for slot in state.get(host, []):
                if slot.owner is not None or not slot.compatible(d):
                    continue
                why = sharing.refusal(slot.share, slot.vgpus, d.profile or "", slot.seated)
                if why:
                    out.append(f"{host} {slot.pci_id}: {why}")
    return _few(sorted(set(out)), 2)


def _link_refusals(guest: Guest, hosts: list[str], state: State) -> list[str]:
    """Where the VM's vendor device group is not proven to get linked GPUs."""
    out = []
    for need in dict.fromkeys(d.group for d in guest.demands if d.group is not None):
        for host in hosts:
            slots = state[host]
            gpus = [_host_gpu(s) for s in slots]
            why = device_groups.unproven(need, slots[0].groups, gpus)
            if why:
                out.append(f"{host}: {why}")
    return _few(out, 2)


def _vcenter_refusals(guest: Guest, hosts: list[str], state: State) -> list[str]:
    """Where vCenter's own count (QueryCapacity, vSphere 9.0) leaves no room for the VM's
    vGPUs."""
    out = []
    for d in guest.demands:
        for host in hosts:
            slots = state.get(host, [])
            if _left(slots, d) == 0:
                count = slots[0].caps[(d.profile or "").lower()]
                out.append(
                    f"{host}: vCenter's QueryCapacity counts room for {count} more "
                    f"{d.profile}, and restarts took it"
                    if count
                    else f"{host}: vCenter's QueryCapacity counts no room for {d.profile}"
                )
    return _few(sorted(set(out)), 2)


def _vcenter_notes(model: ClusterModel) -> list[str]:
    """Where vCenter's count and NVIDIA's figures disagree about a host's room for a
    profile, and which the simulation takes: the stricter."""
    notes = []
    for host, slots in model.initial.items():
        usable = [s for s in slots if s.vgpu_ok]
        if not usable or len({s.model for s in usable}) > 1:
            continue  # NVIDIA's room for a profile is only clear on one model's GPUs
        share = usable[0].share
        for profile, told in share.told:
            table = sharing.frame_buffer(share.board, profile)
            if told.frame_buffer_mb and table and abs(told.frame_buffer_mb - table) >= 1024:
                notes.append(
                    f"{host}: vCenter gives {profile} {told.frame_buffer_mb} MB of frame "
                    f"buffer, NVIDIA's figures {table} MB: the simulation takes the larger"
                )
        for profile, count in sorted(usable[0].caps.items()):
            proven = sum(sharing.room(s.share, s.vgpus, profile, seated=s.seated) for s in usable)
            loose = sum(
                sharing.room(s.share, s.vgpus, profile, optimistic=True, seated=s.seated)
                for s in usable
            )
            if count < proven:
                notes.append(
                    f"{host}: vCenter's QueryCapacity counts room for {count} more {profile}, "
                    f"NVIDIA's figures for {proven}: the simulation takes vCenter's count"
                )
            elif count > loose:
                notes.append(
                    f"{host}: vCenter's QueryCapacity counts room for {count} more {profile}, "
                    f"NVIDIA's figures for at most {loose}: the simulation takes NVIDIA's"
                )
    return notes


def _capacity(slot: Slot) -> int:
    """The vGPUs the GPU holds with more of its smallest profile added while they fit,
    as far as NVIDIA's published figures prove it."""
    _, profile, size = min(slot.vgpus, key=lambda v: v[2])
    if size <= 0:  # neither the profile nor the GPU gives a frame buffer: no room is known
        return len(slot.vgpus)
    return len(slot.vgpus) + sharing.room(slot.share, slot.vgpus, profile, seated=slot.seated)


# Public API
@dataclass
class Simulated:
    """A cluster simulation with the caveats that the result model has no field for."""

    simulation: ClusterSimulation
    # e.g. "N+2 not proven: ..." when combinations were sampled or a search hit its limit
    notes: list[str] = field(default_factory=list)


def simulate_cluster(
    inventory: Inventory, cluster_name: str, facts: Facts | None = None
) -> ClusterSimulation:
    """Fail each host of the cluster in turn; report placements, the worst host and N+k."""
    return simulate_cluster_notes(inventory, cluster_name, facts).simulation


def simulate(inventory: Inventory, facts: Facts | None = None) -> list[ClusterSimulation]:
    """One simulation per cluster that has a GPU or a GPU VM."""
    return [s.simulation for s in simulate_all(inventory, facts)]


def simulate_all(inventory: Inventory, facts: Facts | None = None) -> list[Simulated]:
    facts = facts or Facts(inventory)
    return [simulate_cluster_notes(inventory, c.name, facts) for c in facts.clusters_with_gpus()]


def simulate_cluster_notes(
    inventory: Inventory,
    cluster_name: str,
    facts: Facts | None = None,
    max_failures: int = MAX_FAILURES,
) -> Simulated:
    """The cluster's simulation and the notes on its limits; N+k searched up to ``max_failures``."""
    facts = facts or Facts(inventory)
    model = ClusterModel(facts, cluster_name, max_failures)
    disabled = sorted(vm.name for vms in model.disabled.values() for vm in vms)
    sim = ClusterSimulation(
        cluster=cluster_name,
        hosts=len(model.nodes),
        gpu_vms=len(model.guests) + len(disabled),
        ha_restarts=model.ha_restarts,
        restart_disabled=disabled,
    )
    out = Simulated(sim)
    if not model.ha_restarts:
        out.notes.append(
            "vSphere HA is off or host monitoring is disabled: no VM is restarted after a "
            "host failure; the placements show where a manual restart would fit"
        )
    out.notes.extend(_vcenter_notes(model))
    if model.unsized:
        out.notes.append(
            f"memory not checked on {', '.join(_few(model.unsized))}: the host's memory size "
            "is unknown"
        )
    sim.capacity = model.gpu_slots(model.initial)
    worst: tuple[tuple[int, int], str, State] | None = None
    all_placed = True
    all_exact = True
    by_policy = True
    for host in model.nodes:
        outcome = model.fail([host])
        exact = _failure(model, {host}, outcome)
        chosen = model.by_policy([host])
        failure = _with_policy(model, exact, chosen)
        sim.failures.append(failure)
        all_placed = all_placed and not exact.unplaced
        by_policy = by_policy and not failure.unplaced and not failure.manual_only
        all_exact = all_exact and outcome.exact
        lost = len(failure.unplaced) + len(failure.manual_only)
        rank = (lost, len(failure.placed) + lost)
        if rank[1] and (worst is None or rank > worst[0]):
            worst = (rank, host, chosen.state)
    if worst is not None:
        sim.worst_host = worst[1]
        sim.after_worst = model.gpu_slots(worst[2])
    if not all_exact:
        out.notes.append(
            "the exact search hit its limit for some host failures: VMs reported as not "
            "placed there may still have a valid placement"
        )
    sim.manual_tolerates, notes = _tolerance(model, all_placed)
    # HA restarts a VM only where a host's own GPU choice takes it.
    policy_tolerates, _ = _tolerance(model, by_policy, by_policy=True)
    # With HA off nothing restarts, so no failure leaves every GPU VM running (N+0),
    # unless there is no GPU VM at all.
    sim.tolerates = policy_tolerates if model.ha_restarts or not sim.gpu_vms else 0
    # What the failures left undecided; the spare capacity below counts proven room only.
    sim.not_proven = list(model.ledger.reasons)
    sim.spare = spare_capacity(model)
    out.notes.extend(notes)
    short = not by_policy or policy_tolerates < min(max_failures, len(model.nodes))
    if sim.not_proven and short:
        _weigh_the_unknown(facts, cluster_name, max_failures, sim)
    return out


def _weigh_the_unknown(
    facts: Facts, cluster: str, max_failures: int, sim: ClusterSimulation
) -> None:
    """Where NVIDIA's figures left capacity undecided and VMs found no room, simulate again
    reading every undecided answer as room: a VM that then restarts is not proven lost, only
    not proven restarted (HostFailure.unproven), and the N+k that reading reaches is the
    cluster's ``tolerates_unproven``."""
    loose = ClusterModel(facts, cluster, max_failures, optimistic=True)
    every = True
    why = "; ".join(_few(sim.not_proven, 3))
    for failure in sim.failures:
        if failure.host not in loose.nodes:
            continue
        exact = _failure(loose, {failure.host}, loose.fail([failure.host]))
        chosen = _with_policy(loose, exact, loose.by_policy([failure.host]))
        every = every and not chosen.unplaced and not chosen.manual_only
        restarts = {p.vm for p in chosen.placed}
        for lost in (failure.unplaced, failure.manual_only):
            for p in [p for p in lost if p.vm in restarts]:
                lost.remove(p)
                p.reason = f"restart not proven: {why}"
                p.to_host = p.to_gpu = None
                failure.unproven.append(p)
    if sim.ha_restarts:
        k, _ = _tolerance(loose, every, by_policy=True)
        if k > sim.tolerates:
            sim.tolerates_unproven = k


def evacuate(model: ClusterModel, host: str, moving: Sequence[Guest]) -> HostFailure:
    """Where ``moving`` (GPU VMs of ``host``) go when the host leaves the cluster, placed
    as a failure's restarts are: ``placed`` by the hosts' own GPU choice, ``manual_only``
    where only another choice fits, ``unplaced`` with the reason. The host's other GPU VMs
    are taken to be powered off: they free their GPUs and go nowhere."""
    kept = model.by_host
    model.by_host = {**kept, host: list(moving)}
    try:
        exact = _failure(model, {host}, model.fail([host]))
        return _with_policy(model, exact, model.by_policy([host]))
    finally:
        model.by_host = kept


def _failure(model: ClusterModel, down: set[str], outcome: Outcome) -> HostFailure:
    guests = [g for h in sorted(down) for g in model.by_host.get(h, [])]
    kept = [vm for h in sorted(down) for vm in model.disabled.get(h, [])]
    failure = HostFailure(host=", ".join(sorted(down)), displaced=len(guests) + len(kept))
    for vm in sorted(kept, key=lambda v: v.name):
        failure.not_restarted.append(
            Placement(
                vm.name, vm.host or "", reason="HA restart disabled", restart_priority="disabled"
            )
        )
    for guest in sorted(guests, key=lambda g: (g.rank, g.name)):
        where = outcome.assignment.get(guest.index)
        if where is not None:
            host, idx = where
            gpus = ", ".join(outcome.state[host][i].pci_id for i in idx)
            failure.placed.append(
                Placement(guest.name, guest.host, host, gpus, restart_priority=guest.priority)
            )
        else:
            reason = model.reason(guest, down, outcome)
            failure.unplaced.append(
                Placement(guest.name, guest.host, reason=reason, restart_priority=guest.priority)
            )
    return failure


def _with_policy(model: ClusterModel, exact: HostFailure, chosen: Outcome) -> HostFailure:
    """The failure as the hosts' own GPU choice leaves it.

    A VM restarts where the policy pass places it. A VM the policy pass leaves out but the
    exact search places is restartable only by hand; the others keep the exact search's
    reason.
    """
    out = HostFailure(exact.host, exact.displaced, not_restarted=exact.not_restarted)
    index = {g.name: g for g in model.by_host.get(exact.host, [])}
    for p in (*exact.placed, *exact.unplaced):
        where = chosen.assignment.get(index[p.vm].index)
        if where is not None:
            host, idx = where
            gpus = ", ".join(chosen.state[host][i].pci_id for i in idx)
            out.placed.append(Placement(p.vm, p.from_host, host, gpus, None, p.restart_priority))
        elif p.to_host is None:
            out.unplaced.append(p)
        else:
            policies = sorted({model.nodes[h].policy for h in model.nodes if h != exact.host})
            p.reason = (
                f"the hosts' own GPU choice (assignment policy {', '.join(policies)}) leaves no "
                f"GPU for it; a manual placement fits on {p.to_host} ({p.to_gpu})"
            )
            out.manual_only.append(p)
    out.placed.sort(key=lambda p: (PRIORITIES.index(p.restart_priority), p.vm))
    return out


def _tolerance(
    model: ClusterModel, singles_ok: bool, by_policy: bool = False
) -> tuple[int, list[str]]:
    """The k of N+k, never more than every combination of k failures proves.

    With ``by_policy`` the hosts pick the GPUs by their own policy, else any valid placement
    counts."""
    hosts = list(model.nodes)
    top = min(model.max_failures, len(hosts))
    if not model.guests:
        return top, []
    if not singles_ok:
        return 0, []
    classes = _policy_classes(model) if by_policy else _host_classes(model)
    loaded = [h for h in hosts if model.by_host.get(h)]
    for k in range(2, top + 1):
        combos = list(itertools.islice(_combinations(classes, k, loaded), COMBINATION_LIMIT + 1))
        sampled = len(combos) > COMBINATION_LIMIT
        if sampled:
            busiest = sorted(hosts, key=lambda h: -sum(g.size for g in model.by_host.get(h, [])))
            m = k
            while m < len(busiest) and math.comb(m + 1, k) <= COMBINATION_LIMIT:
                m += 1
            combos = list(itertools.combinations(busiest[:m], k))
        for combo in combos:
            outcome = model.by_policy(combo) if by_policy else model.fail(combo, require_all=True)
            placed = len(outcome.assignment)
            needed = sum(len(model.by_host.get(h, [])) for h in combo)
            if placed < needed:
                notes = []
                if not outcome.exact:
                    notes.append(
                        f"N+{k} not proven: the search hit its limit for the loss of "
                        f"{', '.join(combo)}"
                    )
                return k - 1, notes
        if sampled:
            return k - 1, [
                f"N+{k} not proven: {len(combos)} combinations of the {m} most loaded hosts "
                f"all placed every GPU VM, but the cluster has more than {COMBINATION_LIMIT} "
                "distinct combinations"
            ]
    return top, []


def profile_family(profile: str) -> str | None:
    """A vGPU profile's family: its GPU and series ("l4 q"), or "<gpu> mig" when MIG-backed."""
    info = catalog.parse_profile(profile)
    if info is None:
        return None
    return f"{info.gpu} mig" if info.mig_slices else f"{info.gpu} {info.series}"


Group = tuple[str, str]  # (GPU model, family)


def _family_of(profile: str) -> str:
    """A profile's family row: its family, or the profile itself when it follows no
    NVIDIA name."""
    return profile_family(profile) or profile


def _groups(model: ClusterModel) -> dict[int, set[Group]]:
    """The GPU model and family of each device of each restarted VM, where it runs now."""
    out: dict[int, set[Group]] = {}
    for guest in model.guests:
        groups = out.setdefault(guest.index, set())
        for slot in model.initial[guest.host]:
            if slot.owner == guest.name:
                groups.add((slot.model, "passthrough"))
            for vm, profile, _ in slot.vgpus:
                if vm == guest.name:
                    groups.add((slot.model, _family_of(profile)))
    return out


def spare_capacity(model: ClusterModel) -> list[SpareCapacity]:
    """Spare GPUs and N+k per GPU model and per profile family on it."""
    groups = _groups(model)
    tolerates = _group_tolerance(model, groups)
    usable = [
        s
        for h, slots in model.initial.items()
        if model.nodes[h].active
        for s in slots
        if s.vgpu_ok or s.pt_ok
    ]
    state = State(dict(model.initial), model.free)
    rows: list[SpareCapacity] = []
    for gpu_model in sorted({s.model for s in usable} | {m for g in groups.values() for m, _ in g}):
        slots = [s for s in usable if s.model == gpu_model]
        idle = sum(1 for s in slots if not s.vgpus and s.owner is None)
        families = sorted({f for g in groups.values() for m, f in g if m == gpu_model})
        members = {f: [i for i, g in groups.items() if (gpu_model, f) in g] for f in families}
        family_rows = []
        for family in families:
            family_rows.append(
                SpareCapacity(
                    gpu_model,
                    family,
                    gpus=len(slots),
                    idle_gpus=idle,
                    vms=len(members[family]),
                    spare=_family_spare(model, state, gpu_model, family, members[family]),
                    tolerates=tolerates[(gpu_model, family)],
                )
            )
        on_model = {i for ids in members.values() for i in ids}
        k = min(
            (r.tolerates for r in family_rows), default=min(model.max_failures, len(model.nodes))
        )
        rows.append(SpareCapacity(gpu_model, None, len(slots), idle, len(on_model), idle, k))
        rows.extend(family_rows)
    return rows


def _family_spare(
    model: ClusterModel, state: State, gpu_model: str, family: str, members: list[int]
) -> int:
    """How many more of the family's largest device the model's GPUs take now."""
    guests = {g.index: g for g in model.guests}
    if family == "passthrough":
        d = Demand(kind="dynamic")
        return sum(
            1
            for h, slots in state.items()
            if model.nodes[h].active
            for s in slots
            if s.model == gpu_model and s.fits(d)
        )
    devices = [
        d
        for i in members
        for d in guests[i].demands
        if d.kind == "vgpu" and d.model == gpu_model and _family_of(d.profile or "") == family
    ]
    if not devices:
        return 0
    # The largest device of the family, by its size; on a tie the first profile by name.
    d = min(devices, key=lambda d: (-d.size, d.profile or ""))
    return _pool_capacity(_pool(d), state, model.nodes)


def _group_tolerance(model: ClusterModel, groups: dict[int, set[Group]]) -> dict[Group, int]:
    """The k of N+k per group: every k failures leave all its VMs restarted by policy."""
    hosts = list(model.nodes)
    top = min(model.max_failures, len(hosts))
    every = {g for gs in groups.values() for g in gs}
    if not model.ha_restarts:
        return dict.fromkeys(every, 0)
    result = dict.fromkeys(every, top)
    open_groups = set(every)
    classes = _policy_classes(model)
    loaded = [h for h in hosts if model.by_host.get(h)]
    for k in range(1, top + 1):
        combos = list(itertools.islice(_combinations(classes, k, loaded), COMBINATION_LIMIT + 1))
        if len(combos) > COMBINATION_LIMIT:  # not proven beyond k - 1
            for group in open_groups:
                result[group] = k - 1
            break
        for combo in combos:
            outcome = model.by_policy(combo)
            for host in combo:
                for guest in model.by_host.get(host, []):
                    if guest.index in outcome.assignment:
                        continue
                    for group in groups[guest.index] & open_groups:
                        result[group] = k - 1
                        open_groups.discard(group)
    return result


def _policy_classes(model: ClusterModel) -> list[list[str]]:
    """Host classes for the policy pass: each host on its own while every combination fits in
    the limit, since the pass breaks ties between hosts by their order in the cluster."""
    hosts = list(model.nodes)
    top = min(model.max_failures, len(hosts))
    if all(math.comb(len(hosts), k) <= COMBINATION_LIMIT for k in range(1, top + 1)):
        return [[h] for h in hosts]
    return _host_classes(model)


def _host_classes(model: ClusterModel) -> list[list[str]]:
    """Groups of interchangeable hosts: same access, profiles, GPUs and resident VMs."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    for host, node in model.nodes.items():
        guests = model.by_host.get(host, [])
        key: tuple[Any, ...] = (
            node.static,
            model.free[host],
            tuple(sorted(s.key() for s in model.initial[host])),
            tuple(sorted((g.key for g in guests), key=repr)),
        )
        if any(len(g.demands) > 1 for g in guests):
            key = (*key, host)
        groups.setdefault(key, []).append(host)
    return list(groups.values())


def _combinations(classes: list[list[str]], k: int, loaded: list[str]) -> Iterator[tuple[str, ...]]:
    """One representative per distinct multiset of host classes, with a loaded host."""
    busy = set(loaded)

    def walk(i: int, left: int, chosen: list[str]) -> Iterator[tuple[str, ...]]:
        if left == 0:
            if busy.intersection(chosen):
                yield tuple(chosen)
            return
        if i == len(classes):
            return
        members = classes[i]
        for n in range(min(left, len(members)), -1, -1):
            yield from walk(i + 1, left - n, chosen + members[:n])  # noqa: F821 (its cycle is deleted below)

    try:
        yield from walk(0, k, [])
    finally:
        del walk  # a nested function calling itself is a reference cycle: broken
