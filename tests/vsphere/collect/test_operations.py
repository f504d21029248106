"""gpuaudit.vsphere.collect.operations: telemetry and licences read after the inventory, by hand.

The window ends at the server's clock (ServiceInstance.CurrentTime) and is 24 hours
unless asked otherwise; both managers are read in one property retrieval.
"""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Any

from pyVmomi import vim

from gpuaudit.common.progress import Step
from gpuaudit.inventory import Gpu, Host, HostTelemetry, Inventory, Licensing, Telemetry
from gpuaudit.vsphere.collect.operations import collect_operations
from tests.support.perf_counters import perf_counter

SERVER_NOW = dt.datetime(2026, 3, 1, 8, 30, tzinfo=dt.UTC)


class _Collector:
    def __init__(self) -> None:
        self.calls = 0

    def RetrievePropertiesEx(self, specSet: list[Any], options: Any) -> Any:
        self.calls += 1
        counter = perf_counter(7, "utilization", "percent", per_device_level=1)
        objects = [
            SimpleNamespace(
                obj=vim.PerformanceManager("PerfMgr"),
                propSet=[SimpleNamespace(name="perfCounter", val=[counter])],
                missingSet=[],
            ),
            SimpleNamespace(obj=vim.LicenseManager("LicenseManager"), propSet=[], missingSet=[]),
        ]
        return SimpleNamespace(objects=objects)


class _Perf(vim.PerformanceManager):  # type: ignore[misc]
    """A performance manager that notes each query's window and answers nothing."""

    def QueryPerf(self, querySpec: list[Any]) -> Any:
        self.windows += [(s.startTime, s.endTime) for s in querySpec]
        return []


def _run(window: dt.timedelta | None) -> tuple[Inventory, _Perf, list[Any]]:
    host = Host(
        name="esx-1",
        moref="host-1",
        gpus=[Gpu(pci_id="0000:3b:00.0", vendor_id=0x10DE, device_id=0x26B9)],
    )
    inv = Inventory(hosts=[host])
    perf = _Perf("PerfMgr")
    object.__setattr__(perf, "windows", [])
    content = SimpleNamespace(
        perfManager=perf,
        licenseManager=vim.LicenseManager("LicenseManager"),
        propertyCollector=_Collector(),
        setting=SimpleNamespace(QueryOptions=lambda name: []),
    )
    si = SimpleNamespace(_stub=None, CurrentTime=lambda: SERVER_NOW)
    steps: list[Any] = []
    collect_operations(si, content, inv, window, steps.append)
    assert content.propertyCollector.calls == 1
    return inv, perf, steps


def test_a_day_of_counters_to_the_servers_clock_and_the_licences() -> None:
    inv, perf, steps = _run(None)
    assert perf.windows == [(SERVER_NOW - dt.timedelta(hours=24), SERVER_NOW)]
    assert inv.telemetry == Telemetry(
        collected=True,
        window_hours=24.0,
        start="2026-02-28T08:30:00Z",
        end="2026-03-01T08:30:00Z",
        interval_s=300,
        counters={"gpu.utilization.average": 7},
        counter_levels={"gpu.utilization.average": 1},
        missing_counters=[
            "gpu.mem.used.average",
            "gpu.mem.usage.average",
            "gpu.temperature.average",
            "gpu.power.used.average",
        ],
        queries=1,
        metrics_per_query=256,
    )
    assert inv.hosts[0].telemetry is not None
    assert inv.hosts[0].telemetry.status == HostTelemetry().status == "none"
    assert steps == [
        Step("reading GPU counters", 0, 1, "hosts"),
        Step("reading GPU counters", 1, 1, "hosts"),
    ]
    assert inv.licensing == Licensing(collected=True, note="no licence assignment manager")


def test_a_window_asked_for() -> None:
    inv, perf, _ = _run(dt.timedelta(hours=6))
    assert perf.windows == [(SERVER_NOW - dt.timedelta(hours=6), SERVER_NOW)]
    assert inv.telemetry.window_hours == 6.0
