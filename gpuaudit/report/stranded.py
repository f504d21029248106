"""The Stranded sheet: per GPU, the frame buffer free that no vGPU profile offered in its
cluster can use (gpuaudit.plan.stranded), one row per cluster and GPU."""

from __future__ import annotations

from collections.abc import Callable

from gpuaudit.report.tables import INT, TEXT, Table, Value, _table
from gpuaudit.results import AuditResult, ClusterStranded, GpuStranded

Row = tuple[ClusterStranded, GpuStranded]


def stranded_table(result: AuditResult) -> Table:
    spec: list[tuple[str, str, Callable[[Row], Value]]] = [
        ("Cluster", TEXT, lambda r: r[0].cluster),
        ("Host", TEXT, lambda r: r[1].host),
        ("GPU", TEXT, lambda r: r[1].gpu),
        ("GPU Model", TEXT, lambda r: r[1].gpu_model),
        ("Mode", TEXT, lambda r: r[1].mode),
        ("Frame Buffer MB", INT, lambda r: r[1].frame_buffer_mb),
        ("vGPUs", TEXT, lambda r: ", ".join(r[1].vgpus)),
        ("Free MB", INT, lambda r: r[1].free_mb),
        # Empty where the figure is not known: never a 0 that was not proven.
        ("Stranded MB", INT, lambda r: r[1].stranded_mb),
        ("Reason", TEXT, lambda r: r[1].reason),
    ]
    rows = [(c, g) for c in result.stranded for g in c.gpus]
    return _table("stranded", "Stranded", spec, rows)
