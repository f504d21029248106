"""The check stage: run every rule and the host-failure simulation over an inventory.

A rule that raises is recorded in ``AuditResult.errors`` and the audit goes on.
Policy is applied here: severity overrides, then waivers (an active waiver turns a
failure, or a verdict not proven, into "waived"; an expired one stops applying and
is reported).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime

from gpuaudit import __version__
from gpuaudit.common.gc_pause import gc_paused, long_lived
from gpuaudit.common.progress import Progress, Step, ignore
from gpuaudit.inventory import Inventory
from gpuaudit.kubernetes.model import Cluster as KubernetesCluster
from gpuaudit.kubernetes.model import KubernetesReport
from gpuaudit.kubernetes.simulate import analyse_all
from gpuaudit.model.facts import Facts
from gpuaudit.model.policy import Policy
from gpuaudit.plan.headroom import headroom_all
from gpuaudit.plan.maintenance import readiness_all
from gpuaudit.plan.rolling import rolling_all
from gpuaudit.plan.stranded import stranded_all
from gpuaudit.results import (
    STATUSES,
    AuditResult,
    ClusterHeadroom,
    ClusterRolling,
    ClusterStranded,
    Finding,
    Rule,
    RuleError,
    Status,
    severity_rank,
)
from gpuaudit.rules import catalogue, specs
from gpuaudit.rules.data import NOTHING_EXAMINED
from gpuaudit.rules.design import classify_all
from gpuaudit.rules.registry import Context, Verdict
from gpuaudit.simulation.failures import Simulated, simulate_cluster_notes

SIMULATION_PHASE = "simulating host failures"


def run_checks(
    inventory: Inventory,
    policy: Policy | None = None,
    today: date | None = None,
    progress: Progress | None = None,
    kubernetes: Sequence[KubernetesCluster] = (),
    plans: bool = False,
) -> AuditResult:
    """Check an inventory: findings for every rule (passes too), simulations, designs;
    with ``kubernetes`` clusters, where their nodes run and where lost GPU pods go; with
    ``plans``, each cluster's headroom, rolling-upgrade plan and stranded capacity
    (gpuaudit plan)."""
    # The check keeps what it builds (models, findings, evidence): full collections
    # over the inventory on the way freed next to nothing and took a third of its time.
    # The inventory, frozen, is left out of the one collection at the end.
    with long_lived(), gc_paused():
        return _check(inventory, policy, today, progress, kubernetes, plans)


def _check(
    inventory: Inventory,
    policy: Policy | None,
    today: date | None,
    progress: Progress | None,
    kubernetes: Sequence[KubernetesCluster],
    plans: bool,
) -> AuditResult:
    policy = policy or Policy.default()
    today = today or datetime.now(UTC).date()
    say = progress or ignore
    facts = Facts(inventory)
    errors: list[RuleError] = []

    simulations: dict[str, Simulated] = {}
    clusters = facts.clusters_with_gpus()
    for done, cluster in enumerate(clusters):
        say(Step(SIMULATION_PHASE, done, len(clusters), "clusters"))
        try:
            simulations[cluster.name] = simulate_cluster_notes(inventory, cluster.name, facts)
        except Exception as exc:  # the audit goes on without this simulation
            errors.append(RuleError("simulation", f"{cluster.name}: {_describe(exc)}"))
    if clusters:
        say(Step(SIMULATION_PHASE, len(clusters), len(clusters), "clusters"))

    kube_reports: list[KubernetesReport] = []
    try:
        kube_reports = analyse_all(kubernetes, facts)
    except Exception as exc:  # the audit goes on; the K8S rules then give no verdict
        errors.append(RuleError("kubernetes", _describe(exc)))
    ctx = Context(
        facts=facts, policy=policy, simulations=simulations, today=today, kubernetes=kube_reports
    )
    try:
        ctx.maintenance = {m.cluster: m for m in readiness_all(ctx)}
    except Exception as exc:  # the audit goes on; VM-12 and VM-13 then give no verdict
        errors.append(RuleError("maintenance", _describe(exc)))
    gaps = _gaps(inventory)
    findings: list[Finding] = []
    for spec in specs():
        try:
            verdicts = list(spec.verdicts(ctx))
        except Exception as exc:  # a broken rule must not stop the audit
            errors.append(RuleError(spec.rule.id, _describe(exc)))
            continue
        for verdict in verdicts:
            findings.append(_finding(spec.rule, verdict, policy, today, gaps))

    # Failures first, worst first: the order every report lists them in.
    findings.sort(
        key=lambda f: (STATUSES.index(f.status), severity_rank(f.severity), f.rule, f.object)
    )

    try:
        designs = classify_all(facts)
    except Exception as exc:
        errors.append(RuleError("DS-01", _describe(exc)))
        designs = {}

    headroom: list[ClusterHeadroom] = []
    rolling: list[ClusterRolling] = []
    stranded: list[ClusterStranded] = []
    if plans:
        try:
            headroom = headroom_all(facts)
            rolling = rolling_all(ctx)
            stranded = stranded_all(facts)
        except Exception as exc:  # the audit goes on without the plans
            errors.append(RuleError("plan", _describe(exc)))

    return AuditResult(
        inventory=inventory,
        rules=catalogue(),
        findings=findings,
        simulations=[s.simulation for s in simulations.values()],
        checked_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        tool_version=__version__,
        policy_source=policy.source,
        waivers=list(policy.waivers),
        expired_waivers=policy.expired(today),
        errors=errors,
        designs=designs,
        kubernetes=kube_reports,
        maintenance=list(ctx.maintenance.values()),
        headroom=headroom,
        rolling=rolling,
        stranded=stranded,
    )


def _finding(
    rule: Rule,
    verdict: Verdict,
    policy: Policy,
    today: date,
    gaps: dict[str, list[str]],
) -> Finding:
    if rule.id == NOTHING_EXAMINED:
        return _unwaivable(rule, verdict, policy, today)
    severity = policy.severity_for(rule.id, verdict.cluster) or verdict.severity or rule.severity
    evidence = dict(verdict.evidence)
    status: Status = _status(verdict)
    if status == "unproven":
        evidence["not_proven"] = verdict.unproven
    waiver = None
    if status != "pass":
        waiver = policy.waiver_for(rule.id, verdict.object, today)
        if waiver is not None:
            status = "waived"
        else:
            lapsed = policy.expired_waiver_for(rule.id, verdict.object, today)
            if lapsed is not None:
                evidence["expired_waiver"] = {
                    "owner": lapsed.owner,
                    "expires": lapsed.expires,
                    "reason": lapsed.reason,
                }
    if rule.id != "DATA-01":
        uncertain = gaps.get(verdict.object, []) + (
            gaps.get(verdict.host, []) if verdict.host and verdict.host != verdict.object else []
        )
        if uncertain:
            evidence["uncertain"] = uncertain
    return Finding(
        rule=rule.id,
        object=verdict.object,
        object_kind=verdict.object_kind or rule.object_kind,
        status=status,
        severity=severity,
        message=verdict.message,
        cluster=verdict.cluster,
        host=verdict.host,
        evidence=evidence,
        waiver=waiver,
    )


def _status(verdict: Verdict) -> Status:
    """A failure is a failure; a pass that rests on an unknown fact is "unproven"."""
    if not verdict.passed:
        return "fail"
    return "unproven" if verdict.unproven else "pass"


def _unwaivable(rule: Rule, verdict: Verdict, policy: Policy, today: date) -> Finding:
    """DATA-02 at its own severity, never waived: a policy cannot make an empty audit pass."""
    evidence = dict(verdict.evidence)
    if not verdict.passed:
        ignored = []
        if policy.severity_for(rule.id, verdict.cluster):
            ignored.append("severity override")
        if policy.waiver_for(rule.id, verdict.object, today) is not None:
            ignored.append("waiver")
        if ignored:
            evidence["policy_ignored"] = ignored
    return Finding(
        rule=rule.id,
        object=verdict.object,
        object_kind=verdict.object_kind or rule.object_kind,
        status="pass" if verdict.passed else "fail",
        severity=rule.severity,
        message=verdict.message,
        evidence=evidence,
    )


def _gaps(inventory: Inventory) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for gap in inventory.gaps:
        if gap.uncertain:  # a read beyond the role leaves other verdicts certain
            out.setdefault(gap.object, []).append(f"{gap.property}: {gap.reason}")
    return out


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
