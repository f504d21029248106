"""The fleet summary from the history: the latest scan of every vCenter, with its age.

Scans written by many processes (one pod or one cron job per vCenter) meet in one
store; this reads them back in the shape of a `scan --targets` run's summary
(gpuaudit.jobs.fleet.fleet_json), each target with when it was scanned and how long ago.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gpuaudit.jobs.history.store import ScanRecord, Store, utc_naive
from gpuaudit.jobs.history.track import iso

# The store's verdicts as the fleet summary spells them.
VERDICTS = {"fail": "FAIL", "unproven": "NOT PROVEN", "pass": "PASS"}


def latest_targets(store: Store, now: datetime) -> list[dict[str, Any]]:
    """One fleet target per vCenter in the store, from its newest scan."""
    latest = store.latest_of_each()
    clusters = store.clusters_of([s.id for s in latest if s.id is not None])
    return [_target(scan, clusters.get(scan.id or 0, []), now) for scan in latest]


def _target(scan: ScanRecord, clusters: list[Any], now: datetime) -> dict[str, Any]:
    age = utc_naive(now) - utc_naive(scan.checked_at)
    return {
        # Named as it was last scanned; the key holds every name of one vCenter together.
        "name": scan.vcenter,
        "server": scan.vcenter,
        "key": scan.key,
        "verdict": VERDICTS.get(scan.verdict, scan.verdict.upper()),
        # A scan kept before its exit status was: 1 on a failure, which fails at the default.
        "exit_code": scan.exit_code if scan.exit_code is not None else int(scan.verdict == "fail"),
        "error": None,
        "failed_by_severity": dict(scan.failed),
        "passed": scan.passed,
        "waived": scan.waived,
        "hosts": scan.hosts,
        "gpus": scan.gpus,
        "gpu_vms": scan.gpu_vms,
        "designs": {c.cluster: c.design for c in clusters if c.design is not None},
        "tolerates": {c.cluster: c.tolerates for c in clusters},
        "reports": [],
        "scan": scan.id,
        "checked_at": iso(scan.checked_at),
        # A clock behind the scanning machine's would make it negative: say 0.
        "age_seconds": max(0, int(age.total_seconds())),
    }
