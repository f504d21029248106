"""The audit pipeline as a library: no click, no exit; an outcome or a typed error.

The expectations come from the demo estate (tests/scenarios/demo.yaml): three
clusters, one of each reference design (edge-inference A, vdi-vgpu B, ml-iscsi C),
ten hosts, sixteen VMs of which fifteen hold a GPU; edge-inference runs without
vSphere HA (HA-01, high), and no critical or low finding fails.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpuaudit.errors import (
    ConnectionFailed,
    ExitCode,
    InputError,
    ReportWriteError,
    exit_code,
)
from gpuaudit.jobs import scan as pipeline
from gpuaudit.vsphere import obtain
from gpuaudit.vsphere.credentials import Credentials
from tests.conftest import unused_port

NOW = datetime(2026, 11, 30, 8, 50, tzinfo=UTC)
STAMP = "20261130T085000Z"
DEMO_DESIGNS = {"edge-inference": "A", "vdi-vgpu": "B", "ml-iscsi": "C"}
DEMO_HOSTS, DEMO_VMS, DEMO_GPU_VMS = 10, 16, 15


def demo(
    out: Path | io.BytesIO,
    formats: list[str],
    fail_on: str = "high",
    policy: str | None = None,
    baseline: str | None = None,
) -> pipeline.ScanOutcome:
    source = obtain.demo_source()
    return pipeline.audit(source, out, formats, fail_on, policy, baseline, now=NOW)


@pytest.fixture(scope="module")
def saved_inventory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("saved") / "plant-north.json"
    pipeline.obtain(obtain.demo_source()).save(path)
    return path


def test_demo_audit_writes_the_reports_and_fails_at_high(tmp_path: Path) -> None:
    done = demo(tmp_path, ["html", "json"])
    assert exit_code(done) == ExitCode.FINDINGS  # the default threshold is high
    assert [p.name for p in done.reports] == [
        f"gpuaudit-demo-{STAMP}.html",
        f"gpuaudit-demo-{STAMP}.json",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == [p.name for p in done.reports]
    report = json.loads(done.reports[1].read_text(encoding="utf-8"))
    failed = {(f["rule"], f["object"]) for f in report["findings"] if f["status"] == "fail"}
    assert ("HA-01", "edge-inference") in failed
    assert done.summary.designs == DEMO_DESIGNS
    assert len(done.inventory.hosts) == DEMO_HOSTS
    assert len(done.inventory.vms) == DEMO_VMS


def test_demo_audit_passes_at_critical(tmp_path: Path) -> None:
    done = demo(tmp_path, ["json"], fail_on="critical")
    assert exit_code(done) == ExitCode.OK
    assert done.summary.failed["critical"] == 0 and done.summary.failed["high"] > 0


def test_a_baseline_of_the_same_estate_leaves_nothing_new(tmp_path: Path) -> None:
    first = demo(tmp_path / "first", ["json"])
    again = demo(tmp_path / "again", ["json"], fail_on="info", baseline=str(first.reports[0]))
    assert exit_code(again) == ExitCode.OK
    assert again.summary.new is not None and sum(again.summary.new.values()) == 0


def test_saved_inventory_is_audited_like_the_estate_it_came_from(
    tmp_path: Path, saved_inventory: Path
) -> None:
    done = pipeline.audit(obtain.Saved(saved_inventory), tmp_path, ["sarif"], now=NOW)
    assert exit_code(done) == ExitCode.FINDINGS
    # Reports from a saved inventory carry its file name.
    assert [p.name for p in done.reports] == [f"gpuaudit-plant-north-{STAMP}.sarif"]
    assert done.summary.designs == DEMO_DESIGNS
    assert sum(1 for vm in done.inventory.vms if vm.gpus) == DEMO_GPU_VMS


def test_one_json_report_to_a_stream_writes_no_file(tmp_path: Path) -> None:
    stream = io.BytesIO()
    done = demo(stream, ["json"])
    assert done.reports == []
    assert list(tmp_path.iterdir()) == []
    report = json.loads(stream.getvalue())
    assert {c["name"] for c in report["inventory"]["clusters"]} == set(DEMO_DESIGNS)


def test_a_missing_policy_is_an_input_error(tmp_path: Path) -> None:
    missing = tmp_path / "policy.yaml"
    with pytest.raises(InputError, match=r"policy\.yaml") as raised:
        demo(tmp_path / "out", ["json"], policy=str(missing))
    assert exit_code(raised.value) == ExitCode.INPUT
    assert not (tmp_path / "out").exists()  # nothing written before the inputs are read


def test_a_missing_baseline_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"old\.json") as raised:
        demo(tmp_path, ["json"], baseline=str(tmp_path / "old.json"))
    assert exit_code(raised.value) == ExitCode.INPUT


def test_a_missing_cassette_is_an_input_error(tmp_path: Path) -> None:
    source = obtain.Replay(tmp_path / "case.yaml")
    with pytest.raises(InputError, match=r"case\.yaml: no such cassette") as raised:
        pipeline.audit(source, tmp_path, ["json"])
    assert exit_code(raised.value) == ExitCode.INPUT


def test_a_server_nobody_answers_is_a_connection_error(tmp_path: Path) -> None:
    creds = Credentials(server=f"127.0.0.1:{unused_port()}", user="audit", password="x")
    source = obtain.Live(credentials=creds, timeout=5)
    with pytest.raises(ConnectionFailed, match="connection refused") as raised:
        pipeline.audit(source, tmp_path, ["json"])
    assert exit_code(raised.value) == ExitCode.CONNECT
    assert list(tmp_path.iterdir()) == []


def test_a_folder_that_is_a_file_is_a_report_write_error(tmp_path: Path) -> None:
    blocker = tmp_path / "reports"
    blocker.write_text("not a folder")
    with pytest.raises(ReportWriteError, match="cannot write reports to") as raised:
        demo(blocker, ["json"])
    assert exit_code(raised.value) == ExitCode.INPUT


def test_compare_of_a_scan_with_itself_finds_nothing_new(saved_inventory: Path) -> None:
    done = pipeline.compare(saved_inventory, saved_inventory, fail_on="info")
    assert done.diff.empty
    assert exit_code(done) == ExitCode.OK


def test_compare_against_an_empty_report_counts_every_failure_as_new(
    tmp_path: Path, saved_inventory: Path
) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"findings": []}))
    at_critical = pipeline.compare(empty, saved_inventory, fail_on="critical")
    at_high = pipeline.compare(empty, saved_inventory, fail_on="high")
    assert exit_code(at_critical) == ExitCode.OK  # the demo fails nothing critical
    assert exit_code(at_high) == ExitCode.FINDINGS  # HA-01 on edge-inference is high
    assert ("HA-01", "edge-inference") in {(f["rule"], f["object"]) for f in at_high.diff.new}


def test_compare_of_a_file_that_is_no_report_is_an_input_error(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text("[1, 2]")
    with pytest.raises(InputError, match="neither a gpuaudit JSON report nor an inventory"):
        pipeline.compare(other, other)
