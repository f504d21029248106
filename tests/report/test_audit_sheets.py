"""The Audit Summary, Action Findings and Rules sheets of small results, written out by hand.

docs/report-formats.md: the Audit Summary holds the verdict, scope, counts by
severity, the changes since the last scan, the first seven top actions and the ten
worst clusters' N+k, each list ending with how many more the other sheets hold.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from gpuaudit.report.audit_sheets import (
    action_findings_table,
    audit_summary_table,
    finding_key,
    rules_table,
)
from gpuaudit.report.summary import ClusterSummary, summarize
from gpuaudit.results import Finding, FindingRef, Reference, Rule, ScanHistory
from tests.support.small_report import HA_01, ID_HA_GPU_A, ID_X99, small_result

UUID = "5018a5b2-0c1d-4e7f-9a3b-2c4d6e8f0a1b"


def test_finding_key_is_the_first_twelve_hex_digits() -> None:
    assert finding_key(ID_HA_GPU_A) == "b202736757f3"
    assert finding_key("abc") == "abc"


def test_audit_summary_of_the_small_result() -> None:
    result = small_result()
    result.inventory.vcenter.product = "VMware vCenter Server"
    result.inventory.vcenter.version = "8.0.3"
    result.inventory.vcenter.instance_uuid = UUID
    table = audit_summary_table(result, summarize(result))
    assert (table.key, table.title) == ("audit-summary", "Audit Summary")
    assert [(c.name, c.type) for c in table.columns] == [
        ("Item", "text"),
        ("Value", "text"),
        ("Detail", "text"),
    ]
    # Failed: HA-01 on gpu-a (critical), X-99 on esx-09.corp (low); waived: two GPU-02.
    assert table.rows == [
        ["Verdict", "FAIL", ""],
        ["vCenter", "vc01.corp.example", "VMware vCenter Server 8.0.3"],
        ["vCenter UUID", UUID, ""],
        ["Scanned (UTC)", datetime(2026, 12, 1, 10, 0, tzinfo=UTC), ""],
        ["Scope", "1 clusters, 2 hosts, 0 GPUs, 0 VMs", "0 GPU VMs"],
        ["Failed", "critical 1, high 0, medium 0, low 1, info 0", "2 in all"],
        ["Not proven", "critical 0, high 0, medium 0, low 0, info 0", "0 in all"],
        ["Waived", "2", ""],
        ["Data gaps", "0", "0 make verdicts uncertain"],
        ["Changes since last scan", "not known: no history store was used", ""],
        ["Top action 1", "critical HA-01: HA is on", "1 objects"],
        ["Top action 2", "low X-99: X-99", "1 objects"],
    ]


def test_audit_summary_changes_since_the_last_scan() -> None:
    result = small_result()
    result.history = ScanHistory()
    rows = audit_summary_table(result, summarize(result)).rows
    assert ["Changes since last scan", "none: this is the first recorded scan", ""] in rows
    ref = FindingRef(ID_X99, "X-99", "esx-09.corp", "low", "fail")
    result.history = ScanHistory(
        previous_checked_at="2026-11-30T08:00:00Z",
        new=[ref, ref],
        resolved=[ref],
    )
    rows = audit_summary_table(result, summarize(result)).rows
    assert [
        "Changes since last scan",
        "2 new, 1 resolved since the scan of 2026-11-30T08:00:00Z",
        "",
    ] in rows


def test_audit_summary_nothing_examined_and_no_product() -> None:
    result = small_result()
    summary = dataclasses.replace(summarize(result), nothing_examined="no host was read")
    rows = audit_summary_table(result, summary).rows
    assert rows[0] == ["Verdict", "FAIL", "no host was read"]
    assert rows[1] == ["vCenter", "vc01.corp.example", ""]
    summary = dataclasses.replace(summary, verdict="odd")
    assert audit_summary_table(result, summary).rows[0][1] == "ODD"


def _cluster(
    name: str, tolerates: int | None, failed: int, simulated: bool = True
) -> ClusterSummary:
    return ClusterSummary(name, simulated=simulated, tolerates=tolerates, failed=failed)


def test_audit_summary_lists_seven_actions_and_ten_worst_clusters_then_how_many_more() -> None:
    result = small_result()
    rules = [dataclasses.replace(HA_01, id=f"R-{i:02d}", title=f"t{i}") for i in range(9)]
    result.rules = rules
    # R-00 fails on 9 objects ... R-08 on 1: the most objects first.
    result.findings = [
        Finding(r.id, f"o{j}", "cluster", "fail", "critical", "m")
        for i, r in enumerate(rules)
        for j in range(9 - i)
    ]
    clusters = [_cluster(f"c{i:02d}", i % 3, i) for i in range(12)]
    clusters.append(_cluster("not-simulated", None, 50, simulated=False))
    clusters.append(_cluster("unproven", 0, 0))
    clusters[-1].tolerates_unproven = 2
    summary = dataclasses.replace(summarize(result), clusters=clusters)
    rows = audit_summary_table(result, summary).rows
    actions = [r for r in rows if str(r[0]).startswith("Top action")]
    assert actions == [
        [f"Top action {i + 1}", f"critical R-{i:02d}: t{i}", f"{9 - i} objects"] for i in range(7)
    ]
    at = rows.index(actions[-1])
    assert rows[at + 1] == ["", "and 2 more", "see the Top Actions sheet"]
    # Worst first: the fewest failures tolerated, then the most failed findings, then name.
    listed = [r for r in rows if r[0] == "Cluster N+k"]
    assert listed == [
        ["Cluster N+k", "c09", "N+0, 9 failed"],
        ["Cluster N+k", "c06", "N+0, 6 failed"],
        ["Cluster N+k", "c03", "N+0, 3 failed"],
        ["Cluster N+k", "c00", "N+0, 0 failed"],
        ["Cluster N+k", "unproven", "N+0 (up to N+2 not proven), 0 failed"],
        ["Cluster N+k", "c10", "N+1, 10 failed"],
        ["Cluster N+k", "c07", "N+1, 7 failed"],
        ["Cluster N+k", "c04", "N+1, 4 failed"],
        ["Cluster N+k", "c01", "N+1, 1 failed"],
        ["Cluster N+k", "c11", "N+2, 11 failed"],
    ]
    assert rows[-1] == ["", "and 3 more", "see the Clusters sheet"]


def test_audit_summary_lists_end_without_more_when_all_fit() -> None:
    result = small_result()
    clusters = [_cluster(f"c{i}", 1, 0) for i in range(10)]
    summary = dataclasses.replace(summarize(result), clusters=clusters)
    rows = audit_summary_table(result, summary).rows
    assert sum(r[0] == "Cluster N+k" for r in rows) == 10
    assert not [r for r in rows if r[0] == ""]


def test_action_findings_of_nothing_failed() -> None:
    result = dataclasses.replace(small_result(), findings=[])
    table = action_findings_table(result)
    assert (table.key, table.title, table.rows) == ("action-findings", "Action Findings", [])


def test_rules_sheet_lists_rules_with_findings_first_worst_first() -> None:
    result = small_result()
    low = Rule("LO-01", "Low", "gpu", "low", "r", "fix", "host", (Reference("a", "https://a"),))
    info = Rule("IN-01", "Info", "data", "info", "", "", "inventory")
    result.rules = [low, info, *result.rules]  # HA-01 critical, GPU-02 medium
    result.findings = [
        Finding("LO-01", "h", "host", "fail", "low", "m"),
        Finding("IN-01", "i", "inventory", "unproven", "info", "m"),
        Finding("HA-01", "c", "cluster", "pass", "critical", "m"),
        Finding("GPU-02", "v", "vm", "waived", "medium", "m"),
    ]
    table = rules_table(result)
    assert (table.key, table.title) == ("rules", "Rules")
    assert [c.name for c in table.columns] == [
        "Rule",
        "Severity",
        "Title",
        "Has Findings",
        "Category",
        "Examines",
        "Rationale",
        "Remediation",
        "References",
    ]
    # LO-01 failed and IN-01 not proven come first (low before info); then the rules
    # passed or waived everywhere, critical before medium.
    assert table.rows == [
        ["LO-01", "low", "Low", "yes", "gpu", "host", "r", "fix", "a: https://a"],
        ["IN-01", "info", "Info", "yes", "data", "inventory", "", "", ""],
        [
            "HA-01",
            "critical",
            "HA is on",
            "no",
            "ha",
            "cluster",
            "HA restarts GPU VMs.",
            "Turn HA on.",
            "vSphere HA: https://docs.example/ha\nKB 2: https://kb.example/2",
        ],
        ["GPU-02", "medium", "Profiles fit", "no", "gpu", "vm", "", "", ""],
    ]
    # Same severity, both without findings: by id.
    result.findings = []
    result.rules = [dataclasses.replace(low, id="LO-02"), low]
    assert [r[0] for r in rules_table(result).rows] == ["LO-01", "LO-02"]
