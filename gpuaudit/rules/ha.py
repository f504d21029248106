"""vSphere HA rules: is a failed host's GPU work restarted, and is there room for it?"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuaudit.inventory import Cluster, Vm
from gpuaudit.model import facts as F
from gpuaudit.results import Severity
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.design import classify_all
from gpuaudit.rules.registry import Context, Outcome, Verdict, not_proven, rule

if TYPE_CHECKING:
    from gpuaudit.simulation.failures import Simulated

_HA_QUOTE = (
    "vSphere HA restarts a failed host's VMs on other hosts: recovery is a restart, fast and "
    "predictable, never zero downtime (vSphere Availability guide)."
)

_HOW_HA_WORKS = (
    "vSphere Availability 8.0: How vSphere HA Works",
    "https://docs.vmware.com/en/VMware-vSphere/8.0/vsphere-availability/"
    "GUID-33A65FF7-DA22-4DC5-8B18-5A7F97CCA536.html",
)
# The sources of the rules' guidance, title and URL, to become each rule's references.
REFERENCES = {
    "HA-01": [_HOW_HA_WORKS],
    "HA-03": [_HOW_HA_WORKS],
    "HA-04": [_HOW_HA_WORKS],
    "HA-05": [_HOW_HA_WORKS],
    "HA-06": [_HOW_HA_WORKS],
    "HA-08": [_HOW_HA_WORKS],
}

# Appended to the rationale of the rules that grade their failures by design intent.
_INTENT_NOTE = (
    "Where the policy declares that VMware HA is not relied on (its intent says "
    "vm_ha_mandated: false for the cluster), a failure is information, with that reason in "
    "its message. A cluster that only looks like reference design A or C (the application "
    "layer restarts the work) is not a declaration: the failure says so and how to declare "
    "it, and stays at least medium, since the very facts that make the rule fail also make "
    "the cluster look like A or C."
)
# What a failure on an inferred design says about the policy that would grade it.
DECLARE = (
    "if that is the intent, declare it in the policy (clusters: {cluster}: intent: "
    "vm_ha_mandated: false) and this becomes information"
)
INFERRED_SEVERITY: Severity = "medium"  # the lowest an inferred design grades a failure to


@dataclass(frozen=True)
class NotReliedOn:
    """Why VMware HA is not relied on for a cluster, and whether the policy says so."""

    reason: str
    declared: bool
    cluster: str = ""

    def grade(self, message: str, evidence: dict[str, Any]) -> tuple[str, dict[str, Any], Severity]:
        """A failure's message, evidence and severity under this reason: information when
        declared; at most medium, with how to declare it, when only observed."""
        evidence = evidence | {"ha_not_relied_on": self.reason, "intent_declared": self.declared}
        if self.declared:
            return f"{self.reason}; {message}", evidence, "info"
        declare = DECLARE.format(cluster=self.cluster)
        return f"{message} ({self.reason}; {declare})", evidence, INFERRED_SEVERITY


def ha_not_relied_on(ctx: Context, cluster: str | None) -> NotReliedOn | None:
    """Why VMware HA is not relied on for a cluster, or None when it is. A declared
    intent (docs/policy.md) wins over the observed design (DS-01)."""
    declared = ctx.policy.ha_mandate_declared(cluster)
    if declared is not None:
        return None if declared else NotReliedOn("intent: VMware HA is not mandated", True)
    designs = ctx.once("ha.designs", lambda: classify_all(ctx.facts))
    design = designs.get(cluster) if cluster is not None else None
    if design in ("A", "C"):
        reason = f"design {design} observed: VMware HA may not be relied on"
        return NotReliedOn(reason, False, cluster or "")
    return None


def _graded(ctx: Context, cluster: str | None, outcome: Outcome) -> Outcome:
    """A failure where VMware HA is not relied on, graded by whether that is declared."""
    why = None if outcome.passed else ha_not_relied_on(ctx, cluster)
    if why is None:
        return outcome
    message, evidence, severity = why.grade(outcome.message, outcome.evidence)
    return Outcome(False, message, evidence, severity=severity)


def ha_enabled(ctx: Context, cluster: Cluster) -> Outcome:
    evidence = {
        "ha_enabled": cluster.ha_enabled,
        "host_monitoring": cluster.ha_host_monitoring,
        "gpu_vms": len(ctx.facts.cluster_gpu_vms(cluster.name)),
    }
    if not cluster.ha_enabled:
        message = "vSphere HA is off: GPU VMs of a failed host are not restarted"
    elif not cluster.ha_host_monitoring:
        message = "host monitoring is disabled: HA does not react to a host failure"
    else:
        message = "vSphere HA is on with host monitoring"
    outcome = Outcome(cluster.ha_enabled and cluster.ha_host_monitoring, message, evidence)
    return _graded(ctx, cluster.name, outcome)


rule(
    id="HA-01",
    title="vSphere HA is off, or host monitoring is disabled, on a cluster with GPU VMs",
    category="ha",
    severity="high",
    scope=scopes.CLUSTERS_WITH_GPU_VMS,
    rationale=f"""{_HA_QUOTE} With HA off, or host monitoring disabled, nothing restarts the
        GPU VMs of a failed host: they stay down until someone acts. {_INTENT_NOTE}""",
    remediation="""Enable vSphere HA with host monitoring on the cluster, or declare in the policy
        that VMware HA is not mandated for clusters whose applications restart elsewhere on their
        own (Kubernetes).""",
    references=(sources.HA_HOW_IT_WORKS, sources.HA_CLUSTER, *REFERENCES["HA-01"]),
)(ha_enabled)


def admission_control(ctx: Context, cluster: Cluster) -> Outcome | None:
    if not cluster.ha_enabled:
        return None  # HA-01 covers it
    ac = cluster.admission_control
    evidence = {
        "enabled": ac.enabled,
        "policy": ac.policy,
        "failover_level": ac.failover_level,
        "cpu_percent": ac.cpu_percent,
        "memory_percent": ac.memory_percent,
        "failover_hosts": ac.failover_hosts,
    }
    message = (
        f"admission control is on ({ac.policy or 'policy unknown'}); it reserves CPU and "
        "memory, not GPUs"
        if ac.enabled
        else "admission control is off: restarts may find no CPU or memory"
    )
    return Outcome(ac.enabled, message, evidence)


rule(
    id="HA-02",
    title="HA admission control is off on a cluster with GPU VMs",
    category="ha",
    severity="medium",
    scope=scopes.CLUSTERS_WITH_GPU_VMS,
    rationale="""Without admission control, vSphere lets the cluster fill up until a host failure
        leaves no CPU and memory to restart on. Admission control counts CPU and memory only, never
        GPUs, so it is necessary but not sufficient: see HA-05 and HA-06 for GPU capacity.""",
    remediation="""Enable admission control (cluster resource percentage or dedicated failover
        hosts) sized for at least one host failure.""",
    references=(sources.HA_ADMISSION_CONTROL, sources.API_DAS_CONFIG),
)(admission_control)


def shared_files(ctx: Context, vm: Vm) -> Outcome | None:
    f = ctx.facts
    cluster = f.vm_cluster(vm)
    if cluster is None:
        return None
    connected = f.connected_host_names(cluster)
    others = connected - {vm.host} if vm.host in connected else connected
    pinned = [ds for ds in vm.datastores if others.isdisjoint(f.accessible_from(ds))]
    # The count, not the names: the cluster's hosts would repeat for every VM.
    evidence = {"datastores": vm.datastores, "pinned": pinned, "other_hosts_count": len(others)}
    if pinned:
        message = f"no other host of {cluster} can access {', '.join(pinned)}: HA cannot restart it"
    else:
        message = "every datastore of the VM is accessible from another host of the cluster"
    return _graded(ctx, cluster, Outcome(not pinned, message, evidence))


rule(
    id="HA-03",
    title="A GPU VM has a file on a datastore that no other host of its cluster can access",
    category="ha",
    severity="high",
    scope=scopes.GPU_VMS,
    rationale=f"""A VM's disks must be reachable from every host of the cluster. vSphere HA can
        restart a VM only on a host that mounts and can access all of its datastores; a file on
        local or unshared storage pins the VM to its host. {_INTENT_NOTE}""",
    remediation="""Move the VM's files to shared storage (SAN, NFS or vSAN) mounted on every host of
        the cluster, or rely on application-level HA for this VM and waive the rule.""",
    references=(sources.HA_CLUSTER, sources.HA_HOW_IT_WORKS, *REFERENCES["HA-03"]),
)(shared_files)


def fixed_passthrough(ctx: Context, vm: Vm) -> Outcome | None:
    if ctx.facts.inventory.vcenter.standalone_esxi:
        return None  # no vMotion and no HA without a vCenter, whatever the device
    devices = [a.pci_id for a in vm.gpus if a.kind == "passthrough"]
    if devices:
        message = (
            f"fixed DirectPath I/O ({', '.join(str(d) for d in devices)}): no vMotion, no HA "
            "restart on another host; use Dynamic DirectPath or application-level HA"
        )
    else:
        message = "no fixed DirectPath I/O device"
    evidence = {"kinds": sorted(F.kinds(vm)), "fixed_devices": devices}
    return _graded(ctx, ctx.facts.vm_cluster(vm), Outcome(not devices, message, evidence))


rule(
    id="HA-04",
    title="A GPU VM uses fixed DirectPath I/O passthrough",
    category="ha",
    severity="medium",
    scope=scopes.GPU_VMS,
    rationale=f"""PCI passthrough has no automatic GPU failover: a restart elsewhere needs the
        GPU rebound by hand, and vMotion is not supported (vSphere DirectPath I/O docs). A fixed
        DirectPath device is bound to one host's PCI address, so the VM can neither vMotion nor
        be restarted by HA on another host. {_INTENT_NOTE}""",
    remediation="""Use Dynamic DirectPath I/O (vSphere 7+, allowed vendor/device ids) so the VM can
        start on any host with a free matching GPU, or make the application highly available
        (Kubernetes reschedules it on another GPU node) and waive the rule.""",
    references=(
        sources.DIRECTPATH_IO,
        sources.PCI_DEVICES_7,
        sources.ASSIGNABLE_HARDWARE,
        *REFERENCES["HA-04"],
    ),
)(fixed_passthrough)


def _graded_verdicts(ctx: Context, verdicts: Iterable[Verdict]) -> Iterator[Verdict]:
    """The verdicts of a rule that compares objects, each graded as :func:`_graded`."""
    for v in verdicts:
        why = None if v.passed else ha_not_relied_on(ctx, v.cluster)
        if why is None:
            yield v
        else:
            message, evidence, severity = why.grade(v.message, v.evidence)
            yield dataclasses.replace(v, message=message, evidence=evidence, severity=severity)


def restart_room(ctx: Context) -> Iterator[Verdict]:
    return _graded_verdicts(ctx, _restart_room(ctx))


rule(
    id="HA-05",
    title="After the loss of its host, a powered-on GPU VM has nowhere to restart",
    category="ha",
    severity="high",
    object_kind="vm",
    rationale=f"""HA restarts a VM only where a GPU can take it: the same vGPU profile on the same
        GPU model with room left, a free matching GPU for Dynamic DirectPath, and access to all its
        datastores. The host-failure simulation fails each host in turn and places its GPU VMs in
        restart-priority order. ESXi, not HA, picks the GPU on the target host, by the host's
        shared passthrough assignment policy: "performance" takes the GPU with the fewest VMs,
        "consolidation" packs like VMs onto a GPU until it is full. Spreading locks empty GPUs
        to the first profile that lands on them, so a VM can find no GPU although a different
        choice would have left room: such a VM is reported as restartable only with manual
        placement. Any other VM reported here has no valid placement (or, when stated, none
        was found within the search limit). A placement needs the target host's memory too: GPU
        VMs reserve all their memory. A VM whose restart priority is disabled, or on a cluster
        where HA is off or host monitoring is disabled, is not restarted at all: it is reported
        as such. How many vGPUs share a GPU is NVIDIA's published figure for the type (its
        maximum per GPU, its mixed-size placements, its MIG geometry), never frame buffer
        arithmetic; a restart that rests on a figure NVIDIA does not publish, or on where ESXi
        placed the vGPUs already running, is not proven, never a pass. On vSphere 9.0 vCenter
        counts the vGPUs of each profile a host still takes (DirectPathProfileManager
        QueryCapacity, remaining): a restart never takes more than that, and where NVIDIA's
        figures decide nothing, the count does. A VM whose GPUs form a vendor device group
        (vSphere 8.0.0.1: devices allocated to a VM as a unit, such as GPUs an NVLink connects)
        restarts only on a host that offers a device group of that name, on GPUs the host
        links. No API reports which GPUs those are, so the restart is proven only where NVIDIA
        puts every GPU of the host on one NVSwitch fabric (the HGX baseboards), or where the
        group takes every GPU of the host and all are free; elsewhere (an NVLink bridge between
        some of a host's GPUs) it is not proven. {_INTENT_NOTE}""",
    remediation="""Keep spare GPU capacity of the same model and profile on other hosts (N+1),
        offer the profile (and the VM's device group) on more hosts, share the VM's datastores,
        or lower the priority of less important GPU VMs so this one is restarted first.""",
    references=(
        sources.HA_VM_RESPONSES,
        sources.PCI_DEVICES_7,
        sources.HA_ADMISSION_CONTROL,
        sources.API_ASSIGNMENT_POLICY,
        sources.DIRECTPATH_CAPACITY,
        sources.API_DEVICE_GROUPS,
        sources.NVIDIA_DEVICE_GROUPS,
        sources.NVIDIA_NVSWITCH,
        *REFERENCES["HA-05"],
    ),
)(restart_room)


