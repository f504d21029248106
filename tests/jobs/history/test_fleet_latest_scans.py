"""The fleet summary from the history (gpuaudit.jobs.history.fleet, `gpuaudit fleet report`):
the latest scan of each vCenter, its age, and how the summary shows them; every
expected value written out by hand."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuaudit.cli.main import main
from gpuaudit.jobs import history
from gpuaudit.jobs.history.fleet import latest_targets
from gpuaudit.jobs.history.store import ClusterRecord, ScanRecord
from gpuaudit.report import html
from gpuaudit.report.fleet import age_text, fleet_table, render_fleet_html
from tests.conftest import ROOT
from tests.support.fleet_targets import fleet_target, scenario_size
from tests.support.history_tools import demo_result, store_at_revision

NOW = datetime(2026, 12, 1, 12, 0, 0)


def scan(vcenter: str, when: str, verdict: str = "pass", **fields: Any) -> ScanRecord:
    return ScanRecord(
        vcenter=vcenter,
        vcenter_name=f"{vcenter}-own-name",
        checked_at=datetime.fromisoformat(when),
        tool_version="1",
        rules_version="r",
        verdict=verdict,
        failed={"critical": 0, "high": 2, "medium": 0, "low": 1, "info": 0},
        waived=3,
        passed=40,
        **fields,
    )


def cluster(name: str, design: str | None, tolerates: int) -> ClusterRecord:
    return ClusterRecord(name, design, tolerates, tolerates, True, 2, None)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"),
        (59, "59 s"),
        (60, "1 min"),
        (61, "1 min 1 s"),
        (3599, "59 min 59 s"),
        (3600, "1 h"),
        (3660, "1 h 1 min"),
        (3661, "1 h 1 min"),
        (86399, "23 h 59 min"),
        (86400, "1 d"),
        (90061, "1 d 1 h"),
        (30 * 86400 + 7200, "30 d 2 h"),
    ],
)
def test_an_age_reads_as_its_two_largest_units(seconds: int, text: str) -> None:
    assert age_text(seconds) == text


def test_each_vcenter_gives_its_newest_scan_with_its_age(tmp_path: Path) -> None:
    store = history.open_store(str(tmp_path / "h.sqlite"))
    store.record(scan("vc-a", "2026-11-30 12:00:00", "fail", hosts=1, exit_code=1))
    newer = scan("vc-a", "2026-12-01 09:30:00", "unproven", hosts=4, vms=9, gpus=8, gpu_vms=6)
    newer.exit_code = 0
    newer.clusters = [cluster("gpu-1", "B", 1), cluster("cpu", None, 0)]
    store.record(newer)
    store.record(scan("vc-b", "2026-11-28 11:59:59", "fail"))  # kept before revision 0003
    store.record(scan("vc-c", "2026-12-01 12:00:05"))  # a scanning clock ahead of this one
    targets = latest_targets(store, NOW)
    store.close()
    a = {
        "name": "vc-a",
        "server": "vc-a",
        "key": "vc-a",  # recorded with no key: the name as given is its key
        "verdict": "NOT PROVEN",
        "exit_code": 0,
        "error": None,
        "failed_by_severity": {"critical": 0, "high": 2, "medium": 0, "low": 1, "info": 0},
        "passed": 40,
        "waived": 3,
        "hosts": 4,
        "gpus": 8,
        "gpu_vms": 6,
        "designs": {"gpu-1": "B"},
        "tolerates": {"gpu-1": 1, "cpu": 0},
        "reports": [],
        "scan": 2,
        "checked_at": "2026-12-01T09:30:00Z",
        "age_seconds": 2 * 3600 + 30 * 60,
    }
    b = a | {
        "name": "vc-b",
        "server": "vc-b",
        "key": "vc-b",
        "verdict": "FAIL",
        "exit_code": 1,  # unknown: a failure fails at the default --fail-on
        "hosts": None,
        "gpus": None,
        "gpu_vms": None,
        "designs": {},
        "tolerates": {},
        "scan": 3,
        "checked_at": "2026-11-28T11:59:59Z",
        "age_seconds": 3 * 86400 + 1,
    }
    c = b | {
        "name": "vc-c",
        "server": "vc-c",
        "key": "vc-c",
        "verdict": "PASS",
        "exit_code": 0,
        "scan": 4,
        "checked_at": "2026-12-01T12:00:05Z",
        "age_seconds": 0,
    }
    assert targets == [a, b, c]


def test_two_names_of_one_vcenter_are_one_target_named_as_last_scanned(tmp_path: Path) -> None:
    store = history.open_store(str(tmp_path / "h.sqlite"))
    uuid = "5a1d4496-0000-4000-8000-0000000000a1"
    store.record(scan("vc-a.example.com", "2026-11-30 12:00:00", "fail", key=uuid))
    store.record(scan("10.0.0.5", "2026-12-01 09:30:00", "pass", key=uuid))
    store.record(scan("vc-b", "2026-12-01 10:00:00", "fail"))  # no UUID: its name is its key
    targets = latest_targets(store, NOW)
    store.close()
    assert [(t["name"], t["key"], t["verdict"], t["scan"]) for t in targets] == [
        ("10.0.0.5", uuid, "PASS", 2),  # ordered by the name last scanned by
        ("vc-b", "vc-b", "FAIL", 3),
    ]


def test_a_scan_keeps_its_own_exit_status_and_an_unknown_verdict_reads_in_capitals(
    tmp_path: Path,
) -> None:
    store = history.open_store(str(tmp_path / "h.sqlite"))
    # Failed findings below the scan's --fail-on threshold: it failed, and exited 0.
    store.record(scan("vc-a", "2026-12-01 11:00:00", "fail", exit_code=0))
    # A verdict this gpuaudit has no spelling for (a newer one's): shown as it is, capitalised.
    store.record(scan("vc-b", "2026-12-01 11:00:00", "error", exit_code=3))
    targets = latest_targets(store, NOW)
    store.close()
    assert [(t["name"], t["verdict"], t["exit_code"]) for t in targets] == [
        ("vc-a", "FAIL", 0),
        ("vc-b", "ERROR", 3),
    ]


def from_history(**fields: Any) -> dict[str, Any]:
    """A summary from the history of one target, east, scanned 2 h 30 min before it."""
    east = fleet_target("east", "PASS", checked_at="2026-12-01T09:30:00Z", age_seconds=9000)
    return {
        "generator": {"name": "gpuaudit", "version": "0"},
        "scanned_at": "2026-12-01T12:00:00+00:00",
        "source": "history",
        "exit_code": 0,
        "targets": [east | fields],
    }


def test_the_targets_sheet_of_a_summary_from_history_gives_each_scan_s_time_and_age() -> None:
    data = from_history(hosts=4)
    table = fleet_table(data)
    names = [c.name for c in table.columns]
    assert names[:7] == ["Target", "Server", "Verdict", "Exit", "Checked at", "Age", "Age (s)"]
    assert table.rows[0][:7] == ["east", "vc-east.example", "PASS", 0, "2026-12-01T09:30:00Z",
                                 "2 h 30 min", 9000]  # fmt: skip
    one_run = {k: v for k, v in data.items() if k != "source"}
    assert "Age" not in [c.name for c in fleet_table(one_run).columns]


@pytest.fixture
def checkout_templates(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Render with this checkout's templates, whichever gpuaudit is installed (the
    environment, which keeps what it has loaded, is made afresh before and after)."""
    monkeypatch.setattr(html, "template_root", lambda: ROOT / "templates")
    html.environment.cache_clear()
    yield
    html.environment.cache_clear()


