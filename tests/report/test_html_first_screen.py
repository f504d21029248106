"""The HTML report's first screen at 1280 x 800 in Chromium: what to fix, what changed, where.

Issue 34's figures, written here: at 1280 x 800 no page scrolls sideways; on the
large estate (64 clusters, 1,024 hosts) the verdict, the changes since the last
scan, the first top action and the worst cluster are in the first viewport, and
the clusters section starts within the second. The changes come from the scan
history (ScanHistory: new and resolved findings), set here by hand.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuaudit.jobs import scan as pipeline
from gpuaudit.report import write_reports
from gpuaudit.report.actions import finding_id
from gpuaudit.results import AuditResult, FindingRef, ScanHistory, TrendPoint
from gpuaudit.vsphere import obtain
from tests.support.large_estate import SERVER, large_estate_result
from tests.support.report_tools import ARTIFACTS, Chromium

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 800
READY = """new Promise(resolve => { const wait = () => window.gpuauditReady ?
    resolve(performance.now()) : setTimeout(wait, 5); wait(); })"""
PREVIOUS = "2026-11-29T08:49:12Z"
SCANNED = "2026-11-30T08:49:12Z"


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    with Chromium(width=WIDTH, height=HEIGHT) as chromium:
        yield chromium


def with_history(result: AuditResult, new: int, resolved: int) -> AuditResult:
    """``result`` as if the last scan had not failed its first ``new`` failed findings
    and had failed ``resolved`` findings that pass now; the trend holds three scans, so
    the first screen draws its sparklines."""
    failed = [f for f in result.findings if f.status == "fail"]
    passed = [f for f in result.findings if f.status == "pass"]

    def ref(f: object, status: str) -> FindingRef:
        return FindingRef(finding_id(f), f.rule, f.object, f.severity, status)  # type: ignore[attr-defined]

    history = ScanHistory(
        previous_checked_at=PREVIOUS,
        new=[ref(f, "fail") for f in failed[:new]],
        resolved=[ref(f, "fail") for f in passed[:resolved]],
        trend=[
            TrendPoint("2026-11-28T08:49:12Z", {"high": 40}, {"cl-000-vgpu": 0}, {}, 3),
            TrendPoint(PREVIOUS, {"high": 38}, {"cl-000-vgpu": 1}, {}, 2),
            TrendPoint(result.checked_at or SCANNED, {"high": 41}, {"cl-000-vgpu": 1}, {}, 2),
        ],
    )
    return dataclasses.replace(result, history=history)


def rect(browser: Chromium, selector: str) -> dict[str, float]:
    return dict(
        browser.evaluate(
            f"(() => {{ const b = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return {top: b.top + scrollY, bottom: b.bottom + scrollY,"
            " height: b.height}; })()"
        )
    )


def open_page(browser: Chromium, result: AuditResult, folder: Path) -> None:
    (path,) = write_reports(result, folder, ["html"], result.inventory.source or SERVER)
    browser.open(path)
    browser.evaluate(READY)
    browser.evaluate("window.scrollTo(0, 0)")


def assert_no_horizontal_scroll(browser: Chromium) -> None:
    widths = browser.evaluate(
        "({page: document.documentElement.scrollWidth, view: innerWidth,"
        " table: document.getElementById('findings-table').getBoundingClientRect().width,"
        " wrap: document.querySelector('#findings .table-wrap').clientWidth,"
        " wrapScroll: document.querySelector('#findings .table-wrap').scrollWidth})"
    )
    assert widths["page"] <= widths["view"], widths
    # The findings table fits its box: nothing to scroll to, remediation included.
    assert widths["wrapScroll"] <= widths["wrap"], widths


def test_demo_fits_1280_and_its_remediation_reads_in_full(
    browser: Chromium, tmp_path: Path
) -> None:
    demo = pipeline.check(pipeline.obtain(obtain.demo_source()), None, None)
    open_page(browser, demo, tmp_path)
    assert browser.console_errors() == []
    assert_no_horizontal_scroll(browser)
    # Each remediation cell shows its whole text: no clamp, nothing cut.
    cut = browser.evaluate(
        "[...document.querySelectorAll('#findings-body td.fix')]"
        ".filter(td => td.scrollHeight > td.clientHeight + 1"
        " || td.scrollWidth > td.clientWidth + 1)"
        ".length"
    )
    assert cut == 0
    assert browser.evaluate("document.querySelectorAll('#findings-body td.fix').length") > 0
    # At most seven actions on the first screen; the others one click away.
    shown = browser.evaluate("document.querySelectorAll('#actions > details.action').length")
    rules = len({f.rule for f in demo.findings if f.status == "fail"})
    assert shown == min(rules, 7)
    if rules > 7:
        summary = browser.evaluate("document.querySelector('#more-actions > summary').textContent")
        assert f"All {rules} actions" in summary
        assert (
            browser.evaluate("document.querySelectorAll('#more-actions details.action').length")
            == rules - 7
        )
    # Without history the first screen says the changes are not known.
    assert "not known" in browser.evaluate("document.getElementById('changes').textContent")


def test_large_estate_first_screen_at_1280_by_800(browser: Chromium, tmp_path: Path) -> None:
    result = with_history(large_estate_result(), new=3, resolved=2)
    open_page(browser, result, tmp_path)
    assert browser.console_errors() == []
    assert_no_horizontal_scroll(browser)
    first_viewport = (
        ".verdict",
        "#changes",
        ".sparklines",
        ".sparklines svg.sparkline",
        "#actions details.action > summary",
        "#worst-clusters tbody tr",
    )
    for selector in first_viewport:
        box = rect(browser, selector)
        assert box["height"] > 0 and box["bottom"] <= HEIGHT, (selector, box)
    clusters = rect(browser, "#clusters")
    assert clusters["top"] < 2 * HEIGHT, clusters
    changes = " ".join(browser.evaluate("document.getElementById('changes').textContent").split())
    assert "3 new" in changes and "2 resolved" in changes and "0 newly waived" in changes
    # Three sparklines (failed, not proven, worst N+k), each drawn in the first viewport.
    sparks = browser.evaluate(
        "[...document.querySelectorAll('.sparklines svg.sparkline')]"
        ".map(s => { const b = s.getBoundingClientRect(); return [b.bottom + scrollY, b.width]; })"
    )
    assert len(sparks) == 3
    assert all(width > 0 and bottom <= HEIGHT for bottom, width in sparks), sparks
    # The worst cluster named first is the first card.
    first = browser.evaluate("document.querySelector('#worst-clusters tbody a').textContent")
    assert first == browser.evaluate("document.querySelector('#cluster-1 .card-title').textContent")
    # Each new finding's action carries a "new" badge, and so does its row.
    new_rules = {r.rule for r in result.history.new}  # type: ignore[union-attr]
    badged = browser.evaluate(
        "[...document.querySelectorAll('details.action')]"
        ".filter(d => d.querySelector(':scope > summary .newtag')).map(d => d.id.slice(7))"
    )
    assert set(badged) == new_rules
    rows = browser.evaluate("document.querySelectorAll('tr.failed-finding .newtag').length")
    assert rows == 3
    browser.screenshot(ARTIFACTS / "report-large-1280.png", full_page=False)