def _restart_room(ctx: Context) -> Iterator[Verdict]:
    for name, simulated in ctx.simulations.items():
        if simulated.simulation.ha_restarts:
            yield from _restarts(name, simulated)
        else:
            yield from _no_restarts(name, simulated)
        for failure in simulated.simulation.failures:
            for p in failure.not_restarted:
                evidence = {"failed_host": failure.host, "restart_priority": p.restart_priority}
                message = (
                    f"HA restart disabled: not restarted if {failure.host} fails "
                    "(its restart priority is disabled)"
                )
                yield Verdict(p.vm, False, message, evidence, cluster=name, host=p.from_host)


def _restarts(name: str, simulated: Simulated) -> Iterator[Verdict]:
    for failure in simulated.simulation.failures:
        for p in failure.placed:
            evidence = {"failed_host": failure.host, "to_host": p.to_host, "to_gpu": p.to_gpu}
            evidence["restart_priority"] = p.restart_priority
            message = f"can restart on {p.to_host} ({p.to_gpu}) if {failure.host} fails"
            yield Verdict(p.vm, True, message, evidence, cluster=name, host=p.from_host)
        for p in failure.unplaced:
            evidence = {
                "failed_host": failure.host,
                "reason": p.reason,
                "restart_priority": p.restart_priority,
            }
            message = f"nowhere to restart if {failure.host} fails: {p.reason}"
            yield Verdict(p.vm, False, message, evidence, cluster=name, host=p.from_host)
        for p in failure.manual_only:
            evidence = {
                "failed_host": failure.host,
                "reason": p.reason,
                "restart_priority": p.restart_priority,
                "manual_restart_host": p.to_host,
                "manual_restart_gpu": p.to_gpu,
            }
            message = f"restartable only with manual placement if {failure.host} fails: {p.reason}"
            yield Verdict(p.vm, False, message, evidence, cluster=name, host=p.from_host)
        for p in failure.unproven:
            evidence = {"failed_host": failure.host, "restart_priority": p.restart_priority}
            message = (
                f"may restart if {failure.host} fails, only if facts NVIDIA does not publish "
                "or vCenter does not report allow it"
            )
            reason = (p.reason or "").removeprefix("restart not proven: ")
            yield Verdict(
                p.vm, True, message, evidence, cluster=name, host=p.from_host, unproven=reason
            )


