"""What-if: planned changes applied to a copy of an inventory, and the two audits compared.

``apply`` takes an inventory and a list of changes (plain dataclasses, as
gpuaudit.plan.change_file reads them from YAML) and gives a changed deep copy, with a note for
each thing the change did that the file did not say (a VM moved off a retired host, one
powered off because nothing takes it). The original is never touched. ``compare`` puts
two audit results side by side: per cluster the N+k, headroom, the hosts that cannot
enter maintenance mode without GPU VM downtime and the rolling upgrade's downtime, and
the findings that appear or go.

Added hosts are built from the inventory's own hosts, never from guesses that pass: a
copy of the host named by ``like``, else of a host with a GPU of the same model (the
cluster's first), else of the cluster's first host with GPUs made from the GPU
catalogue's entry of the model. A model the catalogue does not know stays unknown
(``known_model`` false), so the verdicts about it come out not proven.
"""

from __future__ import annotations

import copy
import dataclasses
import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from gpuaudit.inventory import (
    AdmissionControl,
    Cluster,
    DatastoreMount,
    Gpu,
    Host,
    Inventory,
    VgpuProfile,
    Vm,
    VmHostRule,
    VmVmRule,
)
from gpuaudit.knowledge import catalog
from gpuaudit.model.facts import Facts
from gpuaudit.model.policy import Policy
from gpuaudit.plan.maintenance import readiness
from gpuaudit.plan.rolling import _moved  # the inventory after vMotions, as rolling sees it
from gpuaudit.results import (
    MOVED,
    AuditResult,
    ClusterPlan,
    Finding,
    FindingChange,
    HeadroomChange,
    PlanComparison,
    severity_rank,
)
from gpuaudit.rules.registry import Context

VGPU_MODES = ("sameSize", "mixedSize")
RULE_KINDS = ("affinity", "anti-affinity", "vm-host")
DRS_AUTOMATION = ("manual", "partiallyAutomated", "fullyAutomated")
NEW_HOST_NAME = "{cluster}-new-{n}"


@dataclass(frozen=True)
class AddHosts:
    cluster: str
    count: int = 1
    like: str | None = None  # the host to copy; else one with a GPU of gpu_model
    gpu_model: str | None = None  # as the inventory or the GPU catalogue names it
    gpus: int | None = None  # GPUs per host; None: the template's
    memory_gb: int | None = None  # None: the template's
    vgpu_mode: str | None = None  # sameSize or mixedSize; None: the template's
    profiles: tuple[str, ...] | None = None  # vGPU profiles offered; None: the template's
    name: str = NEW_HOST_NAME  # {cluster} and {n} (1, 2, ... past the names in use)


@dataclass(frozen=True)
class RetireHosts:
    hosts: tuple[str, ...]  # names or shell patterns (fnmatch), each matching a host


@dataclass(frozen=True)
class MoveVm:
    vm: str
    host: str


@dataclass(frozen=True)
class SetProfile:
    vm: str
    profile: str


@dataclass(frozen=True)
class SetVgpuMode:
    mode: str  # one of VGPU_MODES
    cluster: str | None = None  # every vGPU-mode GPU of the cluster's hosts
    hosts: tuple[str, ...] = ()  # or of these hosts (names or patterns)
    gpu: str | None = None  # or only this GPU (a PCI id) of them


@dataclass(frozen=True)
class AddDrsRule:
    cluster: str
    name: str
    kind: str  # one of RULE_KINDS
    vms: tuple[str, ...]
    hosts: tuple[str, ...] = ()  # vm-host rules
    mandatory: bool = False
    affine: bool = True  # vm-host: must/should run on the hosts; False: must/should not


@dataclass(frozen=True)
class SetHa:
    cluster: str
    enabled: bool | None = None
    host_monitoring: bool | None = None
    admission_control: bool | None = None
    failover_level: int | None = None  # admission control by host failures (slots)
    restart_priority: str | None = None  # the cluster's default
    options: tuple[tuple[str, str], ...] = ()  # HA advanced options set


@dataclass(frozen=True)
class SetDrs:
    cluster: str
    enabled: bool | None = None
    automation: str | None = None  # one of DRS_AUTOMATION
    options: tuple[tuple[str, str], ...] = ()  # DRS advanced options set


Change = AddHosts | RetireHosts | MoveVm | SetProfile | SetVgpuMode | AddDrsRule | SetHa | SetDrs


