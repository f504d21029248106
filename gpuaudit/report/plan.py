"""The what-if comparison (gpuaudit plan --change) as console text: each cluster before
and after, then the findings that appear or go. The same data is the JSON report's
``plan`` section."""

from __future__ import annotations

from gpuaudit.results import ClusterPlan, FindingChange, PlanComparison

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


def _hosts(hosts: list[str] | None) -> str:
    if hosts is None:
        return "-"
    return ", ".join(hosts) if hosts else "none"


def _cluster(c: ClusterPlan) -> list[str]:
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
    out = [f"Cluster {c.cluster}"]
    out += [f"  {label:<27}{_change(b, a)}" for label, b, a in rows]
    if c.headroom:
        out.append("  headroom, new VMs that fit now / under N+k:")
        for h in c.headroom:
            label = f"{h.gpu_model} {h.profile}"
            b = f"{_n(h.fits_now_before)} / {_n(h.fits_nk_before)}"
            a = f"{_n(h.fits_now_after)} / {_n(h.fits_nk_after)}"
            out.append(f"    {label:<25}{_change(b, a)}")
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
