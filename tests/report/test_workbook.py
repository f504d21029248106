"""The workbook's sheets for a small estate, the columns workbook.py adds written out by hand.

workbook.py leads every object sheet with the vCenter and the managed object ids,
the findings with their stable id and first-seen day, turns evidence into
``key: value`` lines, rolls failed findings into Top Actions and counts GPU
capacity per cluster (docs/report-formats.md, "Workbook"). The shared tables it
starts from are tables.py's and are pinned by that module's tests; here each sheet
is checked to be that table, unchanged, behind the columns workbook.py puts in front.
"""

from __future__ import annotations

import dataclasses
import gc
from datetime import date

from gpuaudit.inventory import Datastore, Gap
from gpuaudit.kubernetes.model import KubernetesReport
from gpuaudit.report import tables
from gpuaudit.report.audit_sheets import action_findings_table, audit_summary_table, rules_table
from gpuaudit.report.guide import guide_table
from gpuaudit.report.kubernetes import displaced_table, nodes_table
from gpuaudit.report.summary import summarize
from gpuaudit.report.tables import Column, Table
from gpuaudit.report.workbook import (
    _with_columns,
    audit_tables,
    capacity_table,
    evidence_lines,
    finding_rows,
    top_actions_table,
)
from gpuaudit.results import AuditResult, ClusterSimulation, Finding, GpuSlots, HostFailure
from tests.support.builders import Estate
from tests.support.small_report import ID_DOTDOT, ID_HA_GPU_A, ID_VDI, ID_X99, small_result

SERVER = "vc01.corp.example"
# sha256 of "rule\0kind\0object", worked out by hand.
ID_GPU_B = "7c7704f6a9cb0f0e36bfbbfe95f427091b1b409a21d858ad463f5da8f7b5ab99"
ID_HA_GPU_C = "5fbf856c1aeebbb90a19e29920d47d5360cbdb5f9de6104713fcb49a6f73a5d4"
ID_ESX_10 = "9e64bdc3ef160e9a9866116003b28f918b3565970931932035223185ce00eb5e"
ID_ESX_08 = "ccb5cbc56f11d2260124453c40d03e392a07d864341e92d6e17d0b33e85d7d7a"


# --- evidence ---------------------------------------------------------------------------


def test_evidence_lines_of_every_kind_of_value() -> None:
    evidence = {
        "z": None,
        "flag": True,
        "off": False,
        "n": 3,
        "ratio": 0.25,
        "hosts": [{"name": "esx01", "up": True}, ["a", "b"]],
        "names": ["b", "a"],
        "empty": [],
        "nothing": {},
        "set": {"y", "x"},
        "frozen": frozenset({2, 10}),
        "pair": ("p", None),
        "nested": {"b": {"c": 1}, "a": "x"},
        10: "ten",
        2: "two",
    }
    # Keys sorted as text ("10" before "2"); plain lists kept in order, sets sorted as
    # text; lists holding containers numbered.
    assert evidence_lines(evidence) == "\n".join(
        [
            "10: ten",
            "2: two",
            "empty: (none)",
            "flag: yes",
            "frozen: 10, 2",
            "hosts.0.name: esx01",
            "hosts.0.up: yes",
            "hosts.1: a, b",
            "n: 3",
            "names: b, a",
            "nested.a: x",
            "nested.b.c: 1",
            "nothing: (none)",
            "off: no",
            "pair: p, (none)",
            "ratio: 0.25",
            "set: x, y",
            "z: (none)",
        ]
    )


def test_evidence_lines_leave_nothing_for_the_collector() -> None:
    # The workbook writes one per finding, a quarter of a million at the configuration
    # maximum: a reference cycle in each waits, text and all, for a collection.
    gc.collect()
    gc.disable()
    try:
        assert evidence_lines({"hosts": [{"name": "esx01"}], "n": 1}).count("\n") == 1
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_evidence_lines_of_nothing() -> None:
    assert evidence_lines({}) == ""
    assert evidence_lines({"a": {}}) == "a: (none)"
    assert evidence_lines({"a": [[]]}) == "a.0: (none)"
    assert evidence_lines({"a": [{}]}) == "a.0: (none)"
    assert evidence_lines({"a": ({"k": 0},)}) == "a.0.k: 0"
    assert evidence_lines({"a": [{1}]}) == "a.0: 1"
    assert evidence_lines({"a": [frozenset({"f"})]}) == "a.0: f"
    assert evidence_lines({"a": [("t",)]}) == "a.0: t"
    assert evidence_lines({"a": ""}) == "a: "