class ChangeError(ValueError):
    """A change that cannot be applied: ``index`` is its place in the list, ``field`` the
    key whose value is wrong."""

    def __init__(self, index: int, key: str, message: str) -> None:
        self.index = index
        self.key = key
        self.message = message
        super().__init__(f"change {index + 1}: {key}: {message}")


@dataclass
class Applied:
    inventory: Inventory
    notes: list[str] = field(default_factory=list)


def apply(
    inventory: Inventory,
    changes: Sequence[Change],
    policy: Policy | None = None,
    today: date | None = None,
) -> Applied:
    """A copy of ``inventory`` with ``changes`` applied in order; raises ChangeError."""
    out = Applied(copy.deepcopy(inventory))
    for index, change in enumerate(changes):
        step = _Step(out, index, policy or Policy.default(), today)
        _APPLY[type(change)](step, change)
    return out


class _Step:
    def __init__(self, applied: Applied, index: int, policy: Policy, today: date | None) -> None:
        self.applied = applied
        self.inv = applied.inventory
        self.index = index
        self.policy = policy
        self.today = today or datetime.now(UTC).date()

    def error(self, key: str, message: str) -> ChangeError:
        return ChangeError(self.index, key, message)

    def cluster(self, name: str, key: str = "cluster") -> Cluster:
        found = self.inv.cluster(name)
        if found is None:
            raise self.error(key, f"no cluster {name!r}")
        return found

    def host(self, name: str, key: str) -> Host:
        found = self.inv.host(name)
        if found is None:
            raise self.error(key, f"no host {name!r}")
        return found

    def vm(self, name: str, key: str = "vm") -> Vm:
        found = next((v for v in self.inv.vms if v.name == name), None)
        if found is None:
            raise self.error(key, f"no VM {name!r}")
        return found

    def hosts(self, patterns: Sequence[str], key: str = "hosts") -> list[Host]:
        """The hosts the names or patterns match, each pattern matching at least one."""
        chosen: dict[str, Host] = {}
        for pattern in patterns:
            hits = [h for h in self.inv.hosts if fnmatch.fnmatchcase(h.name, pattern)]
            if not hits:
                raise self.error(key, f"no host matches {pattern!r}")
            chosen.update((h.name, h) for h in hits)
        return list(chosen.values())

    def note(self, text: str) -> None:
        self.applied.notes.append(f"change {self.index + 1}: {text}")


# Adding hosts


def _add_hosts(step: _Step, change: AddHosts) -> None:
    cluster = step.cluster(change.cluster)
    template = _template(step, change)
    taken = {h.name for h in step.inv.hosts}
    n = 0
    for _ in range(change.count):
        n += 1
        name = change.name.format(cluster=cluster.name, n=n)
        while name in taken and "{n}" in change.name:
            n += 1
            name = change.name.format(cluster=cluster.name, n=n)
        if name in taken:
            raise step.error("name", f"a host named {name!r} is already in the inventory")
        taken.add(name)
        host = _new_host(step, change, template, name, cluster.name)
        step.inv.hosts.append(host)
        _mount_like(step.inv, template, host)
        if template is not None:  # what could not be read of it is not known of its copy
            step.inv.gaps += [
                dataclasses.replace(g, object=name, moref=host.moref)
                for g in step.inv.gaps
                if g.object == template.name
            ]
        step.note(f"added {name} to {cluster.name}, {_described(host)}")


def _template(step: _Step, change: AddHosts) -> Host | None:
    """The host the new ones copy: ``like``, else one with a GPU of the model (the
    cluster's first), else the cluster's first host (its GPUs are then replaced)."""
    if change.like is not None:
        return step.host(change.like, "like")
    if change.gpu_model is not None:
        wanted = change.gpu_model.lower()
        same = [h for h in step.inv.hosts if any(g.model.lower() == wanted for g in h.gpus)]
        same.sort(key=lambda h: h.cluster != change.cluster)  # the cluster's own first
        if same:
            return same[0]
    return next(iter(step.inv.hosts_in(change.cluster)), None)


