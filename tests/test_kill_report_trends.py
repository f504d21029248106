"""Where each scan sits on a trend chart's x axis, worked out by hand.

The plot spans x = 44 to 624 (640 wide, 44 left and 16 right for the axes).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gpuaudit.report.trends import _xs

T0 = datetime(2026, 11, 1, tzinfo=UTC)
H = timedelta(hours=1)


@pytest.mark.parametrize(
    ("times", "xs"),
    [
        # By time: 0, 1 and 3 hours in.
        ([T0, T0 + H, T0 + 3 * H], [44.0, 44.0 + 580 / 3, 624.0]),
        ([T0, T0, T0 + 2 * H], [44.0, 44.0, 624.0]),
        ([T0, T0 + 2 * H, T0 + 2 * H], [44.0, 624.0, 624.0]),
        # Evenly: a time unknown, or all at one time.
        ([T0, None, T0 + 3 * H], [44.0, 334.0, 624.0]),
        ([T0, T0, T0, T0, T0], [44.0, 189.0, 334.0, 479.0, 624.0]),
        ([T0, T0], [44.0, 624.0]),
        ([None], [44.0]),
    ],
)
def test_x_positions(times: list[datetime | None], xs: list[float]) -> None:
    assert _xs(times) == pytest.approx(xs)
