"""The JSON report written piece by piece equals the document encoded at once, compactly."""

from __future__ import annotations

import io
import json
import os
import tracemalloc
from pathlib import Path

import pytest

from bench.report_sizes import measure
from gpuaudit.jobs import history
from gpuaudit.report import RENDERERS, render_json
from gpuaudit.report.json_report import _jsonable, write_json
from gpuaudit.results import AuditResult
from tests.support.history_tools import demo_result
from tests.support.report_fixtures import ALL, large_result


def _at_once(doc: object) -> bytes:
    text = json.dumps(
        doc, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_jsonable
    )
    return (text + "\n").encode("utf-8")


@pytest.mark.parametrize("name", sorted(ALL))
def test_streamed_report_equals_the_report_encoded_at_once(name: str) -> None:
    doc = render_json(ALL[name]())
    out = io.BytesIO()
    write_json(doc, out)
    assert out.getvalue() == _at_once(doc)


def test_written_report_is_compact_and_loads_back_to_the_document() -> None:
    result = large_result(500)
    body = RENDERERS["json"](result)
    assert body.endswith(b"}\n")
    assert body.count(b"\n") == 1  # no indentation: one line and its end
    assert b'": ' not in body.split(b'"findings"')[0]  # no space after a key
    assert json.loads(body) == render_json(result)


def test_writing_holds_far_less_than_the_whole_text() -> None:
    doc = render_json(large_result(2_000))
    size = len(_at_once(doc))
    with open(os.devnull, "wb") as sink:
        tracemalloc.start()
        try:
            write_json(doc, sink)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert size > 1_000_000
    assert peak < size / 10


def test_report_sizes_are_measured_per_format() -> None:
    result = large_result(200)
    sizes = measure(result, ("json", "junit"))
    assert sizes["json"]["bytes"] == len(RENDERERS["json"](result))
    per_thousand = sizes["junit"]["bytes"] / 1e6 / len(result.inventory.vms) * 1000
    assert sizes["junit"]["mb_per_1000_vms"] == pytest.approx(per_thousand)
    assert sizes["json"]["peak_mib"] > 0


@pytest.mark.parametrize("name", sorted(ALL))
def test_report_written_from_the_result_equals_the_rendered_report(name: str) -> None:
    result = ALL[name]()
    assert RENDERERS["json"](result) == _at_once(render_json(result))


def test_report_with_ages_and_trend_equals_the_rendered_report(tmp_path: Path) -> None:
    result = aged_result(tmp_path)
    doc = render_json(result)
    assert doc["trend"] and any("first_seen" in f for f in doc["findings"])
    assert RENDERERS["json"](result) == _at_once(doc)


def test_rendering_to_bytes_skips_the_round_trip() -> None:
    result = large_result(2_000)
    RENDERERS["json"](result)  # warm: tables the renderers build once
    tracemalloc.start()
    try:
        body = RENDERERS["json"](result)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The bytes themselves, the inventory as dicts and the pieces; the round trip
    # through one text held that text, the data read back and the bytes at once.
    assert peak < 4 * len(body)


def aged_result(tmp_path: Path) -> AuditResult:
    """A scan after an earlier one in a history store: findings with ages, a trend."""
    store = history.open_store(str(tmp_path / "history.sqlite"))
    history.record(store, demo_result("2026-11-01T00:00:00Z"))
    result = demo_result("2026-11-04T12:00:00Z")
    history.annotate(store, result)
    return result