def test_leading_values_must_match_the_rows_one_for_one() -> None:
    table = Table("t", "T", [Column("A")], [["a"], ["b"]])
    for values in ([["x"]], [["x"], ["y"], ["z"]]):
        try:
            _with_columns(table, [Column("X")], values)
        except ValueError:
            continue
        raise AssertionError(f"{len(values)} leading values taken for 2 rows")
    assert _with_columns(table, [Column("X")], [["x"], ["y"]]) == Table(
        "t", "T", [Column("X"), Column("A")], [["x", "a"], ["y", "b"]]
    )


# --- findings -----------------------------------------------------------------------------


def _without(table: Table, count: int) -> Table:
    """``table`` without its first ``count`` columns."""
    return Table(table.key, table.title, table.columns[count:], [r[count:] for r in table.rows])


# docs/report-formats.md's Findings columns, as it writes them; the sheet ends with
# Age (days) when ages are known (small_result knows one).
FINDINGS_DOC = (
    "Key, Severity, Status, Rule, Object, Cluster, Title, Category, Kind, Host, Message, "
    "Evidence, Remediation, Waiver Reason, Waiver Owner, Waiver Expires (date), References, "
    "Severity Rank (int), MoRef ID, MoRef Type, First Seen (date), vCenter, vCenter UUID, ID, "
    "Age (days) (int)"
)
FINDINGS_COLUMNS = [
    (n[: -len(" (int)")], "int")
    if n.endswith(" (int)")
    else (n[: -len(" (date)")], "date")
    if n.endswith(" (date)")
    else (n, "text")
    for n in FINDINGS_DOC.split(", ")
]
# small_result's findings in the checker's order: failed, then waived, then passed,
# each worst severity first.
SORTED = [0, 3, 4, 1, 2]
UUID = "5018a5b2-0c1d-4e7f-9a3b-2c4d6e8f0a1b"


def _column(table: Table, name: str) -> list[object]:
    index = table.column_index(name)
    return [r[index] for r in table.rows]


def test_finding_rows_key_first_id_last_in_the_checker_order() -> None:
    result = small_result()
    result.inventory.vcenter.instance_uuid = UUID
    result.findings[3].evidence = {"b": [1, 2], "a": {"x": None}}
    result.findings.reverse()  # in any order: the sheet sorts them
    table = finding_rows(result)
    assert (table.key, table.title) == ("findings", "Findings")
    assert [(c.name, c.type) for c in table.columns] == FINDINGS_COLUMNS
    ids = [ID_HA_GPU_A, ID_X99, ID_DOTDOT, ID_VDI, ID_GPU_B]
    assert _column(table, "ID") == ids
    assert _column(table, "Key") == [i[:12] for i in ids]
    assert _column(table, "Status") == ["fail", "fail", "waived", "waived", "pass"]
    assert _column(table, "Severity Rank") == [1, 4, 2, 3, 1]
    # gpu-a and esx-09.corp are in the inventory; the VMs and gpu-b are not.
    assert _column(table, "MoRef ID") == ["domain-c1", "host-9", None, None, None]
    assert _column(table, "MoRef Type") == [
        "ClusterComputeResource",
        "HostSystem",
        None,
        None,
        None,
    ]
    assert _column(table, "First Seen") == [date(2026, 11, 1), None, None, None, None]
    assert _column(table, "Age (days)") == [30, None, None, None, None]
    assert _column(table, "vCenter") == [SERVER] * 5
    assert _column(table, "vCenter UUID") == [UUID] * 5
    assert _column(table, "Evidence") == ["ha_enabled: no", "a.x: (none)\nb: 1, 2", "", "", ""]
    # Every other column is the shared table's, for the same finding.
    findings = list(reversed(result.findings))
    shared = tables.findings_table(
        dataclasses.replace(result, findings=[findings[i] for i in SORTED])
    )
    for column in shared.columns:
        if column.name != "Evidence":
            assert _column(table, column.name) == _column(shared, column.name), column.name


