"""What a check produces: the rule catalogue, findings, and the failover simulation.

The checker (gpuaudit.verdict.check) turns an Inventory into an AuditResult; every
renderer (gpuaudit.report) reads only an AuditResult. Like the inventory, these
are plain dataclasses that serialise to JSON.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from gpuaudit.inventory import Inventory
from gpuaudit.kubernetes.model import KubernetesReport

# Plain strings at run time, so that every report writes them as it always did;
# the type checker holds each field to its values.
Severity = Literal["critical", "high", "medium", "low", "info"]  # worst first
# The order reports list findings in. "unproven": the rule could not prove a pass
# because a fact it needs is not known exactly (an unknown board, vGPU type, MIG
# geometry or driver branch); never counted as passed, and it can be waived.
Status = Literal["fail", "unproven", "waived", "pass"]
Category = Literal["ha", "vmotion", "gpu", "storage", "design", "data", "monitoring", "licensing"]
# What a rule examines; "inventory" is the whole of what was read.
ObjectKind = Literal[
    "cluster",
    "host",
    "gpu",
    "vm",
    "datastore",
    "vcenter",
    "inventory",
    "kubernetes-cluster",  # one Kubernetes cluster given with scan --kubernetes
    "kubernetes-node",
]

SEVERITIES: tuple[Severity, ...] = get_args(Severity)
STATUSES: tuple[Status, ...] = get_args(Status)
OPEN_STATUSES: tuple[Status, ...] = ("fail", "unproven")  # unwaived and not passed
# How every report names a status.
STATUS_WORDS: dict[str, str] = {
    "fail": "failed",
    "unproven": "not proven",
    "waived": "waived",
    "pass": "passed",
}
CATEGORIES: tuple[Category, ...] = get_args(Category)
# An info finding that fails is a notice: counted apart, never as failed.
NOTICE: Severity = "info"
OBJECT_KINDS: tuple[ObjectKind, ...] = get_args(ObjectKind)


# Bumped whenever a rule is added, removed, or changes meaning.
RULES_VERSION = "2026.12.12"


def severity_rank(severity: str) -> int:
    """0 for critical ... 4 for info: lower is worse."""
    return SEVERITIES.index(severity)


def at_or_above(severity: str, threshold: str) -> bool:
    return severity_rank(severity) <= severity_rank(threshold)


@dataclass(frozen=True)
class Reference:
    """A published source behind a rule: a VMware/Broadcom or NVIDIA page, or a KB article."""

    title: str
    url: str


@dataclass(frozen=True)
class Rule:
    """One check in the catalogue (checkov style: id, name, categories, one small function)."""

    id: str  # HA-01
    title: str
    category: Category
    severity: Severity  # the default severity
    rationale: str  # why it matters; quotes the design guidance where it applies
    remediation: str
    object_kind: ObjectKind  # what it examines
    # Where the guidance is published. Empty only in a report written before rules
    # carried references; the registry refuses a rule without one.
    references: tuple[Reference, ...] = ()


@dataclass
class Waiver:
    rule: str  # rule id
    object: str  # object name or fnmatch pattern
    reason: str
    owner: str
    expires: str  # ISO date, YYYY-MM-DD


@dataclass(slots=True)
class Finding:
    """One rule's verdict on one object, with the evidence behind it."""

    rule: str
    object: str  # the object's name (for a GPU: "host/pci_id")
    object_kind: ObjectKind
    status: Status
    severity: Severity  # effective severity, after policy overrides
    message: str  # one line: the verdict in words
    cluster: str | None = None
    host: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    waiver: Waiver | None = None

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    @property
    def unproven(self) -> bool:
        """Not proven: the rule could not show a pass; the evidence's "not_proven" says why."""
        return self.status == "unproven"

    @property
    def open(self) -> bool:
        """Failed or not proven, and not waived: what --fail-on weighs."""
        return self.status in OPEN_STATUSES


