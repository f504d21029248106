"""The workbook's sheets: the report's tables, made joinable and readable for auditors.

The shared tables (gpuaudit.report.tables) are what the HTML report shows too.
The workbook adds what an auditor needs to file and join them: every object sheet
starts with the vCenter scanned and the object's managed object id (VMs also
their BIOS and instance UUIDs, RVTools' "VM UUID"), every finding carries its
stable id and the date it was first seen, evidence reads as ``key: value`` lines,
and the failed findings are rolled up into a Top Actions sheet.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import date
from typing import Any

from gpuaudit.report.actions import finding_id, top_actions
from gpuaudit.report.age import finding_age
from gpuaudit.report.headroom import headroom_table
from gpuaudit.report.kubernetes import displaced_table, nodes_table
from gpuaudit.report.maintenance import maintenance_table
from gpuaudit.report.summary import summarize
from gpuaudit.report.tables import (
    DATE,
    INT,
    Column,
    Table,
    Value,
    about_table,
    adapters_table,
    clusters_table,
    datastores_table,
    failover_table,
    findings_table,
    gaps_table,
    gpus_table,
    host_licences_table,
    hosts_table,
    licences_table,
    profiles_table,
    summary_table,
    vmotion_table,
    vms_table,
)
from gpuaudit.results import SEVERITIES, AuditResult, ClusterSimulation, Finding

VCENTER = "vCenter"
MOREF = "MoRef ID"
HOST_MOREF = "Host MoRef ID"


def evidence_lines(evidence: dict[str, Any]) -> str:
    """Evidence as ``key: value`` lines, nested keys joined with dots, sorted by key.

    A list of plain values reads as one comma-separated value; a list holding
    mappings or lists numbers its items (``hosts.0.name: esx01``).
    """
    if not evidence:
        return ""
    lines: list[str] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            if not value:
                lines.append(f"{prefix}: (none)")
            for key in sorted(value, key=str):
                walk(f"{prefix}.{key}" if prefix else str(key), value[key])
        elif isinstance(value, (list, tuple, set, frozenset)):
            items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else list(value)
            if any(isinstance(i, (dict, list, tuple, set, frozenset)) for i in items):
                for index, item in enumerate(items):
                    walk(f"{prefix}.{index}", item)
            else:
                lines.append(f"{prefix}: {', '.join(_scalar(i) for i in items) or '(none)'}")
        else:
            lines.append(f"{prefix}: {_scalar(value)}")

    walk("", evidence)
    return "\n".join(lines)


def _scalar(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _with_columns(
    table: Table, before: Sequence[Column], values: Iterable[Sequence[Value]]
) -> Table:
    """``table`` with ``before`` columns in front, one sequence of values per row."""
    rows = [list(extra) + row for extra, row in zip(values, table.rows, strict=True)]
    return Table(table.key, table.title, list(before) + table.columns, rows)


def _joinable(
    table: Table, server: str, morefs: Callable[[list[Value]], Sequence[Value]], names: list[str]
) -> Table:
    """``table`` led by the vCenter column and the id columns ``names``."""
    columns = [Column(VCENTER)] + [Column(n) for n in names]
    return _with_columns(table, columns, ([server, *morefs(row)] for row in table.rows))


def _by_host(table: Table, server: str, host_morefs: dict[str, str]) -> Table:
    """A table of per-host rows, led by vCenter and the host's managed object id."""
    index = table.column_index("Host")
    return _joinable(
        table, server, lambda row: [host_morefs.get(str(row[index]), "")], [HOST_MOREF]
    )


def finding_rows(result: AuditResult) -> Table:
    """The Findings sheet: each finding's stable id and first-seen date lead its row."""
    table = findings_table(result)
    evidence = table.column_index("Evidence")
    for row, finding in zip(table.rows, result.findings, strict=True):
        row[evidence] = evidence_lines(finding.evidence)
    return _with_columns(
        table,
        [Column("ID"), Column("First Seen", DATE), Column(VCENTER)],
        ([finding_id(f), _first_seen(result, f), result.inventory.source] for f in result.findings),
    )


def _first_seen(result: AuditResult, finding: Finding) -> date | None:
    """The day the finding was first seen (history, else a baseline); None when unknown."""
    age = finding_age(result, finding)
    if age is None:
        return None
    try:
        return date.fromisoformat(age[0][:10])
    except ValueError:
        return None


def top_actions_table(result: AuditResult) -> Table:
    """The failed findings rolled up by rule, in the order to fix them."""
    columns = [
        Column("Rank", INT),
        Column("Severity"),
        Column("Rule"),
        Column("Title"),
        Column("# Objects", INT),
        Column("Clusters"),
        Column("Objects"),
        Column("Remediation"),
        Column("Finding IDs"),
    ]
    rows: list[list[Value]] = []
    for rank, action in enumerate(top_actions(result), start=1):
        rows.append(
            [
                rank,
                action.severity,
                action.rule,
                action.title,
                action.count,
                ", ".join(c or "(no cluster)" for c in action.clusters),
                ", ".join(f.object for f in action.findings),
                action.remediation,
                "\n".join(finding_id(f) for f in action.findings),
            ]
        )
    return Table("top-actions", "Top Actions", columns, rows)


