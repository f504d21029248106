"""Performance counters as a vCenter's PerformanceManager describes them, for tests
that hand the collector its ``perfCounter`` list without a server."""

from __future__ import annotations

from typing import Any

from pyVmomi import vim


def perf_counter(
    key: int,
    name: str,
    unit: str,
    group: str = "gpu",
    rollup: str = "average",
    per_device_level: int = 3,
) -> Any:
    """One PerfCounterInfo: counter ``group``.``name`` in ``unit``, rolled up by
    ``rollup``, kept per device from statistics level ``per_device_level``."""
    return vim.PerformanceManager.CounterInfo(
        key=key,
        nameInfo=vim.ElementDescription(key=name, label=name, summary=name),
        groupInfo=vim.ElementDescription(key=group, label=group, summary=group),
        unitInfo=vim.ElementDescription(key=unit, label=unit, summary=unit),
        rollupType=rollup,
        statsType="absolute",
        level=1,
        perDeviceLevel=per_device_level,
    )