@dataclass
class GpuSlots:
    """One physical GPU's vGPU or passthrough occupancy."""

    host: str
    pci_id: str
    model: str
    memory_mb: int
    mode: str  # "vgpu", "passthrough" or "idle"
    profile: str | None = None  # equal-size mode: the profile size it holds
    capacity: int = 1  # vGPU slots (equal-size) or 1 for passthrough
    used: int = 0
    used_mb: int = 0  # frame buffer allocated to vGPUs
    vms: list[str] = field(default_factory=list)


@dataclass
class Placement:
    vm: str
    from_host: str
    to_host: str | None = None  # None: could not be placed
    to_gpu: str | None = None
    reason: str | None = None  # why it could not be placed
    restart_priority: str = "medium"


@dataclass
class HostFailure:
    host: str
    displaced: int = 0
    placed: list[Placement] = field(default_factory=list)
    unplaced: list[Placement] = field(default_factory=list)
    # GPU VMs whose HA restart priority is disabled: HA never restarts them.
    not_restarted: list[Placement] = field(default_factory=list)
    # GPU VMs that fit only if placed by hand: the exact search finds room for them, the
    # hosts' own GPU choice (their assignment policy) does not. N+k counts them as lost.
    manual_only: list[Placement] = field(default_factory=list)
    # GPU VMs whose restart is not proven: they restart only if a fact NVIDIA does not
    # publish (a type's maximum, a placement, a whole board's types) allows it. Each one's
    # reason names the missing fact. N+k counts them as lost.
    unproven: list[Placement] = field(default_factory=list)


@dataclass
class SpareCapacity:
    """Spare capacity of one GPU model, or of one vGPU profile family on it, in a cluster."""

    model: str
    # None for the whole model; else the profile family ("l4 q": GPU and series; "a100 mig"
    # for MIG-backed profiles) or "passthrough" for DirectPath devices
    family: str | None = None
    gpus: int = 0  # usable GPUs of the model on connected hosts out of maintenance
    idle_gpus: int = 0  # of those, GPUs that run nothing
    vms: int = 0  # powered-on GPU VMs that HA restarts, running on the model (or family)
    # How many more of the family's largest device fit on the model's GPUs now; for a
    # whole model, its idle GPUs
    spare: int = 0
    tolerates: int = 0  # the k of N+k for these VMs alone, by the hosts' own GPU choice


@dataclass
class ClusterSimulation:
    cluster: str
    hosts: int = 0
    gpu_vms: int = 0
    failures: list[HostFailure] = field(default_factory=list)
    worst_host: str | None = None  # the failure that leaves most VMs unplaced
    # Simultaneous host failures the cluster tolerates with every powered-on GPU
    # VM that HA restarts placed (the k of N+k); 0 when even one failure strands a
    # VM, and 0 when HA restarts nothing (HA off or host monitoring disabled).
    tolerates: int = 0
    capacity: list[GpuSlots] = field(default_factory=list)  # before any failure
    after_worst: list[GpuSlots] = field(default_factory=list)  # after the worst failure
    # False when vSphere HA is off or host monitoring is disabled: the placements then
    # say where the VMs could be restarted by hand, not where HA restarts them.
    ha_restarts: bool = True
    manual_tolerates: int = 0  # the k of N+k when every VM is restarted by hand
    restart_disabled: list[str] = field(default_factory=list)  # powered-on, priority disabled
    spare: list[SpareCapacity] = field(default_factory=list)  # per GPU model and family
    # The k of N+k the cluster may tolerate if the facts NVIDIA does not publish allow it:
    # N+tolerates is proven, up to N+tolerates_unproven is not. None: nothing unproven.
    tolerates_unproven: int | None = None
    # What NVIDIA's published figures left undecided in this cluster (no type data for a
    # board, no maximum or placement for a type), each said once.
    not_proven: list[str] = field(default_factory=list)


# A GPU VM's fate when its host enters maintenance mode (gpuaudit.plan.maintenance).
MOVED = "moved"  # vMotioned by DRS to ``to_host``
POWERED_OFF = "powered off"  # DRS powers it off: it cannot, or is told not to, move
BLOCKING = "blocking"  # nothing moves it: maintenance mode waits for it
FATES = (MOVED, POWERED_OFF, BLOCKING)


@dataclass
class VmFate:
    vm: str
    fate: str  # one of FATES
    reason: str = ""  # why it is powered off or blocks; for a move, what is not proven
    to_host: str | None = None
    to_gpu: str | None = None


