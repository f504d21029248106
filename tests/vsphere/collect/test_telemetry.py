"""gpuaudit.vsphere.collect.telemetry against a PerformanceManager faked in memory, by hand.

Shapes and units are the vSphere API's: PerfCounterInfo (group "gpu", rollup
"average", unit "percent" in hundredths, "kiloBytes"), PerfInterval, QuerySpec with
format "csv", PerfEntityMetricCSV and PerfMetricIntSeries, -1 for a missing sample;
config.vpxd.stats.maxQueryMetrics with its documented defaults (64 before vCenter
6.5, 256 from it; 0 or -1: no limit).
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from types import SimpleNamespace
from typing import Any

from pyVmomi import vim

from gpuaudit.inventory import (
    CounterStats,
    Gap,
    Gpu,
    GpuTelemetry,
    Host,
    HostTelemetry,
    Inventory,
    Telemetry,
    VCenter,
)
from gpuaudit.vsphere.collect import telemetry as T
from gpuaudit.vsphere.collect.instances import pci_key
from gpuaudit.vsphere.collect.managers import ManagerProps
from tests.support.perf_counters import perf_counter
from tests.support.zones import local_zone

PM = vim.PerformanceManager
NOW = dt.datetime(2026, 5, 2, 12, 0, 0, tzinfo=dt.UTC)


COUNTERS = [
    perf_counter(101, "utilization", "percent"),
    perf_counter(102, "mem.used", "kiloBytes"),
    perf_counter(103, "mem.usage", "percent"),
    perf_counter(104, "temperature", "celsius"),
    perf_counter(105, "power.used", "watt"),
    perf_counter(106, "utilization", "percent", rollup="maximum"),
    perf_counter(2, "usage", "percent", group="cpu"),
]


def _interval(period: int, length: int, level: int | None, enabled: bool = True) -> Any:
    return vim.HistoricalInterval(
        key=period,
        samplingPeriod=period,
        name=f"{period}s",
        length=length,
        level=level,
        enabled=enabled,
    )


def test_counters_are_found_by_group_name_and_rollup() -> None:
    found = T.resolve_counters([*COUNTERS, SimpleNamespace(groupInfo=None)])
    assert found == {
        "utilization_percent": T.Counter(
            "utilization_percent", 101, "gpu.utilization.average", "percent", 3
        ),
        "memory_used_mb": T.Counter("memory_used_mb", 102, "gpu.mem.used.average", "kiloBytes", 3),
        "memory_usage_percent": T.Counter(
            "memory_usage_percent", 103, "gpu.mem.usage.average", "percent", 3
        ),
        "temperature_c": T.Counter("temperature_c", 104, "gpu.temperature.average", "celsius", 3),
        "power_w": T.Counter("power_w", 105, "gpu.power.used.average", "watt", 3),
    }
    # No per-device level: the counter's level; neither: 0. No unit: "".
    info = perf_counter(7, "temperature", "celsius")
    info.perDeviceLevel, info.level = 0, 2
    info.unitInfo = vim.ElementDescription(key="", label="", summary="")
    assert T.resolve_counters([info])["temperature_c"] == T.Counter(
        "temperature_c", 7, "gpu.temperature.average", "", 2
    )
    info.level = 0
    assert T.resolve_counters([info])["temperature_c"].per_device_level == 0
    assert T.resolve_counters(None) == {}  # type: ignore[arg-type]
    # Another group's counter first changes nothing.
    assert list(T.resolve_counters([COUNTERS[-1], COUNTERS[0]])) == ["utilization_percent"]


def test_the_interval_that_keeps_the_whole_window() -> None:
    day, hour = dt.timedelta(days=1), dt.timedelta(hours=1)
    intervals = [
        _interval(7200, 31536000, 4),
        _interval(300, 86400, 2),
        _interval(60, 86400, 4, enabled=False),
        _interval(1800, 604800, 3),
    ]
    assert T.choose_interval(hour, intervals) == (20, None)
    assert T.choose_interval(hour + dt.timedelta(seconds=1), intervals) == (300, 2)
    assert T.choose_interval(day, intervals) == (300, 2)
    assert T.choose_interval(day + dt.timedelta(seconds=1), intervals) == (1800, 3)
    assert T.choose_interval(dt.timedelta(days=400), intervals) == (7200, 4)
    # ESXi's own interval has no level.
    assert T.choose_interval(day, [_interval(20, 3600, None)]) == (20, None)
    assert T.choose_interval(day, []) == (300, None)
    assert T.choose_interval(day, [_interval(300, 86400, 1, enabled=False)]) == (300, None)


class _Settings:
    def __init__(self, value: Any = None, fault: Exception | None = None) -> None:
        self.value, self.fault = value, fault
        self.asked: list[str] = []

    def QueryOptions(self, name: str) -> Any:
        self.asked.append(name)
        if self.fault is not None:
            raise self.fault
        if self.value is None:
            return None
        return [
            vim.option.OptionValue(key="config.other", value="1"),
            vim.option.OptionValue(key=name, value=self.value),
        ]


def _limit(version: str, value: Any = None, fault: Exception | None = None) -> int | None:
    settings = _Settings(value, fault)
    inv = Inventory(vcenter=VCenter(version=version))
    limit = T.query_metric_limit(SimpleNamespace(setting=settings), inv)
    assert settings.asked == ["config.vpxd.stats.maxQueryMetrics"]
    return limit


def test_the_metric_limit_vcenter_enforces() -> None:
    assert _limit("8.0.2", " 512 ") == 512
    assert _limit("8.0.2", "1") == 1
    assert _limit("8.0.2", "0") is None
    assert _limit("8.0.2", "-1") is None
    assert _limit("8.0.2", "many") == 256
    assert _limit("6.0.0", "many") == 64
    assert _limit("8.0.2") == 256
    assert _limit("6.5.0", fault=vim.fault.InvalidName(name="x")) == 256
    assert _limit("6.0.0", fault=vim.fault.InvalidName(name="x")) == 64
    assert _limit("5.5", fault=vim.fault.NoPermission(privilegeId="System.View")) == 64
    assert _limit("7.0.3", fault=vim.fault.NoPermission(privilegeId="System.View")) == 256
    # An option list without the setting: the default.
    settings = SimpleNamespace(
        QueryOptions=lambda name: [vim.option.OptionValue(key="config.other", value="8")]
    )
    inv = Inventory(vcenter=VCenter(version="8.0"))
    assert T.query_metric_limit(SimpleNamespace(setting=settings), inv) == 256


def test_versions_and_hosts_per_query() -> None:
    assert T._version("8.0.2") == (8, 0)
    assert T._version("6.5") == (6, 5)
    assert T._version("7") == (7,)
    assert T._version("7.x.1") == (7,)
    assert T._version("") == (99,)
    assert T._version("dev") == (99,)
    assert T.hosts_per_query(256, 5, 80) == 51
    assert T.hosts_per_query(4, 5, 80) == 1
    assert T.hosts_per_query(10, 0, 80) == 10
    assert T.hosts_per_query(None, 5, 80) == 80
    assert T.hosts_per_query(None, 5, 0) == 1


def test_samples_scaled_summarised_and_trended() -> None:
    assert T._scale(None, "percent") is None
    assert T._scale(-1.0, "percent") is None
    assert T._scale(0.0, "percent") == 0.0
    assert T._scale(4250.0, "percent") == 42.5
    assert T._scale(2048.0, "kiloBytes") == 2.0
    assert T._scale(71.0, "celsius") == 71.0
    assert T._number("12") == 12.0
    assert T._number("") is None
    assert T._stats([]) == CounterStats()
    assert T._stats([0.9765625, 1.5, 2.0]) == CounterStats(average=1.49, peak=2.0, samples=3)
    assert T._stats([0.9765625]) == CounterStats(average=0.98, peak=0.98, samples=1)
    assert T._trend([]) == []
    assert T._trend([1.0, None, 3.0]) == [1.0, None, 3.0]
    # 97 samples: buckets of three (ceil(97 / 48)), the last holding one.
    values: list[float | None] = [float(i) for i in range(97)]
    assert T._trend(values) == [float(3 * i + 1) for i in range(32)] + [96.0]
    assert T._trend([0.5] * 48 + [None] * 48) == [0.5] * 24 + [None] * 24
    assert T._trend([12.34, None]) == [12.3, None]


def _gpu(pci: str) -> Gpu:
    return Gpu(pci_id=pci, vendor_id=0x10DE, device_id=0x26B9)


def test_match_instances_by_hand() -> None:
    a, b, c = _gpu("0000:af:00.0"), _gpu("0000:3b:00.0"), _gpu("0000:5e:00.0")
    # By PCI address (any case, without the segment), and twice the same GPU: unmatched.
    assert T.match_instances([a, b, c], ["3b:00.0", "0000:AF:00.0", "0000:3b:00.0"]) == (
        {"3b:00.0": (b, "pci"), "0000:AF:00.0": (a, "pci")},
        ["0000:3b:00.0"],
    )
    # gpu0.. count from zero in PCI order: 3b, 5e, af.
    assert T.match_instances([a, b, c], ["gpu0", "gpu-1", "GPU2", "gpu3"]) == (
        {"gpu0": (b, "order"), "gpu-1": (c, "order"), "GPU2": (a, "order")},
        ["gpu3"],
    )
    # gpu1..gpuN for N GPUs count from one.
    assert T.match_instances([a, b, c], ["gpu1", "gpu3"]) == (
        {"gpu1": (b, "order"), "gpu3": (a, "order")},
        [],
    )
    # With a gpu0, gpuN for N GPUs is beyond the last.
    assert T.match_instances([a, b], ["gpu0", "gpu2"]) == ({"gpu0": (b, "order")}, ["gpu2"])
    # The only GPU and the only instance, whatever its name.
    assert T.match_instances([a], ["nvidia0"]) == ({"nvidia0": (a, "only")}, [])
    assert T.match_instances([a], ["nvidia0", "nvidia1"]) == ({}, ["nvidia0", "nvidia1"])
    assert T.match_instances([a, b], ["nvidia0"]) == ({}, ["nvidia0"])
    # An address no GPU has, in a one-GPU host with one instance: the only one.
    assert T.match_instances([a], ["0000:01:00.0"]) == ({"0000:01:00.0": (a, "only")}, [])
    assert T.match_instances([], ["gpu0"]) == ({}, ["gpu0"])
    # A GPU whose address does not parse counts first, and is matched by order only.
    odd, low = _gpu("not-an-address"), _gpu("0000:00:00.1")
    assert T.match_instances([low, odd], ["gpu0"]) == ({"gpu0": (odd, "order")}, [])


def test_pci_segments_are_hexadecimal() -> None:
    first, second = _gpu("0000:3b:00.0"), _gpu("000a:3b:00.0")
    assert T.match_instances([first, second], ["0000:3b:00.0", "000A:3B:00.0"]) == (
        {"0000:3b:00.0": (first, "pci"), "000A:3B:00.0": (second, "pci")},
        [],
    )
    assert pci_key(" 0010:3b:1f.7 ") == (16, 0x3B, 0x1F, 7)
    assert pci_key("3b:00.8") is None


def _host(name: str, *pci: str, state: str = "connected") -> Host:
    return Host(
        name=name, moref=f"host-{name}", connection_state=state, gpus=[_gpu(p) for p in pci]
    )


def _csv(host: Host, *series: tuple[int, str, str]) -> Any:
    return PM.EntityMetricCSV(
        entity=vim.HostSystem(host.moref),
        sampleInfoCSV="",
        value=[
            PM.MetricSeriesCSV(id=PM.MetricId(counterId=k, instance=i), value=v)
            for k, i, v in series
        ],
    )


class _PerfManager:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.calls: list[list[str]] = []
        self.specs: list[Any] = []

    def QueryPerf(self, querySpec: list[Any]) -> Any:
        self.calls.append([s.entity._moId for s in querySpec])
        self.specs.extend(querySpec)
        return self.answer(querySpec)


def _perf(counters: list[Any] | None = None, intervals: list[Any] | None = None) -> ManagerProps:
    perf = ManagerProps()
    perf.values = {
        "perfCounter": COUNTERS if counters is None else counters,
        "historicalInterval": [_interval(300, 86400, 4), _interval(1800, 604800, 2)]
        if intervals is None
        else intervals,
    }
    return perf


def _collect(
    inv: Inventory, perf: ManagerProps, answer: Any, limit: str | None = "10", **kw: Any
) -> _PerfManager:
    manager = _PerfManager(answer)
    content = SimpleNamespace(perfManager=manager, setting=_Settings(limit))
    T.collect_telemetry(SimpleNamespace(_stub=None), content, inv, perf, NOW, **kw)
    return manager


def test_a_whole_query_read_field_by_field() -> None:
    one = _host("esx-01", "0000:3b:00.0", "0000:af:00.0")
    two = _host("esx-02", "0000:5e:00.0")
    bare = _host("esx-03")  # no GPU: not asked
    lost = _host("esx-04", "0000:3b:00.0", state="notResponding")  # not asked
    inv = Inventory(vcenter=VCenter(version="8.0.2"), hosts=[one, bare, two, lost])

    def answer(specs: list[Any]) -> Any:
        return [
            _csv(
                one,
                (101, "0000:3b:00.0", "5000,7500,-1"),
                (102, "0000:3b:00.0", "1000,2048"),
                (104, "0000:3b:00.0", "61,67,x"),
                (101, "", "9999"),  # the host's aggregate: no instance
                (999, "0000:af:00.0", "1"),  # a counter not asked for
                (103, "0000:af:00.0", "-1,-1"),  # no sample at all
                (105, "gpu7", "200"),
            ),
            PM.EntityMetric(
                entity=vim.HostSystem(two.moref),
                sampleInfo=[],
                value=[
                    PM.IntSeries(
                        id=PM.MetricId(counterId=105, instance="0000:5e:00.0"), value=[70, 90]
                    ),
                ],
            ),
            SimpleNamespace(entity=None, value=[]),  # an answer for no entity: left out
        ]

    manager = _collect(inv, _perf(), answer)
    assert manager.calls == [["host-esx-01", "host-esx-02"]]
    spec = manager.specs[0]
    assert (spec.startTime, spec.endTime, spec.intervalId, spec.format) == (
        NOW - dt.timedelta(hours=24),
        NOW,
        300,
        "csv",
    )
    assert sorted((m.counterId, m.instance) for m in spec.metricId) == [
        (101, "*"),
        (102, "*"),
        (103, "*"),
        (104, "*"),
        (105, "*"),
    ]
    assert inv.telemetry == Telemetry(
        collected=True,
        window_hours=24.0,
        start="2026-05-01T12:00:00Z",
        end="2026-05-02T12:00:00Z",
        interval_s=300,
        statistics_level=4,
        counters={
            "gpu.utilization.average": 101,
            "gpu.mem.used.average": 102,
            "gpu.mem.usage.average": 103,
            "gpu.temperature.average": 104,
            "gpu.power.used.average": 105,
        },
        counter_levels={
            "gpu.utilization.average": 3,
            "gpu.mem.used.average": 3,
            "gpu.mem.usage.average": 3,
            "gpu.temperature.average": 3,
            "gpu.power.used.average": 3,
        },
        queries=1,
        metrics_per_query=10,
    )
    assert one.telemetry == HostTelemetry(
        status="reported", instances=["0000:3b:00.0", "gpu7"], unmatched=["gpu7"]
    )
    assert one.gpus[0].telemetry == GpuTelemetry(
        instance="0000:3b:00.0",
        matched_by="pci",
        utilization_percent=CounterStats(average=62.5, peak=75.0, samples=2),
        memory_used_mb=CounterStats(average=1.49, peak=2.0, samples=2),
        temperature_c=CounterStats(average=64.0, peak=67.0, samples=2),
        trend=[50.0, 75.0, None],
    )
    assert one.gpus[1].telemetry is None
    assert two.telemetry == HostTelemetry(status="reported", instances=["0000:5e:00.0"])
    assert two.gpus[0].telemetry == GpuTelemetry(
        instance="0000:5e:00.0",
        matched_by="pci",
        power_w=CounterStats(average=80.0, peak=90.0, samples=2),
    )
    assert bare.telemetry is None and lost.telemetry is None
    assert inv.gaps == []


def test_pages_follow_the_limit_and_refused_pages_are_halved() -> None:
    hosts = [_host(f"esx-{i}", "0000:3b:00.0") for i in range(5)]
    inv = Inventory(vcenter=VCenter(version="8.0"), hosts=hosts)

    def answer(specs: list[Any]) -> Any:
        if len(specs) > 1:
            raise vim.fault.RestrictedByAdministrator(details="too many metrics")
        return []

    # 20 metrics a query and 5 counters: four hosts a page, the fifth in the next, asked
    # side by side. The four are refused and asked again in halves, refused, then one at
    # a time; the fifth is answered at once.
    steps: list[Any] = []
    manager = _collect(inv, _perf(), answer, limit="20", progress=steps.append)
    assert sorted(manager.calls) == sorted(
        [
            ["host-esx-0", "host-esx-1", "host-esx-2", "host-esx-3"],
            ["host-esx-4"],
            ["host-esx-0", "host-esx-1"],
            ["host-esx-2", "host-esx-3"],
            ["host-esx-0"],
            ["host-esx-1"],
            ["host-esx-2"],
            ["host-esx-3"],
        ]
    )
    assert inv.telemetry.queries == 8
    assert [(s.done, s.total) for s in steps] == [(0, 5), (1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]
    assert {(s.phase, s.unit) for s in steps} == {("reading GPU counters", "hosts")}
    assert all(
        h.telemetry
        == HostTelemetry(
            status="none",
            reason=(
                "no GPU counter values: the host's NVIDIA driver or vGPU manager is missing, or "
                "its GPUs are in passthrough, which the host cannot see into"
            ),
        )
        for h in hosts
    )


def test_a_refused_single_host_and_other_faults_are_gaps() -> None:
    refused, denied, fine = (_host(n, "0000:3b:00.0") for n in ("esx-1", "esx-2", "esx-3"))
    inv = Inventory(vcenter=VCenter(version="8.0"), hosts=[refused, denied, fine])

    def answer(specs: list[Any]) -> Any:
        moref = specs[0].entity._moId
        if moref == refused.moref:
            raise vim.fault.RestrictedByAdministrator(details="no")
        if moref == denied.moref:
            raise vim.fault.NoPermission(privilegeId="System.View")
        return None

    _collect(inv, _perf(), answer, limit="5")
    assert refused.telemetry == HostTelemetry(
        status="error", reason="QueryPerf failed: RestrictedByAdministrator"
    )
    assert denied.telemetry == HostTelemetry(
        status="error", reason="QueryPerf failed: NoPermission"
    )
    assert fine.telemetry is not None and fine.telemetry.status == "none"
    assert inv.gaps == [
        Gap("esx-1", "HostSystem", "gpu counters", "RestrictedByAdministrator", "host-esx-1"),
        Gap("esx-2", "HostSystem", "gpu counters", "NoPermission", "host-esx-2"),
    ]


def test_a_level_too_low_for_per_gpu_counters_is_the_reason() -> None:
    host = _host("esx-1", "0000:3b:00.0")
    inv = Inventory(vcenter=VCenter(version="8.0"), hosts=[host])
    perf = _perf(intervals=[_interval(300, 86400, 2)])
    _collect(inv, perf, lambda specs: [], limit=None)
    note = (
        "the statistics level of the 300-second interval is 2; vCenter keeps per-GPU "
        "counters from level 3"
    )
    assert inv.telemetry.note == note
    assert inv.telemetry.metrics_per_query == 256
    assert host.telemetry == HostTelemetry(status="none", reason=note)
    # At the level needed, no note.
    host.telemetry = None
    _collect(inv, _perf(intervals=[_interval(300, 86400, 3)]), lambda specs: [])
    assert inv.telemetry.note == ""


def test_unreadable_or_missing_counters_mark_every_gpu_host() -> None:
    host, off = _host("esx-1", "0000:3b:00.0"), _host("esx-2", "0000:3b:00.0", state="disconnected")
    inv = Inventory(vcenter=VCenter(version="8.0"), hosts=[host, off])
    failed = ManagerProps()
    failed.error = "NoPermission"
    _collect(inv, failed, lambda specs: [])
    note = "the performance counters could not be read (NoPermission)"
    assert inv.telemetry.note == note
    assert host.telemetry == HostTelemetry(status="none", reason=note)
    assert off.telemetry is None
    assert inv.gaps == [Gap("vCenter", "PerformanceManager", "perfCounter", "NoPermission")]

    inv = Inventory(vcenter=VCenter(version="8.0"), hosts=[host])
    withheld = ManagerProps()
    withheld.missing = {"perfCounter": "NotAuthenticated"}
    _collect(inv, withheld, lambda specs: [])
    assert inv.telemetry.note == "the performance counters could not be read (NotAuthenticated)"
    assert inv.gaps == [Gap("vCenter", "PerformanceManager", "perfCounter", "NotAuthenticated")]

    inv = Inventory(vcenter=VCenter(version="8.0"), hosts=[host])
    manager = _collect(inv, _perf(counters=COUNTERS[5:]), lambda specs: [])
    assert manager.calls == []
    note = "this vCenter has no GPU performance counters (group gpu)"
    assert (inv.telemetry.note, host.telemetry) == (note, HostTelemetry(status="none", reason=note))
    assert inv.telemetry.missing_counters == [
        "gpu.utilization.average",
        "gpu.mem.used.average",
        "gpu.mem.usage.average",
        "gpu.temperature.average",
        "gpu.power.used.average",
    ]
    assert (inv.telemetry.interval_s, inv.telemetry.statistics_level) == (300, 4)

    # Some counters only: the others are named missing; no GPU host: nothing asked.
    inv = Inventory(vcenter=VCenter(version="8.0"), hosts=[_host("esx-9")])
    manager = _collect(inv, _perf(counters=COUNTERS[:1] + COUNTERS[3:4]), lambda specs: [])
    assert manager.calls == []
    assert inv.telemetry.missing_counters == [
        "gpu.mem.used.average",
        "gpu.mem.usage.average",
        "gpu.power.used.average",
    ]
    assert inv.telemetry.queries == 0


def test_a_standalone_host_keeps_an_hour_of_samples() -> None:
    host = _host("esx-1", "0000:3b:00.0")
    inv = Inventory(vcenter=VCenter(version="8.0.3", api_type="HostAgent"), hosts=[host])
    manager = _collect(inv, _perf(), lambda specs: [], limit="1")
    assert inv.telemetry.window_hours == 1.0
    assert inv.telemetry.note == (
        "a standalone ESXi host keeps GPU counters for the last hour only (20-second "
        "samples): the window is that hour"
    )
    assert (inv.telemetry.start, inv.telemetry.end) == (
        "2026-05-02T11:00:00Z",
        "2026-05-02T12:00:00Z",
    )
    assert (inv.telemetry.interval_s, inv.telemetry.statistics_level) == (20, None)
    assert inv.telemetry.metrics_per_query is None
    assert manager.specs[0].intervalId == 20
    # A window within the hour is kept as asked.
    inv = Inventory(vcenter=VCenter(api_type="HostAgent"), hosts=[_host("esx-1", "0000:3b:00.0")])
    _collect(inv, _perf(), lambda specs: [], window=dt.timedelta(minutes=30))
    assert (inv.telemetry.window_hours, inv.telemetry.note) == (0.5, "")
    inv = Inventory(vcenter=VCenter(api_type="HostAgent"), hosts=[_host("esx-1", "0000:3b:00.0")])
    _collect(inv, _perf(), lambda specs: [], window=dt.timedelta(hours=1))
    assert (inv.telemetry.window_hours, inv.telemetry.note) == (1.0, "")


def test_times_are_utc_whatever_the_local_zone() -> None:
    # A naive time is the server's UTC, not the local zone's; set one far from UTC
    # (a POSIX rule, nine hours east, which needs no time zone database).
    with local_zone("JST-9"):
        assert T._iso(dt.datetime(2026, 5, 2, 12, 0, 0, 999)) == "2026-05-02T12:00:00Z"
        east = dt.timezone(dt.timedelta(hours=2))
        assert T._iso(dt.datetime(2026, 5, 2, 12, 0, tzinfo=east)) == "2026-05-02T10:00:00Z"


def test_an_unreadable_limit_is_logged_with_the_default_assumed() -> None:
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("gpuaudit")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        _limit("8.0", fault=vim.fault.NoPermission(privilegeId="System.View"))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert [(r.levelno, r.getMessage()) for r in records] == [
        (
            logging.INFO,
            "config.vpxd.stats.maxQueryMetrics could not be read (NoPermission); assuming 256",
        )
    ]


def test_queries_are_in_flight_side_by_side_and_gaps_come_in_the_hosts_order() -> None:
    # One host a page (limit 5, five counters): each call waits until as many calls as
    # the collector keeps in flight have arrived, so one call at a time never gets past
    # the barrier. The first host's page, asked first, fails last.
    hosts = [_host(f"esx-{i}", "0000:3b:00.0") for i in range(T.QUERIES_IN_FLIGHT)]
    inv = Inventory(vcenter=VCenter(version="8.0"), hosts=hosts)
    together = threading.Barrier(T.QUERIES_IN_FLIGHT, timeout=10)
    first_done = threading.Event()

    def answer(specs: list[Any]) -> Any:
        together.wait()
        moref = specs[0].entity._moId
        if moref == hosts[0].moref:
            first_done.wait(timeout=10)
            raise vim.fault.NoPermission(privilegeId="System.View")
        if moref == hosts[-1].moref:
            first_done.set()
            raise vim.fault.NoPermission(privilegeId="System.Read")
        return None

    _collect(inv, _perf(), answer, limit="5")
    assert [(g.object, g.reason) for g in inv.gaps] == [
        (hosts[0].name, "NoPermission"),
        (hosts[-1].name, "NoPermission"),
    ]
    assert [h.telemetry.status for h in hosts if h.telemetry] == (
        ["error"] + ["none"] * (len(hosts) - 2) + ["error"]
    )
