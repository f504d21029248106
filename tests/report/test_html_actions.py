"""The HTML report leads with what to fix: top actions, the worst clusters, every failed finding.

Without JavaScript (a mail client, a printed copy) the verdict, the top actions and
every failed finding are in the page as the server wrote it; in a browser the page
is interactive within two seconds even on an estate of 10,240 VMs, and its first
screen holds the verdict, the top actions and the worst clusters.
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gpuaudit.report import write_reports
from gpuaudit.report.fleet import render_fleet_html
from gpuaudit.report.html import render_html, worst_first
from gpuaudit.report.json_report import dump_json, render_json
from gpuaudit.report.summary import ClusterSummary
from gpuaudit.results import AuditResult
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.support.large_estate import SCANNED_AT, SERVER, large_estate_result
from tests.support.report_fixtures import realistic_result
from tests.support.report_tools import ARTIFACTS, Chromium


class Rendered(HTMLParser):
    """The page as rendered on the server: text by element class, scripts left out."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, str]] = []
        self.texts: dict[str, list[str]] = {}
        self.title = ""
        self.ids: list[str] = []  # the ID cell of every failed-finding row, in order
        self.actions: list[str] = []  # each top action's id attribute
        self.cards: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        cls = a.get("class") or ""
        self.stack.append((tag, cls))
        if tag == "details" and "action" in cls.split():
            self.actions.append(a.get("id") or "")

    def handle_endtag(self, tag: str) -> None:
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        if any(tag == "script" for tag, _ in self.stack):
            return
        tag, cls = self.stack[-1] if self.stack else ("", "")
        if tag == "title":
            self.title += data
        if cls == "fid":
            self.ids.append(data.strip())
        if cls == "card-title":
            self.cards.append(data)
        for _, c in self.stack:
            for name in c.split():
                self.texts.setdefault(name, []).append(data)

    def text(self, cls: str) -> str:
        return " ".join(" ".join(self.texts.get(cls, [])).split())


def rendered(html: str) -> Rendered:
    page = Rendered()
    page.feed(html)
    page.close()
    return page


def failed_in_json(result: AuditResult) -> list[dict[str, str]]:
    """The failed findings as the JSON report lists them: counted apart from the HTML."""
    doc = json.loads(dump_json(render_json(result)))
    return [f for f in doc["findings"] if f["status"] == "fail"]


def short_id(f: dict[str, str]) -> str:
    """The first 12 hex digits of the finding's stable id (the SARIF fingerprint)."""
    key = f"{f['rule']}\0{f['object_kind']}\0{f['object']}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


# Without JavaScript.


def test_every_failed_finding_is_rendered_on_the_server() -> None:
    result = realistic_result()
    page = rendered(render_html(result))
    failed = failed_in_json(result)
    assert len(failed) == 11
    assert sorted(page.ids) == sorted(short_id(f) for f in failed)
    assert "FAIL" in page.text("verdict-word")
    # One of the eleven is info: a notice, never a failed finding.
    assert "10 failed findings" in page.text("verdict-headline")
    assert "1 notice" in page.text("verdict-headline")


