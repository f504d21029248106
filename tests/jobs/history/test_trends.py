"""Trends in the HTML report: inline SVG drawn from the history, with no script and no network."""

from __future__ import annotations

import re
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path

from gpuaudit.jobs import history
from gpuaudit.report.html import render_html
from gpuaudit.report.trends import line_chart, trends
from gpuaudit.results import ScanHistory, TrendPoint
from tests.support.history_tools import demo_result


def section(html: str) -> str:
    match = re.search(r'<section id="trends">(.*?)</section>', html, re.S)
    assert match, "no trends section"
    return match.group(1)


def point(when: str, high: int, k: int, free: int, cluster: str = "gpu-a") -> TrendPoint:
    return TrendPoint(
        checked_at=when,
        failed={"critical": 0, "high": high, "medium": 1, "low": 0, "info": 0},
        tolerates={cluster: k},
        free_slots={cluster: {"A100": free}},
    )


def with_trend(points: list[TrendPoint]) -> str:
    result = demo_result()
    result.history = ScanHistory(trend=points)
    return render_html(result)


def titles(svg: str) -> list[str]:
    return re.findall(r"<circle [^>]*><title>([^<]*)</title>", svg)


def test_severity_chart_then_one_chart_per_cluster_with_every_scan_s_values() -> None:
    html = with_trend(
        [
            point("2026-11-01T00:00:00Z", 5, 0, 2),
            point("2026-11-02T00:00:00Z", 3, 1, 4),
            point("2026-11-03T00:00:00Z", 1, 2, 6),
        ]
    )
    trend = section(html)
    svgs = re.findall(r"<svg class=\"trend\".*?</svg>", trend, re.S)
    assert [re.search(r'aria-label="([^"]*)"', s).group(1) for s in svgs] == [  # type: ignore[union-attr]
        "Failed findings by severity",
        "Waived findings and notices",
        "N+k of gpu-a",
        "Free GPU slots of gpu-a",
    ]
    assert [t for t in titles(svgs[0]) if t.startswith("high")] == [
        "high: 5 (2026-11-01 00:00 UTC)",
        "high: 3 (2026-11-02 00:00 UTC)",
        "high: 1 (2026-11-03 00:00 UTC)",
    ]
    assert not [t for t in titles(svgs[0]) if t.startswith("info")]  # notices: not failed
    assert titles(svgs[2]) == [
        "gpu-a: 0 (2026-11-01 00:00 UTC)",
        "gpu-a: 1 (2026-11-02 00:00 UTC)",
        "gpu-a: 2 (2026-11-03 00:00 UTC)",
    ]
    assert titles(svgs[3])[-1] == "A100: 6 (2026-11-03 00:00 UTC)"
    assert "The last 3 scans" in trend