def _no_restarts(name: str, simulated: Simulated) -> Iterator[Verdict]:
    """HA is off: nothing restarts; say where a manual restart would fit."""
    off = f"vSphere HA does not restart VMs on {name} (HA off or host monitoring disabled)"
    for failure in simulated.simulation.failures:
        for p in (*failure.placed, *failure.manual_only, *failure.unproven, *failure.unplaced):
            evidence: dict[str, Any] = {
                "failed_host": failure.host,
                "ha_restarts": False,
                "restart_priority": p.restart_priority,
            }
            if p.to_host is not None:
                evidence |= {"manual_restart_host": p.to_host, "manual_restart_gpu": p.to_gpu}
                manual = f"manual restart would fit on {p.to_host} ({p.to_gpu})"
            else:
                evidence["reason"] = p.reason
                manual = f"no room for a manual restart either: {p.reason}"
            message = f"{off}: not restarted if {failure.host} fails; {manual}"
            yield Verdict(p.vm, False, message, evidence, cluster=name, host=p.from_host)


def n_plus_one(ctx: Context, cluster: Cluster) -> Outcome:
    f = ctx.facts
    per_host = {
        h.name: sum(1 for g in h.gpus if F.gpu_usable(g)) for h in f.active_hosts(cluster.name)
    }
    capacity = sum(per_host.values())
    largest = max(per_host.values(), default=0)
    limit = capacity - largest
    allocated = 0.0
    unknown: list[str] = []  # vGPU profiles of no known frame buffer
    for vm in f.cluster_gpu_vms(cluster.name):
        for a in vm.gpus if vm.powered_on else []:
            share = f.attachment_fraction(vm, a)
            if share is None:
                unknown.append(a.profile or "?")
            else:
                allocated += share
    allocated = round(allocated, 3)
    if unknown:
        return _allocation_unknown(allocated, sorted(set(unknown)), len(unknown), per_host)
    ok = allocated <= limit + 1e-9
    hosts = sum(1 for n in per_host.values() if n)
    evidence = {
        "allocated_gpus": allocated,
        "capacity_gpus": capacity,
        "gpu_hosts": hosts,
        "largest_host_gpus": largest,
        "limit_gpus": limit,
    }
    pct = f"{allocated / capacity:.0%}" if capacity else "n/a"
    if ok:
        message = (
            f"{allocated:g} of {capacity} GPUs allocated ({pct}): within N+1 ({limit}) with all "
            "GPU models pooled, a necessary condition only (HA-08 places each VM on its own "
            "model and profile)"
        )
    else:
        message = (
            f"{allocated:g} of {capacity} GPUs allocated ({pct}): above the N+1 limit of "
            f"{limit}, so the loss of the largest host cannot be absorbed even with all GPU "
            "models pooled"
        )
    return Outcome(ok, message, evidence)


