"""Fleet scans: a targets file, bounded concurrency, one target's failure kept to itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuaudit.cli.main import main
from gpuaudit.errors import ExitCode
from gpuaudit.jobs.fleet import TargetsError, load_targets
from tests.conftest import unused_port


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "targets.yaml"
    path.write_text(text)
    return path


def test_targets_file_with_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "concurrency: 2\n"
        "defaults: {user: audit, password_env: VC_PASSWORD, ca_file: ca.pem}\n"
        "targets:\n"
        "  - server: vc01.example.com\n"
        "  - {server: vc02.example.com, name: east, user: other, insecure: true}\n",
    )
    fleet = load_targets(path)
    assert fleet.concurrency == 2
    first, second = fleet.targets
    assert (first.name, first.user, first.password_env) == (
        "vc01.example.com",
        "audit",
        "VC_PASSWORD",
    )
    assert first.ca_file == str(tmp_path / "ca.pem")  # relative to the targets file
    assert (second.name, second.user, second.insecure) == ("east", "other", True)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("targets:\n  - {server: a, user: u, colour: red}\n", 2, "unknown key 'colour'"),
        ("targets:\n  - {user: u}\n", 2, "no server"),
        ("targets:\n  - {server: a}\n", 2, "no user"),
        ("concurrency: 0\ntargets: [{server: a, user: u}]\n", 1, "whole number of 1 or more"),
        ("targets: []\n", 1, "the list is empty"),
        ("targets:\n  - {server: a, user: u}\n  - {server: a, user: u}\n", 3, "second target"),
        ("targets: [{server: a, user: u, insecure: maybe}]\n", 1, "expected true or false"),
        ("targets: [\n", 2, "not valid YAML"),
    ],
)
def test_bad_targets_file(tmp_path: Path, text: str, line: int, words: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(TargetsError) as caught:
        load_targets(path)
    assert caught.value.line == line
    assert words in str(caught.value) and str(path) in str(caught.value)
    result = CliRunner().invoke(main, ["scan", "--targets", str(path)])
    assert result.exit_code == ExitCode.INPUT
    assert f"{path}:{line}" in result.output


def test_targets_excludes_a_single_server(tmp_path: Path) -> None:
    path = write(tmp_path, "targets: [{server: a, user: u}]\n")
    result = CliRunner().invoke(main, ["scan", "--targets", str(path), "--demo"])
    assert result.exit_code == ExitCode.INPUT
    assert "cannot be combined with --demo" in result.output


@pytest.mark.live
def test_fleet_with_one_target_down(lab_factory: Any, tmp_path: Path) -> None:
    labs = [lab_factory("scenario-b"), lab_factory("scenario-c")]
    down = f"http://127.0.0.1:{unused_port()}/sdk"
    targets = "concurrency: 3\ntargets:\n"
    for i, lab in enumerate(labs):
        targets += (
            f"  - {{name: lab{i}, server: '{lab.url}', user: {lab.user}, password_env: LAB_PW}}\n"
        )
    targets += f"  - {{name: down, server: '{down}', user: audit, password_env: LAB_PW}}\n"
    path = write(tmp_path, targets)
    out = tmp_path / "reports"
    result = CliRunner().invoke(
        main,
        ["scan", "--targets", str(path), "--output-dir", str(out)],
        env={"LAB_PW": labs[0].password},
    )
    assert result.exit_code == ExitCode.CONNECT, result.output
    for name in ("lab0", "lab1"):
        assert len(list(out.glob(f"gpuaudit-{name}-*.html"))) == 1
        assert len(list(out.glob(f"gpuaudit-{name}-*.json"))) == 1
    assert not list(out.glob("gpuaudit-down-*"))
    summary = json.loads(next(out.glob("gpuaudit-fleet-*.json")).read_text())
    by_name = {t["name"]: t for t in summary["targets"]}
    assert by_name["down"]["verdict"] == "ERROR"
    assert "connection refused" in by_name["down"]["error"]
    assert by_name["lab0"]["verdict"] in ("PASS", "FAIL") and by_name["lab0"]["reports"]
    assert summary["exit_code"] == ExitCode.CONNECT
    page = next(out.glob("gpuaudit-fleet-*.html")).read_text()
    assert "down" in page and "connection refused" in page
    assert len(list(out.glob("gpuaudit-fleet-*.xlsx"))) == 1