def capacity_table(result: AuditResult) -> Table:
    """GPUs and vGPU slots per cluster, as they are and after the worst host failure."""

    def gpus(sim: ClusterSimulation, after: bool) -> int:
        return len(sim.after_worst if after else sim.capacity)

    def slots(sim: ClusterSimulation, after: bool) -> int:
        return sum(s.capacity for s in (sim.after_worst if after else sim.capacity))

    def free(sim: ClusterSimulation, after: bool) -> int:
        return sum(
            max(s.capacity - s.used, 0) for s in (sim.after_worst if after else sim.capacity)
        )

    columns = [
        Column("Cluster"),
        Column("Worst Host"),
        Column("GPUs", INT),
        Column("GPUs After Worst", INT),
        Column("Slots", INT),
        Column("Slots After Worst", INT),
        Column("Free Slots", INT),
        Column("Free After Worst", INT),
    ]
    rows: list[list[Value]] = []
    for sim in result.simulations:
        if not sim.capacity:
            continue  # a cluster without GPUs has no capacity to draw
        has_worst = sim.worst_host is not None
        rows.append(
            [
                sim.cluster,
                sim.worst_host,
                gpus(sim, False),
                gpus(sim, True) if has_worst else None,
                slots(sim, False),
                slots(sim, True) if has_worst else None,
                free(sim, False),
                free(sim, True) if has_worst else None,
            ]
        )
    return Table("gpu-capacity", "GPU Capacity", columns, rows)


def _clusters(result: AuditResult, table: Table) -> Table:
    """Clusters with a failed-finding count for every severity."""
    failed: dict[tuple[str, str], int] = {}
    for f in result.failed():
        key = (f.cluster or "", f.severity)
        failed[key] = failed.get(key, 0) + 1
    name = table.column_index("Cluster")
    kept = [i for i, c in enumerate(table.columns) if c.name not in ("Critical", "High")]
    columns = [table.columns[i] for i in kept] + [Column(s.capitalize(), INT) for s in SEVERITIES]
    rows = [
        [row[i] for i in kept] + [failed.get((str(row[name]), s), 0) for s in SEVERITIES]
        for row in table.rows
    ]
    return Table(table.key, table.title, columns, rows)


def audit_tables(result: AuditResult, report_version: int) -> list[Table]:
    """Every sheet of the workbook, in order."""
    summary = summarize(result)
    inv = result.inventory
    server = inv.source
    host_morefs = {h.name: h.moref for h in inv.hosts}
    cluster_morefs = {c.name: c.moref for c in inv.clusters}

    clusters = _clusters(result, clusters_table(result, summary))
    cluster_index = clusters.column_index("Cluster")
    vms = vms_table(inv)
    hosts = hosts_table(inv)
    datastores = datastores_table(inv)
    # Only with Kubernetes clusters given: other workbooks keep their sheets.
    kubernetes = (
        [nodes_table(result.kubernetes), displaced_table(result.kubernetes)]
        if result.kubernetes
        else []
    )
    return [
        summary_table(result, summary),
        top_actions_table(result),
        finding_rows(result),
        _joinable(
            clusters, server, lambda r: [cluster_morefs.get(str(r[cluster_index]), "")], [MOREF]
        ),
        capacity_table(result),
        _with_columns(
            hosts, [Column(VCENTER), Column(MOREF)], ([server, h.moref] for h in inv.hosts)
        ),
        _by_host(gpus_table(result), server, host_morefs),
        _by_host(profiles_table(inv), server, host_morefs),
        _with_columns(
            vms,
            [Column(VCENTER), Column(MOREF), Column("BIOS UUID"), Column("Instance UUID")],
            ([server, v.moref, v.bios_uuid, v.instance_uuid] for v in inv.vms),
        ),
        _with_columns(
            datastores,
            [Column(VCENTER), Column(MOREF)],
            ([server, d.moref] for d in inv.datastores),
        ),
        _by_host(adapters_table(inv), server, host_morefs),
        _by_host(vmotion_table(inv), server, host_morefs),
        _joinable(failover_table(result), server, lambda r: [], []),
        licences_table(summary),
        _by_host(host_licences_table(inv), server, host_morefs),
        _joinable(gaps_table(inv), server, lambda r: [], []),
        *kubernetes,
        *([maintenance_table(result)] if result.maintenance else []),
        *([headroom_table(result)] if result.headroom else []),
        about_table(result, report_version),
    ]
