"""Trends over the scans of one vCenter, drawn as inline SVG on the server.

No script and no network: each chart is a few polylines with a legend, and each
point says its scan time and value in a <title>. The history store gives the
points (AuditResult.history.trend, oldest first, this scan last).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from markupsafe import Markup, escape

from gpuaudit.results import NOTICE, SEVERITIES, AuditResult, TrendPoint

WIDTH, HEIGHT = 640, 220
LEFT, RIGHT, TOP, BOTTOM = 44, 16, 14, 30
LEGEND_LINE = 16
SEVERITY_COLOURS = {
    "critical": "#7e22ce",
    "high": "#dc2626",
    "medium": "#d97706",
    "low": "#2563eb",
    "info": "#0891b2",
}
WAIVED_CHART = "Waived findings and notices"
WAIVED_COLOURS = {"waived": "#4b5563", "notices": SEVERITY_COLOURS["info"]}
NK_GROUP = "N+k per cluster"
FREE_GROUP = "Free GPU slots per cluster, by GPU model"
PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#d97706", "#7e22ce", "#0891b2", "#db2777", "#4b5563")


@dataclass
class Chart:
    title: str
    svg: Markup
    group: str = ""  # small multiples: the heading the chart sits under, one chart each


@dataclass
class Trends:
    scans: int  # how many scans the charts span
    charts: list[Chart]
    note: str = ""  # why there are no charts

    def groups(self) -> list[tuple[str, list[Chart]]]:
        """The small multiples by their heading, in the order of the charts."""
        grouped: dict[str, list[Chart]] = {}
        for chart in self.charts:
            if chart.group:
                grouped.setdefault(chart.group, []).append(chart)
        return list(grouped.items())


def trends(result: AuditResult) -> Trends | None:
    """The charts, or None when no history store was used."""
    history = result.history
    if history is None:
        return None
    points = history.trend
    if len(points) < 2:
        return Trends(
            scans=len(points),
            charts=[],
            note="Trends need at least two scans of this vCenter in the history; "
            f"{'this is the first' if points else 'there is none yet'}.",
        )
    times = [_time(p.checked_at) for p in points]
    # Info findings are notices, never failed: they have their own line below.
    failed: dict[str, list[int | None]] = {
        s: [p.failed.get(s, 0) for p in points] for s in SEVERITIES if s != NOTICE
    }
    # A failure waived leaves the failed lines as a fix does: the waived line shows
    # which it was.
    accepted: dict[str, list[int | None]] = {
        "waived": [p.waived for p in points],
        "notices": [p.notices for p in points],
    }
    charts = [
        Chart(
            "Failed findings by severity",
            line_chart("Failed findings by severity", times, failed, SEVERITY_COLOURS),
        ),
        Chart(
            WAIVED_CHART,
            line_chart(WAIVED_CHART, times, accepted, WAIVED_COLOURS),
        ),
    ]
    # Small multiples, one chart per cluster: clusters at the same value never share a line.
    for cluster in sorted({c for p in points for c in p.tolerates}):
        label = f"N+k of {cluster}"
        series = {cluster: [p.tolerates.get(cluster) for p in points]}
        charts.append(Chart(label, line_chart(label, times, series), NK_GROUP))
    for cluster in sorted({c for p in points for c in p.free_slots}):
        label = f"Free GPU slots of {cluster}"
        charts.append(
            Chart(label, line_chart(label, times, _free_series(points, cluster)), FREE_GROUP)
        )
    return Trends(scans=len(points), charts=charts)


def _free_series(points: list[TrendPoint], cluster: str) -> dict[str, list[int | None]]:
    """One series per GPU model of the cluster."""
    models = sorted({m for p in points for m in p.free_slots.get(cluster, {})})
    return {m: [p.free_slots.get(cluster, {}).get(m) for p in points] for m in models}


def ticks(largest: int) -> list[int]:
    """The y axis' labelled values: 0 up to ``largest`` rounded up to a step.

    The step is 1, 2 or 5 x 10^n, the smallest that needs at most five steps.
    """
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor * 5 >= largest:
                top = -(-largest // (step * factor)) * step * factor
                return list(range(0, top + 1, step * factor))
        step *= 10


def _time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _xs(times: list[datetime | None]) -> list[float]:
    """Each scan's x: by its time when all are known and differ, else evenly spaced."""
    span = WIDTH - LEFT - RIGHT
    known = [t for t in times if t is not None]
    if len(known) == len(times) and known[-1] != known[0]:
        first, total = known[0], (known[-1] - known[0]).total_seconds()
        return [LEFT + span * (t - first).total_seconds() / total for t in known]
    return [LEFT + span * i / max(1, len(times) - 1) for i in range(len(times))]