@dataclass
class HostMaintenance:
    """What happens to a host's powered-on GPU VMs when it enters maintenance mode."""

    host: str
    vms: list[VmFate] = field(default_factory=list)

    @property
    def downtime(self) -> list[VmFate]:
        """The GPU VMs that stop running: powered off, or blocking until someone acts."""
        return [v for v in self.vms if v.fate != MOVED]


@dataclass
class ClusterMaintenance:
    """Maintenance readiness of a cluster, one host at a time, DRS fully automated."""

    cluster: str
    hosts: list[HostMaintenance] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class RollingStep:
    """One host of a rolling upgrade entering maintenance mode, on the cluster as the
    earlier steps left it."""

    host: str
    vms: list[VmFate] = field(default_factory=list)


@dataclass
class ClusterRolling:
    """A rolling-upgrade order of a cluster's hosts, one at a time (gpuaudit.plan.rolling)."""

    cluster: str
    order: list[str] = field(default_factory=list)
    steps: list[RollingStep] = field(default_factory=list)
    downtime: int = 0  # GPU VMs powered off or blocking, summed over the steps
    exhaustive: bool = True  # every order was tried; False: chosen greedily, step by step
    notes: list[str] = field(default_factory=list)


# How many more VMs of one GPU device fit in a cluster (gpuaudit.plan.headroom).
PASSTHROUGH = "passthrough"  # the profile of a row for a whole GPU by Dynamic DirectPath


@dataclass
class Headroom:
    """New VMs of one vGPU profile (or whole GPUs by Dynamic DirectPath) on one GPU model."""

    gpu_model: str
    profile: str  # lower case; PASSTHROUGH for a Dynamic DirectPath GPU
    vm_memory_mb: int  # the memory each new VM is taken to reserve
    fits_now: int  # placed one after another, each where the hosts' own choice takes it
    fits_nk: int  # the most of those after which the cluster still tolerates N+k
    # vCenter's remaining capacity of the profile summed over the hosts that answered
    # QueryCapacity (vSphere 9.0); None where none did.
    vcenter_remaining: int | None = None
    # Fewer fit under N+k than vCenter's remaining, because of the failure reserve.
    below_vcenter: bool = False
    # What the counts could not count on, not being known (a board no catalogue knows, a
    # vGPU type without NVIDIA's figures): the counts are then only what can be proven,
    # and more may fit. "" when they are exact.
    not_proven: str = ""


@dataclass
class ClusterHeadroom:
    cluster: str
    k: int  # the N+k the cluster must keep
    tolerates_now: bool  # it keeps it with no new VM
    rows: list[Headroom] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# Frame buffer free on a GPU that no vGPU profile offered in its cluster can use
# (gpuaudit.plan.stranded).
@dataclass
class GpuStranded:
    host: str
    gpu: str  # PCI id
    gpu_model: str
    mode: str  # the sharing rule: exact, size, mixed or mig (gpuaudit.simulation.sharing)
    frame_buffer_mb: int  # nominal
    vgpus: list[str] = field(default_factory=list)  # the profiles running on it
    free_mb: int | None = None  # None: a running vGPU's frame buffer is unknown
    stranded_mb: int | None = None  # None: not known, and ``reason`` says why
    reason: str = ""  # why it is stranded, or why the figure is not known


@dataclass
class ClusterStranded:
    cluster: str
    profiles: list[str] = field(default_factory=list)  # offered by its active hosts
    gpus: list[GpuStranded] = field(default_factory=list)
    stranded_mb: int = 0  # summed over the GPUs whose figure is known
    not_known: int = 0  # GPUs whose figure is not known
    notes: list[str] = field(default_factory=list)


# What-if (gpuaudit plan --change): an audit of the inventory before and after the changes.


@dataclass
class HeadroomChange:
    """One headroom row before and after; None where that side has no such row."""

    gpu_model: str
    profile: str
    fits_now_before: int | None = None
    fits_now_after: int | None = None
    fits_nk_before: int | None = None
    fits_nk_after: int | None = None
    # Headroom.not_proven of each side: what its counts could not count on.
    not_proven_before: str = ""
    not_proven_after: str = ""


