"""The Maintenance sheet: each GPU VM's fate when its host enters maintenance mode
(gpuaudit.plan.maintenance), one row per host and VM."""

from __future__ import annotations

from collections.abc import Callable

from gpuaudit.report.tables import TEXT, Table, Value, _table
from gpuaudit.results import AuditResult, ClusterMaintenance, HostMaintenance, VmFate

Row = tuple[ClusterMaintenance, HostMaintenance, VmFate]


def maintenance_table(result: AuditResult) -> Table:
    spec: list[tuple[str, str, Callable[[Row], Value]]] = [
        ("Cluster", TEXT, lambda r: r[0].cluster),
        ("Host", TEXT, lambda r: r[1].host),
        ("VM", TEXT, lambda r: r[2].vm),
        ("Fate", TEXT, lambda r: r[2].fate),
        ("To Host", TEXT, lambda r: r[2].to_host),
        ("To GPU", TEXT, lambda r: r[2].to_gpu),
        ("Reason", TEXT, lambda r: r[2].reason),
    ]
    rows = [(c, h, v) for c in result.maintenance for h in c.hosts for v in h.vms]
    return _table("maintenance", "Maintenance", spec, rows)
