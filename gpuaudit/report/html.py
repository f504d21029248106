"""The HTML report: one self-contained file, for an admin right after a scan.

No network fetch of any kind: styles and script are inline, pictures are inline
SVG, and a Content-Security-Policy with hashes of the one script and one style
sheet forbids everything else. Autoescaping is on for every template.

What a reader needs first is rendered on the server, so that a mail client, a
printed copy or a browser without JavaScript shows it: the verdict, the top
actions with every failed finding, and the clusters, worst first. The tables the
script draws a page at a time travel in two non-executed blocks: the rules and
the failed and waived findings as JSON in <script type="application/json">,
escaped so that no name can close it; the passed findings and the inventory
tables (most of the bytes) gzip-compressed and base64-encoded in <script
type="application/octet-stream">, unpacked only when the reader asks for them. A
report of ten thousand VMs opens in under two seconds.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from datetime import date, datetime
from functools import lru_cache
from importlib.abc import Traversable
from typing import Any

import jinja2
from markupsafe import Markup

import gpuaudit
from gpuaudit.common import shipped
from gpuaudit.report.actions import finding_id, top_actions
from gpuaudit.report.age import finding_age, has_ages
from gpuaudit.report.capacity import build_chart
from gpuaudit.report.json_report import REPORT_SCHEMA_VERSION
from gpuaudit.report.kubernetes import cluster_views
from gpuaudit.report.operations import SPARK_HEIGHT, SPARK_WIDTH, operations_view
from gpuaudit.report.plan import measures
from gpuaudit.report.summary import DESIGNS, ClusterSummary, parse_time, summarize, tolerance
from gpuaudit.report.tables import Table, Value, inventory_tables
from gpuaudit.report.trends import sparklines, trends
from gpuaudit.results import CATEGORIES, SEVERITIES, AuditResult, Finding, severity_rank
from gpuaudit.verdict.judgement import judgement_of

TEMPLATE = "report.html.j2"
# Cluster cards shown open; the others wait, worst first, behind one click.
OPEN_CLUSTERS = 6
# Top actions shown on the first screen; the others wait behind one click (and print).
FIRST_ACTIONS = 7
# New findings named in the first screen's changes since the last scan.
CHANGES_LISTED = 5


def template_root() -> Traversable:
    """The templates: the installed gpuaudit.templates package, or templates/ in a checkout."""
    return shipped.folder(shipped.TEMPLATES, TEMPLATE)


def _asset(name: str) -> str:
    return template_root().joinpath(name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    def load(name: str) -> str:
        return _asset(name)

    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(load),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    # allow_nan=False: a NaN would stop the page's JSON.parse and show no rows.
    env.policies["json.dumps_kwargs"] = {
        "sort_keys": False,
        "ensure_ascii": False,
        "allow_nan": False,
    }
    env.filters["tolerance"] = tolerance
    env.filters["fid"] = finding_id
    env.filters["when"] = _when
    env.filters["thousands"] = lambda n: f"{n:,}"
    return env


def _when(text: str) -> str:
    value = parse_time(text)
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else (text or "unknown")


def worst_first(clusters: list[ClusterSummary]) -> list[ClusterSummary]:
    """Clusters by their worst failed severity, then fewest host failures tolerated, then name."""

    def key(c: ClusterSummary) -> tuple[int, int, str]:
        failed = [s for s in SEVERITIES if c.failed_by_severity.get(s)]
        rank = severity_rank(failed[0]) if failed else len(SEVERITIES)
        # Not simulated sorts after every N+k: there is no tolerance to compare.
        tolerates = c.tolerates if c.tolerates is not None else 1 << 30
        return (rank, tolerates, c.name)

    return sorted(clusters, key=key)


def worst_severity(c: ClusterSummary) -> str | None:
    return next((s for s in SEVERITIES if c.failed_by_severity.get(s)), None)


def packed(data: dict[str, Any]) -> str:
    """``data`` as JSON, gzip-compressed and base64-encoded, for the page's script to unpack."""
    # allow_nan=False: a NaN would stop the page's JSON.parse and show no rows.
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    # A lone surrogate in a name (an inventory file may escape one) cannot be UTF-8:
    # replace it, as every other format does, rather than fail the whole report.
    raw = gzip.compress(text.encode("utf-8", errors="replace"), compresslevel=6, mtime=0)
    return base64.b64encode(raw).decode("ascii")


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def _plain(value: Value) -> Any:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, date):
        return value.isoformat()
    return value


def _table_data(table: Table) -> dict[str, Any]:
    return {
        "key": table.key,
        "title": table.title,
        "columns": [[c.name, c.type] for c in table.columns],
        "rows": [[_plain(v) for v in row] for row in table.rows],
    }


