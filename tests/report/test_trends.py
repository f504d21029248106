"""The trend charts' SVG, written out by hand from the chart's geometry.

The plot is 640 x 220 with margins left 44, right 16, top 14, bottom 30, so a point's
x runs from 44 to 624 (580 wide) and its y from 190 (value 0) up to 14 (the
top tick); each series adds a 16-high legend line below. The y axis has a tick and
label at 0 and every step of 1, 2 or 5 x 10^n up to the largest value rounded up,
at most five steps. Scans are placed by
their time when every time is known and the first and last differ, else evenly.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from gpuaudit.report.trends import Chart, Trends, _xs, line_chart, trends
from gpuaudit.results import ScanHistory, TrendPoint
from tests.support.history_tools import demo_result

NOV_1 = datetime(2026, 11, 1, tzinfo=UTC)
NOV_2 = datetime(2026, 11, 2, tzinfo=UTC)
NOV_5 = datetime(2026, 11, 5, tzinfo=UTC)
AXES = (
    '<line class="axis" x1="44" y1="190" x2="624" y2="190" stroke="#9aa4b2"/>'
    '<line class="axis" x1="44" y1="14" x2="44" y2="190" stroke="#9aa4b2"/>'
)

H = timedelta(hours=1)


def tick(value: int, y: float) -> str:
    return (
        f'<line class="tick" x1="40" y1="{y:.1f}" x2="44" y2="{y:.1f}" stroke="#9aa4b2"/>'
        f'<text x="38" y="{y + 4:.1f}" text-anchor="end">{value}</text>'
    )


def head(label: str, height: int, ticks: list[tuple[int, float]]) -> str:
    return (
        f'<svg class="trend" viewBox="0 0 640 {height}" width="640" height="{height}" '
        f'role="img" aria-label="{label}"><title>{label}</title>{AXES}'
        + "".join(tick(v, y) for v, y in ticks)
    )


def stamps(first: str, last: str) -> str:
    return (
        f'<text x="44" y="212">{first}</text><text x="624" y="212" text-anchor="end">{last}</text>'
    )


def line(points: str, colour: str) -> str:
    return (
        f'<polyline class="trend-line" points="{points}" fill="none" '
        f'stroke="{colour}" stroke-width="2"/>'
    )


def dot(x: str, y: str, colour: str, title: str) -> str:
    return f'<circle cx="{x}" cy="{y}" r="3" fill="{colour}"><title>{title}</title></circle>'


def legend(y: int, colour: str, name: str) -> str:
    return (
        f'<rect x="44" y="{y}" width="10" height="10" fill="{colour}"/>'
        f'<text x="60" y="{y + 9}">{name}</text>'
    )


def test_points_by_time_with_a_gap_a_given_colour_and_the_palette_s_second() -> None:
    # 1, 2 and 5 November: x at 0, 1/4 and 4/4 of 580; the largest value 4 is the top,
    # so y = 14 + 176 * (1 - v / 4): 0 -> 190, 1 -> 146, 2 -> 102, 3 -> 58, 4 -> 14.
    svg = line_chart(
        "Load & <GPUs>",
        [NOV_1, NOV_2, NOV_5],
        {"a": [0, 4, 2], "b<1>": [1, None, 3]},
        {"a": "#111111"},
    )
    assert str(svg) == (
        head(
            "Load &amp; &lt;GPUs&gt;",
            220 + 2 * 16,
            [(0, 190.0), (1, 146.0), (2, 102.0), (3, 58.0), (4, 14.0)],
        )
        + stamps("2026-11-01 00:00", "2026-11-05 00:00")
        + line("44.0,190.0 189.0,14.0 624.0,102.0", "#111111")
        + dot("44.0", "190.0", "#111111", "a: 0 (2026-11-01 00:00 UTC)")
        + dot("189.0", "14.0", "#111111", "a: 4 (2026-11-02 00:00 UTC)")
        + dot("624.0", "102.0", "#111111", "a: 2 (2026-11-05 00:00 UTC)")
        + legend(224, "#111111", "a")
        # the second series takes the palette's second colour, red; the missing
        # middle scan breaks its line in two one-point runs
        + line("44.0,146.0", "#dc2626")
        + line("624.0,58.0", "#dc2626")
        + dot("44.0", "146.0", "#dc2626", "b&lt;1&gt;: 1 (2026-11-01 00:00 UTC)")
        + dot("624.0", "58.0", "#dc2626", "b&lt;1&gt;: 3 (2026-11-05 00:00 UTC)")
        + legend(240, "#dc2626", "b&lt;1&gt;")
        + "</svg>"
    )


def test_a_scan_of_unknown_time_spaces_the_points_evenly_and_shows_a_question_mark() -> None:
    # Values of at most 1 still scale to a top of 1: y = 14 + 176 * (1 - v).
    svg = line_chart("x", [None, NOV_2, NOV_5], {"s": [1, 0, 1]})
    assert str(svg) == (
        head("x", 236, [(0, 190.0), (1, 14.0)])
        + stamps("?", "2026-11-05 00:00")
        + line("44.0,14.0 334.0,190.0 624.0,14.0", "#2563eb")
        + dot("44.0", "14.0", "#2563eb", "s: 1 (? UTC)")
        + dot("334.0", "190.0", "#2563eb", "s: 0 (2026-11-02 00:00 UTC)")
        + dot("624.0", "14.0", "#2563eb", "s: 1 (2026-11-05 00:00 UTC)")
        + legend(224, "#2563eb", "s")
        + "</svg>"
    )


def test_two_scans_at_the_same_time_are_drawn_apart() -> None:
    svg = str(line_chart("x", [NOV_2, NOV_2], {"s": [0, 0]}))
    assert line("44.0,190.0 624.0,190.0", "#2563eb") in svg
    assert tick(1, 14.0) in svg  # an all-zero chart still labels 1 at the top


@pytest.mark.parametrize(
    ("largest", "labels"),
    [
        (1, [0, 1]),
        (5, [0, 1, 2, 3, 4, 5]),
        (6, [0, 2, 4, 6]),
        (7, [0, 2, 4, 6, 8]),
        (11, [0, 5, 10, 15]),
        (99, [0, 20, 40, 60, 80, 100]),
    ],
)
def test_the_y_axis_labels_more_than_zero_and_the_top(largest: int, labels: list[int]) -> None:
    svg = str(line_chart("x", [NOV_1, NOV_2], {"s": [0, largest]}))
    got = re.findall(r'<text x="38" y="[^"]*" text-anchor="end">(\d+)</text>', svg)
    assert [int(v) for v in got] == labels
    assert svg.count('<line class="tick"') == len(labels)


def test_the_first_and_last_scan_s_times_decide_how_points_are_placed() -> None:
    # Times differ end to end: by time, even where two scans share a time.
    by_time = str(line_chart("x", [NOV_1, NOV_1, NOV_5], {"s": [0, 0, 0]}))
    assert line("44.0,190.0 44.0,190.0 624.0,190.0", "#2563eb") in by_time
    by_time = str(line_chart("x", [NOV_1, NOV_5, NOV_5], {"s": [0, 0, 0]}))
    assert line("44.0,190.0 624.0,190.0 624.0,190.0", "#2563eb") in by_time
    # The first and last the same: evenly, whatever lies between (no division by zero).
    even = str(line_chart("x", [NOV_1, NOV_5, NOV_1], {"s": [0, 0, 0]}))
    assert line("44.0,190.0 334.0,190.0 624.0,190.0", "#2563eb") in even


def scan(
    when: str, failed: dict[str, int], k: int, waived: int = 0, notices: int = 0
) -> TrendPoint:
    return TrendPoint(
        checked_at=when,
        failed=failed,
        tolerates={"gpu-a": k},
        free_slots={"gpu-a": {"A100": 2 * k}},
        waived=waived,
        notices=notices,
    )


def with_history(points: list[TrendPoint]) -> Trends | None:
    result = demo_result()
    result.history = ScanHistory(trend=points)
    return trends(result)


def test_fewer_than_two_scans_say_why_there_are_no_charts() -> None:
    assert with_history([]) == Trends(
        scans=0,
        charts=[],
        note="Trends need at least two scans of this vCenter in the history; there is none yet.",
    )
    assert with_history([scan("2026-11-01T00:00:00Z", {"high": 1}, 1)]) == Trends(
        scans=1,
        charts=[],
        note="Trends need at least two scans of this vCenter in the history; this is the first.",
    )


def test_four_charts_with_a_severity_no_scan_failed_drawn_at_zero() -> None:
    got = with_history(
        [
            scan("2026-11-01T00:00:00Z", {"high": 2}, 0, waived=0, notices=4),
            scan("2026-11-02T00:00:00Z", {"high": 1, "low": 3}, 1, waived=1, notices=4),
        ]
    )
    times = [NOV_1, NOV_2]
    colours = {
        "critical": "#7e22ce",
        "high": "#dc2626",
        "medium": "#d97706",
        "low": "#2563eb",
        "info": "#0891b2",
    }
    # Info is no failed severity: notices are drawn beside the waived findings.
    failed = {"critical": [0, 0], "high": [2, 1], "medium": [0, 0], "low": [0, 3]}
    accepted = {"waived": [0, 1], "notices": [4, 4]}
    assert got == Trends(
        scans=2,
        charts=[
            Chart(
                "Failed findings by severity",
                line_chart("Failed findings by severity", times, failed, colours),
            ),
            Chart(
                "Waived findings and notices",
                line_chart(
                    "Waived findings and notices",
                    times,
                    accepted,
                    {"waived": "#4b5563", "notices": "#0891b2"},
                ),
            ),
            Chart(
                "N+k of gpu-a",
                line_chart("N+k of gpu-a", times, {"gpu-a": [0, 1]}),
                "N+k per cluster",
            ),
            Chart(
                "Free GPU slots of gpu-a",
                line_chart("Free GPU slots of gpu-a", times, {"A100": [0, 2]}),
                "Free GPU slots per cluster, by GPU model",
            ),
        ],
    )


@pytest.mark.parametrize(
    ("times", "xs"),
    [
        # By time: 0, 1 and 3 hours in.
        ([NOV_1, NOV_1 + H, NOV_1 + 3 * H], [44.0, 44.0 + 580 / 3, 624.0]),
        ([NOV_1, NOV_1, NOV_1 + 2 * H], [44.0, 44.0, 624.0]),
        ([NOV_1, NOV_1 + 2 * H, NOV_1 + 2 * H], [44.0, 624.0, 624.0]),
        # Evenly: a time unknown, or all at one time.
        ([NOV_1, None, NOV_1 + 3 * H], [44.0, 334.0, 624.0]),
        ([NOV_1, NOV_1, NOV_1, NOV_1, NOV_1], [44.0, 189.0, 334.0, 479.0, 624.0]),
        ([NOV_1, NOV_1], [44.0, 624.0]),
        ([None], [44.0]),
    ],
)
def test_x_positions(times: list[datetime | None], xs: list[float]) -> None:
    assert _xs(times) == pytest.approx(xs)