def _allocation_unknown(
    known: float, profiles: list[str], count: int, per_host: dict[str, int]
) -> Outcome:
    """HA-06 where some vGPUs' frame buffer is unknown: each takes between nothing and a
    whole GPU, so the rule fails only when it fails even with nothing for them."""
    capacity = sum(per_host.values())
    limit = capacity - max(per_host.values(), default=0)
    most = round(known + count, 3)
    evidence = {
        "allocated_gpus": None,
        "allocated_gpus_known": known,
        "allocated_gpus_at_most": most,
        "unknown_profiles": profiles,
        "capacity_gpus": capacity,
        "gpu_hosts": sum(1 for n in per_host.values() if n),
        "largest_host_gpus": max(per_host.values(), default=0),
        "limit_gpus": limit,
    }
    names = ", ".join(profiles)
    span = f"{known:g} to {most:g} of {capacity} GPUs allocated"
    if known > limit + 1e-9:
        return Outcome(
            False,
            f"{span}: above the N+1 limit of {limit} even without the {count} vGPUs of "
            f"unknown size ({names})",
            evidence,
        )
    if most <= limit + 1e-9:
        return Outcome(
            True,
            f"{span}: within N+1 ({limit}) even if each of the {count} vGPUs of unknown size "
            f"({names}) took a whole GPU",
            evidence,
        )
    return not_proven(
        f"{span}: within N+1 ({limit}) only if the {count} vGPUs of unknown size ({names}) "
        "take little enough",
        f"no frame buffer known for {names}: neither vCenter nor the profile name gives one",
        evidence,
    )


