"""The operations section's counters and sparklines, worked out by hand.

A sparkline is 120 x 24: x runs from 0 to 120 across the window, and a value v
(clamped to 0-100 %) sits at y = 23 - 22 * v / 100.
"""

from __future__ import annotations

import pytest

from gpuaudit.inventory import CounterStats, Inventory, Telemetry
from gpuaudit.report.operations import _pair, operations_view, sparkline


def test_a_counter_is_its_average_and_peak_with_thousands() -> None:
    assert _pair(CounterStats(average=1234.5, peak=2000.3), 1) == "1,234.5 / 2,000.3"
    assert _pair(CounterStats(average=71.4, peak=80.6), 0) == "71 / 81"


def test_a_counter_without_average_or_peak_is_empty() -> None:
    assert _pair(None, 0) == ""
    assert _pair(CounterStats(average=None, peak=5.0), 0) == ""
    assert _pair(CounterStats(average=5.0, peak=None), 0) == ""


def test_gaps_break_the_line_and_a_lone_point_is_a_short_dash() -> None:
    # Seven buckets, 20 apart.
    assert sparkline([0, None, 50, 100, None, None, 25]) == [
        "0.0,23.0 2.0,23.0",
        "40.0,12.0 60.0,1.0",
        "120.0,17.5 120.0,17.5",  # the dash stops at the right edge
    ]


def test_values_are_clamped_to_0_and_100_percent() -> None:
    assert sparkline([150.0, -10.0]) == ["0.0,1.0 120.0,23.0"]


def test_one_bucket_and_no_bucket() -> None:
    assert sparkline([40.0]) == ["0.0,14.2 2.0,14.2"]
    assert sparkline([]) == []
    assert sparkline([None, None]) == []


@pytest.mark.parametrize(
    ("hours", "end", "window"),
    [
        (24.0, "2026-11-30T08:00:00Z", "24 h ending 2026-11-30 08:00:00 UTC"),
        (47.5, "", "47.5 h"),
        (48.0, "2026-11-30T08:00:00Z", "2 days ending 2026-11-30 08:00:00 UTC"),
        (168.0, "", "7 days"),
    ],
)
def test_the_window_is_told_in_hours_below_two_days_then_in_days(
    hours: float, end: str, window: str
) -> None:
    inv = Inventory(telemetry=Telemetry(collected=True, window_hours=hours, end=end))
    assert operations_view(inv).window == window