def _new_host(
    step: _Step, change: AddHosts, template: Host | None, name: str, cluster: str
) -> Host:
    host = copy.deepcopy(template) if template is not None else Host(name=name, moref="")
    host.name, host.cluster = name, cluster
    host.moref = f"host-whatif-{len(step.inv.hosts) + 1}"
    host.connection_state, host.in_maintenance = "connected", False
    host.telemetry, host.config_issues, host.ha_state = None, [], None
    for n in host.vmotion_nics:
        n.ip = ""  # an address of its own, unknown
    for p in host.vgpu_profiles:
        if p.capacity is not None:  # a new host runs nothing: all of its capacity remains
            p.capacity.consumed, p.capacity.unused_reservation = 0, 0
            p.capacity.remaining = p.capacity.max
    gpus = _gpus(step, change, host)
    count = change.gpus if change.gpus is not None else len(gpus)
    host.gpus = [_gpu_copy(gpus, i) for i in range(count)] if gpus else []
    if count and not gpus:
        raise step.error("gpu_model", "give the GPU model of the new hosts' GPUs")
    if change.memory_gb is not None:
        host.memory_mb = change.memory_gb * 1024
    if change.vgpu_mode is not None:
        for g in host.gpus:
            g.vgpu_mode = change.vgpu_mode
    if change.profiles is not None:
        host.vgpu_profiles = _profiles(step, change.profiles)
    return host


def _gpus(step: _Step, change: AddHosts, host: Host) -> list[Gpu]:
    """The GPUs the new host copies: the template's of the model, else one made from the
    catalogue's entry (or, for a model it does not know, an unknown one)."""
    if change.gpu_model is None:
        return host.gpus
    wanted = change.gpu_model.lower()
    same = [g for g in host.gpus if g.model.lower() == wanted]
    if same:
        return same
    return [_catalogue_gpu(change)]


def _catalogue_gpu(change: AddHosts) -> Gpu:
    assert change.gpu_model is not None
    wanted = change.gpu_model.lower()
    found = next(((key, m) for key, m in catalog.MODELS.items() if m.name.lower() == wanted), None)
    vgpu = bool(change.profiles) or change.vgpu_mode is not None
    gpu = Gpu(
        pci_id="",
        vendor_id=found[0][0] if found else 0,
        device_id=found[0][1] if found else 0,
        vendor_name=catalog.GPU_VENDORS.get(found[0][0], "") if found else "",
        device_name=change.gpu_model,
        model=found[1].name if found else change.gpu_model,
        known_model=found is not None,
        memory_mb=found[1].memory_mb if found else 0,
        passthrough_capable=True,
        passthrough_enabled=not vgpu,
        passthrough_active=not vgpu,
        graphics_type="sharedDirect" if vgpu else "direct",
        vgpu_mode=change.vgpu_mode if vgpu else None,
    )
    if found and vgpu and catalog.vgpu_needs_sriov(found[1]):
        # The board backs each vGPU with a virtual function: a host set up for vGPU has
        # them enabled (the count stays unknown).
        gpu.sriov_capable, gpu.sriov_enabled, gpu.sriov_active = True, True, True
    return gpu


def _gpu_copy(gpus: list[Gpu], index: int) -> Gpu:
    """The index-th GPU of a new host: the template's at that place, in its slot."""
    out = copy.deepcopy(gpus[index % len(gpus)])
    if index >= len(gpus) or not out.pci_id:  # a slot the template does not fill
        out.pci_id = f"0000:{0x3B + index * 0x20:02x}:00.0"
    out.vms, out.telemetry, out.virtual_functions = [], None, []
    return out


def _profiles(step: _Step, names: Sequence[str]) -> list[VgpuProfile]:
    """The profiles offered, each as the inventory describes it where a host offers it."""
    known = {p.name.lower(): p for h in step.inv.hosts for p in h.vgpu_profiles}
    out = []
    for name in names:
        p = copy.deepcopy(known.get(name.lower()))
        if p is None:
            p = VgpuProfile(name)
        p.capacity = None  # vCenter has not counted a host it does not have
        out.append(p)
    return out


def _mount_like(inv: Inventory, template: Host | None, host: Host) -> None:
    """The new host mounts the shared datastores the template mounts, with its paths."""
    if template is None:
        return
    for ds in inv.datastores:
        if ds.local:
            continue
        for mount in list(ds.mounts):
            if mount.host == template.name:
                ds.mounts.append(DatastoreMount(host.name, mount.mounted, mount.accessible))
                ds.mounts[-1].paths = copy.deepcopy(mount.paths)