rule(
    id="HA-06",
    title="GPU allocation is above (N-1)/N of the cluster's GPU capacity",
    category="ha",
    severity="medium",
    scope=scopes.CLUSTERS_WITH_GPU_VMS,
    rationale="""The N+1 capacity rule: if every GPU runs at 100%, no capacity is left to
        absorb a failed host, whatever the software. Allocation is counted in GPUs (a
        passthrough device is one GPU, a vGPU its frame buffer's share of the GPU); capacity is
        the usable GPUs of the connected hosts. The limit is capacity minus the largest host's
        GPUs, which is (N-1)/N of capacity when the hosts are alike. The count pools every GPU
        model and vGPU profile, so it is a necessary condition, not a sufficient one: a VM can
        restart only on a GPU of its own model with room for its profile. HA-08, which places
        each VM, decides whether the cluster survives the loss of a host.""",
    remediation="""Add a buffer node or spare GPUs, or move GPU VMs away until the largest host's
        load fits in the others' spare capacity; then check HA-08.""",
    references=(sources.HA_ADMISSION_CONTROL, sources.HA_VM_RESPONSES, *REFERENCES["HA-06"]),
)(n_plus_one)


def restart_priority(ctx: Context, vm: Vm) -> Outcome | None:
    if ctx.facts.vm_cluster(vm) is None:
        return None
    priority = ctx.facts.restart_priority(vm)
    ok = priority != "disabled"
    message = (
        f"restart priority {priority}" if ok else "restart priority disabled: HA never restarts it"
    )
    evidence = {"restart_priority": priority, "override": vm.restart_priority}
    return Outcome(ok, message, evidence)


