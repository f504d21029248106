"""From an audit result to the history store and back: ages, changes, trends."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from gpuaudit.common.files import read_json
from gpuaudit.jobs.history.store import (
    CapacityRecord,
    ClusterRecord,
    ScanRecord,
    Store,
    StoredFinding,
    utc_naive,
)
from gpuaudit.report.actions import finding_id
from gpuaudit.results import (
    NOTICE,
    SEVERITIES,
    AuditResult,
    ClusterSimulation,
    FindingRef,
    GpuSlots,
    ScanHistory,
    TrendPoint,
)
from gpuaudit.verdict.changes import change
from gpuaudit.verdict.judgement import judgement_of

TREND_SCANS = 60  # scans a trend shows at most, the newest
KEPT = ("fail", "unproven", "waived")  # the statuses the store keeps finding by finding
FAILING = tuple(s for s in SEVERITIES if s != NOTICE)  # info fails only as a notice


def vcenter_key(result: AuditResult) -> str:
    """The history's key: the vCenter's instance UUID (about.instanceUuid), so that an
    FQDN and an IP address of one vCenter make one history; without one, the name as
    given. Replays of cassettes recorded from one vCenter share its key."""
    return result.inventory.vcenter.instance_uuid or vcenter_named(result)


def vcenter_named(result: AuditResult) -> str:
    """The server as it was named for this scan, else the vCenter's own name: shown
    beside the key."""
    inv = result.inventory
    return inv.source or inv.vcenter.name or "unknown"


def iso(when: datetime) -> str:
    return utc_naive(when).replace(microsecond=0).isoformat() + "Z"


def parse_time(text: str) -> datetime:
    """An ISO 8601 time as naive UTC (a time without a zone is taken as UTC)."""
    return utc_naive(datetime.fromisoformat(text.replace("Z", "+00:00")))


def checked_at(result: AuditResult) -> datetime:
    try:
        return parse_time(result.checked_at)
    except ValueError:
        return utc_naive(datetime.now(UTC))


def annotate(
    store: Store | None, result: AuditResult, baseline: dict[str, str] | None = None
) -> None:
    """Set ``result.first_seen`` (and, with a store, ``result.history``).

    A finding failed or waived at the last scan keeps the first-seen date it had
    there, or the baseline's when that is earlier (a baseline may carry a finding's
    age from before the store existed); one the store has not seen takes the
    baseline's date, else this scan's.
    """
    now = checked_at(result)
    last = store.latest(vcenter_key(result)) if store is not None else None
    before = {f.id: f for f in last.findings} if last is not None else {}
    if store is None and not baseline:
        return
    for finding in result.findings:
        if finding.status not in KEPT:
            continue
        key = finding_id(finding)
        if key in before:
            seen = iso(before[key].first_seen)
            if baseline and key in baseline and _earlier(baseline[key], seen):
                seen = baseline[key]
            result.first_seen[key] = seen
        elif baseline and key in baseline:
            result.first_seen[key] = baseline[key]
        else:
            result.first_seen[key] = iso(now)
    if store is None:
        return
    history = ScanHistory(trend=trend(store, result))
    if last is not None:
        history.previous_checked_at = iso(last.checked_at)
        # The same reading as a baseline's, in the words every comparison uses
        # (gpuaudit.verdict.changes): a finding open last time (failed or not proven) is known,
        # so it is not new when it fails now; one only not proven now is not resolved,
        # since nothing shows it passes; one waived now is newly waived, not resolved;
        # one waived then and open now is a waiver expired, not new. A finding only
        # not proven now that was not open then is not new either: new names failures.
        # A notice (an info finding that fails) is never a failure, new or resolved.
        then = {f.id: f for f in last.findings if f.severity != NOTICE}
        found_now = {finding_id(f): f for f in result.findings if f.severity != NOTICE}
        for key in sorted(then.keys() | found_now.keys()):
            was, found = then.get(key), found_now.get(key)
            kind = change(was.status if was else None, found.status if found else None)
            if kind in (None, "unchanged") or (kind == "new" and not (found and found.failed)):
                continue
            # Named as it is now, but a resolved finding as it was (it may be gone).
            ref = was if kind == "resolved" or found is None else found
            assert ref is not None
            refs = getattr(history, kind)
            refs.append(FindingRef(key, ref.rule, ref.object, ref.severity, ref.status))
    result.history = history


def record(
    store: Store, result: AuditResult, run_id: int | None = None, exit_code: int | None = None
) -> int:
    """Keep the scan: its counts, size, exit status, failed and waived findings, N+k and
    GPU capacity."""
    now = checked_at(result)
    failed: dict[str, int] = {s: 0 for s in SEVERITIES}
    for finding in result.failed():
        failed[finding.severity] += 1
    findings = []
    seen: set[str] = set()
    for finding in result.findings:
        key = finding_id(finding)
        if finding.status not in KEPT or key in seen:
            continue
        seen.add(key)
        first = result.first_seen.get(key)
        findings.append(
            StoredFinding(
                id=key,
                rule=finding.rule,
                object=finding.object,
                object_kind=finding.object_kind,
                status=finding.status,
                severity=finding.severity,
                first_seen=parse_time(first) if first else now,
                cluster=finding.cluster,
                message=finding.message,
            )
        )
    scan = ScanRecord(
        vcenter=vcenter_named(result),
        vcenter_name=result.inventory.vcenter.name,
        key=vcenter_key(result),
        checked_at=now,
        tool_version=result.tool_version,
        rules_version=result.rules_version,
        verdict=judgement_of(result).verdict,  # the job's, as every report states it
        failed=failed,
        waived=sum(f.status == "waived" for f in result.findings),
        passed=sum(f.status == "pass" for f in result.findings),
        unproven=len(result.unproven()),
        rule_errors=len(result.errors),
        findings=findings,
        clusters=[_cluster(s, result.designs.get(s.cluster)) for s in result.simulations],
        capacity=[c for s in result.simulations for c in _capacity(s)],
        run_id=run_id,
        hosts=len(result.inventory.hosts),
        vms=len(result.inventory.vms),
        gpus=sum(len(h.gpus) for h in result.inventory.hosts),
        gpu_vms=sum(1 for v in result.inventory.vms if v.gpus),
        exit_code=exit_code,
    )
    return store.record(scan)


def _cluster(sim: ClusterSimulation, design: str | None) -> ClusterRecord:
    return ClusterRecord(
        cluster=sim.cluster,
        design=design,
        tolerates=sim.tolerates,
        manual_tolerates=sim.manual_tolerates,
        ha_restarts=sim.ha_restarts,
        gpu_vms=sim.gpu_vms,
        worst_host=sim.worst_host,
    )


def _capacity(sim: ClusterSimulation) -> list[CapacityRecord]:
    rows = []
    for phase, slots in (("before", sim.capacity), ("after_worst", sim.after_worst)):
        for model, (total, used) in sorted(by_model(slots).items()):
            rows.append(CapacityRecord(sim.cluster, phase, model, total, used))
    return rows


def by_model(slots: list[GpuSlots]) -> dict[str, tuple[int, int]]:
    """GPU model -> (slots, used) summed over a cluster's GPUs."""
    totals: dict[str, tuple[int, int]] = {}
    for gpu in slots:
        total, used = totals.get(gpu.model, (0, 0))
        totals[gpu.model] = (total + gpu.capacity, used + gpu.used)
    return totals