def _described(host: Host) -> str:
    models = sorted({g.model for g in host.gpus})
    gpus = f"{len(host.gpus)} x {', '.join(models)}" if host.gpus else "no GPU"
    return f"{gpus}, {host.memory_mb // 1024} GB"


# Retiring hosts


def _retire_hosts(step: _Step, change: RetireHosts) -> None:
    for name in [h.name for h in step.hosts(change.hosts)]:
        _evacuate(step, step.host(name, "hosts"))
        host = step.host(name, "hosts")  # evacuating may have copied the inventory
        step.inv.hosts.remove(host)
        for ds in step.inv.datastores:
            ds.mounts = [m for m in ds.mounts if m.host != host.name]
        for c in step.inv.clusters:
            for rule in c.vm_host_rules:
                rule.hosts = [h for h in rule.hosts if h != host.name]
            failover = c.admission_control.failover_hosts
            c.admission_control.failover_hosts = [h for h in failover if h != host.name]
        step.note(f"retired {host.name}")


def _evacuate(step: _Step, host: Host) -> None:
    """The host's powered-on GPU VMs go where maintenance mode sends them (gpuaudit.plan.
    maintenance); those it powers off or leaves blocking are powered off. Its other VMs
    leave with it: the audit is of GPU VMs."""
    cluster = step.inv.cluster(host.cluster or "")
    moves: dict[str, tuple[str, tuple[str, ...]]] = {}
    stopped: list[tuple[str, str]] = []
    if cluster is not None and host.connected and not host.in_maintenance:
        ctx = Context(facts=Facts(step.inv), policy=step.policy, simulations={}, today=step.today)
        for h in readiness(ctx, cluster, only={host.name}).hosts:
            for fate in h.vms:
                if fate.fate == MOVED and fate.to_host:
                    gpus = tuple(p.strip() for p in (fate.to_gpu or "").split(",") if p.strip())
                    moves[fate.vm] = (fate.to_host, gpus)
                else:
                    stopped.append((fate.vm, fate.reason))
    if moves:
        step.inv = step.applied.inventory = _moved(step.inv, moves)
    for vm_name, target in sorted(moves.items()):
        step.note(f"{vm_name} moves from {host.name} to {target[0]}")
    for vm_name, reason in stopped:
        step.note(f"{vm_name} is powered off: {reason}")
    for vm in step.inv.vms:
        if vm.host == host.name:  # the moved ones run elsewhere now
            vm.power_state, vm.host = "poweredOff", None


# VMs


def _move_vm(step: _Step, change: MoveVm) -> None:
    vm = step.vm(change.vm)
    target = step.host(change.host, "host")
    if target.cluster is None or step.inv.cluster(target.cluster) is None:
        raise step.error("host", f"{target.name} is in no cluster")
    old = step.inv.host(vm.host or "")
    seats: list[str] = []
    for att in vm.gpus:
        gpu = _seat(target, att.kind, _gpu_of(old, vm.name), seats)
        if gpu is None:
            raise step.error("host", f"no GPU of {target.name} takes {vm.name}'s {att.kind} device")
        seats.append(gpu.pci_id)
        if att.kind in ("passthrough", "dynamic"):
            att.pci_id = gpu.pci_id
    for h in step.inv.hosts:
        for g in h.gpus:
            if vm.name in g.vms:
                g.vms.remove(vm.name)
    if vm.powered_on:
        for g in target.gpus:
            if g.pci_id in seats:
                g.vms.append(vm.name)
    vm.host, vm.cluster = target.name, target.cluster


def _gpu_of(host: Host | None, vm: str) -> Gpu | None:
    return next((g for g in host.gpus if vm in g.vms), None) if host is not None else None


def _seat(host: Host, kind: str, was: Gpu | None, taken: list[str]) -> Gpu | None:
    """The GPU of ``host`` a moved device takes: for a vGPU, the vGPU-mode GPU of the
    model it ran on with the fewest VMs; for a DirectPath device, an idle GPU in
    passthrough of its model."""

    def same(g: Gpu) -> bool:
        return was is None or (g.vendor_id, g.device_id) == (was.vendor_id, was.device_id)

    if kind == "vgpu":
        fit = [g for g in host.gpus if g.graphics_type == "sharedDirect" and same(g)]
        return min(fit, key=lambda g: len(g.vms), default=None)
    idle = [g for g in host.gpus if g.passthrough_active and not g.vms and same(g)]
    return next((g for g in idle if g.pci_id not in taken), None)


