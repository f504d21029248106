"""How old each finding is, and what changed since the last scan, written out by hand.

The result is tests/support/small_report.py's: scanned 2026-12-01 10:30 UTC; HA-01 on gpu-a
first seen 2026-11-01 00:00 UTC, 30 days and 10.5 hours before.
"""

from __future__ import annotations

import dataclasses

import pytest

from gpuaudit.report.age import finding_age, has_ages, since_last_scan
from gpuaudit.results import AuditResult, FindingRef, ScanHistory
from tests.support.small_report import FIRST_SEEN, ID_HA_GPU_A, small_result


def _ha_gpu_a_age(first_seen: str, checked_at: str) -> tuple[str, int] | None:
    result = dataclasses.replace(
        small_result(), first_seen={ID_HA_GPU_A: first_seen}, checked_at=checked_at
    )
    return finding_age(result, result.findings[0])


def test_a_finding_seen_before_counts_whole_days() -> None:
    result = small_result()
    assert finding_age(result, result.findings[0]) == (FIRST_SEEN, 30)


def test_a_finding_of_unknown_age_has_none() -> None:
    result = small_result()
    assert finding_age(result, result.findings[2]) is None


@pytest.mark.parametrize(
    ("first_seen", "checked_at", "days"),
    [
        # Z is UTC, in the first-seen date and in the scan time.
        ("2026-11-01T00:00:00Z", "2026-12-01T10:30:00Z", 30),
        # A date alone, with Z: that day's midnight.
        ("2026-11-01Z", "2026-12-01T11:30:00+01:00", 30),
        # A time without a zone is compared as written, the other's zone dropped.
        ("2026-11-01T12:00:00", "2026-12-01T11:30:00+01:00", 29),
        ("2026-11-01T00:00:00+00:00", "2026-12-01T11:30:00", 30),
        # First seen after the scan (clocks apart): no negative age.
        ("2026-12-02T00:00:00+00:00", "2026-12-01T11:30:00+01:00", 0),
        # The same instant: zero days.
        ("2026-12-01T10:30:00+00:00", "2026-12-01T11:30:00+01:00", 0),
    ],
)
def test_the_age_in_days(first_seen: str, checked_at: str, days: int) -> None:
    assert _ha_gpu_a_age(first_seen, checked_at) == (first_seen, days)


@pytest.mark.parametrize(
    ("first_seen", "checked_at"),
    [("last week", "2026-12-01T11:30:00+01:00"), ("2026-11-01T00:00:00+00:00", "")],
)
def test_a_date_that_does_not_parse_gives_age_zero(first_seen: str, checked_at: str) -> None:
    assert _ha_gpu_a_age(first_seen, checked_at) == (first_seen, 0)


def test_ages_are_there_only_with_first_seen_dates() -> None:
    assert has_ages(small_result())
    assert not has_ages(dataclasses.replace(small_result(), first_seen={}))


def test_without_history_there_is_no_since_last_scan() -> None:
    assert since_last_scan(small_result()) is None


def _ref(rule: str, obj: str, severity: str = "high") -> FindingRef:
    return FindingRef(f"id-{rule}-{obj}", rule, obj, severity, "fail")


def test_new_and_resolved_findings_are_sorted_by_rule_then_object() -> None:
    history = ScanHistory(
        previous_checked_at="2026-11-30T10:30:00Z",
        new=[_ref("ZZ-01", "a"), _ref("HA-01", "b", "critical"), _ref("HA-01", "a", "low")],
        resolved=[_ref("ST-01", "z"), _ref("DS-01", "y", "medium")],
        newly_waived=[_ref("VM-02", "b"), _ref("VM-01", "c")],
        waiver_expired=[_ref("HA-02", "d", "critical")],
    )
    result: AuditResult = dataclasses.replace(small_result(), history=history)
    assert since_last_scan(result) == {
        "previous_checked_at": "2026-11-30T10:30:00Z",
        "new": [
            {"id": "id-HA-01-a", "rule": "HA-01", "object": "a", "severity": "low"},
            {"id": "id-HA-01-b", "rule": "HA-01", "object": "b", "severity": "critical"},
            {"id": "id-ZZ-01-a", "rule": "ZZ-01", "object": "a", "severity": "high"},
        ],
        "resolved": [
            {"id": "id-DS-01-y", "rule": "DS-01", "object": "y", "severity": "medium"},
            {"id": "id-ST-01-z", "rule": "ST-01", "object": "z", "severity": "high"},
        ],
        "newly_waived": [
            {"id": "id-VM-01-c", "rule": "VM-01", "object": "c", "severity": "high"},
            {"id": "id-VM-02-b", "rule": "VM-02", "object": "b", "severity": "high"},
        ],
        "waiver_expired": [
            {"id": "id-HA-02-d", "rule": "HA-02", "object": "d", "severity": "critical"},
        ],
    }
