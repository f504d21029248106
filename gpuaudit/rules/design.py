"""Design rules: which reference design a cluster follows, and whether that fits its intent.

The reference designs:

- A: dedicated GPU nodes, PCI passthrough, local disks only; Kubernetes restarts the
  application elsewhere ("Recommended Default"). Its optional buffer node is a CPU node.
- B: VMware HA with SAN (shared datastore) and NVIDIA vGPU ("Enterprise Traditional").
- C: passthrough GPU nodes plus a buffer node that keeps a spare GPU: capacity-based HA.

Observed, that is:

- B: every GPU device is a vGPU, and every GPU VM datastore is shared in the cluster.
- C: every GPU device is passthrough (fixed or Dynamic DirectPath), and a host of the
  cluster runs no powered-on GPU VM but has a usable GPU: the spare. Design C needs
  no SAN; a shared datastore (which lets HA restart Dynamic DirectPath VMs on
  the spare) is reported in the evidence, not held against the classification.
- A: every GPU device is passthrough, no spare GPU, and no GPU VM file on shared
  storage. A CPU-only host counts as A's buffer node.
- other: anything else, e.g. passthrough on a SAN without a spare GPU (the decision
  flow's "PCI Passthrough + SAN"), vGPU on local disks, vGPU mixed with passthrough.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuaudit.inventory import Cluster
from gpuaudit.model import facts as F
from gpuaudit.model.policy import Intent
from gpuaudit.results import Severity, severity_rank
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.kubernetes import n_plus_one
from gpuaudit.rules.registry import Context, Outcome, rule

_PASSTHROUGH = {"passthrough", "dynamic"}
SCENARIOS = {
    "A": "Scenario A: dedicated passthrough GPU nodes on local disks",
    "B": "Scenario B: vGPU on shared storage (VMware HA with SAN)",
    "C": "Scenario C: passthrough GPU nodes plus a buffer node with a spare GPU",
}


@dataclass
class Design:
    """What a cluster's GPU design looks like, observed."""

    scenario: str
    summary: str
    gpu_vms: int = 0
    kinds: list[str] = field(default_factory=list)
    storage: str = "none"  # local, shared, mixed or none (of the GPU VMs' datastores)
    transports: list[str] = field(default_factory=list)
    san: bool = False  # a shared FC/FCoE/iSCSI datastore holds GPU VM files
    ha_enabled: bool = False
    gpu_hosts: list[str] = field(default_factory=list)
    buffer_hosts: list[str] = field(default_factory=list)  # run no powered-on GPU VM
    spare_gpu_hosts: list[str] = field(default_factory=list)  # buffer hosts with a usable GPU

    def evidence(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "gpu_vms": self.gpu_vms,
            "gpu_kinds": self.kinds,
            "storage": self.storage,
            "transports": self.transports,
            "san": self.san,
            "ha_enabled": self.ha_enabled,
            "gpu_hosts": self.gpu_hosts,
            "buffer_hosts": self.buffer_hosts,
            "spare_gpu_hosts": self.spare_gpu_hosts,
        }


def observe(f: F.Facts, cluster: str) -> Design:
    vms = f.cluster_gpu_vms(cluster)
    kinds = sorted({a.kind for vm in vms for a in vm.gpus})
    names = sorted({ds for vm in vms for ds in vm.datastores})
    shared = [ds for ds in names if f.shared_in_cluster(ds, cluster)]
    storage = "none" if not names else "shared" if len(shared) == len(names) else "local"
    if shared and len(shared) < len(names):
        storage = "mixed"
    transports = sorted({f.datastores[ds].transport for ds in names if ds in f.datastores})
    busy = {vm.host for vm in vms if vm.powered_on}
    active = f.active_hosts(cluster)
    design = Design(
        scenario="other",
        summary="",
        gpu_vms=len(vms),
        kinds=kinds,
        storage=storage,
        transports=transports,
        san=any(f.datastores[ds].transport in F.SAN_TRANSPORTS for ds in shared),
        ha_enabled=bool(f.clusters[cluster].ha_enabled) if cluster in f.clusters else False,
        gpu_hosts=[h.name for h in active if h.name in busy],
        buffer_hosts=[h.name for h in active if h.name not in busy],
        spare_gpu_hosts=[
            h.name for h in active if h.name not in busy and any(F.gpu_usable(g) for g in h.gpus)
        ],
    )
    design.scenario, design.summary = _classify(design)
    return design


