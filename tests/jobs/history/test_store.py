"""The history store in SQLite: ages, changes since the last scan, `gpuaudit history`,
concurrent writers, a writer killed mid-write, and a store that fails."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from click.testing import CliRunner, Result

from gpuaudit.cli.console import since_last_scan
from gpuaudit.cli.main import main
from gpuaudit.jobs import history
from gpuaudit.jobs.history import schema
from gpuaudit.jobs.history.store import ScanRecord
from gpuaudit.report import RENDERERS
from gpuaudit.report.actions import finding_id
from gpuaudit.report.json_report import load_json_report, render_json, report_schema
from gpuaudit.results import AuditResult
from tests.conftest import CASSETTES
from tests.support.history_tools import (
    SCAN_AT_0003,
    check_upgrade_to_keys,
    demo_result,
    prune_and_check,
    store_at_revision,
)
from tests.support.store_writer import spawn

jsonschema = pytest.importorskip("jsonschema")


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def store_at(tmp_path: Path) -> history.Store:
    return history.open_store(str(tmp_path / "history.sqlite"))


# The default location


def test_the_default_store_is_under_xdg_state_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert history.default_location() == str(tmp_path / "state/gpuaudit/history.sqlite")


def test_without_xdg_state_home_the_store_is_under_local_state(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for value in (None, "relative/state"):  # a relative path is ignored, as XDG says
        if value is None:
            monkeypatch.delenv("XDG_STATE_HOME")
        else:
            monkeypatch.setenv("XDG_STATE_HOME", value)
        assert history.default_location() == str(tmp_path / ".local/state/gpuaudit/history.sqlite")


def test_a_scan_keeps_its_history_at_the_default_location(tmp_path: Path) -> None:
    cassette = CASSETTES / "scenario-a.yaml"
    done = run("-q", "scan", "--replay", str(cassette), "-f", "json", "-o", str(tmp_path))
    assert done.exit_code in (0, 1), done.output
    stored = Path(os.environ["XDG_STATE_HOME"]) / "gpuaudit/history.sqlite"
    (report,) = tmp_path.glob("*.json")
    source = json.loads(report.read_text())["inventory"]["source"]
    with sqlite3.connect(stored) as db:  # keyed by the server as named, as the report says
        assert db.execute("SELECT vcenter FROM scans").fetchall() == [(source,)]


def test_the_demo_keeps_no_history_unless_asked(tmp_path: Path) -> None:
    done = run("-q", "scan", "--demo", "-f", "json", "-o", str(tmp_path))
    assert done.exit_code == 1, done.output
    assert not (Path(os.environ["XDG_STATE_HOME"]) / "gpuaudit").exists()
    (report,) = tmp_path.glob("*.json")
    assert "since_last_scan" not in json.loads(report.read_text())["summary"]
    asked = tmp_path / "asked.sqlite"
    done = run("-q", "scan", "--demo", "-f", "json", "-o", str(tmp_path), "--history", str(asked))
    assert done.exit_code == 1, done.output
    with sqlite3.connect(asked) as db:
        assert db.execute("SELECT vcenter FROM scans").fetchall() == [("demo",)]


def test_no_history_keeps_nothing_and_gives_no_age(tmp_path: Path) -> None:
    done = run("-q", "scan", "--demo", "-f", "json", "-o", str(tmp_path), "--no-history")
    assert done.exit_code == 1
    assert not (Path(os.environ["XDG_STATE_HOME"]) / "gpuaudit").exists()
    (report,) = tmp_path.glob("*.json")
    data = json.loads(report.read_text())
    assert not any("first_seen" in f for f in data["findings"])
    assert "since_last_scan" not in data["summary"]


def test_history_and_no_history_are_a_usage_error(tmp_path: Path) -> None:
    done = run("scan", "--demo", "--history", str(tmp_path / "h.sqlite"), "--no-history")
    assert done.exit_code == 2
    assert "--history and --no-history cannot be combined" in done.output


# The schema and its migrations


def test_the_first_use_migrates_to_the_newest_schema(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    assert store.schema_version() == "0004"
    with store.engine.connect() as conn:
        # The migrations create exactly the tables schema.py describes.
        assert compare_metadata(MigrationContext.configure(conn), schema.metadata) == []
    store.close()
    again = store_at(tmp_path)  # opening a current store migrates nothing
    assert again.schema_version() == "0004"
    again.close()


def test_a_store_of_revision_0001_keeps_its_scans_and_counts_none_not_proven(
    tmp_path: Path,
) -> None:
    store_at_revision(
        tmp_path / "history.sqlite",
        "0001",
        "INSERT INTO scans (vcenter, vcenter_name, checked_at, recorded_at, tool_version,"
        " rules_version, verdict, failed_critical, failed_high, failed_medium,"
        " failed_low, failed_info, waived, passed, rule_errors) VALUES ('vc', 'vc',"
        " '2026-11-01 02:00:00', '2026-11-01 02:00:01', '0.1', 'r', 'fail',"
        " 1, 2, 0, 0, 0, 3, 40, 0)",
    )
    store = store_at(tmp_path)  # opening it migrates to the newest revision
    assert store.schema_version() == "0004"
    [scan] = store.scans("vc", limit=5)
    assert (scan.verdict, scan.failed["high"], scan.waived, scan.passed) == ("fail", 2, 3, 40)
    assert scan.unproven == 0
    store.close()


def test_a_store_of_revision_0003_keys_its_scans_by_the_name_they_were_given(
    tmp_path: Path,
) -> None:
    store_at_revision(tmp_path / "history.sqlite", "0003", SCAN_AT_0003)
    check_upgrade_to_keys(str(tmp_path / "history.sqlite"))


# Finding age


def test_a_finding_is_as_old_as_its_first_scan_of_the_same_vcenter(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    first = demo_result("2026-11-01T08:00:00Z")
    history.annotate(store, first)
    history.record(store, first)
    later = demo_result("2026-11-11T09:00:00Z")
    history.annotate(store, later)
    doc = render_json(later)
    failed = [f for f in doc["findings"] if f["status"] == "fail"]
    assert failed
    assert {f["first_seen"] for f in failed} == {"2026-11-01T08:00:00Z"}
    assert {f["age_days"] for f in failed} == {10}
    assert not any("first_seen" in f for f in doc["findings"] if f["status"] == "pass")
    jsonschema.validate(doc, report_schema())


def test_another_vcenter_history_gives_no_age(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    other = demo_result("2026-11-01T08:00:00Z", source="vc02")
    history.record(store, other)
    mine = demo_result("2026-11-11T09:00:00Z", source="vc01")
    history.annotate(store, mine)
    assert set(mine.first_seen.values()) == {"2026-11-11T09:00:00Z"}
    assert mine.history is not None and mine.history.previous_checked_at is None


def test_a_finding_fixed_and_failing_again_is_new_again(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    first = demo_result("2026-11-01T00:00:00Z")
    history.record(store, first)
    fixed = demo_result("2026-11-02T00:00:00Z")
    target = next(f for f in fixed.findings if f.failed)
    target.status = "pass"
    history.annotate(store, fixed)
    history.record(store, fixed)
    back = demo_result("2026-11-05T00:00:00Z")
    history.annotate(store, back)
    assert back.first_seen[finding_id(target)] == "2026-11-05T00:00:00Z"
    others = {k for k in back.first_seen if k != finding_id(target)}
    assert {back.first_seen[k] for k in others} == {"2026-11-01T00:00:00Z"}


def test_a_baseline_gives_the_age_without_history(tmp_path: Path) -> None:
    old = demo_result("2026-10-01T00:00:00Z")
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(render_json(old)))  # no ages in it: its check time counts
    now = demo_result("2026-10-31T00:00:00Z")
    history.annotate(None, now, history.baseline_first_seen(str(baseline)))
    doc = render_json(now)
    assert {f["age_days"] for f in doc["findings"] if f["status"] == "fail"} == {30}
    assert now.history is None


def test_ages_survive_a_report_read_back(tmp_path: Path) -> None:
    result = demo_result("2026-11-11T00:00:00Z")
    history.annotate(store_at(tmp_path), result)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(render_json(result)))
    assert load_json_report(path).first_seen == result.first_seen


# New and resolved since the last scan


def test_new_and_resolved_findings_since_the_last_scan(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    first = demo_result("2026-11-01T00:00:00Z")
    gone = next(f for f in first.findings if f.failed)
    history.record(store, first)
    second = demo_result("2026-11-02T00:00:00Z")
    arrived = next(f for f in second.findings if f.status == "pass")
    arrived.status = "fail"
    next(
        f for f in second.findings if f.rule == gone.rule and f.object == gone.object
    ).status = "pass"
    history.annotate(store, second)
    summary = render_json(second)["summary"]["since_last_scan"]
    assert summary["previous_checked_at"] == "2026-11-01T00:00:00Z"
    assert [(r["rule"], r["object"]) for r in summary["new"]] == [(arrived.rule, arrived.object)]
    assert [(r["rule"], r["object"]) for r in summary["resolved"]] == [(gone.rule, gone.object)]
    assert second.history is not None
    lines = since_last_scan(second.history)
    assert (
        lines[0] == "since the last scan (2026-11-01T00:00:00Z): 1 new, 1 resolved failed findings"
    )
    assert any(line.split()[:1] == ["new"] and arrived.rule in line for line in lines)
    assert any(line.split()[:1] == ["resolved"] and gone.rule in line for line in lines)


def test_not_proven_reads_as_a_baseline_reads_it(tmp_path: Path) -> None:
    """Not proven last time and failed now is known, not new; not proven last time and
    passed now is resolved; failed last time and only not proven now is not resolved."""
    store = store_at(tmp_path)
    first = demo_result("2026-11-01T00:00:00Z")
    passed = [f for f in first.findings if f.status == "pass"]
    confirmed, cleared = passed[0], passed[1]
    weakened = next(f for f in first.findings if f.status == "fail")
    confirmed.status = cleared.status = "unproven"
    history.record(store, first)
    second = demo_result("2026-11-02T00:00:00Z")
    now = {(f.rule, f.object): f for f in second.findings}
    now[(confirmed.rule, confirmed.object)].status = "fail"
    now[(cleared.rule, cleared.object)].status = "pass"
    now[(weakened.rule, weakened.object)].status = "unproven"
    history.annotate(store, second)
    summary = render_json(second)["summary"]["since_last_scan"]
    assert summary["new"] == []
    assert [(r["rule"], r["object"]) for r in summary["resolved"]] == [
        (cleared.rule, cleared.object)
    ]


def test_the_console_says_what_changed_since_the_last_scan(tmp_path: Path) -> None:
    store = str(tmp_path / "h.sqlite")
    first = run("scan", "--demo", "-f", "json", "-o", str(tmp_path), "--history", store)
    assert "history: the first recorded scan of this vCenter" in first.stdout
    second = run("scan", "--demo", "-f", "json", "-o", str(tmp_path), "--history", store)
    assert "0 new, 0 resolved failed findings" in second.stdout
    assert second.exit_code == 1


# gpuaudit history


def _record(store: history.Store, source: str, times: list[str]) -> None:
    for when in times:
        history.record(store, demo_result(when, source))


def test_history_lists_each_vcenter_newest_first(tmp_path: Path) -> None:
    location = str(tmp_path / "h.sqlite")
    store = history.open_store(location)
    _record(store, "vc01", ["2026-11-01T00:00:00Z", "2026-11-03T00:00:00Z"])
    _record(store, "vc02", ["2026-11-02T00:00:00Z"])
    done = run("history", "--history", location, "-f", "csv")
    assert done.exit_code == 0, done.output
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [(r["vcenter"], r["checked_at"]) for r in rows] == [
        ("vc01", "2026-11-03T00:00:00Z"),
        ("vc01", "2026-11-01T00:00:00Z"),
        ("vc02", "2026-11-02T00:00:00Z"),
    ]
    failed_high = sum(f.failed and f.severity == "high" for f in demo_result().findings)
    assert {r["failed_high"] for r in rows} == {str(failed_high)}
    # Each vCenter is headed by its name, its key (the instance UUID) beside it.
    vc01, vc02 = (demo_result(source=s).inventory.vcenter.instance_uuid for s in ("vc01", "vc02"))
    assert [r["key"] for r in rows] == [vc01, vc01, vc02]
    text = run("history", "--history", location).stdout
    assert text.splitlines()[0] == f"vc01 ({vc01})" and f"vc02 ({vc02})" in text.splitlines()


def test_history_filters_by_server_limits_and_writes_json(tmp_path: Path) -> None:
    location = str(tmp_path / "h.sqlite")
    store = history.open_store(location)
    _record(store, "vc01", ["2026-11-01T00:00:00Z", "2026-11-03T00:00:00Z"])
    _record(store, "vc02", ["2026-11-02T00:00:00Z"])
    out = tmp_path / "scans.json"
    args = ["history", "--history", location, "--server", "vc01", "--limit", "1"]
    done = run(*args, "-f", "json", "-o", str(out))
    assert done.exit_code == 0 and done.stdout == ""
    scans = json.loads(out.read_text())["scans"]
    assert [(s["vcenter"], s["checked_at"]) for s in scans] == [("vc01", "2026-11-03T00:00:00Z")]


def test_history_of_an_empty_store_creates_none(tmp_path: Path) -> None:
    location = tmp_path / "none.sqlite"
    done = run("history", "--history", str(location))
    assert (done.exit_code, done.stdout) == (0, "no scans recorded\n")
    assert not location.exists()


def test_history_of_a_store_that_is_not_one_is_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not a database\n" * 100)
    done = run("history", "--history", str(bad))
    assert done.exit_code == 2
    assert done.stderr.startswith("gpuaudit: error: ") and done.stderr.count("\n") == 1


# A store that fails costs no report


@pytest.mark.parametrize("kind", ["unopenable", "not a database"])
def test_a_failing_store_warns_once_and_keeps_reports_and_status(tmp_path: Path, kind: str) -> None:
    location = tmp_path / "store"
    if kind == "unopenable":
        location.mkdir()  # SQLite cannot open a folder
    else:
        location.write_text("not a database\n" * 100)
    out = tmp_path / "out"
    args = ["--no-color", "scan", "--demo", "-f", "json,sarif", "-o", str(out)]
    done = run(*args, "--history", str(location))
    assert done.exit_code == 1  # the findings' status, as without history
    assert len(list(out.glob("gpuaudit-*"))) == 2
    warnings = [line for line in done.stderr.splitlines() if "history" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: history: cannot ")
    assert "FAIL: findings at or above high" in done.stdout


def test_a_database_url_password_never_shows(tmp_path: Path) -> None:
    url = "postgresql://audit:s3cret-pw@127.0.0.1:1/gpuaudit"
    done = run("scan", "--demo", "-f", "json", "-o", str(tmp_path), "--history", url)
    assert done.exit_code == 1
    assert "s3cret-pw" not in done.output + done.stderr
    assert "postgresql://audit:***@127.0.0.1:1/gpuaudit" in done.stderr


# Fleet runs


def test_a_fleet_run_groups_its_targets_scans(tmp_path: Path) -> None:
    from gpuaudit.errors import ExitCode
    from gpuaudit.jobs.fleet import Target, TargetOutcome, record_fleet_run

    location = str(tmp_path / "h.sqlite")
    store = history.open_store(location)
    ids = [history.record(store, demo_result(source=s)) for s in ("vc01", "vc02")]
    outcomes = [
        TargetOutcome(
            Target(name=f"t{i}", server=f"vc0{i + 1}", user="audit"), ExitCode.OK, "PASS", scan_id=s
        )
        for i, s in enumerate(ids)
    ]
    assert record_fleet_run(outcomes, location, datetime(2026, 11, 1, tzinfo=UTC)) == []
    with sqlite3.connect(tmp_path / "h.sqlite") as db:
        ((run_id, summary),) = db.execute("SELECT id, summary FROM runs").fetchall()
        assert db.execute("SELECT DISTINCT run_id FROM scans").fetchall() == [(run_id,)]
    assert [t["name"] for t in json.loads(summary)["targets"]] == ["t0", "t1"]


def test_history_prune_deletes_the_scans_older_than_days(tmp_path: Path) -> None:
    prune_and_check(str(tmp_path / "h.sqlite"))


def test_history_prune_by_one_name_prunes_every_name_of_that_vcenter(tmp_path: Path) -> None:
    location = str(tmp_path / "h.sqlite")
    store = history.open_store(location)
    uuid = "5a1d4496-0000-4000-8000-0000000000b2"
    for when, name in (
        ("2026-01-01T00:00:00Z", "vc01.example"),
        ("2026-01-02T00:00:00Z", "10.1.1.1"),
    ):
        history.record(store, demo_result(when, source=name, instance=uuid))
    history.record(store, demo_result("2026-01-03T00:00:00Z", source="vc02"))  # another vCenter
    done = run(
        "history", "prune", "--history", location, "--older-than", "30", "--server", "vc01.example"
    )
    assert done.exit_code == 0, done.output
    # Both scans of the vCenter go, named as it was last scanned; vc02 stays.
    assert done.stdout.splitlines()[0] == (
        "removed 2 scans of 10.1.1.1 (checked 2026-01-01T00:00:00Z to 2026-01-02T00:00:00Z)"
    )
    assert [s.vcenter for s in store.scans()] == ["vc02"]
    store.close()


def test_history_prune_of_a_store_that_is_not_one_is_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not a database")
    done = run("history", "prune", "--history", str(bad), "--older-than", "30")
    assert done.exit_code == 2
    assert done.stderr.strip() == f"gpuaudit: error: {bad}: file is not a database"


# Concurrency and crashes


def test_two_processes_writing_at_once_both_land(tmp_path: Path) -> None:
    location = str(tmp_path / "h.sqlite")  # neither process finds a schema: both migrate
    start = time.time() + 4  # every writer opens the new store at once
    writers = [spawn(location, source, 15, start) for source in ("vc01", "vc02")]
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
        assert len(out.split()) == 15
    store = history.open_store(location)
    assert len(store.scans("vc01", by_name=True)) == len(store.scans("vc02", by_name=True)) == 15
    kept = sum(f.status in ("fail", "unproven", "waived") for f in demo_result().findings)
    assert {store.count_findings(s.id or 0) for s in store.scans()} == {kept}


def test_a_writer_killed_mid_write_loses_nothing_recorded_before(tmp_path: Path) -> None:
    location = str(tmp_path / "h.sqlite")
    history.open_store(location).close()
    writer = spawn(location, "vc01", 10_000)
    assert writer.stdout is not None
    committed = [int(writer.stdout.readline()) for _ in range(5)]
    time.sleep(0.05)  # let it get into the next transaction
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)
    committed += [int(line) for line in writer.stdout.read().split()]
    with sqlite3.connect(location) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    store = history.open_store(location)
    kept = sum(f.status in ("fail", "unproven", "waived") for f in demo_result().findings)
    stored = {s.id: s for s in store.scans("vc01", by_name=True)}
    assert set(committed) <= set(stored)
    for scan_id in stored:  # every scan there is whole: none half-written
        assert store.count_findings(scan_id) == kept
    # and the store takes the next scan
    assert history.record(store, demo_result(source="vc01")) > max(committed)


def test_scan_records_are_plain_rows(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    history.record(store, demo_result("2026-11-01T00:00:00Z"))
    (scan,) = store.scans()
    assert isinstance(scan, ScanRecord) and scan.checked_at == datetime(2026, 11, 1)
    with sqlite3.connect(tmp_path / "history.sqlite") as db:
        rows = db.execute("SELECT cluster, phase, model, slots, used FROM capacity").fetchall()
    demo = demo_result()
    expected = set()
    for sim in demo.simulations:
        for phase, gpus in (("before", sim.capacity), ("after_worst", sim.after_worst)):
            for model in {g.model for g in gpus}:
                mine = [g for g in gpus if g.model == model]
                expected.add(
                    (
                        sim.cluster,
                        phase,
                        model,
                        sum(g.capacity for g in mine),
                        sum(g.used for g in mine),
                    )
                )
    assert set(rows) == expected and rows


# Every format shows the age it is given


def _aged(tmp_path: Path) -> AuditResult:
    store = store_at(tmp_path)
    history.record(store, demo_result("2026-11-01T00:00:00Z"))
    result = demo_result("2026-11-04T12:00:00Z")
    history.annotate(store, result)
    return result


def test_sarif_results_carry_their_age(tmp_path: Path) -> None:
    sarif = json.loads(RENDERERS["sarif"](_aged(tmp_path)))
    results = sarif["runs"][0]["results"]
    assert results
    assert {(r["properties"]["firstSeen"], r["properties"]["ageDays"]) for r in results} == {
        ("2026-11-01T00:00:00Z", 3)
    }
    plain = json.loads(RENDERERS["sarif"](demo_result()))
    assert not any("ageDays" in r["properties"] for r in plain["runs"][0]["results"])


def test_the_workbook_findings_sheet_has_an_age_column_with_history(tmp_path: Path) -> None:
    from openpyxl import load_workbook

    def sheet(result: AuditResult) -> list[tuple[object, ...]]:
        book = load_workbook(io.BytesIO(RENDERERS["xlsx"](result)), read_only=True)
        return list(book["Findings"].iter_rows(values_only=True))

    rows = sheet(_aged(tmp_path))
    header = list(rows[0])
    # docs/report-formats.md: "... MoRef Type, First Seen (date), vCenter, ...", and
    # Age (days) last when the scan has a history.
    assert header[header.index("MoRef Type") + 1] == "First Seen" and header[-1] == "Age (days)"
    status = header.index("Status")
    ages = {row[-1] for row in rows[1:] if row[status] == "fail"}
    assert ages == {3}
    assert "Age (days)" not in sheet(demo_result())[0]


def test_the_html_findings_table_has_an_age_column_with_history(tmp_path: Path) -> None:
    aged = RENDERERS["html"](_aged(tmp_path)).decode()
    assert '<button type="button" data-sort="10">Age (days)</button>' in aged
    assert '"ages": true' in aged or '"ages":true' in aged
    plain = RENDERERS["html"](demo_result()).decode()
    assert "Age (days)" not in plain


def test_a_url_of_another_database_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(history.HistoryError) as caught:
        history.open_store("mysql://audit:pw@db.example.com/gpuaudit")
    assert str(caught.value) == (
        "mysql://audit:***@db.example.com/gpuaudit: "
        "a history store is a SQLite file or a postgresql:// URL"
    )


def test_the_known_head_is_the_newest_migration() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from gpuaudit.jobs.history.store import MIGRATIONS, SCHEMA_HEAD

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_current_head() == SCHEMA_HEAD


@pytest.mark.live
def test_a_fleet_scan_records_each_target_and_the_run(lab_factory: Any, tmp_path: Path) -> None:
    from tests.conftest import unused_port

    lab = lab_factory("scenario-b")
    down = f"http://127.0.0.1:{unused_port()}/sdk"
    targets = tmp_path / "targets.yaml"
    targets.write_text(
        "targets:\n"
        f"  - {{name: lab, server: '{lab.url}', user: {lab.user}, password_env: LAB_PW}}\n"
        f"  - {{name: down, server: '{down}', user: audit, password_env: LAB_PW}}\n"
    )
    location = tmp_path / "h.sqlite"
    done = CliRunner().invoke(
        main,
        [
            "scan",
            "--targets",
            str(targets),
            "-o",
            str(tmp_path / "out"),
            "--history",
            str(location),
        ],
        env={"LAB_PW": lab.password},
    )
    assert done.exit_code == 3, done.output
    with sqlite3.connect(location) as db:
        ((run_id, exit_code, summary),) = db.execute("SELECT id, exit_code, summary FROM runs")
        scans = db.execute("SELECT run_id, vcenter FROM scans").fetchall()
    assert exit_code == 3
    verdicts = {t["name"]: t["verdict"] for t in json.loads(summary)["targets"]}
    assert verdicts["down"] == "ERROR" and verdicts["lab"] in ("PASS", "FAIL")
    assert len(scans) == 1 and scans[0][0] == run_id  # the target that was scanned


@pytest.mark.live
def test_an_ip_address_and_a_host_name_of_one_vcenter_make_one_history(
    lab_factory: Any, tmp_path: Path
) -> None:
    lab = lab_factory("scenario-b", instance_uuid="5a1d4496-0000-4000-8000-00000000c0de")
    location = str(tmp_path / "h.sqlite")
    by_ip = lab.url  # http://127.0.0.1:PORT/sdk
    by_name = by_ip.replace("127.0.0.1", "localhost")
    assert by_name != by_ip
    for i, server in enumerate((by_ip, by_name)):
        done = CliRunner().invoke(
            main,
            ["-q", "scan", "--server", server, "--user", lab.user, "--history", location,
             "-f", "json", "-o", str(tmp_path / f"out{i}")],
            env={"GPUAUDIT_PASSWORD": lab.password, "GOVC_URL": None},
        )  # fmt: skip
        assert done.exit_code in (0, 1), done.output
    # The second scan knows the first: it has a previous scan and nothing is new.
    (second,) = (tmp_path / "out1").glob("*.json")
    since = json.loads(second.read_text())["summary"]["since_last_scan"]
    assert since["previous_checked_at"] is not None and since["new"] == []
    listed = run("history", "--history", location, "-f", "json")
    scans = json.loads(listed.stdout)["scans"]
    assert {s["key"] for s in scans} == {"5a1d4496-0000-4000-8000-00000000c0de"}
    names = [s["vcenter"] for s in scans]  # newest first, each by the name it was given
    assert len(names) == 2 and "localhost" in names[0] and "127.0.0.1" in names[1]
    for name in names:  # either name finds the whole history
        by = run("history", "--history", location, "-f", "json", "--server", name)
        assert len(json.loads(by.stdout)["scans"]) == 2
    store = history.open_store(location)
    assert store.vcenters() == ["5a1d4496-0000-4000-8000-00000000c0de"]
    store.close()


def test_a_store_that_fails_to_read_still_records_nothing_and_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(history.Store, "latest", broken)
    out = tmp_path / "out"
    location = str(tmp_path / "h.sqlite")
    done = run("--no-color", "scan", "--demo", "-f", "json", "-o", str(out), "--history", location)
    assert done.exit_code == 1
    assert [line for line in done.stderr.splitlines() if "history" in line] == [
        f"warning: history: cannot read {location}: disk I/O error"
    ]
    (report,) = out.glob("*.json")
    assert "since_last_scan" not in json.loads(report.read_text())["summary"]
    assert history.open_store(location).scans() == []  # nothing recorded after a failure


def test_a_vcenter_named_like_another_server_keeps_its_own_history(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    other = demo_result("2026-11-01T00:00:00Z", source="vc01")
    other.inventory.vcenter.name = "vc02"  # its own name is the other one's server name
    history.record(store, other)
    mine = demo_result("2026-11-02T00:00:00Z", source="vc02")
    history.annotate(store, mine)
    assert mine.history is not None and mine.history.previous_checked_at is None
    listed = run("history", "--history", str(tmp_path / "history.sqlite"), "--server", "vc02")
    assert "vc01" in listed.stdout  # a person may look a vCenter up by its own name


# Defects of issue 38: a store newer than the program, URLs that can never work,
# a store this user may not read or write


def _at_revision(location: Path, revision: str) -> None:
    with sqlite3.connect(location) as db:
        db.execute("UPDATE alembic_version SET version_num = ?", (revision,))


def test_a_store_newer_than_the_program_is_refused_naming_both_versions(tmp_path: Path) -> None:
    location = tmp_path / "history.sqlite"
    store = store_at(tmp_path)
    history.record(store, demo_result())
    store.close()
    _at_revision(location, "9999")
    out = tmp_path / "out"
    done = run(
        "--no-color", "scan", "--demo", "-f", "json", "-o", str(out), "--history", str(location)
    )
    assert done.exit_code == 1  # the findings' status, as without history
    assert len(list(out.glob("gpuaudit-demo-*.json"))) == 1
    (warning,) = [line for line in done.stderr.splitlines() if "history" in line]
    assert warning.startswith(
        f"warning: history: cannot open {location}: its schema is at revision 9999, newer than 0004"
    )
    listed = run("history", "--history", str(location))
    assert listed.exit_code == 2
    assert listed.stderr.startswith(f"gpuaudit: error: {location}: its schema is at revision 9999")
    assert listed.stderr.count("\n") == 1 and "Traceback" not in listed.output
    with sqlite3.connect(location) as db:  # refused as it is: nothing changed
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [("9999",)]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("postgresql://audit:Pg@S3cr:MyLongSecretTail@db.example.com:5432/ga", "ends it early"),
        ("postgresql://audit:Pg/S3cr:MyLongSecretTail@db.example.com/ga", "ends it early"),
        ("postgresql://audit:Pg#S3cr:MyLongSecretTail@db.example.com/ga", "ends it early"),
        ("postgresql://audit:Pg?S3cr:MyLongSecretTail@db.example.com/ga", "ends it early"),
        ("postgresql+psycopg2://audit:MyLongSecretTail@db.example.com/ga", "is not installed"),
        ("postgresql+asyncpg://audit:MyLongSecretTail@db.example.com/ga", "asyncio driver"),
        ("postgresql://audit:MyLongSecretTail@[::1/ga", "no closing ]"),
        ("postgresql://audit:MyLongSecretTail@[fe80::zz]/ga", "not an IPv6 address"),
        ("postgresql://audit:MyLongSecretTail@db.example.com:99999/ga", "port is not a number"),
        ("postgresql://audit:MyLongSecretTail@db.example.com:x5/ga", "port is not a number"),
        ("mysql://audit:MyLongSecretTail@db.example.com/ga", "SQLite file or a postgresql://"),
    ],
)
def test_a_history_url_that_can_never_work_is_a_usage_error_without_the_password(
    tmp_path: Path, url: str, why: str
) -> None:
    out = tmp_path / "out"
    for args in (["scan", "--demo", "-o", str(out)], ["history"]):
        done = run(*args, "--history", url)
        assert done.exit_code == 2, done.output
        assert why in done.stderr and "--history " in done.stderr
        for part in ("MyLongSecretTail", "S3cr", "Pg@", "Traceback"):
            assert part not in done.output + done.stderr
    assert not out.exists()  # refused before the scan


def _without_root_powers() -> list[str]:
    """Run as this user, but without root's power to read and write any file."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def _history_command(*args: str) -> subprocess.CompletedProcess[str]:
    command = [*_without_root_powers(), sys.executable, "-m", "gpuaudit", "history", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_history_of_an_unreadable_store_is_exit_2_with_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    location = folder / "h.sqlite"
    store = history.open_store(str(location))
    history.record(store, demo_result())
    store.close()
    try:
        for blocked, mode in ((folder, 0o000), (location, 0o000)):
            blocked.chmod(mode)
            done = _history_command("--history", str(location))
            assert done.returncode == 2, done.stderr
            assert done.stderr.startswith(f"gpuaudit: error: {location}: ")
            assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
            blocked.chmod(0o700 if blocked == folder else 0o600)
    finally:
        folder.chmod(0o700)


def test_history_of_a_store_in_a_folder_this_user_cannot_write_is_listed(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    location = folder / "h.sqlite"
    store = history.open_store(str(location))
    history.record(store, demo_result("2026-11-02T00:00:00Z"))
    store.close()
    folder.chmod(0o555)
    location.chmod(0o444)
    try:
        done = _history_command("--history", str(location), "-f", "json")
    finally:
        folder.chmod(0o700)
    assert done.returncode == 0, done.stderr
    scans = json.loads(done.stdout)["scans"]
    assert [(s["vcenter"], s["checked_at"]) for s in scans] == [("vc01", "2026-11-02T00:00:00Z")]
    assert sorted(p.name for p in folder.iterdir()) == ["h.sqlite"]  # no WAL files made
