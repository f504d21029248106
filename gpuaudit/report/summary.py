"""The verdicts every format shows at the top: one computation, shared by all."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from gpuaudit.inventory import Host
from gpuaudit.report.licences import LicenceSummary, licence_summary
from gpuaudit.results import (
    CATEGORIES,
    NOTICE,
    SEVERITIES,
    STATUSES,
    AuditResult,
    BaselineState,
    ClusterSimulation,
    Finding,
    SpareCapacity,
)
from gpuaudit.verdict.judgement import judgement_of, nothing_examined

BASELINE_STATES: tuple[BaselineState, ...] = ("new", "unchanged", "absent")

# DS-01's design classes, after the GPU HA strategy guide the rules quote.
DESIGNS = {
    "A": "Dedicated GPU nodes, no SAN",
    "B": "VMware HA with SAN and vGPU",
    "C": "Passthrough with a buffer node",
    "other": "Mixed or unclassified",
}


@dataclass
class ClusterSummary:
    name: str
    datacenter: str = ""
    design: str | None = None  # A, B, C, other; None when DS-01 did not classify it
    simulated: bool = False
    tolerates: int | None = None  # the k of N+k; None when not simulated
    hosts: int = 0
    gpu_hosts: int = 0
    gpus: int = 0
    gpu_vms: int = 0
    worst_host: str | None = None
    unplaced_worst: int = 0  # VMs left without a GPU by the worst single-host failure
    # Spare capacity and N+k per GPU model and profile family, in one line
    spare: str = ""
    failed: int = 0
    failed_by_severity: dict[str, int] = field(default_factory=dict)
    # The k reached only if facts NVIDIA does not publish allow it; None: nothing unproven.
    tolerates_unproven: int | None = None


@dataclass
class Summary:
    # The job's one verdict (gpuaudit.verdict.judgement): "fail" when a failure at or above
    # fail_on counts (with a baseline, a new one); else "unproven" when a finding not
    # proven counts; else "pass"
    verdict: str
    worst_severity: str | None
    incomplete: bool  # data gaps or rule errors: some verdicts are uncertain
    results: dict[str, int]  # fail / unproven / waived / pass
    failed_by_severity: dict[str, int]
    failed_by_category: dict[str, int]
    clusters: list[ClusterSummary]
    gaps: int  # gaps that make verdicts uncertain
    rule_errors: int
    waivers_applied: int
    expired_waivers: int
    # The NVIDIA vGPU licences a licence server must cover (report/licences.py).
    licences: LicenceSummary = field(default_factory=LicenceSummary)
    # DATA-02's message when the audit read no host, else None: every format says
    # so first, not only a count of findings.
    nothing_examined: str | None = None
    # Properties only a privilege beyond the Read-only role reads (Gap.privilege):
    # listed with the gaps, but they leave the other verdicts certain.
    beyond_role: int = 0
    # Unwaived findings not proven, by severity: never counted as passed.
    unproven_by_severity: dict[str, int] = field(default_factory=dict)
    fail_on: str = "info"  # the severity at or above which findings count; or "never"
    notices: int = 0  # unwaived info findings: notices, never counted as failed
    # With a baseline: how many open findings are new, unchanged, or absent now.
    baseline: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def headline(self) -> str:
        if self.nothing_examined:
            return self.nothing_examined[:1].upper() + self.nothing_examined[1:]
        return "; ".join(p for p in (self._findings(), self._against_baseline()) if p)

    def _findings(self) -> str:
        total = self.results.get("fail", 0)
        if not total:
            words = "No failed findings"
        else:
            parts = [f"{n} {sev}" for sev, n in self.failed_by_severity.items() if n]
            noun = "finding" if total == 1 else "findings"
            words = f"{total} failed {noun}: " + ", ".join(parts)
        if self.results.get("unproven"):
            words += f"; {_not_proven(self.unproven_by_severity)}"
        if self.notices:
            words += f"; {self.notices} notice{'' if self.notices == 1 else 's'}"
        return words

    def _against_baseline(self) -> str:
        """'against the baseline: 2 new, 153 unchanged, 4 absent'."""
        if self.baseline is None:
            return ""
        counts = ", ".join(f"{self.baseline[s]} {s}" for s in BASELINE_STATES)
        return f"against the baseline: {counts}"


def _not_proven(by_severity: dict[str, int]) -> str:
    """'3 not proven (2 high, 1 medium)'."""
    total = sum(by_severity.values())
    parts = ", ".join(f"{n} {sev}" for sev, n in by_severity.items() if n)
    return f"{total} not proven ({parts})"


def tolerance(k: int | None, unproven: int | None = None) -> str:
    """N+1, N+0, or a dash when the cluster was not simulated; with ``unproven``, the k
    only facts NVIDIA does not publish would give: "N+0 (up to N+1 not proven)"."""
    if k is None:
        return "\u2013"
    if unproven is not None and unproven > k:
        return f"N+{k} (up to N+{unproven} not proven)"
    return f"N+{k}"


def parse_time(text: str) -> datetime | None:
    """An ISO 8601 timestamp as an aware UTC datetime; None when it is not one."""
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def unplaced_by_worst(sim: ClusterSimulation) -> int:
    """VMs HA does not restart after the worst failure: no room, or room only by hand."""
    for failure in sim.failures:
        if failure.host == sim.worst_host:
            return len(failure.unplaced) + len(failure.manual_only)
    return 0


def spare_line(rows: list[SpareCapacity]) -> str:
    """'NVIDIA L4: 1 of 3 GPUs idle, N+2 (l4 q: room for 7 more, N+2); ...'"""
    parts = []
    for row in rows:
        if row.family is not None:
            continue
        families = [
            f"{r.family}: room for {r.spare} more, N+{r.tolerates}"
            for r in rows
            if r.model == row.model and r.family is not None
        ]
        text = f"{row.model}: {row.idle_gpus} of {row.gpus} GPUs idle, N+{row.tolerates}"
        parts.append(text + (f" ({', '.join(families)})" if families else ""))
    return "; ".join(parts)


def summarize(result: AuditResult) -> Summary:
    counts = result.counts()
    results: dict[str, int] = {s: 0 for s in STATUSES}
    for finding in result.findings:
        results[finding.status] = results.get(finding.status, 0) + 1
    notices = counts["notices"][NOTICE]
    results["fail"] -= notices  # an info finding is a notice, never a failure
    if notices:
        results["notice"] = notices
    by_severity: dict[str, int] = {s: counts["severity"].get(s, 0) for s in SEVERITIES}
    by_category: dict[str, int] = {c: counts["category"].get(c, 0) for c in CATEGORIES}
    for name, n in counts["category"].items():
        by_category.setdefault(name, n)
    worst = next((s for s in SEVERITIES if by_severity[s]), None)
    uncertain = [g for g in result.inventory.gaps if g.uncertain]
    empty = nothing_examined(result)
    judgement = judgement_of(result)
    return Summary(
        verdict=judgement.verdict,
        worst_severity=worst,
        incomplete=bool(uncertain or result.errors),
        results=results,
        failed_by_severity=by_severity,
        failed_by_category=by_category,
        clusters=cluster_summaries(result),
        gaps=len(uncertain),
        beyond_role=len(result.inventory.gaps) - len(uncertain),
        rule_errors=len(result.errors),
        waivers_applied=results.get("waived", 0),
        expired_waivers=len(result.expired_waivers),
        licences=licence_summary(result.inventory, result.findings),
        nothing_examined=empty,
        unproven_by_severity={s: counts["unproven"].get(s, 0) for s in SEVERITIES},
        fail_on=judgement.fail_on,
        notices=notices,
        baseline=(
            None if judgement.states is None else {s: judgement.count(s) for s in BASELINE_STATES}
        ),
    )


def cluster_summaries(result: AuditResult) -> list[ClusterSummary]:
    inv = result.inventory
    sims = {s.cluster: s for s in result.simulations}
    names = [c.name for c in inv.clusters]
    names += [n for n in sims if n not in names]
    # Grouped once: a walk of every host, VM and finding per cluster grows with the
    # square of the estate.
    clusters = {c.name: c for c in inv.clusters}
    hosts_by: dict[str | None, list[Host]] = {}
    for host in inv.hosts:
        hosts_by.setdefault(host.cluster, []).append(host)
    gpu_vms_by: dict[str | None, int] = {}
    for vm in inv.vms:
        if vm.gpus:
            gpu_vms_by[vm.cluster] = gpu_vms_by.get(vm.cluster, 0) + 1
    failed_by: dict[str | None, list[Finding]] = {}
    for finding in result.findings:
        if finding.failed and finding.severity != NOTICE:
            failed_by.setdefault(finding.cluster, []).append(finding)
    summaries = []
    for name in names:
        cluster = clusters.get(name)
        hosts = hosts_by.get(name, [])
        summary = ClusterSummary(
            name=name,
            datacenter=cluster.datacenter if cluster else "",
            design=result.designs.get(name),
            hosts=len(hosts),
            gpu_hosts=sum(1 for h in hosts if h.gpus),
            gpus=sum(len(h.gpus) for h in hosts),
            gpu_vms=gpu_vms_by.get(name, 0),
            failed_by_severity={s: 0 for s in SEVERITIES},
        )
        sim = sims.get(name)
        if sim is not None:
            summary.simulated = True
            summary.tolerates = sim.tolerates
            summary.tolerates_unproven = sim.tolerates_unproven
            summary.worst_host = sim.worst_host
            summary.unplaced_worst = unplaced_by_worst(sim)
            summary.spare = spare_line(sim.spare)
            summary.hosts = summary.hosts or sim.hosts
            summary.gpu_vms = summary.gpu_vms or sim.gpu_vms
        for finding in failed_by.get(name, []):
            summary.failed += 1
            counts = summary.failed_by_severity
            counts[finding.severity] = counts.get(finding.severity, 0) + 1
        summaries.append(summary)
    return summaries
