"""The summary every format shows first, written out by hand.

tests/support/small_report.py's result, and a small estate built with
tests/support/builders.py: cluster
gpu-a with two hosts (one with two L4s) and two vGPU VMs, one VM without a GPU, and a
simulated cluster gpu-z that the inventory does not list.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from gpuaudit.inventory import Gap, Inventory
from gpuaudit.report.licences import PASSTHROUGH_NOTE, EditionCount, LicenceSummary, licence_summary
from gpuaudit.report.summary import (
    ClusterSummary,
    Summary,
    cluster_summaries,
    parse_time,
    spare_line,
    summarize,
    tolerance,
)
from gpuaudit.results import (
    AuditResult,
    ClusterSimulation,
    Finding,
    HostFailure,
    Placement,
    Rule,
    SpareCapacity,
)
from tests.support.builders import Estate
from tests.support.small_report import declared_passthrough_result, small_result
from tests.support.zones import local_zone

NONE = {"critical": 0, "high": 0, "medium": 0, "low": 0, "info": 0}
CATEGORIES = ("data", "design", "gpu", "ha", "licensing", "monitoring", "storage", "vmotion")


def test_the_small_result_s_summary() -> None:
    result = small_result()
    got = summarize(result)
    assert got == Summary(
        verdict="fail",
        worst_severity="critical",
        incomplete=True,  # DS-01 raised
        results={"fail": 2, "unproven": 0, "waived": 2, "pass": 1},
        failed_by_severity=NONE | {"critical": 1, "low": 1},
        # X-99 is no rule of the catalogue: it counts under no category
        failed_by_category=dict.fromkeys(CATEGORIES, 0) | {"ha": 1},
        clusters=[
            ClusterSummary(
                name="gpu-a",
                datacenter="DC-East",
                hosts=1,
                failed=1,
                failed_by_severity=NONE | {"critical": 1},
            )
        ],
        gaps=0,
        rule_errors=1,
        waivers_applied=2,
        expired_waivers=0,
        licences=licence_summary(result.inventory, result.findings),
        unproven_by_severity=NONE,
    )
    assert got.headline == "2 failed findings: 1 critical, 1 low"


def headline(verdict: str, fail: int, nothing_examined: str | None = None) -> str:
    return Summary(
        verdict=verdict,
        worst_severity=None,
        incomplete=False,
        results={"fail": fail},
        failed_by_severity=NONE | {"high": fail},
        failed_by_category={},
        clusters=[],
        gaps=0,
        rule_errors=0,
        waivers_applied=0,
        expired_waivers=0,
        nothing_examined=nothing_examined,
    ).headline


def test_headlines() -> None:
    assert headline("fail", 1) == "1 failed finding: 1 high"
    assert headline("pass", 0) == "No failed findings"
    assert headline("fail", 1, "no host was read") == "No host was read"


def test_a_finding_not_proven_is_counted_apart_and_never_as_passed() -> None:
    findings = [
        Finding("HA-05", "c1", "cluster", "unproven", "high", "N+0 proven", evidence={}),
        Finding("GPU-06", "h/0", "gpu", "unproven", "medium", "x"),
        Finding("HA-01", "c1", "cluster", "pass", "high", "on"),
    ]
    got = summarize(AuditResult(Inventory(), [], findings, []))
    assert got.verdict == "unproven"
    assert got.results == {"fail": 0, "unproven": 2, "waived": 0, "pass": 1}
    assert got.unproven_by_severity == NONE | {"high": 1, "medium": 1}
    assert got.failed_by_severity == NONE
    assert got.headline == "No failed findings; 2 not proven (1 high, 1 medium)"
    findings.append(Finding("HA-02", "c1", "cluster", "fail", "low", "x"))
    got = summarize(AuditResult(Inventory(), [], findings, []))
    assert got.verdict == "fail"
    assert got.headline == "1 failed finding: 1 low; 2 not proven (1 high, 1 medium)"


def test_tolerance_and_times() -> None:
    assert tolerance(None) == "\u2013"
    assert tolerance(0) == "N+0"
    assert parse_time("") is None
    assert parse_time("yesterday") is None
    assert parse_time("2026-12-01T11:30:00") == datetime(2026, 12, 1, 11, 30, tzinfo=UTC)
    got = parse_time("2026-12-01T11:30:00+01:00")
    assert got == datetime(2026, 12, 1, 10, 30, tzinfo=UTC)


@pytest.fixture
def five_hours_behind_utc() -> Iterator[None]:
    """A local time zone other than UTC (a POSIX rule, no zone database needed)."""
    with local_zone("EST5"):
        yield


@pytest.mark.usefixtures("five_hours_behind_utc")
def test_times_are_utc_whatever_the_local_zone() -> None:
    # A time without a zone is taken as UTC, not local time, and every time comes back
    # in UTC, not converted to the local zone.
    naive = parse_time("2026-12-01T11:30:00")
    assert naive is not None and (naive.hour, naive.utcoffset()) == (11, timedelta(0))
    aware = parse_time("2026-12-01T11:30:00+01:00")
    assert aware is not None and (aware.hour, aware.utcoffset()) == (10, timedelta(0))


def test_spare_line_names_each_model_then_its_families() -> None:
    rows = [
        SpareCapacity("NVIDIA L4", None, gpus=3, idle_gpus=1, spare=1, tolerates=2),
        SpareCapacity("NVIDIA L4", "l4 q", spare=7, tolerates=2),
        SpareCapacity("NVIDIA A2", "a2 q", spare=1, tolerates=0),
        SpareCapacity("NVIDIA L4", "l4 b", spare=3, tolerates=1),
        SpareCapacity("NVIDIA A2", None, gpus=2, idle_gpus=0, tolerates=0),
    ]
    assert spare_line(rows) == (
        "NVIDIA L4: 1 of 3 GPUs idle, N+2 (l4 q: room for 7 more, N+2, "
        "l4 b: room for 3 more, N+1); NVIDIA A2: 0 of 2 GPUs idle, N+0 "
        "(a2 q: room for 1 more, N+0)"
    )
    assert spare_line([]) == ""


def test_cluster_summaries_count_hosts_gpus_vms_and_failures_and_take_the_simulation() -> None:
    estate = Estate()
    estate.cluster("gpu-a")
    one = estate.host("esx-1", "gpu-a")
    two = estate.host("esx-2", "gpu-a")
    estate.host("esx-9", None)
    first = estate.gpu(one, "0000:3b:00.0")
    estate.gpu(one, "0000:af:00.0")
    estate.vm("vm-1", one, [], vgpu="grid_l4-4q", gpu=first)
    estate.vm("vm-2", two, [], vgpu="grid_l4-4q", gpu=first)
    estate.vm("plain", two, [])
    placed = Placement("vm-1", "esx-1", "esx-2")
    lost = Placement("vm-2", "esx-2")
    sims = [
        ClusterSimulation(
            "gpu-a",
            hosts=2,
            gpu_vms=2,
            failures=[
                HostFailure("esx-1", placed=[placed], unplaced=[lost]),
                HostFailure("esx-2", unplaced=[lost], manual_only=[placed, placed]),
            ],
            worst_host="esx-2",
            tolerates=0,
            spare=[SpareCapacity("NVIDIA L4", None, gpus=2, idle_gpus=1, tolerates=1)],
        ),
        ClusterSimulation("gpu-z", hosts=4, gpu_vms=3, worst_host="gone", tolerates=2),
    ]
    findings = [
        Finding("HA-01", "gpu-a", "cluster", "fail", "high", "x", cluster="gpu-a"),
        Finding("HA-02", "gpu-a", "cluster", "fail", "high", "x", cluster="gpu-a"),
        Finding("HA-03", "gpu-a", "cluster", "pass", "low", "x", cluster="gpu-a"),
        Finding("GPU-01", "esx-9", "host", "fail", "low", "x"),
    ]
    result = AuditResult(
        inventory=estate.inv,
        rules=[],
        findings=findings,
        simulations=sims,
        designs={"gpu-a": "B"},
    )
    assert cluster_summaries(result) == [
        ClusterSummary(
            name="gpu-a",
            datacenter="",
            design="B",
            simulated=True,
            tolerates=0,
            hosts=2,
            gpu_hosts=1,
            gpus=2,
            gpu_vms=2,
            worst_host="esx-2",
            unplaced_worst=3,  # one with no room, two only by hand
            spare="NVIDIA L4: 1 of 2 GPUs idle, N+1",
            failed=2,
            failed_by_severity=NONE | {"high": 2},
        ),
        # known only from the simulation: its hosts and GPU VMs come from there
        ClusterSummary(
            name="gpu-z",
            simulated=True,
            tolerates=2,
            hosts=4,
            gpu_vms=3,
            worst_host="gone",
            failed_by_severity=NONE,
        ),
    ]


def test_a_passing_audit_with_gaps_counts_the_uncertain_apart_from_those_beyond_the_role() -> None:
    # Cluster pt: hosts p1 and p2, each with one passthrough GPU and a powered-on
    # passthrough VM (pv1, pv2); LIC-01 passed on pv1, its guest declared NVIDIA AI
    # Enterprise; pv2 declared nothing. One gap the Read-only role should read, two
    # that need more privilege.
    result = declared_passthrough_result()
    result.inventory.gaps = [
        Gap("p1", "HostSystem", "hardware", "NoPermission"),
        Gap("p1", "HostSystem", "config.ipmi", "NoPermission", privilege="Host.Config"),
        Gap("p2", "HostSystem", "config.ipmi", "NoPermission", privilege="Host.Config"),
    ]
    got = summarize(result)
    assert (
        got
        == Summary(
            verdict="pass",
            worst_severity=None,
            incomplete=True,
            results={"fail": 0, "unproven": 0, "waived": 0, "pass": 1},
            failed_by_severity=NONE,
            failed_by_category=dict.fromkeys(CATEGORIES, 0),
            clusters=[
                ClusterSummary(
                    name="pt", hosts=2, gpu_hosts=2, gpus=2, gpu_vms=2, failed_by_severity=NONE
                )
            ],
            gaps=1,
            beyond_role=2,
            rule_errors=1,  # small_result's DS-01 error
            waivers_applied=0,
            expired_waivers=0,
            licences=LicenceSummary(
                rows=[EditionCount("NVIDIA AI Enterprise", "pt", 1, 1, 1)],
                totals={"NVIDIA AI Enterprise": 1},
                total=1,
                passthrough_vms=2,
                note=PASSTHROUGH_NOTE
                + " 1 passthrough GPU VM with no edition declared is assumed to need no NVIDIA"
                " licence.",
                passthrough_assumed=1,
            ),
            unproven_by_severity=NONE,
        )
    )
    assert got.headline == "No failed findings"


def nothing_examined() -> AuditResult:
    """An audit that read no host: DATA-02 failed (a passed DATA-02 before it says
    something else), nothing else ran."""
    findings = [
        Finding("DATA-02", "vc", "inventory", "pass", "critical", "earlier"),
        Finding("DATA-02", "vc", "inventory", "fail", "critical", "the audit read no host"),
    ]
    return AuditResult(inventory=Inventory(), rules=[], findings=findings, simulations=[])


def test_an_audit_that_read_no_host_says_so_first_and_as_plain_data() -> None:
    got = summarize(nothing_examined())
    assert got.nothing_examined == "the audit read no host"
    assert got.headline == "The audit read no host"
    assert got.to_dict() == {
        "verdict": "fail",
        "worst_severity": "critical",
        "incomplete": False,
        "results": {"fail": 1, "unproven": 0, "waived": 0, "pass": 1},
        "failed_by_severity": NONE | {"critical": 1},
        "failed_by_category": dict.fromkeys(CATEGORIES, 0),
        "clusters": [],
        "gaps": 0,
        "rule_errors": 0,
        "waivers_applied": 0,
        "expired_waivers": 0,
        "licences": {
            "rows": [],
            "totals": {},
            "total": 0,
            "passthrough_vms": 0,
            "note": PASSTHROUGH_NOTE,
            "passthrough_assumed": 0,
        },
        "nothing_examined": "the audit read no host",
        "beyond_role": 0,
        "unproven_by_severity": NONE,
        # Rendered outside a scan, every finding counts: fail_on info, no baseline.
        "fail_on": "info",
        "notices": 0,
        "baseline": None,
    }


def test_a_status_or_category_outside_the_known_ones_counts_under_its_own_name() -> None:
    # A rule of category "fleet" (not one of the eight) failed once; one finding
    # carries the status "error", which is none of fail, waived, pass.
    rule = Rule("FL-01", "t", "fleet", "low", "", "", "cluster")  # type: ignore[arg-type]
    findings = [
        Finding("FL-01", "c1", "cluster", "fail", "low", "x"),
        Finding("FL-01", "c2", "cluster", "error", "low", "x"),  # type: ignore[arg-type]
    ]
    got = summarize(AuditResult(Inventory(), [rule], findings, []))
    assert got.results == {"fail": 1, "unproven": 0, "waived": 0, "pass": 0, "error": 1}
    assert got.failed_by_category == dict.fromkeys(CATEGORIES, 0) | {"fleet": 1}
    assert got.worst_severity == "low"


def test_a_cluster_not_simulated_counts_its_own_gpu_vms_and_any_failed_severity() -> None:
    # c1: h1 with a GPU runs v1 and v2 (vGPU) and "plain" (no GPU); h9, standalone,
    # runs GPU VM v9. One failed finding on c1 has a severity outside the five.
    estate = Estate()
    estate.cluster("c1")
    one = estate.host("h1", "c1")
    nine = estate.host("h9", None)
    gpu = estate.gpu(one)
    estate.vm("v1", one, [], vgpu="grid_l4-4q", gpu=gpu)
    estate.vm("v2", one, [], vgpu="grid_l4-4q", gpu=gpu)
    estate.vm("plain", one, [])
    estate.vm("v9", nine, [], vgpu="grid_l4-4q", gpu=estate.gpu(nine))
    odd = Finding("X-1", "c1", "cluster", "fail", "severe", "x", cluster="c1")  # type: ignore[arg-type]
    result = AuditResult(estate.inv, [], [odd], [])
    assert cluster_summaries(result) == [
        ClusterSummary(
            name="c1",
            hosts=1,
            gpu_hosts=1,
            gpus=1,
            gpu_vms=2,
            failed=1,
            failed_by_severity=NONE | {"severe": 1},
        )
    ]


def test_the_audit_with_no_failure_has_no_worst_severity() -> None:
    result = AuditResult(
        Inventory(), [], [Finding("HA-01", "c", "cluster", "waived", "high", "x")], []
    )
    got = summarize(result)
    assert (got.verdict, got.worst_severity, got.waivers_applied) == ("pass", None, 1)
