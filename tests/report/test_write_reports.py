"""write_reports: the files it names and writes, written out by hand.

The result is tests/support/small_report.py's, with one more failed finding on a VM whose
name holds a lone surrogate (an inventory file may escape one): every format
writes "?" for it rather than fail.
"""

from __future__ import annotations

import gc
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpuaudit import report
from gpuaudit.report import write_reports
from gpuaudit.results import AuditResult, Finding
from tests.support.small_report import small_result

NOW = datetime(2026, 11, 30, 8, 50, 0, tzinfo=UTC)
# "vc01:443" had to change, so it carries the first eight hex digits of its SHA-256.
STEM = f"gpuaudit-vc01_443-{hashlib.sha256(b'vc01:443').hexdigest()[:8]}-20261130T085000Z"


def _result() -> AuditResult:
    result = small_result()
    result.findings.append(Finding("X-99", "vm\udc80", "vm", "fail", "low", "odd"))
    return result


def test_each_format_once_in_the_order_asked_under_one_stem(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    paths = write_reports(_result(), folder, ["sarif", "json", "sarif", "html"], "vc01:443", NOW)
    assert paths == [folder / f"{STEM}.sarif", folder / f"{STEM}.json", folder / f"{STEM}.html"]
    assert sorted(folder.iterdir()) == sorted(paths)
    sarif = json.loads(paths[0].read_bytes())
    assert sarif["version"] == "2.1.0"
    document = json.loads(paths[1].read_bytes())
    assert [f["object"] for f in document["findings"]][-1] == "vm?"
    assert b"vm?" in paths[0].read_bytes()
    assert b"vm?" in paths[2].read_bytes()
    assert paths[2].read_bytes().startswith(b"<!DOCTYPE html>")


def test_junit_and_xlsx_are_written_too(tmp_path: Path) -> None:
    paths = write_reports(_result(), tmp_path, ["junit", "xlsx"], "vc", NOW)
    assert [p.name for p in paths] == [
        "gpuaudit-vc-20261130T085000Z.junit.xml",
        "gpuaudit-vc-20261130T085000Z.xlsx",
    ]
    assert paths[0].read_bytes().startswith(b"<?xml version='1.0' encoding='utf-8'?>")
    assert paths[1].read_bytes().startswith(b"PK")  # a zip archive, as every xlsx is


def test_an_unknown_format_writes_nothing_and_names_the_first(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as raised:
        write_reports(_result(), tmp_path, ["json", "pdf", "doc"], "vc", NOW)
    assert str(raised.value) == (
        "unknown report format 'pdf'; known: html, xlsx, json, junit, sarif, openmetrics"
    )
    assert list(tmp_path.iterdir()) == []


def test_the_time_defaults_to_now_in_utc(tmp_path: Path, far_from_utc: None) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    (path,) = write_reports(_result(), tmp_path, ["json"], "vc")
    stamp = datetime.strptime(path.name, "gpuaudit-vc-%Y%m%dT%H%M%SZ.json").replace(tzinfo=UTC)
    assert before <= stamp <= datetime.now(UTC)


def test_renderers_run_with_the_collector_paused_and_frozen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A renderer keeps what it builds to its end: the collector walks none of it while
    # it runs, and is on again, with nothing frozen, once the reports are written.
    seen: list[tuple[bool, bool]] = []

    def render(result: AuditResult) -> bytes:
        seen.append((gc.isenabled(), gc.get_freeze_count() > 0))
        return b"{}"

    monkeypatch.setitem(report.RENDERERS, "json", render)
    assert gc.isenabled()
    write_reports(_result(), tmp_path, ["json"], "vc", NOW)
    assert seen == [(False, True)]
    assert gc.isenabled() and gc.get_freeze_count() == 0