@dataclass
class ClusterPlan:
    """A cluster before and after the changes; None where that side has no such cluster
    (or, for maintenance and rolling, no GPU VM in it)."""

    cluster: str
    hosts_before: int | None = None
    hosts_after: int | None = None
    tolerates_before: int | None = None  # the k of N+k
    tolerates_after: int | None = None
    unproven_before: int | None = None  # the k it may tolerate, not proven
    unproven_after: int | None = None
    # The hosts that cannot enter maintenance mode without GPU VM downtime.
    downtime_hosts_before: list[str] | None = None
    downtime_hosts_after: list[str] | None = None
    rolling_downtime_before: int | None = None  # GPU VMs down over the rolling upgrade
    rolling_downtime_after: int | None = None
    headroom: list[HeadroomChange] = field(default_factory=list)


@dataclass
class FindingChange:
    """A finding open (failed or not proven) on one side and not, or otherwise, on the other."""

    rule: str
    object: str
    severity: str
    status: str  # its status on the side where it is open
    message: str


@dataclass
class PlanComparison:
    changes: list[str] = field(default_factory=list)  # each change, in the file's order
    notes: list[str] = field(default_factory=list)  # what applying them did besides
    clusters: list[ClusterPlan] = field(default_factory=list)
    appeared: list[FindingChange] = field(default_factory=list)  # open after, not before
    gone: list[FindingChange] = field(default_factory=list)  # open before, not after


@dataclass
class RuleError:
    """A rule that raised: the audit goes on and says which verdicts are missing."""

    rule: str
    error: str


@dataclass
class FindingRef:
    """A finding named by its stable id, as history compares scans."""

    id: str
    rule: str
    object: str
    severity: str
    status: str


@dataclass
class TrendPoint:
    """One scan of a vCenter, as the history store keeps it for trends."""

    checked_at: str  # ISO 8601, UTC
    # Unwaived failures by severity, info left out: an info finding is a notice.
    failed: dict[str, int] = field(default_factory=dict)
    tolerates: dict[str, int] = field(default_factory=dict)  # cluster -> the k of N+k
    # cluster -> GPU model -> free slots before any failure
    free_slots: dict[str, dict[str, int]] = field(default_factory=dict)
    unproven: int = 0  # unwaived findings not proven
    notices: int = 0  # unwaived info findings that failed
    waived: int = 0  # findings waived: accepted failures, not resolved ones


@dataclass
class ScanHistory:
    """What the history store says about earlier scans of the same vCenter."""

    previous_checked_at: str | None = None  # None: no earlier scan
    new: list[FindingRef] = field(default_factory=list)  # failed now, not at the last scan
    # Open then (failed or not proven), passing or gone now.
    resolved: list[FindingRef] = field(default_factory=list)
    # Open then, waived now: accepted, not resolved (gpuaudit.verdict.changes).
    newly_waived: list[FindingRef] = field(default_factory=list)
    # Waived then, open now: its waiver expired or was withdrawn.
    waiver_expired: list[FindingRef] = field(default_factory=list)
    trend: list[TrendPoint] = field(default_factory=list)  # oldest first, this scan last


# Against a baseline: an open finding is "new" or "unchanged"; one open in the baseline
# and not now is "absent" (SARIF 2.1.0's baselineState, 3.27.24, less "updated").
BaselineState = Literal["new", "unchanged", "absent"]
# The job's verdict, in every report's words.
Verdict = Literal["pass", "unproven", "fail"]


def baseline_key(rule: str, obj: str) -> str:
    """How a baseline names a finding: its rule and object (a rule id holds no space)."""
    return f"{rule} {obj}"


