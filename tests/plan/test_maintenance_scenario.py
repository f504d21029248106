"""Maintenance readiness on tests/scenarios/maintenance.yaml, recorded from the lab
(cassettes/maintenance.yaml). Every expectation is worked out by hand in the scenario's
header: NVIDIA's L4-8Q takes 8 of the L4's 24 GB, at most 3 per GPU; a DirectPath I/O
device cannot be vMotioned; vSphere's VM Operator marks a VM
maintenance.vm.evacuation.poweroff "TRUE" for DRS to power it off; Broadcom KB 88271:
without VgpuMMAutomationTimeoutSecs=-1 DRS recommends no host for a vGPU VM.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuaudit.inventory import Inventory
from gpuaudit.report import html
from gpuaudit.report.html import render_html
from gpuaudit.report.json_report import from_json_data, render_json, report_schema
from gpuaudit.report.workbook import audit_tables
from gpuaudit.results import AuditResult
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES
from tests.verdict.test_check_scenarios import maintenance_policy

CASSETTE = CASSETTES / "maintenance.yaml"
ROOT = Path(__file__).resolve().parents[2]

# vm -> (its host, its fate, where it goes)
FATES = {
    "clean-a": ("mm-esx01", "moved", "mm-esx02"),
    "clean-b": ("mm-esx02", "moved", "mm-esx01"),
    "pt-train": ("mm-esx03", "powered off", None),
    "pt-desk": ("mm-esx03", "moved", "mm-esx04"),
    "off-desk": ("mm-esx04", "powered off", None),
    "full-a1": ("mm-esx06", "moved", "mm-esx07"),
    "full-a2": ("mm-esx06", "blocking", None),
    "full-a3": ("mm-esx06", "blocking", None),
    "full-b1": ("mm-esx07", "blocking", None),
    "full-b2": ("mm-esx07", "blocking", None),
    "nodrs-a": ("mm-esx08", "blocking", None),
    "nodrs-b": ("mm-esx09", "blocking", None),
}


@pytest.fixture(scope="module")
def recorded() -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(CASSETTE))


@pytest.fixture(scope="module")
def result(recorded: Inventory) -> AuditResult:
    checked = run_checks(recorded, maintenance_policy())
    assert checked.errors == []
    return checked


def test_the_collector_read_the_evacuation_option(recorded: Inventory) -> None:
    marked = {vm.name: vm.evacuation_poweroff for vm in recorded.vms if vm.evacuation_poweroff}
    assert marked == {"off-desk": "TRUE"}


def test_each_vm_has_its_hand_computed_fate(result: AuditResult) -> None:
    found = {
        v.vm: (h.host, v.fate, v.to_host)
        for c in result.maintenance
        for h in c.hosts
        for v in h.vms
    }
    assert found == FATES


def test_every_host_of_a_cluster_is_listed_once(result: AuditResult) -> None:
    hosts = {c.cluster: [h.host for h in c.hosts] for c in result.maintenance}
    assert hosts == {
        "mm-clean": ["mm-esx01", "mm-esx02"],
        "mm-pt": ["mm-esx03", "mm-esx04"],
        "mm-full": ["mm-esx06", "mm-esx07"],
        "mm-nodrs": ["mm-esx08", "mm-esx09"],
    }


def test_the_reasons_name_what_stops_each_vm(result: AuditResult) -> None:
    reasons = {v.vm: v.reason for c in result.maintenance for h in c.hosts for v in h.vms}
    assert "DirectPath I/O" in reasons["pt-train"]
    assert "maintenance.vm.evacuation.poweroff is TRUE" in reasons["off-desk"]
    assert "VgpuMMAutomationTimeoutSecs is unset" in reasons["nodrs-a"]
    assert "KB 88271" in reasons["nodrs-a"]
    assert "NVIDIA allows 3 of L4-8Q per GPU" in reasons["full-a2"]
    assert reasons["clean-a"] == ""


def test_vm12_fails_only_where_a_stateful_vm_stops(result: AuditResult) -> None:
    vm12 = {
        f.object: (f.status, f.evidence["powered_off"], f.evidence["blocking"])
        for f in result.findings
        if f.rule == "VM-12"
    }
    assert vm12["mm-esx03"] == ("fail", ["pt-train"], [])
    assert vm12["mm-esx06"] == ("fail", [], ["full-a2", "full-a3"])
    assert vm12["mm-esx01"] == ("pass", [], [])


def test_vm12_passes_a_stop_the_default_intent_accepts(recorded: Inventory) -> None:
    # The default intent: stateless, a 5-minute restart accepted.
    checked = run_checks(recorded)
    vm12 = {f.object: f for f in checked.findings if f.rule == "VM-12"}
    assert vm12["mm-esx03"].status == "pass"
    assert vm12["mm-esx03"].message.endswith("the intent accepts a restart")
    assert vm12["mm-esx03"].evidence["must_stay_up"] is False


def test_vm13_names_the_host_with_the_least_downtime(result: AuditResult) -> None:
    vm13 = {f.object: f for f in result.findings if f.rule == "VM-13"}
    assert vm13["mm-full"].status == "fail"
    # mm-esx06 stops 2 (full-a2, full-a3), mm-esx07 stops 2 too: the first by name.
    assert vm13["mm-full"].evidence["least_downtime"] == {"host": "mm-esx06", "vms": 2}
    assert vm13["mm-clean"].evidence["hosts_without_downtime"] == ["mm-esx01", "mm-esx02"]


def test_the_json_report_carries_the_readiness_and_reads_it_back(result: AuditResult) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    doc = render_json(result)
    jsonschema.validate(doc, report_schema())
    fates = {v["vm"]: v["fate"] for c in doc["maintenance"] for h in c["hosts"] for v in h["vms"]}
    assert fates == {vm: fate for vm, (_, fate, _) in FATES.items()}
    assert from_json_data(json.loads(json.dumps(doc))).maintenance == result.maintenance


def test_the_workbook_has_a_maintenance_sheet(result: AuditResult) -> None:
    sheet = next(t for t in audit_tables(result, 2) if t.title == "Maintenance")
    rows = {(r[1], r[2], r[3], r[4]) for r in sheet.rows}
    assert rows == {(host, vm, fate, to) for vm, (host, fate, to) in FATES.items()}


def checkout_section(result: AuditResult, monkeypatch: pytest.MonkeyPatch, section_id: str) -> str:
    """The HTML report's section, rendered with the checkout's templates (whatever an
    installed package holds)."""
    monkeypatch.setattr(html, "template_root", lambda: ROOT / "templates")
    html.environment.cache_clear()
    try:
        page = render_html(result)
    finally:
        html.environment.cache_clear()
    section = page[page.index(f'<section id="{section_id}">') :]
    return section[: section.index("</section>")]


def test_the_html_report_has_a_maintenance_section(
    result: AuditResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = checkout_section(result, monkeypatch, "maintenance")
    assert section.count('class="maintenance-cluster"') == 4
    assert '<span class="vm">pt-train</span>' in section
    assert "full-b2" in section and "clean-a" not in section  # a move names no VM