class Multiples(HTMLParser):
    """The trends section's small multiples: each figure's caption, legend entries, ticks."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: list[dict[str, list[str]]] = []
        self.headings: list[str] = []
        self._in: str | None = None
        self._after_rect = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "figure":
            self.figures.append({"caption": [], "legend": [], "ticks": []})
        elif tag == "figcaption":
            self._in = "caption"
        elif tag == "h3":
            self._in = "h3"
        elif tag == "rect" and self.figures:
            self._after_rect = True
        elif tag == "line" and a.get("class") == "tick" and self.figures:
            self.figures[-1]["ticks"].append(a.get("y1") or "")
        elif tag == "text" and self._after_rect:
            self._in = "legend"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("figcaption", "h3", "text"):
            self._in = None
            if tag == "text":
                self._after_rect = False

    def handle_data(self, data: str) -> None:
        if self._in == "h3":
            self.headings.append(data)
        elif self._in and self.figures:
            self.figures[-1][self._in].append(data)


def test_five_clusters_at_zero_are_five_charts_each_with_its_legend_and_ticks() -> None:
    names = ["gpu-a", "gpu-b", "gpu-c", "gpu-d", "gpu-e"]
    scans = []
    for when in ("2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z"):
        p = point(when, 1, 0, 3)
        p.tolerates = dict.fromkeys(names, 0)
        p.free_slots = {n: {"A100": 3, "L40S": 1} for n in names}
        scans.append(p)
    page = Multiples()
    page.feed(section(with_trend(scans)))
    assert page.headings == [
        "Failed findings by severity",
        "Waived findings and notices",
        "N+k per cluster",
        "Free GPU slots per cluster, by GPU model",
    ]
    nk = [f for f in page.figures if f["caption"][0].startswith("N+k")]
    free = [f for f in page.figures if f["caption"][0].startswith("Free")]
    assert [f["caption"] for f in nk] == [[f"N+k of {n}"] for n in names]
    assert [f["legend"] for f in nk] == [[n] for n in names]
    assert [f["legend"] for f in free] == [["A100", "L40S"]] * 5
    # An all-zero chart ticks 0 and 1; free slots up to 3 tick 0, 1, 2 and 3.
    assert all(len(f["ticks"]) == 2 for f in nk)
    assert all(len(f["ticks"]) == 4 for f in free)


def test_a_higher_value_is_drawn_higher_and_time_spaces_the_points() -> None:
    times = [demo_time("2026-11-01T00:00:00Z"), demo_time("2026-11-02T00:00:00Z")]
    times.append(demo_time("2026-11-05T00:00:00Z"))
    svg = str(line_chart("x", times, {"s": [0, 4, 2]}))
    (points,) = re.findall(r'<polyline [^>]*points="([^"]*)"', svg)
    xy = [tuple(float(n) for n in p.split(",")) for p in points.split()]
    assert xy[1][1] < xy[2][1] < xy[0][1]  # SVG's y grows downwards
    # one day, then three: the gaps between the points are 1 : 3
    assert abs((xy[2][0] - xy[1][0]) - 3 * (xy[1][0] - xy[0][0])) < 0.5


def demo_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_cluster_missing_from_a_scan_breaks_its_line() -> None:
    html = with_trend(
        [
            point("2026-11-01T00:00:00Z", 1, 1, 2),
            point("2026-11-02T00:00:00Z", 1, 1, 2, cluster="other"),
            point("2026-11-03T00:00:00Z", 1, 1, 2),
        ]
    )
    nk = re.findall(r"<svg class=\"trend\".*?</svg>", section(html), re.S)[2:4]
    assert [len(re.findall(r"<polyline ", svg)) for svg in nk] == [2, 1]  # gpu-a, other
    assert "N+k of gpu-a" in nk[0] and "N+k of other" in nk[1]


def test_with_one_scan_the_section_says_two_are_needed() -> None:
    html = with_trend([point("2026-11-01T00:00:00Z", 1, 1, 2)])
    trend = section(html)
    assert "<svg" not in trend
    assert "Trends need at least two scans of this vCenter" in trend


def test_without_history_there_is_no_trends_section() -> None:
    assert '<section id="trends">' not in render_html(demo_result())
    assert trends(demo_result()) is None


def test_names_are_escaped_and_nothing_is_fetched() -> None:
    html = with_trend(
        [
            point("2026-11-01T00:00:00Z", 1, 1, 2, cluster='<img src="http://x/">'),
            point("2026-11-02T00:00:00Z", 1, 1, 2, cluster='<img src="http://x/">'),
        ]
    )
    trend = section(html)
    assert "<img" not in trend and "&lt;img" in trend
    assert not re.search(r"<(script|link|image|use|foreignObject)\b", trend)
    assert not re.search(r'\b(src|href)="', trend)


def test_the_trend_comes_from_the_scans_of_the_same_vcenter(tmp_path: Path) -> None:
    store = history.open_store(str(tmp_path / "h.sqlite"))
    for when in ("2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z"):
        earlier = demo_result(when)
        if when.startswith("2026-11-01"):
            first = next(f for f in earlier.findings if f.unproven)
            first.status = "pass"
        history.record(store, earlier)
    history.record(store, demo_result("2026-11-02T12:00:00Z", source="elsewhere"))
    now = demo_result("2026-11-03T00:00:00Z")
    history.annotate(store, now)
    svg = re.findall(r"<svg class=\"trend\".*?</svg>", section(render_html(now)), re.S)[0]
    high = sum(f.failed and f.severity == "high" for f in now.findings)
    assert [t for t in titles(svg) if t.startswith("high")] == [
        f"high: {high} (2026-11-01 00:00 UTC)",
        f"high: {high} (2026-11-02 00:00 UTC)",
        f"high: {high} (2026-11-03 00:00 UTC)",
    ]
    # The store keeps each scan's not-proven count: one fewer in the first scan here.
    unproven = sum(f.unproven for f in now.findings)
    assert unproven > 0
    assert now.history is not None
    assert [p.unproven for p in now.history.trend] == [unproven - 1, unproven, unproven]


class Sparks(HTMLParser):
    """The first screen's sparklines: each one's label, title and polyline points."""

    def __init__(self) -> None:
        super().__init__()
        self.sparks: list[dict[str, str]] = []
        self._title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "svg" and a.get("class") == "sparkline":
            self.sparks.append({"label": a.get("aria-label") or "", "title": "", "points": ""})
        elif tag == "title" and self.sparks:
            self._title = True
        elif tag == "polyline" and self.sparks:
            self.sparks[-1]["points"] += (a.get("points") or "") + ";"

    def handle_endtag(self, tag: str) -> None:
        self._title = False if tag == "title" else self._title

    def handle_data(self, data: str) -> None:
        if self._title:
            self.sparks[-1]["title"] += data


def overview(html: str) -> str:
    match = re.search(r'<section id="overview">(.*?)<section id="clusters">', html, re.S)
    assert match, "no overview section"
    return match.group(1)


def test_the_first_screen_has_a_sparkline_of_failed_findings_and_of_the_worst_n_k() -> None:
    # Failed: high + medium 1 each scan -> 6, 4, 2. Not proven 4, 0, 2 (top 4).
    # Worst N+k: the lower of two clusters.
    scans = [
        point("2026-11-01T00:00:00Z", 5, 2, 2),
        point("2026-11-02T00:00:00Z", 3, 1, 4),
        point("2026-11-03T00:00:00Z", 1, 0, 6),
    ]
    for p, other, unproven in zip(scans, (1, 3, 2), (4, 0, 2), strict=True):
        p.tolerates["gpu-b"] = other
        p.unproven = unproven
    page = Sparks()
    page.feed(overview(with_trend(scans)))
    assert [s["label"] for s in page.sparks] == ["Failed findings", "Not proven", "Worst N+k"]
    assert page.sparks[0]["title"] == (
        "Failed findings by scan, oldest first: "
        "2026-11-01 00:00: 6, 2026-11-02 00:00: 4, 2026-11-03 00:00: 2"
    )
    assert page.sparks[1]["title"].endswith(
        "2026-11-01 00:00: 4, 2026-11-02 00:00: 0, 2026-11-03 00:00: 2"
    )
    assert page.sparks[2]["title"].endswith(
        "2026-11-01 00:00: 1, 2026-11-02 00:00: 1, 2026-11-03 00:00: 0"
    )
    # 120 x 28: x at 0, 60, 120; y = 26 - 24 * v / top, top 6, 4 and 1.
    assert page.sparks[0]["points"] == "0.0,2.0 60.0,10.0 120.0,18.0;"
    assert page.sparks[1]["points"] == "0.0,2.0 60.0,26.0 120.0,14.0;"
    assert page.sparks[2]["points"] == "0.0,2.0 60.0,2.0 120.0,26.0;"


def test_one_scan_draws_no_sparkline() -> None:
    page = Sparks()
    page.feed(overview(with_trend([point("2026-11-01T00:00:00Z", 1, 1, 2)])))
    assert page.sparks == []