def line_chart(
    label: str,
    times: list[datetime | None],
    series: dict[str, list[int | None]],
    colours: dict[str, str] | None = None,
) -> Markup:
    """One polyline per series (a gap where a scan has no value), axes and a legend."""
    xs = _xs(times)
    values = [v for vs in series.values() for v in vs if v is not None]
    marks = ticks(max([1, *values]))
    top = marks[-1]
    plot = HEIGHT - TOP - BOTTOM

    def y(value: int) -> float:
        return TOP + plot * (1 - value / top)

    height = HEIGHT + LEGEND_LINE * len(series)
    parts = [
        f'<svg class="trend" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
        f'height="{height}" role="img" aria-label="{escape(label)}">',
        f"<title>{escape(label)}</title>",
        f'<line class="axis" x1="{LEFT}" y1="{TOP + plot}" x2="{WIDTH - RIGHT}" '
        f'y2="{TOP + plot}" stroke="#9aa4b2"/>',
        f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot}" '
        'stroke="#9aa4b2"/>',
    ]
    for mark in marks:
        at = f"{y(mark):.1f}"
        parts.append(
            f'<line class="tick" x1="{LEFT - 4}" y1="{at}" x2="{LEFT}" y2="{at}" stroke="#9aa4b2"/>'
            f'<text x="{LEFT - 6}" y="{y(mark) + 4:.1f}" text-anchor="end">{mark}</text>'
        )
    stamps = [t.strftime("%Y-%m-%d %H:%M") if t else "?" for t in times]
    parts.append(f'<text x="{LEFT}" y="{HEIGHT - 8}">{escape(stamps[0])}</text>')
    parts.append(
        f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 8}" text-anchor="end">{escape(stamps[-1])}</text>'
    )
    for i, (name, vs) in enumerate(series.items()):
        colour = (colours or {}).get(name) or PALETTE[i % len(PALETTE)]
        for segment in _segments(xs, vs):
            points = " ".join(f"{x:.1f},{y(v):.1f}" for x, v in segment)
            parts.append(
                f'<polyline class="trend-line" points="{points}" fill="none" '
                f'stroke="{colour}" stroke-width="2"/>'
            )
        for x, v, stamp in zip(xs, vs, stamps, strict=True):
            if v is not None:
                parts.append(
                    f'<circle cx="{x:.1f}" cy="{y(v):.1f}" r="3" fill="{colour}">'
                    f"<title>{escape(name)}: {v} ({escape(stamp)} UTC)</title></circle>"
                )
        legend_y = HEIGHT + LEGEND_LINE * i + 4
        parts.append(
            f'<rect x="{LEFT}" y="{legend_y}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{LEFT + 16}" y="{legend_y + 9}">{escape(name)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _segments(xs: list[float], values: list[int | None]) -> list[list[tuple[float, int]]]:
    """The runs of known values: a scan without a value breaks the line."""
    runs: list[list[tuple[float, int]]] = [[]]
    for x, v in zip(xs, values, strict=True):
        if v is None:
            runs.append([])
        else:
            runs[-1].append((x, v))
    return [r for r in runs if r]


SPARK_W, SPARK_H = 120, 28


@dataclass
class Sparkline:
    label: str
    latest: str  # this scan's value, or "-" when it has none
    svg: Markup


def sparklines(result: AuditResult) -> list[Sparkline]:
    """The first screen's small trends: failed, not proven, and the worst cluster's N+k.

    Empty without a history store or with fewer than two scans.
    """
    points = result.history.trend if result.history else []
    if len(points) < 2:
        return []
    failed: list[int | None] = [sum(p.failed.values()) for p in points]
    unproven: list[int | None] = [p.unproven for p in points]
    worst: list[int | None] = [min(p.tolerates.values(), default=None) for p in points]
    stamps = [p.checked_at[:16].replace("T", " ") for p in points]
    return [
        _sparkline("Failed findings", stamps, failed),
        _sparkline("Not proven", stamps, unproven),
        _sparkline("Worst N+k", stamps, worst),
    ]


def _sparkline(label: str, stamps: list[str], values: list[int | None]) -> Sparkline:
    known = [v for v in values if v is not None]
    low, high = min([0, *known]), max([1, *known])
    xs = [SPARK_W * i / (len(values) - 1) for i in range(len(values))]

    def y(value: int) -> float:
        return SPARK_H - 2 - (SPARK_H - 4) * (value - low) / (high - low)

    said = ", ".join(f"{s}: {'-' if v is None else v}" for s, v in zip(stamps, values, strict=True))
    parts = [
        f'<svg class="sparkline" viewBox="0 0 {SPARK_W} {SPARK_H}" width="{SPARK_W}" '
        f'height="{SPARK_H}" role="img" aria-label="{escape(label)}">'
        f"<title>{escape(label)} by scan, oldest first: {escape(said)}</title>"
    ]
    for segment in _segments(xs, values):
        line = " ".join(f"{x:.1f},{y(v):.1f}" for x, v in segment)
        parts.append(f'<polyline class="spark-line" points="{line}"/>')
    if values[-1] is not None:
        parts.append(f'<circle cx="{xs[-1]:.1f}" cy="{y(values[-1]):.1f}" r="2.5"/>')
    parts.append("</svg>")
    latest = "-" if values[-1] is None else str(values[-1])
    return Sparkline(label, latest, Markup("".join(parts)))