def _set_profile(step: _Step, change: SetProfile) -> None:
    vm = step.vm(change.vm)
    devices = [a for a in vm.gpus if a.kind == "vgpu"]
    if not devices:
        raise step.error("vm", f"{vm.name} has no vGPU")
    offered = {
        p.name.lower(): p for h in step.inv.hosts if h.name == vm.host for p in h.vgpu_profiles
    }
    for att in devices:
        att.profile = change.profile
        described = offered.get(change.profile.lower())
        att.migrate_supported = described.migrate_supported if described else None
        att.migrate_data_mb = None


# GPUs, DRS and HA


def _set_vgpu_mode(step: _Step, change: SetVgpuMode) -> None:
    if change.cluster is not None:
        step.cluster(change.cluster)
        hosts = step.inv.hosts_in(change.cluster)
    else:
        hosts = step.hosts(change.hosts)
    gpus = [g for h in hosts for g in h.gpus if g.graphics_type == "sharedDirect"]
    if change.gpu is not None:
        gpus = [g for g in gpus if g.pci_id == change.gpu]
        if not gpus:
            raise step.error("gpu", f"no GPU {change.gpu} in vGPU mode on those hosts")
    if not gpus:
        raise step.error("cluster" if change.cluster else "hosts", "no GPU there is in vGPU mode")
    for g in gpus:
        g.vgpu_mode = change.mode


def _add_drs_rule(step: _Step, change: AddDrsRule) -> None:
    cluster = step.cluster(change.cluster)
    names = {r.name for r in cluster.vm_host_rules} | {r.name for r in cluster.vm_vm_rules}
    if change.name in names:
        raise step.error("name", f"{cluster.name} already has a rule {change.name!r}")
    for vm_name in change.vms:
        vm = step.vm(vm_name, "vms")
        if vm.cluster != cluster.name:
            raise step.error("vms", f"{vm_name} is not in {cluster.name}")
    if change.kind == "vm-host":
        hosts = step.hosts(change.hosts)
        outside = [h.name for h in hosts if h.cluster != cluster.name]
        if outside:
            raise step.error("hosts", f"{outside[0]} is not in {cluster.name}")
        cluster.vm_host_rules.append(
            VmHostRule(
                change.name,
                mandatory=change.mandatory,
                affine=change.affine,
                vm_group=f"{change.name}-vms",
                host_group=f"{change.name}-hosts",
                vms=list(change.vms),
                hosts=[h.name for h in hosts],
            )
        )
        return
    if len(change.vms) < 2:
        raise step.error("vms", f"an {change.kind} rule names two VMs or more")
    cluster.vm_vm_rules.append(
        VmVmRule(
            change.name,
            affinity=change.kind == "affinity",
            mandatory=change.mandatory,
            vms=list(change.vms),
        )
    )


def _set_ha(step: _Step, change: SetHa) -> None:
    cluster = step.cluster(change.cluster)
    if change.enabled is not None:
        cluster.ha_enabled = change.enabled
    if change.host_monitoring is not None:
        cluster.ha_host_monitoring = change.host_monitoring
    if change.admission_control is not None:
        cluster.admission_control.enabled = change.admission_control
    if change.failover_level is not None:
        cluster.admission_control = AdmissionControl(
            enabled=True, policy="slots", failover_level=change.failover_level
        )
    if change.restart_priority is not None:
        cluster.default_restart_priority = change.restart_priority
    cluster.ha_options.update(dict(change.options))


def _set_drs(step: _Step, change: SetDrs) -> None:
    cluster = step.cluster(change.cluster)
    if change.enabled is not None:
        cluster.drs_enabled = change.enabled
    if change.automation is not None:
        cluster.drs_automation = change.automation
    cluster.drs_options.update(dict(change.options))


_APPLY: dict[type, Callable[[_Step, Change], None]] = {
    AddHosts: _add_hosts,  # type: ignore[dict-item]
    RetireHosts: _retire_hosts,  # type: ignore[dict-item]
    MoveVm: _move_vm,  # type: ignore[dict-item]
    SetProfile: _set_profile,  # type: ignore[dict-item]
    SetVgpuMode: _set_vgpu_mode,  # type: ignore[dict-item]
    AddDrsRule: _add_drs_rule,  # type: ignore[dict-item]
    SetHa: _set_ha,  # type: ignore[dict-item]
    SetDrs: _set_drs,  # type: ignore[dict-item]
}