@dataclass
class Judgement:
    """The job's one verdict, computed once (gpuaudit.verdict.judgement); every output states it."""

    verdict: Verdict
    fail_on: str  # a severity, or "never"
    blocking: bool = False  # a failure that counts: the verdict is fail
    blocking_unproven: bool = False  # a finding not proven that counts
    # With a baseline: baseline_key -> its state; None without one.
    states: dict[str, BaselineState] | None = None

    def state(self, finding: Finding) -> BaselineState | None:
        """new or unchanged for an open finding, with a baseline; else None."""
        if self.states is None or not finding.open:
            return None
        return self.states.get(baseline_key(finding.rule, finding.object))

    def count(self, state: BaselineState) -> int:
        return sum(1 for s in (self.states or {}).values() if s == state)

    def absent(self) -> list[tuple[str, str]]:
        """The (rule, object) pairs open in the baseline and open no more, sorted."""
        keys = [k for k, s in (self.states or {}).items() if s == "absent"]
        return sorted(tuple(k.split(" ", 1)) for k in keys)  # type: ignore[misc]


@dataclass
class AuditResult:
    inventory: Inventory
    rules: list[Rule]
    findings: list[Finding]
    simulations: list[ClusterSimulation]
    checked_at: str = ""  # ISO 8601, UTC
    tool_version: str = ""
    rules_version: str = RULES_VERSION
    policy_source: str | None = None
    waivers: list[Waiver] = field(default_factory=list)  # every waiver of the policy
    expired_waivers: list[Waiver] = field(default_factory=list)
    errors: list[RuleError] = field(default_factory=list)
    # Cluster name -> the design classification (DS-01): "A", "B", "C" or "other".
    designs: dict[str, str] = field(default_factory=dict)
    # Finding id (gpuaudit.report.actions.finding_id) -> when it was first seen
    # failing or waived (ISO 8601, UTC), from the history store or a baseline; a
    # finding of unknown age is absent.
    first_seen: dict[str, str] = field(default_factory=dict)
    history: ScanHistory | None = None  # None: no history store was used
    # One section per Kubernetes cluster given (scan --kubernetes); empty without one.
    kubernetes: list[KubernetesReport] = field(default_factory=list)
    # The job's verdict under --fail-on and the baseline; None: rendered on its own,
    # where every failure counts (gpuaudit.verdict.judgement.judgement_of).
    judgement: Judgement | None = None
    # One per cluster with GPU VMs: each host's maintenance readiness.
    maintenance: list[ClusterMaintenance] = field(default_factory=list)
    # One per cluster with GPUs: how many more GPU VMs fit, now and under N+k.
    headroom: list[ClusterHeadroom] = field(default_factory=list)
    # Seconds from the start of the scan to its verdict; None when not measured (a
    # result read back from a report).
    duration_seconds: float | None = None
    # One per cluster with GPU VMs: the rolling-upgrade order with the least GPU VM downtime.
    rolling: list[ClusterRolling] = field(default_factory=list)
    # One per cluster with GPUs: frame buffer free but unusable by the offered profiles.
    stranded: list[ClusterStranded] = field(default_factory=list)
    # gpuaudit plan --change: this result is the "after", compared with the "before".
    plan: PlanComparison | None = None

    def failed(self) -> list[Finding]:
        return [f for f in self.findings if f.failed]

    def unproven(self) -> list[Finding]:
        return [f for f in self.findings if f.unproven]

    def counts(self) -> dict[str, dict[str, int]]:
        """Failed findings by severity and by category; not-proven ones by severity.

        An info finding that fails is a notice ("notices"), never counted as failed.
        """
        by_rule = {r.id: r for r in self.rules}
        severity: dict[str, int] = {s: 0 for s in SEVERITIES}
        category: dict[str, int] = {c: 0 for c in CATEGORIES}
        unproven: dict[str, int] = {s: 0 for s in SEVERITIES}
        notices = 0
        for finding in self.failed():
            if finding.severity == NOTICE:
                notices += 1
                continue
            severity[finding.severity] += 1
            rule = by_rule.get(finding.rule)
            if rule is not None:
                category[rule.category] = category.get(rule.category, 0) + 1
        for finding in self.unproven():
            unproven[finding.severity] += 1
        return {
            "severity": severity,
            "category": category,
            "unproven": unproven,
            "notices": {NOTICE: notices},
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain data, shaped as JSON holds it: a tuple (a rule's references) is a list."""
        data: dict[str, Any] = _as_lists(dataclasses.asdict(self))
        return data


def _as_lists(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _as_lists(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_lists(v) for v in value]
    return value