def test_gpu_findings_join_their_hosts_row_and_unknown_objects_none() -> None:
    result = small_result()
    result.findings = [
        Finding("GPU-01", "esx-01.corp/0000:3b:00.0", "gpu", "fail", "high", "m"),
        Finding(
            "GPU-01", "esx-09.corp/0000:af:00.0", "gpu", "fail", "high", "m", host="esx-09.corp"
        ),
        Finding("DS-02", "san1", "datastore", "fail", "high", "m"),
        Finding("VC-01", "vc01", "vcenter", "fail", "high", "m"),
    ]
    result.inventory.datastores = [Datastore(name="san1", moref="datastore-7")]
    table = finding_rows(result)
    # One severity: by rule, then object. A GPU's object starts with its host's name.
    assert _column(table, "Rule") == ["DS-02", "GPU-01", "GPU-01", "VC-01"]
    assert _column(table, "MoRef ID") == ["datastore-7", "host-1", "host-9", None]
    assert _column(table, "MoRef Type") == ["Datastore", "HostSystem", "HostSystem", None]


def test_first_seen_unknown_or_unreadable() -> None:
    result = small_result()
    result.first_seen = {ID_HA_GPU_A: "not a date", ID_X99: "2026-10-05T23:59:59+05:00"}
    table = finding_rows(result)
    assert _column(table, "First Seen") == [None, date(2026, 10, 5), None, None, None]


def test_top_actions_rolls_failed_findings_up_by_rule() -> None:
    result = small_result()
    extra = [
        Finding("X-99", "esx-10.corp", "host", "fail", "low", "odd", cluster="gpu-a"),
        Finding("HA-01", "gpu-c", "cluster", "fail", "high", "off"),
        Finding("X-99", "esx-08.corp", "host", "fail", "high", "odd", cluster="gpu-a"),
    ]
    result.findings = result.findings + extra
    table = top_actions_table(result)
    assert (table.key, table.title) == ("top-actions", "Top Actions")
    assert table.columns == [
        Column("Rank", "int"),
        Column("Severity"),
        Column("Rule"),
        Column("Title"),
        Column("# Objects", "int"),
        Column("Clusters"),
        Column("Objects"),
        Column("Remediation"),
    ]
    # HA-01's worst finding is critical, X-99's high; within each, worst first, then
    # by cluster ("" before a name) and object.
    assert table.rows == [
        [
            1,
            "critical",
            "HA-01",
            "HA is on",
            2,
            "(no cluster), gpu-a",
            "gpu-a, gpu-c",
            "Turn HA on.",
        ],
        [
            2,
            "high",
            "X-99",
            "X-99",
            3,
            "(no cluster), gpu-a",
            "esx-08.corp, esx-09.corp, esx-10.corp",
            "",
        ],
    ]
    # Action Findings: each action's findings one a row, in the action's order.
    listed = action_findings_table(result)
    assert (listed.key, listed.title) == ("action-findings", "Action Findings")
    assert [(c.name, c.type) for c in listed.columns] == [
        ("Rank", "int"),
        ("Rule", "text"),
        ("Key", "text"),
        ("Object", "text"),
        ("Kind", "text"),
        ("Cluster", "text"),
        ("ID", "text"),
    ]
    assert listed.rows == [
        [1, "HA-01", ID_HA_GPU_A[:12], "gpu-a", "cluster", "gpu-a", ID_HA_GPU_A],
        [1, "HA-01", ID_HA_GPU_C[:12], "gpu-c", "cluster", None, ID_HA_GPU_C],
        [2, "X-99", ID_ESX_08[:12], "esx-08.corp", "host", "gpu-a", ID_ESX_08],
        [2, "X-99", ID_X99[:12], "esx-09.corp", "host", None, ID_X99],
        [2, "X-99", ID_ESX_10[:12], "esx-10.corp", "host", "gpu-a", ID_ESX_10],
    ]


