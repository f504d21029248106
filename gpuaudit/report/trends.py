"""Trends over the scans of one vCenter, drawn as inline SVG on the server.

No script and no network: each chart is a few polylines with a legend, and each
point says its scan time and value in a <title>. The history store gives the
points (AuditResult.history.trend, oldest first, this scan last).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from markupsafe import Markup, escape

from gpuaudit.results import SEVERITIES, AuditResult, TrendPoint

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
PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#d97706", "#7e22ce", "#0891b2", "#db2777", "#4b5563")


@dataclass
class Chart:
    title: str
    svg: Markup


@dataclass
class Trends:
    scans: int  # how many scans the charts span
    charts: list[Chart]
    note: str = ""  # why there are no charts


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
    failed: dict[str, list[int | None]] = {
        s: [p.failed.get(s, 0) for p in points] for s in SEVERITIES
    }
    clusters = sorted({c for p in points for c in p.tolerates})
    tolerates = {c: [p.tolerates.get(c) for p in points] for c in clusters}
    free = _free_series(points)
    charts = [
        Chart(
            "Failed findings by severity",
            line_chart("Failed findings by severity", times, failed, SEVERITY_COLOURS),
        ),
        Chart("N+k per cluster", line_chart("N+k per cluster", times, tolerates)),
        Chart(
            "Free GPU slots per cluster and model",
            line_chart("Free GPU slots per cluster and model", times, free),
        ),
    ]
    return Trends(scans=len(points), charts=charts)


def _free_series(points: list[TrendPoint]) -> dict[str, list[int | None]]:
    keys = sorted({(c, m) for p in points for c, models in p.free_slots.items() for m in models})
    return {f"{c} / {m}": [p.free_slots.get(c, {}).get(m) for p in points] for c, m in keys}


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
    top = max([1, *values])
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
        f'<text x="{LEFT - 6}" y="{TOP + 4}" text-anchor="end">{top}</text>',
        f'<text x="{LEFT - 6}" y="{TOP + plot + 4}" text-anchor="end">0</text>',
    ]
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
