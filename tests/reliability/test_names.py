"""Nothing lost when runs write into one folder at once: every run claims its
report names before writing, one stem for all its files; targets whose names
reduce alike still get names of their own; the fleet summary never takes a
target's name."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st

from gpuaudit import report
from gpuaudit.cli.main import main
from gpuaudit.common import files
from gpuaudit.errors import ExitCode
from gpuaudit.jobs.fleet import write_fleet_summary
from gpuaudit.report import safe_server, write_reports
from gpuaudit.report.naming import fleet_stem, report_stem
from gpuaudit.results import AuditResult
from tests.support.report_fixtures import realistic_result

NOW = datetime(2026, 11, 30, 8, 50, 0, tzinfo=UTC)
SET = ("html", "xlsx", "json")
GPUAUDIT = [sys.executable, "-m", "gpuaudit"]
MARKER = re.compile(r"estate-\d\d\.example")


def estate(i: int) -> AuditResult:
    """The realistic estate, told apart by its server and scan time."""
    result = realistic_result()
    result.inventory = dataclasses.replace(
        result.inventory,
        source=f"estate-{i:02d}.example",
        collected_at=f"2026-11-30T08:{i:02d}:00+00:00",
    )
    return result


def markers_in_xlsx(path: Path) -> set[str]:
    book = openpyxl.load_workbook(path, read_only=True)
    found = set()
    for sheet in book.worksheets:
        for row in sheet.iter_rows(values_only=True):
            found.update(m for cell in row if isinstance(cell, str) for m in MARKER.findall(cell))
    return found


def report_sets(folder: Path) -> dict[str, dict[str, Path]]:
    """Every report in ``folder`` by stem, then by format; nothing else may be there."""
    sets: dict[str, dict[str, Path]] = {}
    for path in sorted(folder.iterdir()):
        stem, _, extension = path.name.rpartition(".")
        assert extension in SET and path.stat().st_size > 0, path.name  # no temporary or empty
        sets.setdefault(stem, {})[extension] = path
    return sets


def assert_whole_sets_of_every_estate(folder: Path, runs: int) -> None:
    """``runs`` sets of HTML, xlsx and JSON, each set written by one run."""
    sets = report_sets(folder)
    assert len(sets) == runs, sorted(sets)
    seen = set()
    for stem, formats in sets.items():
        assert sorted(formats) == sorted(SET), stem
        data = json.loads(formats["json"].read_text(encoding="utf-8"))
        server = data["source"]["server"]
        collected_at = data["source"]["collected_at"]
        assert collected_at == f"2026-11-30T08:{server[7:9]}:00+00:00", stem
        html = formats["html"].read_text(encoding="utf-8")
        assert set(MARKER.findall(html)) == {server}, stem
        assert html.rstrip().endswith("</html>")
        assert markers_in_xlsx(formats["xlsx"]) == {server}, stem
        seen.add(server)
    assert len(seen) == runs


def test_ten_writers_at_once_keep_ten_whole_sets(tmp_path: Path) -> None:
    """Ten threads write the reports of ten estates, under one server name, at once."""
    start = threading.Barrier(10)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        result = estate(i)
        try:
            start.wait()
            write_reports(result, tmp_path, SET, "vc01.example", NOW)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert_whole_sets_of_every_estate(tmp_path, 10)
    stems = set(report_sets(tmp_path))
    base = report_stem("vc01.example", NOW)
    assert stems == {base} | {f"{base}-{n}" for n in range(1, 10)}


def test_ten_scans_at_once_keep_ten_whole_sets(tmp_path: Path) -> None:
    """Ten `gpuaudit scan` processes, each of its own estate saved as estate.json."""
    out = tmp_path / "reports"
    commands = []
    for i in range(10):
        folder = tmp_path / f"estate{i}"
        folder.mkdir()
        estate(i).inventory.save(folder / "estate.json")
        inventory = str(folder / "estate.json")
        formats = [arg for fmt in SET for arg in ("-f", fmt)]
        commands.append([*GPUAUDIT, "-q", "scan", "--from", inventory, "-o", str(out), *formats])
    scans = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for c in commands]
    for scan in scans:
        _, stderr = scan.communicate(timeout=300)
        assert scan.returncode in (ExitCode.OK, ExitCode.FINDINGS), stderr.decode()
    assert_whole_sets_of_every_estate(out, 10)


def test_a_writer_starting_while_another_renders_keeps_its_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second run writes whole while the first is still rendering its HTML: the
    first must not then write over the names the second took."""
    render_html = report.RENDERERS["html"]
    interrupted = []

    def html_then_another_run(result: AuditResult) -> bytes:
        if not interrupted:
            interrupted.append(True)
            write_reports(estate(2), tmp_path, SET, "vc01.example", NOW)
        return render_html(result)

    monkeypatch.setitem(report.RENDERERS, "html", html_then_another_run)
    write_reports(estate(1), tmp_path, SET, "vc01.example", NOW)
    assert_whole_sets_of_every_estate(tmp_path, 2)