def test_top_actions_name_twenty_objects_and_say_how_many_more() -> None:
    result = small_result()
    hosts = [f"esx-{i:02d}" for i in range(1, 24)]
    result.findings = [Finding("X-99", h, "host", "fail", "low", "odd") for h in hosts]
    (row,) = top_actions_table(result).rows
    assert row[4] == 23
    assert row[6] == ", ".join(hosts[:20]) + " and 3 more (Action Findings)"
    result.findings = result.findings[:20]
    (row,) = top_actions_table(result).rows
    assert row[6] == ", ".join(hosts[:20])
    assert len(action_findings_table(result).rows) == 20


def test_top_actions_of_nothing_failed() -> None:
    result = dataclasses.replace(small_result(), findings=[])
    assert top_actions_table(result).rows == []


# --- capacity -----------------------------------------------------------------------------


def _gpu(capacity: int, used: int) -> GpuSlots:
    return GpuSlots("h", "p", "L4", 24576, "vgpu", "grid_l4-8q", capacity=capacity, used=used)


def test_capacity_table_per_cluster() -> None:
    sims = [
        ClusterSimulation(
            cluster="gpu-a",
            worst_host="h1",
            capacity=[_gpu(4, 1), _gpu(1, 1), _gpu(3, 0)],
            after_worst=[_gpu(4, 3), _gpu(3, 2)],
        ),
        ClusterSimulation(cluster="empty", worst_host="h9"),  # no GPUs: no row
        # Use above capacity counts no free slot, never fewer than none.
        ClusterSimulation(cluster="steady", capacity=[_gpu(2, 3), _gpu(8, 2)]),
        ClusterSimulation(cluster="lost", worst_host="x", capacity=[_gpu(1, 0)]),
    ]
    result = dataclasses.replace(small_result(), simulations=sims)
    table = capacity_table(result)
    assert (table.key, table.title) == ("gpu-capacity", "GPU Capacity")
    assert table.columns == [
        Column("Cluster"),
        Column("Worst Host"),
        Column("GPUs", "int"),
        Column("GPUs After Worst", "int"),
        Column("Slots", "int"),
        Column("Slots After Worst", "int"),
        Column("Free Slots", "int"),
        Column("Free After Worst", "int"),
    ]
    assert table.rows == [
        ["gpu-a", "h1", 3, 2, 8, 7, 6, 2],
        ["steady", None, 2, None, 10, None, 6, None],
        ["lost", "x", 1, 0, 1, 0, 1, 0],
    ]


# --- every sheet ------------------------------------------------------------------------


def _estate_result(kubernetes: list[KubernetesReport] | None = None) -> AuditResult:
    e = Estate()
    e.inv.source = SERVER
    e.inv.vcenter.instance_uuid = UUID
    e.cluster("gpu-a")
    e.cluster("gpu-b")
    h1 = e.host("h1", "gpu-a", profiles=("grid_l4-4q", "grid_l4-8q"), fc=1)
    h2 = e.host("h2", "gpu-a", profiles=(), fc=0, vmotion=False)
    hs = e.host("hs", None, profiles=("grid_l4-24q",), fc=2)
    e.gpu(h1)
    e.gpu(hs, pci_id="0000:af:00.0")
    e.gpu(hs, pci_id="0000:b0:00.0", mode="passthrough")
    e.datastore("san1", [h1, h2])
    e.datastore("local-hs", [hs], transport="local")
    v1 = e.vm("v1", h1, ["san1"], vgpu="grid_l4-8q")
    v1.bios_uuid, v1.instance_uuid = "4210-b1", "5010-i1"
    e.inv.gaps.append(Gap("h2", "HostSystem", "config.graphicsInfo", "notResponding", "host-h2"))
    e.vm("v2", hs, ["local-hs"], vgpu="grid_l4-24q")
    findings = [
        Finding("HA-01", "gpu-a", "cluster", "fail", "critical", "off", cluster="gpu-a"),
        Finding("GPU-02", "v1", "vm", "fail", "high", "m", cluster="gpu-a", host="h1"),
        Finding("GPU-02", "v3", "vm", "fail", "medium", "m", cluster="gpu-a"),
        Finding("GPU-02", "v4", "vm", "fail", "medium", "m", cluster="gpu-a"),
        Finding("HA-01", "gpu-b", "cluster", "pass", "critical", "on", cluster="gpu-b"),
        Finding("HA-01", "gpu-b2", "cluster", "fail", "info", "x", cluster="gpu-b"),
        Finding("X-99", "hs", "host", "fail", "low", "odd", host="hs"),
        Finding("GPU-02", "v2", "vm", "waived", "high", "w", host="hs"),
    ]
    sims = [
        ClusterSimulation(
            cluster="gpu-a",
            hosts=2,
            worst_host="h1",
            failures=[HostFailure("h1", displaced=1), HostFailure("h2")],
            capacity=[
                GpuSlots("h1", "0000:3b:00.0", "NVIDIA L4", 24576, "vgpu", "grid_l4-8q", 3, 1)
            ],
        )
    ]
    return dataclasses.replace(
        small_result(),
        inventory=e.inv,
        findings=findings,
        simulations=sims,
        first_seen={},
        kubernetes=kubernetes or [],
    )