def _data(result: AuditResult, tables: list[Table]) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the page needs at once (rules, failed and waived findings), and what it
    unpacks only when asked for (passed findings, inventory tables)."""
    rules = {
        r.id: [
            r.title,
            r.category,
            r.remediation,
            r.rationale,
            [[ref.title, ref.url] for ref in r.references],
        ]
        for r in result.rules
    }
    ages = has_ages(result)
    rows = [
        [
            f.severity,
            f.status,
            f.rule,
            f.object,
            f.object_kind,
            f.cluster or "",
            f.host or "",
            f.message,
            f.evidence,
            [f.waiver.reason, f.waiver.owner, f.waiver.expires] if f.waiver else None,
            *(_age_cells(result, f) if ages else []),
        ]
        for f in result.findings
    ]
    now = [row for row in rows if row[1] != "pass"]
    later = [row for row in rows if row[1] == "pass"]
    first = {
        "severities": list(SEVERITIES),
        "rules": rules,
        "findings": now,
        "passed": len(later),
    }
    if ages:  # the findings table gets an age column
        first["ages"] = True
    judgement = judgement_of(result)
    if judgement.states is not None:  # each open finding: new or unchanged
        shown = [f for f in result.findings if f.status != "pass"]
        first["states"] = [judgement.state(f) or "" for f in shown]
    return first, {"findings": later, "tables": [_table_data(t) for t in tables]}


def _age_cells(result: AuditResult, finding: Finding) -> list[Any]:
    """[age in days, first seen], or two empty strings for a finding of unknown age."""
    age = finding_age(result, finding)
    return ["", ""] if age is None else [age[1], age[0]]


def changes_view(result: AuditResult) -> dict[str, Any] | None:
    """What changed since the last recorded scan (ScanHistory), for the first screen.

    None without a history store. ``new_ids`` are the stable ids of the findings
    failed now and not then: each gets a "new" badge, as does an action holding one.
    The findings open then and no more are resolved or newly waived, as the history
    classifies them (gpuaudit.verdict.changes); ``expired`` counts the policy's
    waivers that have expired, whose findings count again.
    """
    history = result.history
    if history is None:
        return None
    severity: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}
    new = sorted(history.new, key=lambda r: (severity.get(r.severity, 9), r.rule, r.object))
    return {
        "previous": history.previous_checked_at,
        "new": new[:CHANGES_LISTED],
        "new_count": len(history.new),
        "more_new": max(len(history.new) - CHANGES_LISTED, 0),
        "resolved_count": len(history.resolved),
        "waived_count": len(history.newly_waived),
        "new_ids": frozenset(r.id for r in history.new),
    }


def render_html(result: AuditResult) -> str:
    env = environment()
    script = _asset("report.js")
    style = _asset("report.css")
    if "</" in script or "<!--" in script or "</" in style:
        raise ValueError("report.js and report.css must not contain '</' or '<!--'")
    inv = result.inventory
    summary = summarize(result)
    sims = {s.cluster: s for s in result.simulations}
    charts = {name: build_chart(sim, inv) for name, sim in sims.items()}
    worst = {}
    for sim in result.simulations:
        for failure in sim.failures:
            if failure.host == sim.worst_host:
                worst[sim.cluster] = failure
    tables = inventory_tables(result)
    clusters = worst_first(summary.clusters)
    first, later = _data(result, tables)
    changes = changes_view(result)
    html = env.get_template(TEMPLATE).render(
        result=result,
        server=inv.source or inv.vcenter.name or "unknown server",
        actions=top_actions(result),
        first_actions=FIRST_ACTIONS,
        changes=changes,
        expired_waivers=len(result.expired_waivers),
        new_ids=changes["new_ids"] if changes else frozenset(),
        finding_id=finding_id,
        clusters=clusters,
        open_clusters=OPEN_CLUSTERS,
        worst_severity=worst_severity,
        inv=inv,
        summary=summary,
        severities=SEVERITIES,
        categories=[c for c in summary.failed_by_category if c in CATEGORIES]
        + [c for c in summary.failed_by_category if c not in CATEGORIES],
        designs=DESIGNS,
        charts=charts,
        worst=worst,
        tables=tables,
        kubernetes=cluster_views(result.kubernetes),
        maintenance=result.maintenance,
        headroom=result.headroom,
        stranded=result.stranded,
        plan=result.plan,
        plan_measures=measures,
        ops=operations_view(inv),
        licences=summary.licences,
        spark_w=SPARK_WIDTH,
        spark_h=SPARK_HEIGHT,
        gpus=sum(len(h.gpus) for h in inv.hosts),
        gpu_vms=sum(1 for v in inv.vms if v.gpus),
        data=first,
        more=packed(later),
        script=Markup(script),  # our own static file, checked above
        style=Markup(style),
        script_hash=_csp_hash(script),
        style_hash=_csp_hash(style),
        tool_version=result.tool_version or gpuaudit.__version__,
        report_version=REPORT_SCHEMA_VERSION,
        trends=trends(result),
        sparklines=sparklines(result),
    )
    return html
