"""Report file names and write_reports: never a path outside the folder, never an overwrite.

File names are also written out by hand: a name that had to change carries the
first eight hex digits of the SHA-256 of the original's UTF-8 bytes; those digests
are worked out here with hashlib from bytes written by hand.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuaudit.report import FORMATS, report_filename, safe_server, write_reports
from gpuaudit.report.naming import fleet_stem, report_stem
from tests.support.report_fixtures import hostile_result, realistic_result

NOW = datetime(2026, 11, 30, 8, 50, 0, tzinfo=UTC)


def test_file_name_carries_server_and_utc_time() -> None:
    assert report_filename("vcsa01.corp.example", "html", NOW) == (
        "gpuaudit-vcsa01.corp.example-20261130T085000Z.html"
    )
    assert report_filename("vc", "junit", NOW).endswith("-20261130T085000Z.junit.xml")
    assert report_filename("vc", "sarif", NOW).endswith(".sarif")
    assert report_filename("vc", "xlsx", NOW).endswith(".xlsx")
    assert report_filename("vc", "json", NOW).endswith(".json")


def test_local_time_is_converted_to_utc() -> None:
    cet = timezone(timedelta(hours=1))
    assert "20261130T085000Z" in report_filename(
        "vc", "html", datetime(2026, 11, 30, 9, 50, tzinfo=cet)
    )
    assert "20261130T085000Z" in report_filename("vc", "html", datetime(2026, 11, 30, 8, 50))


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="pdf"):
        report_filename("vc", "pdf", NOW)
    with pytest.raises(ValueError, match="pdf"):
        write_reports(realistic_result(), Path("unused"), ["html", "pdf"], "vc", NOW)


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        ("vcsa01.corp.example", "vcsa01.corp.example"),
        ("vc01:443", "vc01_443"),
        ("../../etc/passwd", "etc_passwd"),
        ("..", "unknown"),
        ("", "unknown"),
        ("admin@vc01", "admin_vc01"),
        ("C:\\vc\\x", "C_vc_x"),
        ("[2001:db8::1]", "2001_db8_1"),
        ("vc\x00\x01", "vc"),
        ("Ünïcødé", "Unic_de"),
        ("東京", "unknown"),
    ],
)
def test_server_names_are_made_safe(server: str, expected: str) -> None:
    """A name that had to change carries the first 8 hex digits of its SHA-256."""
    if expected != server:
        expected += "-" + hashlib.sha256(server.encode()).hexdigest()[:8]
    assert safe_server(server) == expected


@given(st.text(max_size=300))
def test_any_server_name_gives_a_plain_file_name(server: str) -> None:
    name = report_filename(server, "html", NOW)
    assert "/" not in name and "\\" not in name and "\x00" not in name
    assert ".." not in name
    assert not name.startswith(".")
    assert len(name) < 120
    assert name.startswith("gpuaudit-") and name.endswith("-20261130T085000Z.html")


def test_write_reports_writes_every_format(tmp_path: Path) -> None:
    paths = write_reports(realistic_result(), tmp_path / "reports", FORMATS, "vcsa01", NOW)
    assert [p.name for p in paths] == [report_filename("vcsa01", f, NOW) for f in FORMATS]
    for path in paths:
        assert path.parent == tmp_path / "reports"
        assert path.stat().st_size > 0
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == sorted(p.name for p in paths)


def test_hostile_server_stays_in_the_folder(tmp_path: Path) -> None:
    result = hostile_result()
    paths = write_reports(result, tmp_path, ["json"], result.inventory.source, NOW)
    assert paths[0].parent == tmp_path
    assert list(tmp_path.iterdir()) == paths


def test_a_second_run_in_the_same_second_does_not_overwrite(tmp_path: Path) -> None:
    first = write_reports(realistic_result(), tmp_path, ["html", "json"], "vc", NOW)
    second = write_reports(realistic_result(), tmp_path, ["html", "json"], "vc", NOW)
    assert set(first).isdisjoint(second)
    assert [p.name for p in second] == [
        "gpuaudit-vc-20261130T085000Z-1.html",
        "gpuaudit-vc-20261130T085000Z-1.json",
    ]
    assert all(p.exists() for p in first + second)


def test_yesterdays_report_is_kept(tmp_path: Path) -> None:
    yesterday = write_reports(realistic_result(), tmp_path, ["json"], "vc", NOW - timedelta(days=1))
    today = write_reports(realistic_result(), tmp_path, ["json"], "vc", NOW)
    assert yesterday != today and yesterday[0].exists() and today[0].exists()


def test_a_failing_renderer_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpuaudit.report as report

    def boom(_result: object) -> bytes:
        raise RuntimeError("renderer failed")

    monkeypatch.setitem(report.RENDERERS, "xlsx", boom)
    with pytest.raises(RuntimeError):
        write_reports(realistic_result(), tmp_path, ["xlsx"], "vc", NOW)
    assert list(tmp_path.iterdir()) == []


def test_write_is_atomic_through_write_atomic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuaudit.common import files

    calls: list[Path] = []
    real = files.write_atomic

    def spy(path: Path, data: bytes) -> None:
        calls.append(path)
        real(path, data)

    monkeypatch.setattr(files, "write_atomic", spy)
    paths = write_reports(realistic_result(), tmp_path, FORMATS, "vc", NOW)
    assert calls == paths
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_time_defaults_to_now() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    name = report_filename("vc", "json")
    stamp = datetime.strptime(name[len("gpuaudit-vc-") : -len("Z.json")], "%Y%m%dT%H%M%S")
    assert before <= stamp.replace(tzinfo=UTC) <= datetime.now(UTC)


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
