"""Reports of the lab's recorded estates, checked by the real rules: every format, every reader.

The inventory is replayed from each committed cassette (offline), the verdicts
come from gpuaudit.verdict.check.run_checks: the same path as `gpuaudit scan --replay`.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from gpuaudit.report import report_schema, write_reports
from gpuaudit.results import AuditResult
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES, RECORDED
from tests.conftest import SCENARIOS as SCENARIO_FILES
from tests.lab.expected import comparable, expected_inventory
from tests.lab.scenario import load_scenario
from tests.report.test_html import assert_safe
from tests.report.test_xlsx_in_libreoffice import convert
from tests.support.report_tools import ARTIFACTS, Chromium

SCENARIOS = RECORDED
# The five report formats; the metrics (openmetrics) have tests of their own.
FIVE = ("html", "xlsx", "json", "junit", "sarif")


def checked(name: str) -> AuditResult:
    return run_checks(obtain.obtain_inventory(obtain.Replay(CASSETTES / f"{name}.yaml")))


@pytest.mark.parametrize("name", SCENARIOS)
def test_all_five_formats(name: str, tmp_path: Path) -> None:
    result = checked(name)
    paths = write_reports(result, tmp_path, FIVE, name)
    html, _xlsx, json_path, junit, sarif = paths
    doc = json.loads(json_path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    assert len(doc["findings"]) == len(result.findings)
    root = ET.fromstring(junit.read_bytes())
    assert len(root.findall(".//testcase")) == len(result.findings) + len(result.errors)
    failed = sum(1 for f in result.findings if f.status == "fail")
    unproven = sum(1 for f in result.findings if f.status == "unproven")
    (run,) = json.loads(sarif.read_text(encoding="utf-8"))["runs"]
    unsuppressed = [r for r in run["results"] if "suppressions" not in r]
    assert sum(1 for r in unsuppressed if r.get("kind", "fail") == "fail") == failed
    assert sum(1 for r in unsuppressed if r.get("kind") == "open") == unproven
    assert_safe(html.read_text(encoding="utf-8"))


@pytest.mark.browser
@pytest.mark.parametrize("name", ["broken", "hostile"])
def test_scenario_page_in_chromium(name: str, tmp_path: Path) -> None:
    result = checked(name)
    (html,) = write_reports(result, tmp_path, ["html"], name)
    with Chromium() as browser:
        browser.open(html)
        assert browser.evaluate("window.gpuauditReady === true")
        browser.evaluate(
            "document.querySelectorAll('#f-status button[aria-pressed=false]')"
            ".forEach(b => b.click());"
            "document.querySelectorAll('#findings-body tr.row').forEach(r => r.click());"
            "document.querySelectorAll('details').forEach(d => d.open = true)"
        )
        browser.drain(0.3)
        assert browser.console_errors() == []
        assert browser.evaluate("typeof window.__pwned") == "undefined"
        browser.evaluate("window.scrollTo(0, 0)")
        browser.screenshot(ARTIFACTS / f"report-scenario-{name}.png")


@pytest.mark.office
@pytest.mark.parametrize("name", ["broken", "hostile"])
def test_scenario_workbook_in_libreoffice(name: str, tmp_path: Path) -> None:
    """The sheets hold the report's records, and the report's inventory is the scenario's."""
    from tests.report.test_xlsx_in_libreoffice import (
        assert_sheets_match,
        assert_summary_sheets_match,
    )

    result = checked(name)
    doc, loaded, sheets = convert(result, tmp_path)
    expected = expected_inventory(load_scenario(SCENARIO_FILES / f"{name}.yaml"))
    assert comparable(loaded.inventory) == comparable(expected)
    assert_sheets_match(doc, sheets)
    assert_summary_sheets_match(doc, sheets)
