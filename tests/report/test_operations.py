"""The operations section's counters and sparklines, worked out by hand.

A sparkline is 120 x 24: x runs from 0 to 120 across the window, and a value v
(clamped to 0-100 %) sits at y = 23 - 22 * v / 100.
"""

from __future__ import annotations

import pytest

from gpuaudit.inventory import (
    CounterStats,
    Gpu,
    GpuTelemetry,
    Host,
    HostTelemetry,
    Inventory,
    Telemetry,
)
from gpuaudit.report.operations import GpuRow, OperationsView, _pair, operations_view, sparkline


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


def test_the_whole_view_of_six_gpus_each_read_or_not_for_its_own_reason() -> None:
    # h1 (cluster c) reports counters: its first GPU has values and a trend (71.4 to
    # 80.6 % over 24 h), its second none; h2 (no cluster) was not queried and passes
    # its GPU through; h3's query failed and its vGPU GPU has no values.
    s = CounterStats
    tel = GpuTelemetry(
        utilization_percent=s(average=71.44, peak=80.6),
        memory_used_mb=s(average=20480.0, peak=22000.4),
        temperature_c=s(average=55.2, peak=61.5),
        power_w=None,
        trend=[71.4, None, 80.6],
    )
    h1 = Host(name="h1", moref="host-1", cluster="c", telemetry=HostTelemetry("reported"))
    h1.gpus = [
        Gpu(pci_id="0000:3b:00.0", vendor_id=0x10DE, device_id=0, model="NVIDIA L4", telemetry=tel),
        Gpu(
            pci_id="0000:5e:00.0",
            vendor_id=0x10DE,
            device_id=0,
            model="NVIDIA L4",
            graphics_type="sharedDirect",
        ),
    ]
    h2 = Host(name="h2", moref="host-2")
    h2.gpus = [
        Gpu(
            pci_id="0000:af:00.0",
            vendor_id=0x10DE,
            device_id=0,
            model="NVIDIA A100",
            passthrough_active=True,
        )
    ]
    h3 = Host(name="h3", moref="host-3", cluster="c", telemetry=HostTelemetry("error", "timed out"))
    h3.gpus = [
        Gpu(
            pci_id="0000:3b:00.0",
            vendor_id=0x10DE,
            device_id=0,
            model="NVIDIA T4",
            graphics_type="sharedDirect",
        )
    ]
    # h4 was not queried either: a vGPU GPU, and one set to passthrough ("direct")
    # that is not active yet.
    h4 = Host(name="h4", moref="host-4", cluster="c")
    h4.gpus = [
        Gpu(pci_id="0000:3b:00.0", vendor_id=0x10DE, device_id=0, model="NVIDIA L4"),
        Gpu(
            pci_id="0000:5e:00.0",
            vendor_id=0x10DE,
            device_id=0,
            model="NVIDIA L4",
            graphics_type="direct",
        ),
    ]
    inv = Inventory(
        hosts=[h1, h2, h3, h4],
        telemetry=Telemetry(
            collected=True,
            window_hours=24.0,
            end="2026-11-30T08:00:00Z",
            interval_s=300,
            note="historical interval 2",
        ),
    )
    assert operations_view(inv) == OperationsView(
        collected=True,
        window="24 h ending 2026-11-30 08:00:00 UTC",
        interval_s=300,
        note="historical interval 2",
        counters=["Utilisation %", "Memory used MB", "Temperature °C", "Power W"],
        rows=[
            GpuRow(
                "h1",
                "c",
                "0000:3b:00.0",
                "NVIDIA L4",
                counters=["71.4 / 80.6", "20,480 / 22,000", "55 / 62", ""],
                segments=["0.0,7.3 2.0,7.3", "120.0,5.3 120.0,5.3"],
                title="utilisation over 24 h: 71.4-80.6 %",
            ),
            GpuRow(
                "h1", "c", "0000:5e:00.0", "NVIDIA L4", note="no counter instance matched this GPU"
            ),
            GpuRow(
                "h2",
                "",
                "0000:af:00.0",
                "NVIDIA A100",
                note="passthrough: the host cannot read this GPU; monitor it in the guest",
            ),
            GpuRow("h3", "c", "0000:3b:00.0", "NVIDIA T4", note="timed out"),
            GpuRow("h4", "c", "0000:3b:00.0", "NVIDIA L4", note="not queried"),
            GpuRow(
                "h4",
                "c",
                "0000:5e:00.0",
                "NVIDIA L4",
                note="passthrough: the host cannot read this GPU; monitor it in the guest",
            ),
        ],
        reporting=1,
        gpus=6,
    )