@pytest.mark.usefixtures("checkout_templates")
def test_the_page_of_a_summary_from_history_gives_each_scan_s_age() -> None:
    data = from_history(hosts=None)
    page = render_fleet_html(data)
    assert "<th>Checked at</th><th>Age</th>" in page
    assert '<td class="num">2 h 30 min</td>' in page
    assert "the latest scan of each vCenter in the history" in page
    assert "None" not in page  # a size the history does not hold is blank
    one_run = render_fleet_html({k: v for k, v in data.items() if k != "source"})
    assert "<th>Age</th>" not in one_run and "2 h 30 min" not in one_run


def test_fleet_report_of_a_missing_store_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    location = tmp_path / "none.sqlite"
    done = CliRunner().invoke(main, ["fleet", "report", "--history", str(location)])
    assert done.exit_code == 2
    assert done.stderr == f"gpuaudit: error: {location}: no scan recorded yet (no such file)\n"
    assert not location.exists()


def test_fleet_report_writes_the_three_files_and_exits_with_the_worst_scan_s_status(
    tmp_path: Path,
) -> None:
    location = str(tmp_path / "h.sqlite")
    store = history.open_store(location)
    history.record(store, demo_result("2026-11-01T00:00:00Z", source="vc-x"), exit_code=1)
    history.record(store, demo_result("2026-11-02T00:00:00Z", source="vc-y"), exit_code=0)
    store.close()
    out = tmp_path / "fleet"
    done = CliRunner().invoke(main, ["fleet", "report", "--history", location, "-o", str(out)])
    assert done.exit_code == 1, done.output
    assert sorted(p.suffix for p in out.iterdir()) == [".html", ".json", ".xlsx"]
    (summary,) = out.glob("gpuaudit-fleet-*.json")
    data = json.loads(summary.read_text())
    assert data["source"] == "history" and data["exit_code"] == 1
    sizes = [(t["name"], t["hosts"], t["gpus"], t["gpu_vms"]) for t in data["targets"]]
    demo = scenario_size("demo")  # the demo estate is the demo scenario's recording
    assert sizes == [("vc-x", *demo), ("vc-y", *demo)]
    assert "vc-x: FAIL (scanned " in done.stdout


def test_a_store_of_revision_0002_keeps_its_scans_with_no_size_and_no_exit_status(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite"
    store_at_revision(
        path,
        "0002",
        "INSERT INTO scans (vcenter, vcenter_name, checked_at, recorded_at, tool_version,"
        " rules_version, verdict, failed_critical, failed_high, failed_medium,"
        " failed_low, failed_info, waived, passed, rule_errors, unproven) VALUES"
        " ('vc', 'vc', '2026-11-01 02:00:00', '2026-11-01 02:00:01', '0.1', 'r',"
        " 'pass', 0, 0, 0, 0, 0, 0, 40, 0, 0)",
    )
    store = history.open_store(str(path))
    assert store.schema_version() == "0004"
    [old] = store.scans("vc", limit=5)
    assert (old.passed, old.hosts, old.vms, old.gpus, old.gpu_vms, old.exit_code) == (
        40, None, None, None, None, None,
    )  # fmt: skip
    store.close()
