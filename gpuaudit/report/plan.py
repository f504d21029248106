"""The what-if comparison (gpuaudit plan --change) as console text: each cluster before
and after, then the findings that appear or go. The same data is the JSON report's
``plan`` section, the HTML report's "What-if" section and the workbook's Plan sheets."""

from __future__ import annotations

from collections.abc import Callable

from gpuaudit.report.tables import TEXT, Table, Value, _table
from gpuaudit.results import AuditResult, ClusterPlan, FindingChange, PlanComparison
from gpuaudit.verdict.judgement import counted, judgement_of, nothing_examined, verdict_line

ARROW = "->"


def plan_text(plan: PlanComparison) -> str:
    lines = ["Changes"]
    lines += [f"  {i}. {c}" for i, c in enumerate(plan.changes, 1)]
    if plan.notes:
        lines += ["", "Applied"]
        lines += [f"  {n}" for n in plan.notes]
    for cluster in plan.clusters:
        lines += ["", *_cluster(cluster)]
    lines += ["", "Findings (failed or not proven)"]
    lines += _findings("appear", plan.appeared)
    lines += _findings("go", plan.gone)
    return "\n".join(lines) + "\n"


def _k(k: int | None, unproven: int | None) -> str:
    if k is None:
        return "-"
    return f"N+{k}" + (f" (up to N+{unproven} not proven)" if unproven is not None else "")


def _n(value: object) -> str:
    return "-" if value is None else str(value)


def _fits(now: int | None, nk: int | None, not_proven: str) -> str:
    """A headroom row's counts; marked where they are only what can be proven."""
    return f"{_n(now)} / {_n(nk)}" + (" (not proven)" if not_proven else "")


def _hosts(hosts: list[str] | None) -> str:
    if hosts is None:
        return "-"
    return ", ".join(hosts) if hosts else "none"


def measures(c: ClusterPlan) -> list[tuple[str, str, str]]:
    """(measure, before, after) of one cluster, as the text, HTML and workbook show them."""
    rows = [
        ("hosts", _n(c.hosts_before), _n(c.hosts_after)),
        (
            "N+k",
            _k(c.tolerates_before, c.unproven_before),
            _k(c.tolerates_after, c.unproven_after),
        ),
        (
            "maintenance with downtime",
            _hosts(c.downtime_hosts_before),
            _hosts(c.downtime_hosts_after),
        ),
        (
            "rolling upgrade downtime",
            _n(c.rolling_downtime_before),
            _n(c.rolling_downtime_after),
        ),
    ]
    for h in c.headroom:
        rows.append(
            (
                f"headroom {h.gpu_model} {h.profile}",
                _fits(h.fits_now_before, h.fits_nk_before, h.not_proven_before),
                _fits(h.fits_now_after, h.fits_nk_after, h.not_proven_after),
            )
        )
    return rows


HEADROOM = "headroom "


def _cluster(c: ClusterPlan) -> list[str]:
    out = [f"Cluster {c.cluster}"]
    rows = measures(c)
    out += [
        f"  {label:<27}{_change(b, a)}" for label, b, a in rows if not label.startswith(HEADROOM)
    ]
    headroom = [
        (label[len(HEADROOM) :], b, a) for label, b, a in rows if label.startswith(HEADROOM)
    ]
    if headroom:
        out.append("  headroom, new VMs that fit now / under N+k:")
        out += [f"    {label:<25}{_change(b, a)}" for label, b, a in headroom]
    return out


def _change(before: str, after: str) -> str:
    return before if before == after else f"{before} {ARROW} {after}"


def _findings(verb: str, found: list[FindingChange]) -> list[str]:
    if not found:
        return [f"  none {verb}"]
    out = [f"  {len(found)} {verb}:"]
    for f in found:
        status = "not proven" if f.status == "unproven" else f.status
        out.append(f"    {f.rule} {f.object} ({f.severity}, {status}): {f.message}")
    return out


def verdict_text(result: AuditResult) -> str:
    """The verdict of ``gpuaudit plan --fail-on``, from the after's judgement: its words
    as a scan's last line says them, of the findings the changes introduce or make
    worse, then each of those that count, one line each."""
    judgement = judgement_of(result)
    what = "the changes introduce or make worse "
    line = verdict_line(
        judgement.verdict, judgement.fail_on, bool(nothing_examined(result)), what=what
    )
    out = [line]
    for f in counted(result):
        status = "not proven" if f.status == "unproven" else f.status
        out.append(f"  {f.rule} {f.object} ({f.severity}, {status})")
    return "\n".join(out) + "\n"


def plan_tables(result: AuditResult) -> list[Table]:
    """The workbook's Plan sheet (each cluster's measures before and after; headroom as
    new VMs that fit now / under N+k) and Plan Findings (those that appear or go)."""
    plan = result.plan
    if plan is None:
        return []
    measure_spec: list[tuple[str, str, Callable[[tuple[str, str, str, str]], Value]]] = [
        ("Cluster", TEXT, lambda r: r[0]),
        ("Measure", TEXT, lambda r: r[1]),
        ("Before", TEXT, lambda r: r[2]),
        ("After", TEXT, lambda r: r[3]),
    ]
    rows = [(c.cluster, *m) for c in plan.clusters for m in measures(c)]
    finding_spec: list[tuple[str, str, Callable[[tuple[str, FindingChange]], Value]]] = [
        ("Change", TEXT, lambda r: r[0]),
        ("Rule", TEXT, lambda r: r[1].rule),
        ("Object", TEXT, lambda r: r[1].object),
        ("Severity", TEXT, lambda r: r[1].severity),
        ("Status", TEXT, lambda r: r[1].status),
        ("Message", TEXT, lambda r: r[1].message),
    ]
    found = [("appears", f) for f in plan.appeared] + [("goes", f) for f in plan.gone]
    return [
        _table("plan", "Plan", measure_spec, rows),
        _table("plan_findings", "Plan Findings", finding_spec, found),
    ]
