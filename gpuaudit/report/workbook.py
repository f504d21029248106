"""The workbook's sheets: the report's tables, made joinable and readable for auditors.

The shared tables (gpuaudit.report.tables) are what the HTML report shows too.
The workbook adds what an auditor needs to file and join them: every object sheet
starts with the vCenter scanned and the object's managed object id (VMs also
their BIOS and instance UUIDs, RVTools' "VM UUID"), every finding carries its
stable id and the date it was first seen, evidence reads as ``key: value`` lines,
and the failed findings are rolled up into a Top Actions sheet.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from datetime import date
from typing import Any

from gpuaudit.inventory import Inventory
from gpuaudit.report.actions import finding_id, top_actions
from gpuaudit.report.age import finding_age
from gpuaudit.report.audit_sheets import (
    action_findings_table,
    audit_summary_table,
    finding_key,
    rules_table,
)
from gpuaudit.report.guide import guide_table
from gpuaudit.report.headroom import headroom_table
from gpuaudit.report.kubernetes import displaced_table, nodes_table
from gpuaudit.report.maintenance import maintenance_table
from gpuaudit.report.plan import plan_tables
from gpuaudit.report.stranded import stranded_table
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
    shown_status,
    summary_table,
    vmotion_table,
    vms_table,
)
from gpuaudit.results import (
    SEVERITIES,
    AuditResult,
    ClusterSimulation,
    Finding,
    severity_rank,
)

VCENTER = "vCenter"
VCENTER_UUID = "vCenter UUID"
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
    for key in sorted(evidence, key=str):
        value = evidence[key]
        if type(value) in _PLAIN:  # most evidence: a flat mapping of plain values
            lines.append(f"{key}: {value}")
        else:
            _walk(lines, str(key), value)
    return "\n".join(lines)


_PLAIN = (str, int, float)  # shown as str() shows them: not bool (yes/no), not None


def _walk(lines: list[str], prefix: str, value: Any) -> None:
    # A function of the module, not a closure over ``lines``: a nested function that
    # calls itself is a reference cycle, which only a collection frees, and the
    # workbook makes one for each of a quarter of a million findings.
    if isinstance(value, dict):
        if not value:
            lines.append(f"{prefix}: (none)")
        for key in sorted(value, key=str):
            _walk(lines, f"{prefix}.{key}" if prefix else str(key), value[key])
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else list(value)
        if any(isinstance(i, (dict, list, tuple, set, frozenset)) for i in items):
            for index, item in enumerate(items):
                _walk(lines, f"{prefix}.{index}", item)
        else:
            lines.append(f"{prefix}: {', '.join(_scalar(i) for i in items) or '(none)'}")
    else:
        lines.append(f"{prefix}: {_scalar(value)}")


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
    table: Table,
    server: Sequence[str],
    morefs: Callable[[list[Value]], Sequence[Value]],
    names: list[str],
) -> Table:
    """``table`` led by the vCenter columns (``server``: its name and instance UUID)
    and the id columns ``names``."""
    columns = [Column(VCENTER), Column(VCENTER_UUID)] + [Column(n) for n in names]
    return _with_columns(table, columns, ([*server, *morefs(row)] for row in table.rows))


def _by_host(table: Table, server: Sequence[str], host_morefs: dict[str, str]) -> Table:
    """A table of per-host rows, led by vCenter and the host's managed object id."""
    index = table.column_index("Host")
    return _joinable(
        table, server, lambda row: [host_morefs.get(str(row[index]), "")], [HOST_MOREF]
    )


# The Findings columns an auditor files, in front and in this order: the sheet's
# print area (gpuaudit.report.xlsx). The columns for sorting and joining follow the
# shared table's, the long stable id closes them, and the age (with a history store
# or a baseline) ends the row.
FINDINGS_FRONT = ("Key", "Severity", "Status", "Rule", "Object", "Cluster", "Title")
FINDINGS_BACK = (
    "Severity Rank",
    MOREF,
    "MoRef Type",
    "First Seen",
    VCENTER,
    VCENTER_UUID,
    "ID",
    "Age (days)",
)

# A finding's object kind -> the vSphere type of the managed object it joins to.
# A GPU is a part of its host: it joins to the host's row.
MOREF_TYPES = {
    "cluster": "ClusterComputeResource",
    "host": "HostSystem",
    "gpu": "HostSystem",
    "vm": "VirtualMachine",
    "datastore": "Datastore",
}


def _morefs(inv: Inventory) -> dict[tuple[str, str], str]:
    """(object kind, name) -> managed object id, for every object a finding may name."""
    found: dict[tuple[str, str], str] = {}
    for kind, objects in (
        ("cluster", inv.clusters),
        ("host", inv.hosts),
        ("vm", inv.vms),
        ("datastore", inv.datastores),
    ):
        for obj in objects:
            found.setdefault((kind, obj.name), obj.moref)
    return found


def _finding_moref(morefs: dict[tuple[str, str], str], f: Finding) -> str | None:
    if f.object_kind == "gpu":  # "host/pci_id": the host's id
        return morefs.get(("host", f.host or f.object.rsplit("/", 1)[0]))
    return morefs.get((f.object_kind, f.object))


