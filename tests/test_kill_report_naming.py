"""Report file names, each written out by hand.

A name that had to change carries the first eight hex digits of the SHA-256 of the
original's UTF-8 bytes; those digests are worked out here with hashlib from bytes
written by hand.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta, timezone

import pytest

from gpuaudit.report.naming import fleet_stem, report_filename, report_stem, safe_server

NOW = datetime(2026, 11, 30, 8, 50, 0, tzinfo=UTC)


def _digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:8]


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        ("vc01.corp.example", "vc01.corp.example"),
        ("Xvc01X", "Xvc01X"),
        ("vc01:443", "vc01_443-" + _digest(b"vc01:443")),
        (" vc01 ", "vc01-" + _digest(b" vc01 ")),
        ("Z\u00fcrich", "Zurich-" + _digest(b"Z\xc3\xbcrich")),
        ("a..b", "a_b-" + _digest(b"a..b")),
        ("a_/b", "a_b-" + _digest(b"a_/b")),
        ("...", "unknown-" + _digest(b"...")),
        ("-x.", "x-" + _digest(b"-x.")),
        ("fleet", "fleet-" + _digest(b"fleet")),
        ("FLEET", "FLEET-" + _digest(b"FLEET")),
        ("a" * 70, "a" * 64 + "-" + _digest(b"a" * 70)),
        ("." + "a" * 64, "a" * 64 + "-" + _digest(b"." + b"a" * 64)),
        ("a" * 63 + ".bbbb", "a" * 63 + "-" + _digest(b"a" * 63 + b".bbbb")),
        # A lone surrogate (a mis-encoded argument) still hashes, as its UTF-8 form.
        ("vc\udc80", "vc-" + _digest(b"vc\xed\xb2\x80")),
    ],
)
def test_safe_server(server: str, expected: str) -> None:
    assert safe_server(server) == expected


def test_stamps_are_utc_and_a_naive_time_is_utc(far_from_utc: None) -> None:
    east = timezone(timedelta(hours=1))
    assert report_stem("vc", datetime(2026, 11, 30, 9, 50, tzinfo=east)) == (
        "gpuaudit-vc-20261130T085000Z"
    )
    assert report_stem("vc", datetime(2026, 11, 30, 8, 50)) == "gpuaudit-vc-20261130T085000Z"
    assert fleet_stem(NOW) == "gpuaudit-fleet-20261130T085000Z"


def test_file_names_carry_the_format_extension() -> None:
    assert report_filename("vc:1", "junit", NOW) == (
        f"gpuaudit-vc_1-{_digest(b'vc:1')}-20261130T085000Z.junit.xml"
    )


def test_an_unknown_format_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError) as raised:
        report_filename("vc", "pdf", NOW)
    assert (
        str(raised.value)
        == "unknown report format 'pdf'; known: html, xlsx, json, junit, sarif, openmetrics"
    )


def test_the_time_defaults_to_now_in_utc(far_from_utc: None) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    name = report_filename("vc", "json")
    stamp = datetime.strptime(name, "gpuaudit-vc-%Y%m%dT%H%M%SZ.json").replace(tzinfo=UTC)
    assert before <= stamp <= datetime.now(UTC)