rule(
    id="HA-07",
    title="A GPU VM's HA restart priority is disabled",
    category="ha",
    severity="medium",
    scope=scopes.GPU_VMS,
    rationale="""A VM whose restart priority is "disabled" is never restarted by vSphere HA,
        whatever the capacity.""",
    remediation="""Set the VM's restart priority (or the cluster default) to a value other than
        disabled; use the priority to order GPU VMs when capacity is short.""",
    references=(sources.HA_VM_RESPONSES, sources.API_RESTART_PRIORITY),
)(restart_priority)


def cluster_tolerance(ctx: Context) -> Iterator[Verdict]:
    return _graded_verdicts(ctx, _cluster_tolerance(ctx))


rule(
    id="HA-08",
    title="The cluster does not survive the loss of any one host with every GPU VM restarted",
    category="ha",
    severity="high",
    object_kind="cluster",
    rationale=f"""The cluster-level view of the host-failure simulation: N+k is the number of
        simultaneous host failures after which every powered-on GPU VM still has a valid
        placement, with each host picking the GPUs by its own assignment policy (a VM that fits
        only with manual placement counts as not restarted; the evidence's manual N+k counts
        any valid placement). GPU HA needs N+1 at least. k is checked up to 3; it is never claimed
        beyond what every combination of failures proves, nor beyond what NVIDIA's published
        figures prove (the k that rests on figures NVIDIA does not publish, or on which GPUs a
        host links for a VM's vendor device group, which no API reports, is not proven).
        Placements count host memory as well as GPUs. VMs whose restart priority is disabled
        are not counted (HA-05 lists them); on a cluster where HA is off or host monitoring is
        disabled nothing is restarted, so N+k is N+0 and the evidence gives the N+k of a manual
        restart. {_INTENT_NOTE}""",
    remediation="""See the worst host's unplaced VMs in the simulation and free or add the GPU
        capacity they need.""",
    references=(
        sources.HA_ADMISSION_CONTROL,
        sources.HA_HOW_IT_WORKS,
        sources.API_ASSIGNMENT_POLICY,
        *REFERENCES["HA-08"],
    ),
)(cluster_tolerance)