def _lead(table: Table, count: int) -> tuple:
    return (
        table.key,
        table.title,
        [c.name for c in table.columns[:count]],
        [r[:count] for r in table.rows],
    )


def test_every_sheet_in_order_with_its_join_columns() -> None:
    result = _estate_result()
    sheets = audit_tables(result, 7)
    summary = summarize(result)
    inv = result.inventory
    assert [t.key for t in sheets] == [
        "audit-summary",
        "summary",
        "top-actions",
        "action-findings",
        "findings",
        "clusters",
        "gpu-capacity",
        "hosts",
        "gpus",
        "profiles",
        "vms",
        "datastores",
        "adapters",
        "vmotion",
        "failover",
        "licences",
        "host-licences",
        "gaps",
        "rules",
        "guide",
        "about",
    ]
    by_key = {t.key: t for t in sheets}
    assert by_key["audit-summary"] == audit_summary_table(result, summary)
    assert by_key["action-findings"] == action_findings_table(result)
    assert by_key["rules"] == rules_table(result)
    assert by_key["guide"] == guide_table(sheets[:-2], sheets[-1:])
    assert by_key["summary"] == tables.summary_table(result, summary)
    assert by_key["top-actions"] == top_actions_table(result)
    assert by_key["findings"] == finding_rows(result)
    assert by_key["gpu-capacity"] == capacity_table(result)
    assert by_key["licences"] == tables.licences_table(summary)
    assert by_key["about"] == tables.about_table(result, 7)

    hosts = ["vCenter", "vCenter UUID", "Host MoRef ID"]
    vc = [SERVER, UUID]
    expected = {
        "hosts": (
            "Hosts",
            ["vCenter", "vCenter UUID", "MoRef ID"],
            [[*vc, "host-h1"], [*vc, "host-h2"], [*vc, "host-hs"]],
            tables.hosts_table(inv),
        ),
        "gpus": (
            "GPUs",
            hosts,
            [[*vc, "host-h1"], [*vc, "host-hs"], [*vc, "host-hs"]],
            tables.gpus_table(result),
        ),
        "profiles": (
            "vGPU Profiles",
            hosts,
            [[*vc, "host-h1"], [*vc, "host-h1"], [*vc, "host-hs"]],
            tables.profiles_table(inv),
        ),
        "vms": (
            "VMs",
            ["vCenter", "vCenter UUID", "MoRef ID", "BIOS UUID", "Instance UUID"],
            [[*vc, "vm-v1", "4210-b1", "5010-i1"], [*vc, "vm-v2", "", ""]],
            tables.vms_table(inv),
        ),
        "datastores": (
            "Datastores",
            ["vCenter", "vCenter UUID", "MoRef ID"],
            [[*vc, "ds-san1"], [*vc, "ds-local-hs"]],
            tables.datastores_table(inv),
        ),
        # h1: vmhba0 and one FC; h2: vmhba0; hs: vmhba0 and two FC.
        "adapters": (
            "Adapters",
            hosts,
            [[*vc, "host-h1"]] * 2 + [[*vc, "host-h2"]] + [[*vc, "host-hs"]] * 3,
            tables.adapters_table(inv),
        ),
        "vmotion": (
            "vMotion Network",
            hosts,
            [[*vc, "host-h1"], [*vc, "host-hs"]],
            tables.vmotion_table(inv),
        ),
        "failover": (
            "Failover Simulation",
            ["vCenter", "vCenter UUID"],
            [vc, vc],
            tables.failover_table(result),
        ),
        "host-licences": (
            "Host Licences",
            hosts,
            [[*vc, "host-h1"], [*vc, "host-h2"], [*vc, "host-hs"]],
            tables.host_licences_table(inv),
        ),
        "gaps": ("Data Gaps", ["vCenter", "vCenter UUID"], [vc], tables.gaps_table(inv)),
    }
    for key, (title, lead, values, shared) in expected.items():
        sheet = by_key[key]
        count = len(lead)
        assert _lead(sheet, count) == (key, title, lead, values), key
        assert [c.type for c in sheet.columns[:count]] == ["text"] * count
        assert _without(sheet, count) == shared, key


