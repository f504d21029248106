"""The workbook as LibreOffice reads it: every sheet's CSV matches the JSON report.

LibreOffice (libreoffice-calc, headless) converts each sheet to CSV. The expected
rows are built from the JSON report alone, read back with load_json_report, and
the key columns are also checked straight against the JSON document. A name that
a spreadsheet would take for a formula must come back as the same text: had
LibreOffice evaluated "+1+1" the CSV would hold 2.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from gpuaudit.report import load_json_report, write_reports
from gpuaudit.report.tables import Value, workbook_tables
from gpuaudit.report.xlsx import cell_text
from gpuaudit.results import AuditResult
from tests.report_fixtures import HOSTILE, hostile_result, realistic_result
from tests.report_tools import xlsx_to_csv

pytestmark = pytest.mark.office


def as_csv(value: Value) -> str:
    """How LibreOffice writes a cell's value to CSV."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):
        return f"{value:.10g}"
    if isinstance(value, int):
        return str(value)
    return cell_text(value)


def convert(result: AuditResult, folder: Path) -> tuple[dict[str, Any], AuditResult, dict]:
    xlsx, json_path = write_reports(result, folder, ["xlsx", "json"], result.inventory.source)
    doc = json.loads(json_path.read_text(encoding="utf-8"))
    return doc, load_json_report(json_path), xlsx_to_csv(xlsx, folder / "csv")


BUILDERS: dict[str, Callable[[], AuditResult]] = {
    "realistic": realistic_result,
    "hostile": hostile_result,
}


@pytest.fixture(scope="module")
def conversions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    return {
        name: convert(build(), tmp_path_factory.mktemp(name)) for name, build in BUILDERS.items()
    }


@pytest.fixture(params=sorted(BUILDERS))
def converted(request: pytest.FixtureRequest, conversions: dict[str, tuple]) -> tuple:
    return (request.param, *conversions[request.param])


def test_every_sheet_matches_the_json_report(converted: tuple) -> None:
    _name, doc, loaded, sheets = converted
    tables = workbook_tables(loaded, doc["report_schema_version"])
    assert sorted(sheets) == sorted(t.title for t in tables)
    for table in tables:
        rows = sheets[table.title]
        assert rows[0] == [c.name for c in table.columns], table.title
        expected = [[as_csv(v) for v in row] for row in table.rows]
        assert len(rows) - 1 == len(expected), table.title
        for i, (got, want) in enumerate(zip(rows[1:], expected, strict=True)):
            assert got == want, f"{table.title} row {i + 2}"


def _sheet(sheets: dict, title: str) -> list[dict[str, str]]:
    head, *rows = sheets[title]
    return [dict(zip(head, row, strict=True)) for row in rows]


def test_key_columns_straight_from_the_json(converted: tuple) -> None:
    _name, doc, _loaded, sheets = converted
    findings = _sheet(sheets, "Findings")
    assert [(r["Status"], r["Severity"], r["Rule"], r["Object"]) for r in findings] == [
        (f["status"], f["severity"], f["rule"], cell_text(f["object"])) for f in doc["findings"]
    ]
    inv = doc["inventory"]
    vms = _sheet(sheets, "VMs")
    assert [r["VM"] for r in vms] == [cell_text(v["name"]) for v in inv["vms"]]
    assert [r["Memory MB"] for r in vms] == [str(v["memory_mb"]) for v in inv["vms"]]
    assert [r["Host"] for r in _sheet(sheets, "Hosts")] == [
        cell_text(h["name"]) for h in inv["hosts"]
    ]
    assert [r["Datastore"] for r in _sheet(sheets, "Datastores")] == [
        cell_text(d["name"]) for d in inv["datastores"]
    ]
    assert [r["Property"] for r in _sheet(sheets, "Data Gaps")] == [
        g["property"] for g in inv["gaps"]
    ]
    gpus = sum(len(h["gpus"]) for h in inv["hosts"])
    assert len(_sheet(sheets, "GPUs")) == gpus
    failures = sum(len(s["failures"]) for s in doc["simulations"])
    assert len(_sheet(sheets, "Failover Simulation")) == failures
    clusters = _sheet(sheets, "Clusters")
    assert [(r["Cluster"], r["Tolerates"], r["Design"]) for r in clusters] == [
        (cell_text(c["name"]), str(c["tolerates"]), c["design"]) for c in doc["summary"]["clusters"]
    ]
    summary = {
        r["Item"]: r["Value"] for r in _sheet(sheets, "Summary") if r["Section"] != "Cluster N+k"
    }
    assert summary["Verdict"] == doc["summary"]["verdict"].upper()
    for severity, n in doc["summary"]["failed_by_severity"].items():
        assert summary[severity] == str(n)
    assert summary["Failed"] == str(doc["summary"]["results"]["fail"])
    assert summary["Scanned (UTC)"] == doc["source"]["collected_at"].replace("T", " ").rstrip("Z")
    about = {r["Item"]: r["Value"] for r in _sheet(sheets, "About")}
    assert about["Tool Version"] == doc["generator"]["version"]
    assert about["Rules Version"] == doc["rules_version"]
    assert about["Report Schema"] == str(doc["report_schema_version"])
    assert about["Waivers Applied"] == str(doc["summary"]["waivers_applied"])


def test_libreoffice_does_not_evaluate_names(conversions: dict[str, tuple]) -> None:
    _doc, _loaded, sheets = conversions["hostile"]
    vms = [r["VM"] for r in _sheet(sheets, "VMs")]
    for key in ("vdi1", "vdi2", "vdi3", "vdi4", "vdi5", "vdi6", "vdi7", "vdi10"):
        assert HOSTILE[key] in vms, repr(HOSTILE[key])
    assert "2" not in vms and "1" not in vms
    datastores = [r["Datastore"] for r in _sheet(sheets, "Datastores")]
    assert HOSTILE["ds_nfs"] in datastores
    hosts = [r["Host"] for r in _sheet(sheets, "Hosts")]
    assert HOSTILE["p2"] in hosts