def _classify(d: Design) -> tuple[str, str]:
    kinds = set(d.kinds)
    if not kinds:
        return "other", "no GPU VMs"
    local = d.storage in ("local", "none")
    if kinds <= _PASSTHROUGH and d.spare_gpu_hosts:
        return "C", SCENARIOS["C"]
    if kinds <= _PASSTHROUGH and local:
        return "A", SCENARIOS["A"]
    if kinds == {"vgpu"} and d.storage == "shared":
        return "B", SCENARIOS["B"]
    mode = (
        "vGPU and passthrough"
        if "vgpu" in kinds and kinds & _PASSTHROUGH
        else ("vGPU" if "vgpu" in kinds else "passthrough")
    )
    where = {"shared": "shared", "mixed": "partly shared", "local": "local", "none": "no"}
    return "other", f"{mode} on {where[d.storage]} storage: none of the designs A, B, C"


def classify_all(f: F.Facts) -> dict[str, str]:
    """Cluster name -> "A", "B", "C" or "other", for clusters with GPU VMs."""
    return {c.name: observe(f, c.name).scenario for c in f.gpu_clusters()}


def scenario(ctx: Context, cluster: Cluster) -> Outcome:
    design = observe(ctx.facts, cluster.name)
    evidence = design.evidence()
    summary = design.summary
    if design.scenario in ("A", "C"):
        said, evidence["kubernetes"] = kubernetes_restarts(ctx, cluster.name)
        summary = f"{summary}; {said}"
    return Outcome(design.scenario != "other", summary, evidence)


rule(
    id="DS-01",
    title="The cluster's GPU design, classified as reference design A, B or C",
    category="design",
    severity="info",
    scope=scopes.CLUSTERS_WITH_GPU_VMS,
    rationale="""Three reference designs cover GPU HA on vSphere: A, dedicated passthrough GPU
        nodes on local disks, where the application restarts elsewhere; B, vGPU with shared
        storage, where vSphere HA restarts the VMs; C, passthrough GPU nodes plus a spare.
        Knowing which one a cluster follows tells which HA rules matter: B relies on VMware HA,
        A and C on application restarts and spare capacity. A cluster that matches none fails
        this rule (at info severity) so that its design gets a look.""",
    remediation="""None for A, B and C. For "other", decide which scenario the cluster is meant
        to follow and align it (see DS-02).""",
    references=(
        sources.HA_HOW_IT_WORKS,
        sources.ASSIGNABLE_HARDWARE,
        sources.NVIDIA_AI_ENTERPRISE_VMWARE,
    ),
)(scenario)


def kubernetes_restarts(ctx: Context, cluster: str) -> tuple[str, dict[str, Any]]:
    """Designs A and C assume Kubernetes reschedules the GPU work of a lost host: whether
    K8S-02 holds for the Kubernetes clusters whose nodes are this cluster's GPU VMs."""
    gpu_vms = {vm.name for vm in ctx.facts.cluster_gpu_vms(cluster)}
    if not ctx.kubernetes:
        return (
            "that Kubernetes reschedules the GPU pods of a lost host is unchecked "
            "(no Kubernetes cluster given: scan --kubernetes)",
            {"checked": False},
        )
    verdicts: dict[str, bool] = {}
    lines = []
    for report in ctx.kubernetes:
        if not any(r.vm in gpu_vms for r in report.nodes):
            continue
        holds, why = n_plus_one(report)
        verdicts[report.cluster] = holds
        lines.append(
            f"Kubernetes cluster {report.cluster}: K8S-02 holds"
            if holds
            else f"Kubernetes cluster {report.cluster}: K8S-02 fails ({why})"
        )
    if not lines:
        return (
            "its GPU VMs are nodes of none of the Kubernetes clusters given: that Kubernetes "
            "reschedules their work is unchecked",
            {"checked": False},
        )
    return "; ".join(lines), {"checked": True, "k8s_02_holds": verdicts}


def recommendation(intent: Intent) -> tuple[str, list[str]]:
    """The decision flow: the recommended design and the answers that led to it."""
    steps = [f"stateless: {'yes' if intent.stateless else 'no'}"]
    if not intent.stateless:
        return "dedicated GPU + SAN (vGPU optional)", steps
    near_zero = intent.max_restart_minutes < 1
    steps.append(f"zero or near-zero downtime: {'yes' if near_zero else 'no'}")
    if near_zero:
        return "active-active application with traffic routing, not VMware HA", steps
    steps.append(f"VM-level HA mandated: {'yes' if intent.vm_ha_mandated else 'no'}")
    steps.append(f"GPU sharing required: {'yes' if intent.gpu_sharing_required else 'no'}")
    if intent.vm_ha_mandated:
        if intent.gpu_sharing_required:
            return "vGPU + SAN + HBA/iSCSI", steps
        return "PCI passthrough + SAN", steps
    if intent.gpu_sharing_required:
        steps.append(f"budget constrained: {'yes' if intent.budget_constrained else 'no'}")
        if intent.budget_constrained:
            return "re-evaluate the workload (sharing on a constrained budget)", steps
        return "vGPU + SAN", steps
    tolerates = intent.max_restart_minutes >= 5
    steps.append(f"restart of 2-5 minutes acceptable: {'yes' if tolerates else 'no'}")
    if tolerates:
        return "PCI passthrough, independent GPU nodes, Kubernetes HA, N+1, no SAN", steps
    return "PCI passthrough plus a buffer node (capacity-based HA)", steps