def test_a_taken_name_moves_every_suffix_to_the_next_counter(tmp_path: Path) -> None:
    (tmp_path / "r.xlsx").write_bytes(b"earlier")
    (tmp_path / "r-1.json").write_bytes(b"earlier")
    paths = files.claim_names(tmp_path, "r", [".html", ".xlsx", ".json"])
    assert [p.name for p in paths] == ["r-2.html", "r-2.xlsx", "r-2.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["r.xlsx", "r-1.json", "r-2.html", "r-2.xlsx", "r-2.json"]
    )  # r.html and r-1.html, claimed on the way, are given back
    assert (tmp_path / "r.xlsx").read_bytes() == b"earlier"


def test_claimed_names_are_exclusive(tmp_path: Path) -> None:
    first = files.claim_names(tmp_path, "r", [".html", ".json"])
    second = files.claim_names(tmp_path, "r", [".html", ".json"])
    assert [p.name for p in first] == ["r.html", "r.json"]
    assert [p.name for p in second] == ["r-1.html", "r-1.json"]
    assert all(p.exists() and p.stat().st_size == 0 for p in first + second)


def test_a_dangling_symlink_at_a_name_is_taken_not_replaced(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    out = tmp_path / "reports"
    out.mkdir()
    base = report_stem("vc", NOW)
    (out / f"{base}.json").symlink_to(elsewhere)
    paths = write_reports(estate(1), out, SET, "vc", NOW)
    assert [p.name for p in paths] == [f"{base}-1.{f}" for f in SET]
    assert (out / f"{base}.json").readlink() == elsewhere
    assert not elsewhere.exists() and not (out / f"{base}.html").exists()


def test_a_claim_that_fails_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = files.os.open

    def refuse_json(path: Any, *args: Any) -> int:
        if str(path).endswith(".json"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args)

    monkeypatch.setattr(files.os, "open", refuse_json)
    with pytest.raises(PermissionError):
        write_reports(estate(1), tmp_path, SET, "vc", NOW)
    assert list(tmp_path.iterdir()) == []


def test_no_free_name_is_an_error_not_an_overwrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "MAX_CLAIMS", 3)
    base = report_stem("vc", NOW)
    taken = [tmp_path / f"{base}{suffix}.json" for suffix in ("", "-1", "-2")]
    for path in taken:
        path.write_bytes(b"earlier")
    with pytest.raises(FileExistsError):
        write_reports(estate(1), tmp_path, ["json"], "vc", NOW)
    assert sorted(tmp_path.iterdir()) == sorted(taken)
    assert all(p.read_bytes() == b"earlier" for p in taken)


@pytest.mark.parametrize(
    ("one", "other"),
    [("ü", "ö"), ("東京", "大阪"), ("a/b", "a:b"), ("a/b", "a_b"), ("é", "è")],
)
def test_names_that_reduce_alike_stay_apart(one: str, other: str) -> None:
    assert safe_server(one) != safe_server(other)