def _reordered(table: Table, front: Sequence[str], back: Sequence[str]) -> Table:
    """``table`` with the columns ``front`` first and those of ``back`` it has last, the
    others between."""
    order = _order([c.name for c in table.columns], front, back)
    rows = [[row[i] for i in order] for row in table.rows]
    return Table(table.key, table.title, [table.columns[i] for i in order], rows)


def _order(names: list[str], front: Sequence[str], back: Sequence[str]) -> list[int]:
    """The indexes of ``names`` with ``front`` first and those of ``back`` last."""
    middle = [n for n in names if n not in front and n not in back]
    return [names.index(n) for n in (*front, *middle, *back) if n in names]


# Failed, not proven, then notices (info findings that fail), waived and passed: the
# printed Findings are the leading failed and not-proven rows, so notices follow them.
_SHEET_ORDER = ("fail", "unproven", "notice", "waived", "pass")


def _report_order(f: Finding) -> tuple[int, int, str, str]:
    return (_SHEET_ORDER.index(shown_status(f)), severity_rank(f.severity), f.rule, f.object)


def finding_rows(result: AuditResult) -> Table:
    """The Findings sheet: the short key and what an auditor files first, the stable id last.

    Each row also carries its severity's rank (1 critical ... 5 info: it sorts in
    severity order, the names do not) and the managed object id and type its
    object joins to on the Clusters, Hosts, VMs and Datastores sheets.

    Rows come failed first, then not proven, waived and passed, each worst severity
    first (the order the checker gives): the print area is the leading failed and
    not-proven rows, so a result whose findings come in another order is sorted.
    """
    result = dataclasses.replace(result, findings=sorted(result.findings, key=_report_order))
    # Evidence as lines, written once (not as JSON first): 212,192 findings at the maximum.
    table = findings_table(result, evidence=evidence_lines)
    inv = result.inventory
    morefs = _morefs(inv)
    uuid = inv.vcenter.instance_uuid

    def extra(f: Finding) -> list[Value]:
        fid = finding_id(f)
        moref = _finding_moref(morefs, f)
        kind = MOREF_TYPES.get(f.object_kind) if moref else None
        first = _first_seen(result, f)
        rank = severity_rank(f.severity) + 1
        return [finding_key(fid), rank, moref, kind, first, inv.source, uuid, fid]

    columns = [
        Column("Key"),
        Column("Severity Rank", INT),
        Column(MOREF),
        Column("MoRef Type"),
        Column("First Seen", DATE),
        Column(VCENTER),
        Column(VCENTER_UUID),
        Column("ID"),
    ]
    # As _reordered(_with_columns(table, columns, ...)) would give, row by row in
    # place: a findings table at the maximum holds over 200,000 rows.
    columns += table.columns
    order = _order([c.name for c in columns], FINDINGS_FRONT, FINDINGS_BACK)
    rows = table.rows
    if len(rows) != len(result.findings):
        raise ValueError("the findings table has not one row per finding")
    for index, finding in enumerate(result.findings):
        row = extra(finding) + rows[index]
        rows[index] = [row[i] for i in order]
    return Table(table.key, table.title, [columns[i] for i in order], rows)


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
                _objects(action.findings),
                action.remediation,
            ]
        )
    return Table("top-actions", "Top Actions", columns, rows)


OBJECTS_LISTED = 20  # a Top Actions row names this many objects; Action Findings has all


def _objects(findings: list[Finding]) -> str:
    names = ", ".join(f.object for f in findings[:OBJECTS_LISTED])
    more = len(findings) - OBJECTS_LISTED
    return f"{names} and {more} more (Action Findings)" if more > 0 else names


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
    # Every sheet names the vCenter one way: the server as given (RVTools' "VI SDK
    # Server"), with its instance UUID (RVTools' "VI SDK UUID").
    server = (inv.source, inv.vcenter.instance_uuid)
    ids = [Column(VCENTER), Column(VCENTER_UUID), Column(MOREF)]
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
    sheets = [
        audit_summary_table(result, summary),
        summary_table(result, summary),
        top_actions_table(result),
        action_findings_table(result),
        finding_rows(result),
        _joinable(
            clusters, server, lambda r: [cluster_morefs.get(str(r[cluster_index]), "")], [MOREF]
        ),
        capacity_table(result),
        _with_columns(hosts, ids, ([*server, h.moref] for h in inv.hosts)),
        _by_host(gpus_table(result), server, host_morefs),
        _by_host(profiles_table(inv), server, host_morefs),
        _with_columns(
            vms,
            [*ids, Column("BIOS UUID"), Column("Instance UUID")],
            ([*server, v.moref, v.bios_uuid, v.instance_uuid] for v in inv.vms),
        ),
        _with_columns(datastores, ids, ([*server, d.moref] for d in inv.datastores)),
        _by_host(adapters_table(inv), server, host_morefs),
        _by_host(vmotion_table(inv), server, host_morefs),
        _joinable(failover_table(result), server, lambda r: [], []),
        licences_table(summary),
        _by_host(host_licences_table(inv), server, host_morefs),
        _joinable(gaps_table(inv), server, lambda r: [], []),
        *kubernetes,
        *([maintenance_table(result)] if result.maintenance else []),
        *([headroom_table(result)] if result.headroom else []),
        *([stranded_table(result)] if result.stranded else []),
        *plan_tables(result),
        rules_table(result),
    ]
    about = about_table(result, report_version)
    return [*sheets, guide_table(sheets, [about]), about]
