"""The HTML report's operations section: GPU telemetry with a sparkline per GPU."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuaudit.inventory import CounterStats, Inventory

SPARK_WIDTH, SPARK_HEIGHT = 120, 24


@dataclass
class GpuRow:
    host: str
    cluster: str
    pci_id: str
    model: str
    counters: list[str] = field(default_factory=list)  # "avg / peak" per counter, or ""
    # The sparkline: one polyline per run of buckets with samples.
    segments: list[str] = field(default_factory=list)
    title: str = ""  # the sparkline's tooltip
    note: str = ""  # why a GPU has no counters


@dataclass
class OperationsView:
    collected: bool
    window: str  # "24 h ending 2026-11-30 08:00 UTC"
    interval_s: int
    note: str
    counters: list[str]  # column headings
    rows: list[GpuRow]
    reporting: int  # GPUs with counters
    gpus: int


COUNTERS = (
    ("Utilisation %", "utilization_percent", 1),
    ("Memory used MB", "memory_used_mb", 0),
    ("Temperature °C", "temperature_c", 0),
    ("Power W", "power_w", 0),
)


def _pair(stats: CounterStats | None, digits: int) -> str:
    if stats is None or stats.average is None or stats.peak is None:
        return ""
    return f"{stats.average:,.{digits}f} / {stats.peak:,.{digits}f}"


def sparkline(trend: list[float | None]) -> list[str]:
    """Polyline points for utilisation (0-100 %) across the window, oldest at the left:
    one polyline per run of buckets with samples, so a gap stays a gap."""
    if not trend:
        return []
    step = SPARK_WIDTH / max(len(trend) - 1, 1)
    segments: list[list[str]] = []
    run: list[str] = []
    for i, value in enumerate(trend):
        if value is None:
            if run:
                segments.append(run)
            run = []
            continue
        height = SPARK_HEIGHT - 1 - (SPARK_HEIGHT - 2) * max(0.0, min(value, 100.0)) / 100.0
        run.append(f"{i * step:.1f},{height:.1f}")
    if run:
        segments.append(run)
    out = []
    for points in segments:
        if len(points) == 1:  # one bucket: a short dash
            x, y = points[0].split(",")
            points = [points[0], f"{min(float(x) + 2, SPARK_WIDTH):.1f},{y}"]
        out.append(" ".join(points))
    return out


def operations_view(inv: Inventory) -> OperationsView:
    tel = inv.telemetry
    hours = tel.window_hours
    span = f"{hours:g} h" if hours < 48 else f"{hours / 24:g} days"
    end = tel.end.replace("T", " ").replace("Z", " UTC") if tel.end else ""
    rows = []
    for host in inv.hosts:
        for gpu in host.gpus:
            row = GpuRow(host.name, host.cluster or "", gpu.pci_id, gpu.model)
            if gpu.telemetry is not None:
                row.counters = [_pair(getattr(gpu.telemetry, f), d) for _, f, d in COUNTERS]
                row.segments = sparkline(gpu.telemetry.trend)
                known = [v for v in gpu.telemetry.trend if v is not None]
                if known:
                    row.title = f"utilisation over {span}: {min(known):g}-{max(known):g} %"
            else:
                row.note = host.telemetry.reason if host.telemetry else "not queried"
                if host.telemetry is not None and host.telemetry.status == "reported":
                    row.note = "no counter instance matched this GPU"
                if gpu.passthrough_active or gpu.graphics_type == "direct":
                    # The host has no driver for a passed-through GPU: only the guest sees it.
                    row.note = "passthrough: the host cannot read this GPU; monitor it in the guest"
            rows.append(row)
    return OperationsView(
        collected=tel.collected,
        window=f"{span} ending {end}" if end else span,
        interval_s=tel.interval_s,
        note=tel.note,
        counters=[name for name, _, _ in COUNTERS],
        rows=rows,
        reporting=sum(1 for r in rows if r.counters),
        gpus=len(rows),
    )