@given(st.text(max_size=80), st.text(max_size=80))
def test_different_names_give_different_file_names(one: str, other: str) -> None:
    if one != other:
        assert report_stem(one, NOW) != report_stem(other, NOW)


def test_non_ascii_letters_keep_their_letters() -> None:
    assert safe_server("Zürich-vc01").startswith("Zurich-vc01-")
    assert safe_server("Île-de-France").startswith("Ile-de-France-")


@given(st.text(max_size=80), st.integers(0, 999), st.integers(0, 999))
@example("fleet", 0, 0)
@example("FLEET", 0, 0)
def test_no_target_can_take_the_fleet_summary_name(name: str, n: int, m: int) -> None:
    """Not even on a file system that ignores case."""

    def counted(stem: str, k: int) -> str:
        return (stem if k == 0 else f"{stem}-{k}").lower()

    assert counted(report_stem(name, NOW), n) != counted(fleet_stem(NOW), m)


def test_a_target_named_fleet_keeps_its_reports(tmp_path: Path) -> None:
    target = write_reports(estate(1), tmp_path, SET, "fleet", NOW)
    before = {p: p.read_bytes() for p in target}
    summary = write_fleet_summary([], tmp_path, NOW)
    assert set(summary).isdisjoint(target)
    assert {p: p.read_bytes() for p in target} == before
    assert json.loads(summary[2].read_text())["targets"] == []
    assert len(list(tmp_path.iterdir())) == 6


TARGETS = ["東京", "大阪", "a/b", "a:b", "fleet", "ü1", "ü2"]


@pytest.mark.live
def test_fleet_targets_whose_names_reduce_alike_keep_their_reports(
    lab_factory: Any, tmp_path: Path
) -> None:
    """Targets alternate between two labs, so a report in the wrong name shows the
    other lab's port."""
    two_labs = [lab_factory("scenario-b"), lab_factory("scenario-b")]
    lab_of = {name: two_labs[i % 2] for i, name in enumerate(TARGETS)}
    lines = [f"  - {{name: '{n}', server: '{lab.url}'}}" for n, lab in lab_of.items()]
    targets = tmp_path / "targets.yaml"
    targets.write_text(
        f"concurrency: {len(TARGETS)}\n"
        "defaults: {user: gpuaudit-lab, password_env: LAB_PW}\n"
        "targets:\n" + "\n".join(lines) + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "reports"
    result = CliRunner().invoke(
        main,
        ["scan", "--targets", str(targets), "-o", str(out)],
        env={"LAB_PW": two_labs[0].password},
    )
    assert result.exit_code in (ExitCode.OK, ExitCode.FINDINGS), result.output
    (summary_json,) = [
        p for p in out.iterdir() if re.fullmatch(r"gpuaudit-fleet-\w+\.json", p.name)
    ]
    summary = json.loads(summary_json.read_text(encoding="utf-8"))
    assert [t["name"] for t in summary["targets"]] == TARGETS
    stems = set()
    for entry in summary["targets"]:
        name, reports = entry["name"], entry["reports"]
        assert len(reports) == 3, entry
        (stem,) = {r.split(".")[0] for r in reports}
        assert not re.search(r"Z-\d+$", stem), stem  # a name of its own, not a counter
        stems.add(stem)
        data = json.loads((out / f"{stem}.json").read_text(encoding="utf-8"))
        assert data["source"]["server"].endswith(f":{lab_of[name].port}"), name
        html = (out / f"{stem}.html").read_text(encoding="utf-8")
        assert f":{lab_of[name].port}" in html and html.rstrip().endswith("</html>")
    assert len(stems) == len(TARGETS)
    summary_stem = summary_json.name.removesuffix(".json")
    assert summary_stem not in stems
    assert "<html" in (out / f"{summary_stem}.html").read_text(encoding="utf-8")
    expected = {f"{s}.{f}" for s in stems | {summary_stem} for f in SET}
    assert {p.name for p in out.iterdir()} == expected