def _cluster_tolerance(ctx: Context) -> Iterator[Verdict]:
    for name, simulated in ctx.simulations.items():
        sim = simulated.simulation
        if not sim.gpu_vms:
            continue
        worst = next((x for x in sim.failures if x.host == sim.worst_host), None)
        lost = (*worst.unplaced, *worst.manual_only, *worst.unproven) if worst else ()
        unplaced = [p.vm for p in lost]
        evidence: dict[str, Any] = {
            "tolerates": sim.tolerates,
            "ha_restarts": sim.ha_restarts,
            "manual_tolerates": sim.manual_tolerates,
            "restart_disabled": sim.restart_disabled,
            "worst_host": sim.worst_host,
            "unplaced_at_worst": unplaced,
            "notes": simulated.notes,
        }
        restarted = sim.gpu_vms - len(sim.restart_disabled)
        if not sim.ha_restarts:
            message = (
                "vSphere HA is off or host monitoring is disabled: no GPU VM is restarted after "
                f"a host failure (N+0); a manual restart would absorb {sim.manual_tolerates} "
                "host failure(s)"
            )
        elif not restarted:
            message = (
                f"HA restarts none of the {sim.gpu_vms} powered-on GPU VM(s): restart priority "
                "disabled on all"
            )
        elif sim.tolerates >= 1:
            message = f"tolerates {sim.tolerates} simultaneous host failure(s) (N+{sim.tolerates})"
        else:
            message = (
                f"the loss of {sim.worst_host} leaves {len(unplaced)} GPU VM(s) with nowhere to "
                "restart (N+0)"
            )
            manual = len(worst.manual_only) if worst else 0
            if manual:
                message += (
                    f": {manual} of them restartable only with manual placement (manual "
                    f"N+{sim.manual_tolerates})"
                )
        if sim.restart_disabled and restarted:
            message += (
                f"; {len(sim.restart_disabled)} GPU VM(s) with HA restart disabled are not counted"
            )
        if sim.not_proven:
            evidence |= {"tolerates_unproven": sim.tolerates_unproven, "not_proven": sim.not_proven}
        ok = sim.ha_restarts and restarted > 0 and sim.tolerates >= 1
        unknown = ""
        if not ok and sim.ha_restarts and restarted and (sim.tolerates_unproven or 0) >= 1:
            # Only facts NVIDIA does not publish stand between the cluster and N+1.
            unknown = "; ".join(sim.not_proven)
            message = (
                f"N+{sim.tolerates} proven; up to N+{sim.tolerates_unproven} not proven: {unknown}"
            )
        yield Verdict(name, ok or bool(unknown), message, evidence, cluster=name, unproven=unknown)
