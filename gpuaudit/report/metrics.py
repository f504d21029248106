"""Metrics for monitoring: the Prometheus text exposition of one scan (``-f openmetrics``).

The file (``.prom``) is what node_exporter's textfile collector reads, and any
scraper of the Prometheus text format. Every sample carries the ``vcenter`` label
(the server audited), so that the files of several servers sit side by side:

- ``gpuaudit_verdict{verdict}``: 1 for the job's one verdict (pass, unproven or
  fail), 0 for the other two;
- ``gpuaudit_failed_findings{severity}``: unwaived failed findings, critical to low;
- ``gpuaudit_notices``: unwaived info findings that fail, never counted as failed;
- ``gpuaudit_unproven_findings{severity}``: unwaived findings not proven;
- ``gpuaudit_cluster_tolerated_host_failures{cluster}``: the proven k of N+k;
- ``gpuaudit_cluster_tolerated_host_failures_not_proven{cluster}``: the k reached
  if the facts NVIDIA does not publish allow it (the proven k when nothing is unproven);
- ``gpuaudit_free_gpu_slots{cluster,model}`` and ``gpuaudit_gpu_slots{cluster,model}``:
  free and all vGPU slots (a passthrough or idle GPU is one) per GPU model, before
  any failure;
- ``gpuaudit_scan_duration_seconds``: from the start of the scan to its verdict,
  only when the scan ran in this process (absent for a report rendered later);
- ``gpuaudit_last_success_timestamp_seconds``: when this scan was checked.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from gpuaudit.report.summary import parse_time, summarize
from gpuaudit.results import NOTICE, SEVERITIES, AuditResult

VERDICTS = ("pass", "unproven", "fail")
FAILING = tuple(s for s in SEVERITIES if s != NOTICE)


class _ScanCollector(Collector):
    def __init__(self, result: AuditResult) -> None:
        self.result = result

    def collect(self) -> Iterator[Metric]:
        result = self.result
        summary = summarize(result)
        server = result.inventory.source
        base = ["vcenter"]

        def gauge(name: str, doc: str, labels: tuple[str, ...] = ()) -> GaugeMetricFamily:
            return GaugeMetricFamily(name, doc, labels=[*base, *labels])

        def one_per(
            name: str, doc: str, label: str, keys: tuple[str, ...], counts: dict[str, int]
        ) -> GaugeMetricFamily:
            family = gauge(name, doc, (label,))
            for key in keys:
                family.add_metric([server, key], counts.get(key, 0))
            return family

        given = {v: int(v == summary.verdict) for v in VERDICTS}
        yield one_per(
            "gpuaudit_verdict",
            "The job's verdict: 1 for the one given.",
            "verdict",
            VERDICTS,
            given,
        )
        yield one_per(
            "gpuaudit_failed_findings",
            "Unwaived failed findings by severity.",
            "severity",
            FAILING,
            summary.failed_by_severity,
        )
        notices = gauge("gpuaudit_notices", "Unwaived info findings: notices, never failures.")
        notices.add_metric([server], summary.notices)
        yield notices
        yield one_per(
            "gpuaudit_unproven_findings",
            "Unwaived findings not proven by severity.",
            "severity",
            SEVERITIES,
            summary.unproven_by_severity,
        )

        proven = gauge(
            "gpuaudit_cluster_tolerated_host_failures",
            "The k of N+k: host failures the cluster is proven to tolerate.",
            ("cluster",),
        )
        possible = gauge(
            "gpuaudit_cluster_tolerated_host_failures_not_proven",
            "The k of N+k reached if the facts NVIDIA does not publish allow it.",
            ("cluster",),
        )
        free = gauge(
            "gpuaudit_free_gpu_slots", "Free vGPU slots per GPU model.", ("cluster", "model")
        )
        slots = gauge("gpuaudit_gpu_slots", "All vGPU slots per GPU model.", ("cluster", "model"))
        for sim in result.simulations:
            proven.add_metric([server, sim.cluster], sim.tolerates)
            upper = sim.tolerates if sim.tolerates_unproven is None else sim.tolerates_unproven
            possible.add_metric([server, sim.cluster], upper)
            by_model: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for gpu in sim.capacity:
                by_model[gpu.model][0] += max(gpu.capacity - gpu.used, 0)
                by_model[gpu.model][1] += gpu.capacity
            for model, (spare, total) in sorted(by_model.items()):
                free.add_metric([server, sim.cluster, model], spare)
                slots.add_metric([server, sim.cluster, model], total)
        yield from (proven, possible, free, slots)

        if result.duration_seconds is not None:
            duration = gauge("gpuaudit_scan_duration_seconds", "How long the scan took.")
            duration.add_metric([server], result.duration_seconds)
            yield duration

        checked = parse_time(result.checked_at)
        if checked is not None:
            last = gauge(
                "gpuaudit_last_success_timestamp_seconds",
                "When this scan was checked, in seconds since the epoch.",
            )
            last.add_metric([server], checked.timestamp())
            yield last


def render_metrics(result: AuditResult) -> bytes:
    """The Prometheus text exposition (format 0.0.4) of ``result``."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_ScanCollector(result))
    return generate_latest(registry)