def departures(d: Design, intent: Intent) -> list[tuple[Severity, str]]:
    """Where the observed design contradicts the decision flow: (severity, explanation)."""
    kinds = set(d.kinds)
    vgpu = "vgpu" in kinds
    unshared = d.storage != "shared"
    out: list[tuple[Severity, str]] = []
    if not intent.stateless:
        if unshared:
            out.append(("high", "a stateful GPU workload keeps files on local or unshared storage"))
        if not d.ha_enabled:
            out.append(("medium", "a stateful GPU workload runs with vSphere HA off"))
        return out
    if intent.max_restart_minutes < 1:
        if not intent.active_active:
            relies = "relies on VMware HA restarts" if d.ha_enabled else "restarts workloads"
            out.append(
                (
                    "medium",
                    f"near-zero downtime is required but the design {relies}: GPU live "
                    "migration is not the answer, an active-active application is",
                )
            )
        return out
    if intent.vm_ha_mandated:
        if unshared:
            out.append(
                ("high", "VM-level HA is mandated but GPU VM files are not on shared storage")
            )
        if not d.ha_enabled:
            out.append(("high", "VM-level HA is mandated but vSphere HA is off"))
        if "passthrough" in kinds:
            out.append(
                ("medium", "VM-level HA is mandated but fixed DirectPath VMs cannot be restarted")
            )
    if intent.gpu_sharing_required and not vgpu:
        out.append(("medium", "GPU sharing is required but GPUs are passed through whole"))
    if intent.gpu_sharing_required and vgpu and unshared and not intent.vm_ha_mandated:
        out.append(("low", "vGPU without shared storage: the flow recommends SAN with vGPU"))
    san_extra = d.san and not intent.vm_ha_mandated  # a VM-level HA mandate needs the SAN
    if intent.budget_constrained and not intent.gpu_sharing_required and (vgpu or san_extra):
        what = " + ".join(x for x, used in (("vGPU", vgpu), ("SAN", san_extra)) if used)
        out.append(
            ("low", f"over-engineered: {what} where no GPU sharing is required on a tight budget")
        )
    if intent.budget_constrained and intent.gpu_sharing_required and vgpu:
        out.append(("low", "vGPU on a constrained budget: the flow says re-evaluate the workload"))
    if (
        not intent.vm_ha_mandated
        and not intent.gpu_sharing_required
        and intent.max_restart_minutes < 5
        and not d.buffer_hosts
    ):
        out.append(
            (
                "medium",
                f"restarts must finish within {intent.max_restart_minutes:g} minutes but the "
                "cluster has no buffer node for capacity-based HA",
            )
        )
    return out


def decision_flow(ctx: Context, cluster: Cluster) -> Outcome:
    design = observe(ctx.facts, cluster.name)
    intent = ctx.policy.intent_for(cluster.name)
    recommended, steps = recommendation(intent)
    found = departures(design, intent)
    evidence = {
        "intent": intent.__dict__.copy(),
        "flow": steps,
        "recommended": recommended,
        "observed": design.evidence(),
        "departures": [{"severity": s, "text": t} for s, t in found],
    }
    if not found:
        return Outcome(True, f"consistent with the decision flow ({recommended})", evidence)
    worst = min((s for s, _ in found), key=severity_rank)
    message = "; ".join(t for _, t in found) + f" (the flow recommends: {recommended})"
    return Outcome(False, message, evidence, severity=worst)


rule(
    id="DS-02",
    title="The cluster's design departs from what the GPU HA decision flow recommends",
    category="design",
    severity="medium",
    scope=scopes.CLUSTERS_WITH_GPU_VMS,
    rationale="""The GPU HA decision flow asks: is the workload stateless, is near-zero downtime
        required, does infrastructure policy mandate VM-level HA, is GPU sharing required, can the
        application restart in 2-5 minutes, is the budget constrained. Its principle: design HA at
        the application and capacity level, since a GPU itself is not live-migrated. The intent
        comes from the policy file (docs/policy.md); without one, the recommended default path
        applies (stateless, restart acceptable, no VMware HA mandate, no sharing). The finding's
        severity is that of its worst departure.""",
    remediation="""Align the design with the recommended path named in the finding, or correct the
        declared intent in the policy file.""",
    references=(
        sources.HA_HOW_IT_WORKS,
        sources.PCI_DEVICES_7,
        sources.NVIDIA_AI_ENTERPRISE_VMWARE,
    ),
)(decision_flow)
