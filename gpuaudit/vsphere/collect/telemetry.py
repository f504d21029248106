"""GPU telemetry from vCenter's PerformanceManager: counters of group ``gpu``.

Counter ids differ between vCenters, so they are resolved by group, name and
rollup from ``perfCounter``, never hard-coded. The window ends at the server's
own clock (``CurrentTime``), so a recorded session replays the same query
whatever the wall clock says at replay. A standalone ESXi host keeps only the
last hour of real-time samples and serves no rollups of its own, so there the
window is at most that hour.

One QueryPerf call carries the specs of as many hosts as vCenter answers in one
query: it refuses a query of more metrics (one per counter and host) than its
advanced setting ``config.vpxd.stats.maxQueryMetrics`` allows, with
RestrictedByAdministrator. The collector reads that limit (256 when the setting
is absent, as from vCenter 6.5; 64 before; -1 or 0 is no limit), so a
query for the five GPU counters takes 51 hosts by default, and the calls are
pages of one query: their size is the server's. Up to QUERIES_IN_FLIGHT pages are
asked at once, so that vCenter answers one while the collector reads another; the
answers are read in the order the pages were asked, and the hosts' gaps listed in the
hosts' order. Should vCenter still refuse a batch (it has been seen to count more than
one metric per counter), the batch is halved and asked again, down to one host, and
the pages not asked yet are cut to that size.

Each counter instance names one physical GPU (``gpuaudit/vsphere/collect/instances.py``:
a PCI address in hex or in ESXi's decimal three-digit form, or ``gpuN`` over the
GPUs the host driver owns). Whatever cannot be read or matched is recorded as
data (HostTelemetry, Telemetry.note), never raised.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from pyVmomi import vim, vmodl

from gpuaudit.common.progress import Progress, Step, ignore
from gpuaudit.inventory import (
    CounterStats,
    Gap,
    GpuTelemetry,
    Host,
    HostTelemetry,
    Inventory,
    Telemetry,
)
from gpuaudit.vsphere.collect.instances import match_instances
from gpuaudit.vsphere.collect.managers import ManagerProps

log = logging.getLogger("gpuaudit")

DEFAULT_WINDOW = dt.timedelta(hours=24)
MAX_QUERY_METRICS = "config.vpxd.stats.maxQueryMetrics"
DEFAULT_QUERY_METRICS = 256  # vCenter 6.5 and later, when the setting is absent
OLD_DEFAULT_QUERY_METRICS = 64  # vCenter 6.0 and earlier
REALTIME_INTERVAL = 20  # seconds; ESXi keeps one hour of real-time samples
REALTIME_SPAN = dt.timedelta(hours=1)
TREND_POINTS = 48

# GpuTelemetry field -> counter name in group "gpu", read with the average rollup.
COUNTERS: dict[str, str] = {
    "utilization_percent": "utilization",
    "memory_used_mb": "mem.used",
    "memory_usage_percent": "mem.usage",
    "temperature_c": "temperature",
    "power_w": "power.used",
}
ROLLUP = "average"
NO_VALUES = (
    "no GPU counter values: the host's NVIDIA driver or vGPU manager is missing, or its GPUs "
    "are in passthrough, which the host cannot see into"
)


@dataclass(frozen=True)
class Counter:
    field: str
    key: int
    name: str  # gpu.utilization.average
    unit: str  # percent, kiloBytes, celsius, watt, ...
    per_device_level: int


def resolve_counters(perf_counters: Sequence[Any]) -> dict[str, Counter]:
    """The GPU counters this vCenter has, by GpuTelemetry field, found by group, name, rollup."""
    by_name: dict[tuple[str, str], Any] = {}
    for info in perf_counters or []:
        group = getattr(info.groupInfo, "key", None)
        if group != "gpu":
            continue
        by_name[(str(info.nameInfo.key), str(info.rollupType))] = info
    found = {}
    for field_name, counter in COUNTERS.items():
        info = by_name.get((counter, ROLLUP))
        if info is None:
            continue
        found[field_name] = Counter(
            field=field_name,
            key=int(info.key),
            name=f"gpu.{counter}.{ROLLUP}",
            unit=str(getattr(info.unitInfo, "key", "") or ""),
            per_device_level=int(info.perDeviceLevel or info.level or 0),
        )
    return found


def choose_interval(window: dt.timedelta, intervals: Sequence[Any]) -> tuple[int, int | None]:
    """(interval id, statistics level): real time for a window of an hour or less, else
    the finest enabled historical interval that keeps the whole window."""
    if window <= REALTIME_SPAN:
        return REALTIME_INTERVAL, None
    enabled = sorted((i for i in intervals or [] if i.enabled), key=lambda i: int(i.samplingPeriod))
    for interval in enabled:
        if dt.timedelta(seconds=int(interval.length)) >= window:
            return int(interval.samplingPeriod), _level(interval)
    if enabled:
        longest = enabled[-1]
        return int(longest.samplingPeriod), _level(longest)
    return 300, None  # vCenter's 5-minute interval, when it does not list its intervals


def _level(interval: Any) -> int | None:
    """An interval's statistics level; ESXi's own interval has none."""
    return int(interval.level) if interval.level is not None else None


COUNTERS_PHASE = "reading GPU counters"
# QueryPerf calls in flight at once: vCenter answers each while the collector reads the
# answer before it, rather than one round trip after another.
QUERIES_IN_FLIGHT = 4


def collect_telemetry(
    si: Any,
    content: Any,
    inv: Inventory,
    perf: ManagerProps,
    now: dt.datetime,
    window: dt.timedelta = DEFAULT_WINDOW,
    progress: Progress | None = None,
) -> None:
    """Fill inv.telemetry, each GPU host's telemetry and each GPU's counters."""
    say = progress or ignore
    esxi_note = ""
    if inv.vcenter.standalone_esxi and window > REALTIME_SPAN:
        # ESXi keeps an hour of real-time samples and serves no rollups of its own.
        window = REALTIME_SPAN
        esxi_note = (
            "a standalone ESXi host keeps GPU counters for the last hour only (20-second "
            "samples): the window is that hour"
        )
    tel = inv.telemetry = Telemetry(
        collected=True, window_hours=window.total_seconds() / 3600, note=esxi_note
    )
    start = now - window
    tel.start, tel.end = _iso(start), _iso(now)
    hosts = [h for h in inv.hosts if h.gpus and h.connected]
    if perf.error or "perfCounter" in perf.missing:
        reason = perf.error or perf.missing["perfCounter"]
        tel.note = f"the performance counters could not be read ({reason})"
        inv.gaps.append(Gap("vCenter", "PerformanceManager", "perfCounter", reason))
        _mark(hosts, "none", tel.note)
        return
    counters = resolve_counters(perf.get("perfCounter", []))
    tel.counters = {c.name: c.key for c in counters.values()}
    tel.counter_levels = {c.name: c.per_device_level for c in counters.values()}
    tel.missing_counters = [
        f"gpu.{name}.{ROLLUP}" for key, name in COUNTERS.items() if key not in counters
    ]
    interval, level = choose_interval(window, perf.get("historicalInterval", []))
    tel.interval_s, tel.statistics_level = interval, level
    if not counters:
        tel.note = "this vCenter has no GPU performance counters (group gpu)"
        _mark(hosts, "none", tel.note)
        return
    needed = max(c.per_device_level for c in counters.values())
    level_note = ""  # why hosts report no values, when the level explains it
    if level is not None and level < needed:
        level_note = tel.note = (
            f"the statistics level of the {interval}-second interval is {level}; vCenter keeps "
            f"per-GPU counters from level {needed}"
        )
    if not hosts:
        return
    by_key = {c.key: c for c in counters.values()}
    metric_ids = [
        vim.PerformanceManager.MetricId(counterId=c.key, instance="*") for c in counters.values()
    ]
    tel.metrics_per_query = (
        None if inv.vcenter.standalone_esxi else query_metric_limit(content, inv)
    )
    size = hosts_per_query(tel.metrics_per_query, len(metric_ids), len(hosts))

    def specs(batch: list[Host]) -> list[Any]:
        return [
            vim.PerformanceManager.QuerySpec(
                entity=vim.HostSystem(h.moref, si._stub),
                startTime=start,
                endTime=now,
                intervalId=interval,
                format="csv",
                metricId=metric_ids,
            )
            for h in batch
        ]

    queue = deque(_chunks(hosts, size))  # batches not asked yet, in the hosts' order
    asked: deque[tuple[list[Host], Future[Any]]] = deque()  # in flight, oldest first
    faults: dict[str, Exception] = {}  # host moref -> why its counters were not read
    done = 0
    say(Step(COUNTERS_PHASE, done, len(hosts), "hosts"))
    with ThreadPoolExecutor(QUERIES_IN_FLIGHT, thread_name_prefix="gpuaudit-perf") as pool:

        def ask() -> None:
            while queue and len(asked) < QUERIES_IN_FLIGHT:
                batch = queue.popleft()
                tel.queries += 1
                query = content.perfManager.QueryPerf
                asked.append((batch, pool.submit(query, querySpec=specs(batch))))

        ask()
        while asked:
            batch, future = asked.popleft()  # answers taken in the order asked
            try:
                results = future.result() or []
            except vim.fault.RestrictedByAdministrator as exc:
                if len(batch) > 1:  # over the server's limit after all: smaller pages
                    size = min(size, len(batch) // 2)
                    rest = [h for b in queue for h in b]
                    queue.clear()
                    queue.extend([*_chunks(batch, size), *_chunks(rest, size)])
                    ask()
                    continue
                faults.update((h.moref, exc) for h in batch)
            except vmodl.MethodFault as exc:
                faults.update((h.moref, exc) for h in batch)
            else:
                answered = {str(r.entity._moId): r for r in results if r.entity is not None}
                for h in batch:
                    _apply(h, answered.get(h.moref), by_key, level_note)
            done += len(batch)
            say(Step(COUNTERS_PHASE, done, len(hosts), "hosts"))
            ask()
    # In the hosts' order, whichever query answered first.
    for h in hosts:
        if h.moref in faults:
            _failed(inv, [h], faults[h.moref])


def _chunks(hosts: list[Host], size: int) -> list[list[Host]]:
    return [hosts[i : i + size] for i in range(0, len(hosts), size)]


def query_metric_limit(content: Any, inv: Inventory) -> int | None:
    """How many metrics vCenter answers in one QueryPerf; None: no limit."""
    default = DEFAULT_QUERY_METRICS
    if _version(inv.vcenter.version) < (6, 5):
        default = OLD_DEFAULT_QUERY_METRICS
    try:
        options = content.setting.QueryOptions(name=MAX_QUERY_METRICS) or []
    except vim.fault.InvalidName:  # not set: the version's default
        return default
    except vmodl.MethodFault as exc:
        # Not a gap in the audit: the default is what an unset vCenter enforces, and a
        # page it refuses all the same is halved.
        log.info("%s could not be read (%s); assuming %d", MAX_QUERY_METRICS, _name(exc), default)
        return default
    for option in options:
        if option.key == MAX_QUERY_METRICS:
            try:
                limit = int(str(option.value).strip())
            except ValueError:
                return default
            return limit if limit > 0 else None
    return default


def hosts_per_query(limit: int | None, metrics_per_host: int, hosts: int) -> int:
    """Hosts whose specs one QueryPerf carries, within ``limit`` metrics (at least one)."""
    if limit is None:
        return max(1, hosts)
    return max(1, limit // max(1, metrics_per_host))


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split(".")[:2]:
        if not part.isdigit():
            break
        parts.append(int(part))
    return tuple(parts) or (99,)  # unknown: assume a current vCenter


def _name(fault: Exception) -> str:
    return type(fault).__name__.split(".")[-1]


def _failed(inv: Inventory, batch: list[Host], exc: Exception) -> None:
    fault = _name(exc)
    for h in batch:
        h.telemetry = HostTelemetry(status="error", reason=f"QueryPerf failed: {fault}")
        inv.gaps.append(Gap(h.name, "HostSystem", "gpu counters", fault, h.moref))


def _apply(host: Host, metric: Any, counters: dict[int, Counter], note: str) -> None:
    series = _series(metric) if metric is not None else {}
    by_instance: dict[str, dict[str, list[float]]] = {}
    trends: dict[str, list[float | None]] = {}
    for (key, instance), values in series.items():
        counter = counters.get(key)
        scaled = [_scale(v, counter.unit) for v in values] if counter is not None else []
        valid = [v for v in scaled if v is not None]
        if counter is None or not instance or not valid:
            continue
        by_instance.setdefault(instance, {})[counter.field] = valid
        if counter.field == "utilization_percent":
            trends[instance] = scaled
    if not by_instance:
        host.telemetry = HostTelemetry(status="none", reason=note or NO_VALUES)
        return
    matches, unmatched = match_instances(host.gpus, sorted(by_instance))
    host.telemetry = HostTelemetry(
        status="reported", instances=sorted(by_instance), unmatched=unmatched
    )
    for instance, (gpu, how) in matches.items():
        gpu.telemetry = GpuTelemetry(
            instance=instance, matched_by=how, trend=_trend(trends.get(instance, []))
        )
        for field_name, samples in by_instance[instance].items():
            setattr(gpu.telemetry, field_name, _stats(samples))


def _series(metric: Any) -> dict[tuple[int, str], list[float | None]]:
    """(counter id, instance) -> values in time order, from either result format."""
    out: dict[tuple[int, str], list[float | None]] = {}
    for value in metric.value or []:
        ident = value.id
        raw = value.value
        if isinstance(raw, str):  # PerfMetricSeriesCSV
            values = [_number(v) for v in raw.split(",")] if raw else []
        else:  # PerfMetricIntSeries
            values = [float(v) for v in raw or []]
        out[(int(ident.counterId), str(ident.instance or ""))] = values
    return out


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _scale(value: float | None, unit: str) -> float | None:
    """A raw sample in the report's unit; -1 (no sample) is None."""
    if value is None or value < 0:
        return None
    if unit == "percent":
        return value / 100.0  # vSphere sends percentages in hundredths
    if unit == "kiloBytes":
        return value / 1024.0
    return value


def _stats(values: list[float]) -> CounterStats:
    if not values:
        return CounterStats()
    return CounterStats(
        average=round(sum(values) / len(values), 2), peak=round(max(values), 2), samples=len(values)
    )


def _trend(values: list[float | None]) -> list[float | None]:
    """At most TREND_POINTS bucket means, oldest first; None for an empty bucket."""
    if not values:
        return []
    size = max(1, math.ceil(len(values) / TREND_POINTS))
    points: list[float | None] = []
    for i in range(0, len(values), size):
        bucket = [v for v in values[i : i + size] if v is not None]
        points.append(round(sum(bucket) / len(bucket), 1) if bucket else None)
    return points


def _mark(hosts: list[Host], status: str, reason: str) -> None:
    for host in hosts:
        host.telemetry = HostTelemetry(status=status, reason=reason)


def _iso(when: dt.datetime) -> str:
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.astimezone(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