def trend(store: Store, result: AuditResult) -> list[TrendPoint]:
    """The earlier scans of the same vCenter, oldest first, then this one."""
    earlier = list(reversed(store.scans(vcenter_key(result), limit=TREND_SCANS - 1)))
    ids = [s.id for s in earlier if s.id is not None]
    clusters = store.clusters_of(ids)
    capacity = store.capacity_of(ids)
    points = []
    for scan in earlier:
        assert scan.id is not None
        free: dict[str, dict[str, int]] = {}
        for row in capacity[scan.id]:
            if row.phase == "before":
                free.setdefault(row.cluster, {})[row.model] = row.slots - row.used
        points.append(
            TrendPoint(
                checked_at=iso(scan.checked_at),
                # The store counts notices as failed info findings: here they are apart.
                failed={s: scan.failed.get(s, 0) for s in FAILING},
                tolerates={c.cluster: c.tolerates for c in clusters[scan.id]},
                free_slots=free,
                unproven=scan.unproven,
                notices=scan.failed.get(NOTICE, 0),
                waived=scan.waived,
            )
        )
    failed: dict[str, int] = {s: 0 for s in FAILING}
    notices = 0
    for finding in result.failed():
        if finding.severity == NOTICE:
            notices += 1
        else:
            failed[finding.severity] += 1
    points.append(
        TrendPoint(
            checked_at=iso(checked_at(result)),
            notices=notices,
            waived=sum(f.status == "waived" for f in result.findings),
            failed=failed,
            tolerates={s.cluster: s.tolerates for s in result.simulations},
            free_slots={
                s.cluster: {m: t - u for m, (t, u) in sorted(by_model(s.capacity).items())}
                for s in result.simulations
            },
            unproven=len(result.unproven()),
        )
    )
    return points


def _earlier(a: str, b: str) -> bool:
    """Whether the time ``a`` is before ``b`` (both ISO 8601); False if either is no time."""
    try:
        return parse_time(a) < parse_time(b)
    except (TypeError, ValueError):
        return False


def baseline_first_seen(path: str) -> dict[str, str]:
    """Finding id -> first-seen date in a baseline JSON report.

    A report that carries no first-seen date for a finding that failed there
    gives its own check time: the finding was there at least since then.
    """
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        return {}
    source = data.get("source")
    when = source.get("checked_at") if isinstance(source, dict) else None
    found: dict[str, str] = {}
    for item in data["findings"]:
        if not isinstance(item, dict) or item.get("status") not in KEPT:
            continue
        key = item.get("id") or _id(item)
        first = item.get("first_seen") or when
        if isinstance(key, str) and isinstance(first, str):
            try:
                found[key] = iso(parse_time(first))
            except ValueError:
                continue
    return found


def _id(item: dict[str, object]) -> str:
    """finding_id of a finding read from JSON (same key, same hash)."""
    key = f"{item.get('rule')}\0{item.get('object_kind')}\0{item.get('object')}"
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()
