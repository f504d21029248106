"""The report's tables: one definition feeds the workbook's sheets and the HTML's sections.

Column names follow RVTools' habit: short, stable, and the same month to month,
so that an auditor can diff two workbooks. Rename a column only with a new
report schema version (docs/report-formats.md lists the columns).

Each column is declared with the function that reads its value from one row's
object, so a column and its value can never drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from operator import attrgetter
from typing import Any

from gpuaudit.inventory import Cluster, Datastore, Gap, Gpu, Host, Inventory, Licence, Vm
from gpuaudit.report.age import finding_age, has_ages
from gpuaudit.report.summary import (
    DESIGNS,
    ClusterSummary,
    Summary,
    parse_time,
    tolerance,
)
from gpuaudit.results import (
    NOTICE,
    AuditResult,
    ClusterSimulation,
    Finding,
    GpuSlots,
    HostFailure,
    Rule,
)
from gpuaudit.verdict.judgement import judgement_of

# Column types: how a value is stored in the workbook and sorted in the HTML.
TEXT, INT, FLOAT, BOOL, DATETIME, DATE = "text", "int", "float", "bool", "datetime", "date"

Value = str | int | float | bool | datetime | date | None

# The report summary's verdict as the Summary sheet words it.
VERDICT_WORDS = {"fail": "FAIL", "unproven": "NOT PROVEN", "pass": "PASS"}


@dataclass(frozen=True)
class Column:
    name: str
    type: str = TEXT


@dataclass
class Table:
    key: str  # stable identifier, used for the HTML section id
    title: str  # the sheet name (31 characters at most)
    columns: list[Column]
    rows: list[list[Value]] = field(default_factory=list)

    def column_index(self, name: str) -> int:
        return [c.name for c in self.columns].index(name)


def _table(
    key: str, title: str, spec: list[tuple[str, str, Callable[[Any], Value]]], items: Iterable[Any]
) -> Table:
    columns = [Column(name, kind) for name, kind, _ in spec]
    getters = [get for _, _, get in spec]
    return Table(key, title, columns, [[get(item) for get in getters] for item in items])


def evidence_text(evidence: dict[str, Any]) -> str:
    """Evidence as compact, stable JSON (for a cell or a test case's text)."""
    if not evidence:
        return ""
    return json.dumps(evidence, sort_keys=True, ensure_ascii=False, default=str)


def hex_id(value: int | None) -> str:
    return "" if value is None else f"0x{value & 0xFFFF:04x}"


def joined(values: Iterable[str | None]) -> str:
    return ", ".join(v for v in values if v)


def _date(text: str) -> date | str | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return text


def _time(text: str) -> datetime | str | None:
    return parse_time(text) or (text or None)


def summary_table(result: AuditResult, summary: Summary) -> Table:
    inv = result.inventory
    rows: list[tuple[str, str, Value]] = []
    if summary.nothing_examined:
        rows.append(("Verdict", "FAIL: nothing was examined", summary.headline))
    rows += [
        # The server as given: the same name as every sheet's vCenter column.
        ("Estate", "vCenter", inv.source),
        ("Estate", "vCenter UUID", inv.vcenter.instance_uuid),
        ("Estate", "Source", inv.source),
        ("Estate", "Product", inv.vcenter.product),
        ("Estate", "Version", inv.vcenter.version),
        ("Estate", "Build", inv.vcenter.build),
        ("Estate", "Scanned (UTC)", _time(inv.collected_at)),
        ("Estate", "Checked (UTC)", _time(result.checked_at)),
        ("Verdict", "Verdict", VERDICT_WORDS.get(summary.verdict, summary.verdict.upper())),
        ("Verdict", "Worst severity", summary.worst_severity or ""),
        ("Verdict", "Incomplete", summary.incomplete),
        ("Verdict", "Fail on", summary.fail_on),
        *(
            ("Against the baseline", state.capitalize(), n)
            for state, n in (summary.baseline or {}).items()
        ),
        ("Results", "Failed", summary.results.get("fail", 0)),
        ("Results", "Notices (info)", summary.notices),
        ("Results", "Not proven", summary.results.get("unproven", 0)),
        ("Results", "Waived", summary.results.get("waived", 0)),
        ("Results", "Passed", summary.results.get("pass", 0)),
    ]
    rows += [
        ("Failed by severity", s, n) for s, n in summary.failed_by_severity.items() if s != NOTICE
    ]
    rows += [("Failed by category", c, n) for c, n in summary.failed_by_category.items()]
    rows += [("Not proven by severity", s, n) for s, n in summary.unproven_by_severity.items()]
    rows += [
        ("Inventory", "Clusters", len(inv.clusters)),
        ("Inventory", "Hosts", len(inv.hosts)),
        ("Inventory", "GPUs", sum(len(h.gpus) for h in inv.hosts)),
        ("Inventory", "VMs", len(inv.vms)),
        ("Inventory", "GPU VMs", sum(1 for v in inv.vms if v.gpus)),
        ("Inventory", "Datastores", len(inv.datastores)),
        # Data gaps counts the Data Gaps sheet's rows; the two after it divide them.
        ("Data", "Data gaps", summary.gaps + summary.beyond_role),
        ("Data", "Gaps that make verdicts uncertain", summary.gaps),
        ("Data", "Not read by the Read-only role", summary.beyond_role),
        ("Data", "Rule errors", summary.rule_errors),
    ]
    rows += [
        ("Cluster N+k", c.name, tolerance(c.tolerates, c.tolerates_unproven))
        for c in summary.clusters
    ]
    spec: list[tuple[str, str, Callable[[Any], Value]]] = [
        ("Section", TEXT, lambda r: r[0]),
        ("Item", TEXT, lambda r: r[1]),
        ("Value", TEXT, lambda r: r[2]),
    ]
    return _table("summary", "Summary", spec, rows)


def findings_table(
    result: AuditResult, evidence: Callable[[dict[str, Any]], str] = evidence_text
) -> Table:
    """The findings, one row each; ``evidence`` writes a finding's evidence as text."""

    # What the finding's rule says, by rule id: one text per rule, shared by its findings'
    # rows, and empty for a rule not in the catalogue. A finding's own fields are read by
    # attrgetter: a table at the maximum holds 223,684 findings.
    def of_rule(read: Callable[[Rule], str]) -> Callable[[Finding], str]:
        texts = {r.id: read(r) for r in result.rules}
        return lambda f: texts.get(f.rule, "")

    spec: list[tuple[str, str, Callable[[Finding], Value]]] = [
        ("Status", TEXT, shown_status),
        ("Severity", TEXT, attrgetter("severity")),
        ("Rule", TEXT, attrgetter("rule")),
        ("Category", TEXT, of_rule(lambda r: r.category)),
        ("Title", TEXT, of_rule(lambda r: r.title)),
        ("Object", TEXT, attrgetter("object")),
        ("Kind", TEXT, attrgetter("object_kind")),
        ("Cluster", TEXT, attrgetter("cluster")),
        ("Host", TEXT, attrgetter("host")),
        ("Message", TEXT, attrgetter("message")),
        ("Evidence", TEXT, lambda f: evidence(f.evidence)),
        ("Remediation", TEXT, of_rule(lambda r: r.remediation)),
        ("Waiver Reason", TEXT, lambda f: f.waiver.reason if f.waiver else None),
        ("Waiver Owner", TEXT, lambda f: f.waiver.owner if f.waiver else None),
        ("Waiver Expires", DATE, lambda f: _date(f.waiver.expires) if f.waiver else None),
        ("References", TEXT, of_rule(references_text)),
    ]
    if has_ages(result):  # with history or a baseline: how long each finding has been there
        # (the workbook leads each row with the first-seen day, beside the stable id)
        spec += [("Age (days)", INT, lambda f: _age_days(result, f))]
    judgement = judgement_of(result)
    if judgement.states is not None:  # with a baseline: each open finding new or unchanged
        spec += [("Baseline", TEXT, judgement.state)]
    return _table("findings", "Findings", spec, result.findings)


def shown_status(finding: Finding) -> str:
    """The status a table shows: an info finding that fails is a notice."""
    return "notice" if finding.failed and finding.severity == NOTICE else finding.status


def _age_days(result: AuditResult, finding: Finding) -> Value:
    age = finding_age(result, finding)
    return age[1] if age else None


def references_text(rule: Rule) -> str:
    """A rule's references, one "title: URL" a line (for a cell or a help text)."""
    return "\n".join(f"{ref.title}: {ref.url}" for ref in rule.references)


def clusters_table(result: AuditResult, summary: Summary) -> Table:
    blank = Cluster("", "")
    pairs = [(s, result.inventory.cluster(s.name) or blank) for s in summary.clusters]
    Row = tuple[ClusterSummary, Cluster]

    def real(get: Callable[[Cluster], Value]) -> Callable[[Row], Value]:
        return lambda p: get(p[1]) if p[1] is not blank else None

    spec: list[tuple[str, str, Callable[[Row], Value]]] = [
        ("Cluster", TEXT, lambda p: p[0].name),
        ("Datacenter", TEXT, lambda p: p[0].datacenter),
        ("Design", TEXT, lambda p: p[0].design),
        ("Design Name", TEXT, lambda p: DESIGNS.get(p[0].design or "", "")),
        ("HA", BOOL, real(lambda c: c.ha_enabled)),
        ("Host Monitoring", BOOL, real(lambda c: c.ha_host_monitoring)),
        ("Admission Control", BOOL, real(lambda c: c.admission_control.enabled)),
        ("AC Policy", TEXT, real(lambda c: c.admission_control.policy)),
        ("Failover Level", INT, real(lambda c: c.admission_control.failover_level)),
        ("CPU %", INT, real(lambda c: c.admission_control.cpu_percent)),
        ("Mem %", INT, real(lambda c: c.admission_control.memory_percent)),
        ("Restart Priority", TEXT, real(lambda c: c.default_restart_priority)),
        ("DRS", BOOL, real(lambda c: c.drs_enabled)),
        ("DRS Automation", TEXT, real(lambda c: c.drs_automation)),
        ("# Hosts", INT, lambda p: p[0].hosts),
        ("# GPU Hosts", INT, lambda p: p[0].gpu_hosts),
        ("# GPUs", INT, lambda p: p[0].gpus),
        ("# GPU VMs", INT, lambda p: p[0].gpu_vms),
        (
            "N+k",
            TEXT,
            lambda p: (
                tolerance(p[0].tolerates, p[0].tolerates_unproven) if p[0].simulated else None
            ),
        ),
        ("Tolerates", INT, lambda p: p[0].tolerates),
        ("Worst Host", TEXT, lambda p: p[0].worst_host),
        ("Unplaced (Worst)", INT, lambda p: p[0].unplaced_worst if p[0].simulated else None),
        ("Spare per Model", TEXT, lambda p: p[0].spare if p[0].simulated else None),
        ("Failed", INT, lambda p: p[0].failed),
        ("Critical", INT, lambda p: p[0].failed_by_severity.get("critical", 0)),
        ("High", INT, lambda p: p[0].failed_by_severity.get("high", 0)),
    ]
    return _table("clusters", "Clusters", spec, pairs)


def _gpu_models(host: Host) -> str:
    models: dict[str, int] = {}
    for g in host.gpus:
        name = g.model or g.device_name
        models[name] = models.get(name, 0) + 1
    return ", ".join(f"{n}x {m}" for m, n in models.items())


def hosts_table(inv: Inventory) -> Table:
    spec: list[tuple[str, str, Callable[[Host], Value]]] = [
        ("Host", TEXT, lambda h: h.name),
        ("Cluster", TEXT, lambda h: h.cluster),
        ("Datacenter", TEXT, lambda h: h.datacenter),
        ("Version", TEXT, lambda h: h.version),
        ("Build", TEXT, lambda h: h.build),
        ("Vendor", TEXT, lambda h: h.vendor),
        ("Model", TEXT, lambda h: h.model),
        ("Connection State", TEXT, lambda h: h.connection_state),
        ("Maintenance", BOOL, lambda h: h.in_maintenance),
        ("# Cores", INT, lambda h: h.cpu_cores),
        ("CPU MHz", INT, lambda h: h.cpu_mhz),
        ("Memory MB", INT, lambda h: h.memory_mb),
        ("# GPUs", INT, lambda h: len(h.gpus)),
        ("GPU Models", TEXT, _gpu_models),
        ("Graphics Type", TEXT, lambda h: h.default_graphics_type),
        ("Assignment Policy", TEXT, lambda h: h.assignment_policy),
        ("# vGPU Profiles", INT, lambda h: len(h.vgpu_profiles)),
        ("# vMotion NICs", INT, lambda h: len(h.vmotion_nics)),
        ("# HBAs", INT, lambda h: sum(1 for a in h.adapters if a.kind in ("fc", "fcoe", "iscsi"))),
    ]
    return _table("hosts", "Hosts", spec, inv.hosts)


def gpus_table(result: AuditResult) -> Table:
    slots: dict[tuple[str, str], GpuSlots] = {}
    for simulation in result.simulations:
        for s in simulation.capacity:
            slots[(s.host, s.pci_id)] = s
    none = GpuSlots("", "", "", 0, "")
    rows = [
        (h, g, slots.get((h.name, g.pci_id), none)) for h in result.inventory.hosts for g in h.gpus
    ]

    def slot(get: Callable[[GpuSlots], Value]) -> Callable[[Any], Value]:
        return lambda r: get(r[2]) if r[2] is not none else None

    spec: list[tuple[str, str, Callable[[Any], Value]]] = [
        ("Host", TEXT, lambda r: r[0].name),
        ("Cluster", TEXT, lambda r: r[0].cluster),
        ("PCI ID", TEXT, lambda r: r[1].pci_id),
        ("Vendor", TEXT, lambda r: r[1].vendor_name),
        ("Model", TEXT, lambda r: r[1].model),
        ("Known Model", BOOL, lambda r: r[1].known_model),
        ("Device Name", TEXT, lambda r: r[1].device_name),
        ("Vendor ID", TEXT, lambda r: hex_id(r[1].vendor_id)),
        ("Device ID", TEXT, lambda r: hex_id(r[1].device_id)),
        ("Memory MB", INT, lambda r: r[1].memory_mb),
        ("Graphics Type", TEXT, lambda r: r[1].graphics_type),
        ("vGPU Mode", TEXT, lambda r: r[1].vgpu_mode),
        ("Passthru Capable", BOOL, lambda r: r[1].passthrough_capable),
        ("Passthru Enabled", BOOL, lambda r: r[1].passthrough_enabled),
        ("Passthru Active", BOOL, lambda r: r[1].passthrough_active),
        ("Use", TEXT, slot(lambda s: s.mode)),
        ("Profile", TEXT, slot(lambda s: s.profile)),
        ("Slots", INT, slot(lambda s: s.capacity)),
        ("Used", INT, slot(lambda s: s.used)),
        ("Free", INT, slot(lambda s: max(s.capacity - s.used, 0))),
        ("VMs", TEXT, lambda r: joined(r[1].vms)),
    ]
    spec += telemetry_columns(lambda r: r[1])
    return _table("gpus", "GPUs", spec, rows)


# The GPU telemetry columns: (label, unit, GpuTelemetry field).
TELEMETRY_COUNTERS = (
    ("Util", "%", "utilization_percent"),
    ("Mem Used", "MB", "memory_used_mb"),
    ("Mem", "%", "memory_usage_percent"),
    ("Temp", "C", "temperature_c"),
    ("Power", "W", "power_w"),
)


def telemetry_columns(
    gpu_of: Callable[[Any], Gpu],
) -> list[tuple[str, str, Callable[[Any], Value]]]:
    """Average and peak of each GPU counter over the telemetry window."""

    def stat(counter: str, which: str) -> Callable[[Any], Value]:
        def get(row: Any) -> Value:
            tel = gpu_of(row).telemetry
            stats = getattr(tel, counter, None) if tel is not None else None
            return getattr(stats, which, None) if stats is not None else None

        return get

    columns: list[tuple[str, str, Callable[[Any], Value]]] = []
    for label, unit, counter in TELEMETRY_COUNTERS:
        columns.append((f"{label} Avg {unit}", FLOAT, stat(counter, "average")))
        columns.append((f"{label} Peak {unit}", FLOAT, stat(counter, "peak")))
    return columns


def licences_table(summary: Summary) -> Table:
    """NVIDIA vGPU licences: powered-on vGPU VMs per edition, per cluster and in total."""
    lic = summary.licences
    rows: list[tuple[str, str, Value, Value]] = [
        (r.cluster, r.edition, r.powered_on, r.registered) for r in lic.rows
    ]
    rows += [("Total", edition, n, None) for edition, n in lic.totals.items()]
    rows.append(("Total", "All editions", lic.total, None))
    rows.append(("Passthrough", lic.note, None, lic.passthrough_vms))
    spec: list[tuple[str, str, Callable[[Any], Value]]] = [
        ("Scope", TEXT, lambda r: r[0]),
        ("Edition", TEXT, lambda r: r[1]),
        ("Powered-on VMs", INT, lambda r: r[2]),
        ("Registered VMs", INT, lambda r: r[3]),
    ]
    return _table("licences", "Licences", spec, rows)


def host_licences_table(inv: Inventory) -> Table:
    """Each host's vSphere licence and GPU telemetry status."""

    def lic(get: Callable[[Licence], Value]) -> Callable[[Host], Value]:
        return lambda h: get(h.licence) if h.licence is not None else None

    spec: list[tuple[str, str, Callable[[Host], Value]]] = [
        ("Host", TEXT, lambda h: h.name),
        ("Cluster", TEXT, lambda h: h.cluster),
        ("Edition", TEXT, lic(lambda x: x.edition_key)),
        ("Licence", TEXT, lic(lambda x: x.name)),
        ("Key Ends", TEXT, lic(lambda x: x.key_tail)),
        ("Expires", DATE, lic(lambda x: _date(x.expires or ""))),
        ("Evaluation", BOOL, lic(lambda x: x.evaluation)),
        ("Features", TEXT, lic(lambda x: joined(sorted(x.features)))),
        ("GPU Counters", TEXT, lambda h: h.telemetry.status if h.telemetry else None),
        ("Counter Note", TEXT, lambda h: h.telemetry.reason if h.telemetry else None),
    ]
    return _table("host-licences", "Host Licences", spec, inv.hosts)


def profiles_table(inv: Inventory) -> Table:
    spec: list[tuple[str, str, Callable[[Any], Value]]] = [
        ("Host", TEXT, lambda r: r[0].name),
        ("Cluster", TEXT, lambda r: r[0].cluster),
        ("Profile", TEXT, lambda r: r[1].name),
        ("vMotion", BOOL, lambda r: r[1].migrate_supported),
        ("Suspend", BOOL, lambda r: r[1].suspend_supported),
    ]
    return _table(
        "profiles", "vGPU Profiles", spec, [(h, p) for h in inv.hosts for p in h.vgpu_profiles]
    )


def _vgpu_vmotion(vm: Vm) -> bool | None:
    flags = [a.migrate_supported for a in vm.gpus if a.kind == "vgpu"]
    if not flags or None in flags:
        return None
    return all(flags)


def vms_table(inv: Inventory, gpu_only: bool = False) -> Table:
    spec: list[tuple[str, str, Callable[[Vm], Value]]] = [
        ("VM", TEXT, lambda v: v.name),
        ("Powerstate", TEXT, lambda v: v.power_state),
        ("Host", TEXT, lambda v: v.host),
        ("Cluster", TEXT, lambda v: v.cluster),
        ("Datacenter", TEXT, lambda v: v.datacenter),
        ("Memory MB", INT, lambda v: v.memory_mb),
        ("Reservation MB", INT, lambda v: v.memory_reservation_mb),
        ("Mem Locked", BOOL, lambda v: v.memory_locked_to_max),
        ("Restart Priority", TEXT, lambda v: v.restart_priority),
        ("# GPUs", INT, lambda v: len(v.gpus)),
        ("GPU Kind", TEXT, lambda v: joined(sorted({a.kind for a in v.gpus}))),
        ("vGPU Profile", TEXT, lambda v: joined(a.profile for a in v.gpus)),
        ("PCI ID", TEXT, lambda v: joined(a.pci_id for a in v.gpus)),
        ("vGPU vMotion", BOOL, _vgpu_vmotion),
        ("Datastores", TEXT, lambda v: joined(v.datastores)),
    ]
    if gpu_only:
        return _table("gpu-vms", "GPU VMs", spec, [v for v in inv.vms if v.gpus])
    return _table("vms", "VMs", spec, inv.vms)


def _free_percent(d: Datastore) -> float | None:
    return round(100.0 * d.free_mb / d.capacity_mb, 1) if d.capacity_mb else None


def datastores_table(inv: Inventory) -> Table:
    spec: list[tuple[str, str, Callable[[Datastore], Value]]] = [
        ("Datastore", TEXT, lambda d: d.name),
        ("Datacenter", TEXT, lambda d: d.datacenter),
        ("Type", TEXT, lambda d: d.type),
        ("Transport", TEXT, lambda d: d.transport),
        ("Capacity MB", INT, lambda d: d.capacity_mb),
        ("Free MB", INT, lambda d: d.free_mb),
        ("Free %", FLOAT, _free_percent),
        ("Multi Host", BOOL, lambda d: d.multiple_host_access),
        ("Local", BOOL, lambda d: d.local),
        ("# Hosts", INT, lambda d: sum(1 for m in d.mounts if m.mounted)),
        ("# Inaccessible", INT, lambda d: sum(1 for m in d.mounts if not m.accessible)),
        ("# Dead Paths", INT, lambda d: sum(p.state == "dead" for m in d.mounts for p in m.paths)),
        ("Hosts", TEXT, lambda d: joined(m.host for m in d.mounts)),
        ("LUNs", TEXT, lambda d: joined(d.luns)),
    ]
    return _table("datastores", "Datastores", spec, inv.datastores)


def adapters_table(inv: Inventory) -> Table:
    spec: list[tuple[str, str, Callable[[Any], Value]]] = [
        ("Host", TEXT, lambda r: r[0].name),
        ("Cluster", TEXT, lambda r: r[0].cluster),
        ("Device", TEXT, lambda r: r[1].device),
        ("Type", TEXT, lambda r: r[1].kind),
        ("Model", TEXT, lambda r: r[1].model),
        ("Driver", TEXT, lambda r: r[1].driver),
        ("Status", TEXT, lambda r: r[1].status),
        ("Port WWN", TEXT, lambda r: r[1].port_wwn),
        ("Node WWN", TEXT, lambda r: r[1].node_wwn),
        ("SW iSCSI", BOOL, lambda r: r[1].iscsi_software),
    ]
    return _table("adapters", "Adapters", spec, [(h, a) for h in inv.hosts for a in h.adapters])


def vmotion_table(inv: Inventory) -> Table:
    spec: list[tuple[str, str, Callable[[Any], Value]]] = [
        ("Host", TEXT, lambda r: r[0].name),
        ("Cluster", TEXT, lambda r: r[0].cluster),
        ("Device", TEXT, lambda r: r[1].device),
        ("IP", TEXT, lambda r: r[1].ip),
        ("Portgroup", TEXT, lambda r: r[1].portgroup),
        ("Uplink Mbps", INT, lambda r: r[1].uplink_speed_mbps),
    ]
    return _table(
        "vmotion", "vMotion Network", spec, [(h, n) for h in inv.hosts for n in h.vmotion_nics]
    )


def _unplaced(f: HostFailure) -> str:
    return "; ".join(f"{p.vm} ({p.reason})" if p.reason else p.vm for p in f.unplaced)


def _manual_only(f: HostFailure) -> str:
    return "; ".join(f"{p.vm} ({p.reason})" if p.reason else p.vm for p in f.manual_only)


def _unproven(f: HostFailure) -> str:
    return "; ".join(f"{p.vm} ({p.reason})" if p.reason else p.vm for p in f.unproven)


def failover_table(result: AuditResult) -> Table:
    Row = tuple[ClusterSimulation, HostFailure]
    spec: list[tuple[str, str, Callable[[Row], Value]]] = [
        ("Cluster", TEXT, lambda r: r[0].cluster),
        ("# Hosts", INT, lambda r: r[0].hosts),
        ("Failed Host", TEXT, lambda r: r[1].host),
        ("Worst", BOOL, lambda r: r[1].host == r[0].worst_host),
        ("Displaced", INT, lambda r: r[1].displaced),
        ("Placed", INT, lambda r: len(r[1].placed)),
        ("Unplaced", INT, lambda r: len(r[1].unplaced)),
        ("Unplaced VMs", TEXT, lambda r: _unplaced(r[1])),
        ("Manual Only", INT, lambda r: len(r[1].manual_only)),
        ("Manual Only VMs", TEXT, lambda r: _manual_only(r[1])),
        ("Not Proven", INT, lambda r: len(r[1].unproven)),
        ("Not Proven VMs", TEXT, lambda r: _unproven(r[1])),
        ("N+k", TEXT, lambda r: tolerance(r[0].tolerates, r[0].tolerates_unproven)),
    ]
    rows = [(s, f) for s in result.simulations for f in s.failures]
    return _table("failover", "Failover Simulation", spec, rows)


def gaps_table(inv: Inventory) -> Table:
    spec: list[tuple[str, str, Callable[[Gap], Value]]] = [
        ("Object", TEXT, lambda g: g.object),
        ("Kind", TEXT, lambda g: g.kind),
        ("Property", TEXT, lambda g: g.property),
        ("Reason", TEXT, lambda g: g.reason),
        ("MoRef", TEXT, lambda g: g.moref),
    ]
    return _table("gaps", "Data Gaps", spec, inv.gaps)


def about_table(result: AuditResult, report_version: int) -> Table:
    inv = result.inventory
    rows: list[tuple[str, Value]] = [
        ("Tool", "gpuaudit"),
        ("Tool Version", result.tool_version),
        ("Report Schema", report_version),
        ("Rules Version", result.rules_version),
        ("Rules", len(result.rules)),
        ("Scan Time (UTC)", _time(inv.collected_at)),
        ("Check Time (UTC)", _time(result.checked_at)),
        ("Source", inv.source),
        ("vCenter UUID", inv.vcenter.instance_uuid),
        ("Inventory Schema", inv.schema_version),
        ("Policy", result.policy_source or ""),
        ("Waivers In Policy", len(result.waivers)),
        ("Waivers Applied", sum(1 for f in result.findings if f.status == "waived")),
        ("Expired Waivers", len(result.expired_waivers)),
    ]
    for w in result.waivers:
        rows.append(("Waiver", f"{w.rule} {w.object}: {w.reason} ({w.owner}, until {w.expires})"))
    for w in result.expired_waivers:
        rows.append(
            ("Expired Waiver", f"{w.rule} {w.object}: {w.reason} ({w.owner}, ended {w.expires})")
        )
    for e in result.errors:
        rows.append(("Rule Error", f"{e.rule}: {e.error}"))
    spec: list[tuple[str, str, Callable[[Any], Value]]] = [
        ("Item", TEXT, lambda r: r[0]),
        ("Value", TEXT, lambda r: r[1]),
    ]
    return _table("about", "About", spec, rows)


def inventory_tables(result: AuditResult) -> list[Table]:
    """The HTML report's inventory sections, in order."""
    inv = result.inventory
    return [
        hosts_table(inv),
        gpus_table(result),
        profiles_table(inv),
        vms_table(inv, gpu_only=True),
        datastores_table(inv),
        adapters_table(inv),
        vmotion_table(inv),
        failover_table(result),
        host_licences_table(inv),
        gaps_table(inv),
    ]