def test_clusters_sheet_counts_failed_findings_per_severity() -> None:
    result = _estate_result()
    sheet = next(t for t in audit_tables(result, 7) if t.key == "clusters")
    shared = tables.clusters_table(result, summarize(result))
    kept = [c for c in shared.columns if c.name not in ("Critical", "High")]
    assert (sheet.key, sheet.title) == ("clusters", "Clusters")
    assert sheet.columns == (
        [
            Column("vCenter"),
            Column("vCenter UUID"),
            Column("MoRef ID"),
            *kept,
            Column("Critical", "int"),
            Column("High", "int"),
            Column("Medium", "int"),
            Column("Low", "int"),
            Column("Info", "int"),
        ]
    )
    width = len(kept)
    assert [r[:3] for r in sheet.rows] == [
        [SERVER, UUID, "domain-gpu-a"],
        [SERVER, UUID, "domain-gpu-b"],
    ]
    # gpu-a: HA-01 critical, GPU-02 high on v1, medium on v3 and v4; gpu-b: one info.
    # X-99 on the standalone host counts in no cluster; the waived finding nowhere.
    assert [r[3 + width :] for r in sheet.rows] == [[1, 1, 2, 0, 0], [0, 0, 0, 0, 1]]
    assert [r[3 : 3 + width] for r in sheet.rows] == [
        [v for c, v in zip(shared.columns, row, strict=True) if c.name not in ("Critical", "High")]
        for row in shared.rows
    ]


def test_findings_in_no_cluster_count_in_no_cluster_row() -> None:
    result = _estate_result()
    result.inventory.clusters[1].name = "XXXX"  # any name: X-99 on hs is in no cluster
    sheet = next(t for t in audit_tables(result, 7) if t.key == "clusters")
    assert [[r[3], *r[-5:]] for r in sheet.rows] == [
        ["gpu-a", 1, 1, 2, 0, 0],
        ["XXXX", 0, 0, 0, 0, 0],
    ]


def test_unknown_morefs_are_blank() -> None:
    result = _estate_result()
    result.inventory.clusters[1].moref = ""
    sims = [*result.simulations, ClusterSimulation(cluster="ghost")]
    result = dataclasses.replace(result, simulations=sims)
    sheet = next(t for t in audit_tables(result, 7) if t.key == "clusters")
    assert [r[:4] for r in sheet.rows] == [
        [SERVER, UUID, "domain-gpu-a", "gpu-a"],
        [SERVER, UUID, "", "gpu-b"],
        [SERVER, UUID, "", "ghost"],
    ]


def test_kubernetes_sheets_come_after_the_data_gaps() -> None:
    k = KubernetesReport(cluster="k1", source="kubeconfig")
    result = _estate_result([k])
    sheets = audit_tables(result, 7)
    keys = [t.key for t in sheets][-6:]
    assert keys == ["gaps", "k8s-nodes", "k8s-displaced", "rules", "guide", "about"]
    assert sheets[-5] == nodes_table([k])
    assert sheets[-4] == displaced_table([k])
