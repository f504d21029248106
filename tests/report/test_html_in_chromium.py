"""The HTML report in headless Chromium: loads clean, filters, and never runs a name.

Screenshots are kept in tests/artifacts/ for a person to look at.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuaudit.report import write_reports
from gpuaudit.results import AuditResult
from tests.support.report_fixtures import HOSTILE, hostile_result, large_result, realistic_result
from tests.support.report_tools import ARTIFACTS, Chromium

pytestmark = pytest.mark.browser

ROWS = "[...document.querySelectorAll('#findings-body tr.row')]"
# The milliseconds from navigation until the page's script has drawn the findings
# (it unpacks the tables first, so that is after the load event).
READY = """new Promise(resolve => { const wait = () => window.gpuauditReady ?
    resolve(performance.now()) : setTimeout(wait, 5); wait(); })"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    with Chromium(width=1400, height=1000) as chromium:
        yield chromium


def open_report(browser: Chromium, result: AuditResult, folder: Path) -> float:
    (path,) = write_reports(result, folder, ["html"], result.inventory.source)
    browser.events.clear()
    seconds = browser.open(path)
    assert browser.evaluate(READY) > 0
    return seconds


def rows(browser: Chromium, field: str = "") -> list[str]:
    """The findings rows shown: a data attribute of each, or its cells' text."""
    if field:
        return list(browser.evaluate(f"{ROWS}.map(r => r.dataset.{field})"))
    return list(browser.evaluate(f"{ROWS}.map(r => [...r.cells].map(c => c.textContent))"))


def select(browser: Chromium, element: str, value: str) -> None:
    browser.evaluate(
        f"(() => {{ const s = document.getElementById({json.dumps(element)});"
        f" s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change')); }})()"
    )


def click(browser: Chromium, selector: str) -> None:
    browser.evaluate(f"document.querySelector({json.dumps(selector)}).click()")
    settle(browser)


def settle(browser: Chromium) -> None:
    """Wait for what the page unpacks on demand (passed findings, inventory tables)."""
    browser.evaluate("window.gpuauditPending")


def assert_clean(browser: Chromium) -> None:
    browser.drain(0.3)
    assert browser.console_errors() == []
    assert browser.evaluate("typeof window.__pwned") == "undefined"


def test_realistic_report_loads_and_filters(browser: Chromium, tmp_path: Path) -> None:
    open_report(browser, realistic_result(), tmp_path)
    assert_clean(browser)
    assert browser.evaluate("document.querySelector('.verdict-word').textContent") == "FAIL"
    # Failed findings show first, worst first; waived and passed are collapsed.
    assert len(rows(browser)) == 11
    assert rows(browser, "status") == ["fail"] * 11
    assert rows(browser, "severity")[:2] == ["critical", "critical"]
    assert "2 waived and 20 passed" in browser.evaluate(
        "document.getElementById('f-hidden').textContent"
    )

    click(browser, ".tile[data-severity='medium']")
    assert rows(browser, "severity") == ["medium"] * 4
    click(browser, "#f-reset")
    assert len(rows(browser)) == 11

    select(browser, "f-rule", "ST-02")
    assert {r[2] for r in rows(browser)} == {"ST-02"} and len(rows(browser)) == 2
    select(browser, "f-rule", "")
    select(browser, "f-cluster", "vdi-a16")
    assert {r[4] for r in rows(browser)} == {"vdi-a16"} and len(rows(browser)) == 5
    select(browser, "f-cluster", "")

    click(browser, "#f-status button[data-value='waived']")
    assert sorted(set(rows(browser, "status"))) == ["fail", "waived"]
    assert len(rows(browser)) == 13
    click(browser, "#f-status button[data-value='pass']")
    assert len(rows(browser)) == 33
    click(browser, "#f-severity button[data-value='info']")
    assert "info" not in rows(browser, "severity")
    click(browser, "#f-reset")

    browser.evaluate(
        "(() => { const i = document.getElementById('f-search'); i.value = 'infer-01';"
        " i.dispatchEvent(new Event('input')); })()"
    )
    browser.drain(0.4)
    assert [r[3] for r in rows(browser)] == ["infer-01"]
    click(browser, "#findings-body tr.row")
    detail = browser.evaluate("document.querySelector('#findings-body tr.detail').textContent")
    assert "Reserve all guest memory" in detail and "memory_reservation_mb" in detail
    click(browser, "#f-reset")

    click(browser, "#findings-table th button[data-sort='2']")
    shown = [r[2] for r in rows(browser)]
    assert shown == sorted(shown)

    browser.evaluate("document.getElementById('inv-hosts').open = true")
    browser.drain(0.2)
    settle(browser)
    assert browser.evaluate("document.querySelectorAll('#inv-hosts tbody tr').length") == 9
    assert_clean(browser)
    browser.evaluate("window.scrollTo(0, 0)")
    browser.screenshot(ARTIFACTS / "report-realistic.png")


def test_hostile_names_never_execute(browser: Chromium, tmp_path: Path) -> None:
    open_report(browser, hostile_result(), tmp_path)
    assert_clean(browser)
    titles = browser.evaluate(
        "[...document.querySelectorAll('.card-title')].map(e => e.textContent)"
    )
    # Cards come worst first; every name shows as text.
    assert sorted(titles) == sorted([HOSTILE["c1"], HOSTILE["c2"], HOSTILE["c3"]])
    # Show everything a name can reach: every finding with its details, every table.
    click(browser, "#f-status button[data-value='waived']")
    click(browser, "#f-status button[data-value='pass']")
    for i in range(len(rows(browser))):
        browser.evaluate(f"{ROWS}[{i}].click()")
    browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    browser.drain(0.3)
    settle(browser)
    sections = browser.evaluate("document.querySelectorAll('details.inv table').length")
    assert sections == 10
    objects = {r[3] for r in rows(browser)}
    assert HOSTILE["vdi9"] in objects and HOSTILE["p2"] in objects
    assert browser.evaluate("document.querySelectorAll('img, iframe, svg [onload]').length") == 0
    assert_clean(browser)
    click(browser, "#f-reset")
    browser.evaluate("window.scrollTo(0, 0)")
    browser.screenshot(ARTIFACTS / "report-hostile.png")


def test_ten_thousand_vms_stay_responsive(browser: Chromium, tmp_path: Path) -> None:
    seconds = open_report(browser, large_result(), tmp_path)
    assert seconds < 20, f"the page took {seconds:.1f} s to load"
    assert_clean(browser)
    # Showing the passed results unpacks them first: that counts too.
    timing = """(async () => { const t = performance.now();
        document.querySelector('#f-status button[data-value="pass"]').click();
        await window.gpuauditPending;
        document.querySelector('#findings-table th button[data-sort="3"]').click();
        return performance.now() - t; })()"""
    assert browser.evaluate(timing) < 3000
    assert len(rows(browser)) == 50  # one page
    pager = browser.evaluate("document.querySelector('#findings-pager .pager-text').textContent")
    assert pager == "Showing 1\u201350 of 30,000"
    browser.evaluate("document.getElementById('inv-gpu-vms').open = true")
    browser.drain(0.3)
    settle(browser)
    assert browser.evaluate("document.querySelectorAll('#inv-gpu-vms tbody tr').length") == 100
    assert_clean(browser)
    browser.evaluate("window.scrollTo(0, 0)")
    browser.screenshot(ARTIFACTS / "report-large.png", full_page=False)
