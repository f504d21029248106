"""The Headroom sheet: how many more VMs of each vGPU profile (and passthrough GPU) fit in
each cluster, now and under N+k (gpuaudit.plan.headroom), one row per cluster and profile."""

from __future__ import annotations

from collections.abc import Callable

from gpuaudit.report.tables import BOOL, INT, TEXT, Table, Value, _table
from gpuaudit.results import AuditResult, ClusterHeadroom, Headroom

Row = tuple[ClusterHeadroom, Headroom]


def headroom_table(result: AuditResult) -> Table:
    spec: list[tuple[str, str, Callable[[Row], Value]]] = [
        ("Cluster", TEXT, lambda r: r[0].cluster),
        ("GPU Model", TEXT, lambda r: r[1].gpu_model),
        ("Profile", TEXT, lambda r: r[1].profile),
        ("VM Memory MB", INT, lambda r: r[1].vm_memory_mb),
        ("Fit Now", INT, lambda r: r[1].fits_now),
        ("N+k", INT, lambda r: r[0].k),
        ("Fit Under N+k", INT, lambda r: r[1].fits_nk),
        ("vCenter Remaining", INT, lambda r: r[1].vcenter_remaining),
        ("Below vCenter", BOOL, lambda r: r[1].below_vcenter),
        ("Not Proven", TEXT, lambda r: r[1].not_proven),
    ]
    rows = [(c, h) for c in result.headroom for h in c.rows]
    return _table("headroom", "Headroom", spec, rows)