def test_top_actions_roll_up_by_rule_worst_first_with_remediation() -> None:
    result = realistic_result()
    page = rendered(render_html(result))
    # Critical first, then high, then by how many objects (HA-03 and ST-02 have two).
    failed = failed_in_json(result)
    by_rule = Counter(f["rule"] for f in failed)
    rank = {"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}
    worst = {r: min(rank[f["severity"]] for f in failed if f["rule"] == r) for r in by_rule}
    expected = sorted(by_rule, key=lambda r: (worst[r], -by_rule[r], r))
    assert page.actions == [f"action-{r}" for r in expected]
    fixes = page.text("action-fix")
    for rule in result.rules:
        if rule.id in by_rule:
            assert " ".join(rule.remediation.split()) in fixes
    assert "2 objects" in page.text("action-count")
    # The actions come right after the verdict, before the cluster cards.
    html = render_html(result)
    assert html.index('class="verdict') < html.index('id="actions"') < html.index('id="clusters"')


def test_cluster_cards_come_worst_first() -> None:
    page = rendered(render_html(realistic_result()))
    # Two clusters with a critical failure, both N+0 (then by name); the medium one last.
    assert page.cards == ["gpu-pt-edge", "vdi-a16", "gpu-vgpu-prod"]


def test_worst_first_orders_by_severity_then_tolerance() -> None:
    def cluster(name: str, sev: str | None, k: int | None) -> ClusterSummary:
        return ClusterSummary(name, tolerates=k, failed_by_severity={sev: 1} if sev else {})

    clusters = [
        cluster("a-medium-n1", "medium", 1),
        cluster("b-high-n1", "high", 1),
        cluster("c-high-n0", "high", 0),
        cluster("d-clean-n0", None, 0),
        cluster("e-high-unsimulated", "high", None),
        cluster("f-critical-n2", "critical", 2),
    ]
    assert [c.name for c in worst_first(clusters)] == [
        "f-critical-n2",
        "c-high-n0",
        "b-high-n1",
        "e-high-unsimulated",
        "a-medium-n1",
        "d-clean-n0",
    ]


def test_title_and_header_name_the_server_and_scan_time_first() -> None:
    page = rendered(render_html(realistic_result()))
    assert page.title.startswith("vcsa01.corp.example \u00b7 2026-11-30 08:49 UTC \u00b7 FAIL")
    assert page.title.index("2026-11-30") < page.title.index("VMware vCenter Server 8.0.3")
    assert page.text("estate-name") == "vcsa01.corp.example"
    assert page.text("estate-time") == "scanned 2026-11-30 08:49 UTC"


def test_titles_of_two_vcenters_differ() -> None:
    result = large_estate_result()
    assert rendered(render_html(result)).title.startswith(f"{SERVER} \u00b7 2026-11-30 08:49 UTC")
    assert SCANNED_AT.startswith("2026-11-30T08:49")


def test_fleet_page_shows_the_scan_time_in_utc_like_the_report() -> None:
    data = {
        "generator": {"version": "0"},
        "scanned_at": "2026-12-01T02:39:07+00:00",
        "exit_code": 0,
        "targets": [],
    }
    page = rendered(render_fleet_html(data))
    assert page.text("estate-time") == "scanned 2026-12-01 02:39 UTC"
    assert "2026-12-01 02:39 UTC" in page.title


def test_one_licence_edition_has_one_total_row() -> None:
    inventory = obtain.obtain_inventory(obtain.demo_source())
    html = render_html(run_checks(inventory))
    totals = re.findall(r'<tr class="total"><td>Total</td><td>([^<]*)</td>', html)
    assert totals == ["NVIDIA RTX Virtual Workstation"]


def test_two_licence_editions_have_a_total_each_and_one_for_all() -> None:
    html = render_html(realistic_result())
    totals = re.findall(r'<tr class="total"><td>Total</td><td>([^<]*)</td>', html)
    assert totals == ["NVIDIA RTX Virtual Workstation", "NVIDIA Virtual PC", "All editions"]


def test_large_estate_without_javascript_holds_every_failed_finding() -> None:
    result = large_estate_result()
    page = rendered(render_html(result))
    failed = failed_in_json(result)
    assert len(failed) > 10_000
    assert len(page.ids) == len(failed)
    assert Counter(page.ids) == Counter(short_id(f) for f in failed)


# In a browser.


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    with Chromium(width=1400, height=900) as chromium:
        yield chromium


READY = """new Promise(resolve => { const wait = () => window.gpuauditReady ?
    resolve(performance.now()) : setTimeout(wait, 5); wait(); })"""


def _bottom(browser: Chromium, selector: str) -> float:
    return float(
        browser.evaluate(
            f"document.querySelector({json.dumps(selector)}).getBoundingClientRect().bottom"
        )
    )


@pytest.fixture(scope="module")
def large_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    result = large_estate_result()
    (path,) = write_reports(result, tmp_path_factory.mktemp("large"), ["html"], SERVER)
    return path


@pytest.mark.browser
def test_large_estate_is_interactive_within_two_seconds(
    browser: Chromium, large_page: Path
) -> None:
    times = []
    for _ in range(3):
        browser.open(large_page)
        times.append(browser.evaluate(READY) / 1000)
    assert browser.console_errors() == []
    assert statistics.median(times) < 2.0, f"interactive after {times} s"


@pytest.mark.browser
def test_large_estate_first_screen_and_two_clicks(browser: Chromium, large_page: Path) -> None:
    browser.open(large_page)
    browser.evaluate(READY)
    browser.evaluate("window.scrollTo(0, 0)")
    height = 900
    assert _bottom(browser, ".verdict") < height
    # The worst actions and the worst clusters are on the first screen.
    assert _bottom(browser, "#actions details.action:nth-of-type(3) > summary") < height
    assert _bottom(browser, "#worst-clusters tbody tr:nth-child(5)") < height
    first = browser.evaluate("document.querySelector('#worst-clusters tbody a').textContent")
    card = browser.evaluate("document.querySelector('#cluster-1 .card-title').textContent")
    assert first == card
    browser.screenshot(ARTIFACTS / "report-large-first-screen.png", full_page=False)
    # Any failed finding: one click opens its action (after the first seven actions, one
    # more click shows them all first); its row is then in view.
    last_rule = browser.evaluate(
        "[...document.querySelectorAll('details.action')].at(-1).id.slice(7)"
    )
    assert browser.evaluate("document.querySelectorAll('#actions > details.action').length") == 7
    browser.evaluate("document.querySelector('#more-actions > summary').click()")
    browser.evaluate("document.querySelector('details.action:last-of-type > summary').click()")
    shown = browser.evaluate(
        "(() => { const r = document.querySelector("
        "'details.action:last-of-type tr.failed-finding');"
        " r.scrollIntoView({block: 'center'}); const b = r.getBoundingClientRect();"
        " return b.height > 0 && b.top > 0 && b.bottom < innerHeight; })()"
    )
    assert shown
    # Second click: the same rule in the filtered findings table, remediation in view.
    button = f'details.action:last-of-type button[data-rule="{last_rule}"]'
    browser.evaluate(f"document.querySelector({json.dumps(button)}).click()")
    cells = browser.evaluate(
        "[...document.querySelectorAll('#findings-body tr.row')]"
        ".map(r => [r.cells[2].textContent, r.cells[6].textContent])"
    )
    assert cells and {c[0] for c in cells} == {last_rule}
    rule = next(r for r in large_estate_result().rules if r.id == last_rule)
    assert {c[1] for c in cells} == {rule.remediation}