# Before and after


def compare(
    before: AuditResult, after: AuditResult, changes: Sequence[str] = (), notes: Sequence[str] = ()
) -> PlanComparison:
    """The two audits side by side, cluster by cluster, and the findings that differ."""
    names = list(
        dict.fromkeys(
            [s.cluster for s in before.simulations] + [s.cluster for s in after.simulations]
        )
    )
    return PlanComparison(
        changes=list(changes),
        notes=list(notes),
        clusters=[_cluster(before, after, name) for name in names],
        appeared=_open_only(after, before),
        gone=_open_only(before, after),
    )


def _cluster(before: AuditResult, after: AuditResult, name: str) -> ClusterPlan:
    out = ClusterPlan(name)
    out.hosts_before, out.hosts_after = _hosts(before, name), _hosts(after, name)
    out.tolerates_before, out.unproven_before = _tolerates(before, name)
    out.tolerates_after, out.unproven_after = _tolerates(after, name)
    out.downtime_hosts_before = _downtime_hosts(before, name)
    out.downtime_hosts_after = _downtime_hosts(after, name)
    out.rolling_downtime_before = _rolling(before, name)
    out.rolling_downtime_after = _rolling(after, name)
    was, now = _headroom(before, name), _headroom(after, name)
    for key in sorted(set(was) | set(now)):
        b, a = was.get(key), now.get(key)
        out.headroom.append(
            HeadroomChange(
                key[0],
                key[1],
                b[0] if b else None,
                a[0] if a else None,
                b[1] if b else None,
                a[1] if a else None,
                b[2] if b else "",
                a[2] if a else "",
            )
        )
    return out


def _hosts(result: AuditResult, cluster: str) -> int | None:
    return next((s.hosts for s in result.simulations if s.cluster == cluster), None)


def _tolerates(result: AuditResult, cluster: str) -> tuple[int | None, int | None]:
    sim = next((s for s in result.simulations if s.cluster == cluster), None)
    return (None, None) if sim is None else (sim.tolerates, sim.tolerates_unproven)


def _downtime_hosts(result: AuditResult, cluster: str) -> list[str] | None:
    found = next((m for m in result.maintenance if m.cluster == cluster), None)
    return None if found is None else [h.host for h in found.hosts if h.downtime]


def _rolling(result: AuditResult, cluster: str) -> int | None:
    return next((r.downtime for r in result.rolling if r.cluster == cluster), None)


def _headroom(result: AuditResult, cluster: str) -> dict[tuple[str, str], tuple[int, int, str]]:
    found = next((h for h in result.headroom if h.cluster == cluster), None)
    rows = found.rows if found is not None else []
    return {(r.gpu_model, r.profile): (r.fits_now, r.fits_nk, r.not_proven) for r in rows}


def _open(result: AuditResult) -> dict[tuple[str, str], Finding]:
    """The findings that fail or are not proven, by rule and object (notices included)."""
    return {(f.rule, f.object): f for f in result.findings if f.status in ("fail", "unproven")}


def known_before(before: AuditResult, after: AuditResult) -> set[tuple[str, str]]:
    """The (rule, object) pairs open before the changes that ``gpuaudit plan --fail-on``
    holds against no change: all but those the changes make worse, failed after where
    they were only not proven, or of a worse severity. An open finding of the after not
    among them is one the changes introduce or make worse (as a baseline's new one)."""
    now = _open(after)
    return {key for key, was in _open(before).items() if not _worse(now.get(key), was)}


def _worse(now: Finding | None, was: Finding) -> bool:
    if now is None:
        return False
    if now.failed and not was.failed:
        return True
    return severity_rank(now.severity) < severity_rank(was.severity)


def _open_only(one: AuditResult, other: AuditResult) -> list[FindingChange]:
    """The findings open in ``one`` and not open (or open with another status or
    severity) in ``other``."""
    theirs = _open(other)
    out = []
    for key, f in _open(one).items():
        if key in theirs and (theirs[key].status, theirs[key].severity) == (f.status, f.severity):
            continue
        out.append(FindingChange(f.rule, f.object, f.severity, f.status, f.message))
    return sorted(out, key=lambda c: (c.rule, c.object))
