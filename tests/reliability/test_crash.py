"""An exception nobody expected is never exit status 1 (findings): it is 70, one line
naming what failed, the traceback in a crash file (and on standard error with -v), and
whatever was written before it is kept."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from gpuaudit.cli import crash
from gpuaudit.cli.console import Console
from gpuaudit.cli.main import main
from gpuaudit.errors import ExitCode
from gpuaudit.jobs import notify
from gpuaudit.jobs.history import Store
from gpuaudit.report import RENDERERS
from gpuaudit.verdict import check
from gpuaudit.vsphere import obtain

LINE = re.compile(
    r"^gpuaudit: crash: (?P<stage>.+) failed unexpectedly: RuntimeError: injected "
    r"\(a bug in gpuaudit; the traceback is in (?P<file>\S+)\)$"
)


def boom(*_args: Any, **_kwargs: Any) -> Any:
    raise RuntimeError("injected")


def run(tmp_path: Path, *args: str) -> Result:
    command = ["--no-color", "scan", "--demo", "-o", str(tmp_path / "out"), *args]
    return CliRunner().invoke(main, [*command, "--history", str(tmp_path / "h.sqlite")])


def crash_line(done: Result) -> re.Match[str]:
    lines = [line for line in done.stderr.splitlines() if line.startswith("gpuaudit: crash:")]
    assert len(lines) == 1, done.stderr
    found = LINE.match(lines[0])
    assert found, lines[0]
    return found


STAGES = [
    ("collect", obtain, "obtain_inventory", "collecting the inventory"),
    ("check", check, "run_checks", "checking the inventory"),
    ("console", Console, "print_summary", "printing the summary"),
]


@pytest.mark.parametrize(("_name", "owner", "attribute", "stage"), STAGES)
def test_an_unexpected_exception_in_a_stage_is_status_70_and_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    _name: str,
    owner: Any,
    attribute: str,
    stage: str,
) -> None:
    monkeypatch.setattr(owner, attribute, boom)
    done = run(tmp_path, "-f", "json")
    assert done.exit_code == ExitCode.CRASH == 70
    found = crash_line(done)
    assert found["stage"] == stage
    assert "Traceback" not in done.stderr  # only with -v, and in the file
    text = Path(found["file"]).read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in text and "RuntimeError: injected" in text
    assert Path(found["file"]).stat().st_mode & 0o077 == 0
    if attribute == "print_summary":  # reports and history written before it are kept
        assert len(list((tmp_path / "out").glob("gpuaudit-demo-*.json"))) == 1
        assert Store(str(tmp_path / "h.sqlite")).scans() != []


@pytest.mark.parametrize("fmt", ["html", "xlsx", "json", "junit", "sarif"])
def test_an_unexpected_exception_in_each_report_is_status_70(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    monkeypatch.setitem(RENDERERS, fmt, boom)
    done = run(tmp_path, "-f", fmt)
    assert done.exit_code == 70
    assert crash_line(done)["stage"] == f"writing the {fmt} report"


def test_with_v_the_traceback_is_on_standard_error_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(check, "run_checks", boom)
    done = run(tmp_path, "-v", "-f", "json")
    assert done.exit_code == 70
    assert "Traceback (most recent call last)" in done.stderr
    assert crash_line(done)["stage"] == "checking the inventory"


def test_a_crash_file_that_cannot_be_written_leaves_the_traceback_on_standard_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(check, "run_checks", boom)
    monkeypatch.setattr(crash, "write_crash_file", lambda *_a, **_k: None)
    done = run(tmp_path, "-f", "json")
    assert done.exit_code == 70
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.rstrip().endswith(
        "checking the inventory failed unexpectedly: RuntimeError: injected "
        "(a bug in gpuaudit; run with -v for the traceback)"
    )


def test_an_unexpected_exception_in_the_optional_parts_is_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """History and notifications never cost the audit: a warning each, the scan's status."""
    monkeypatch.setattr(Store, "record", boom)
    monkeypatch.setattr(notify, "post_webhook", boom)
    done = run(tmp_path, "-f", "json", "--notify", "https://hooks.example.com/T0K3N")
    assert done.exit_code == 1  # the demo's findings, as without either
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: history: cannot record the scan in {tmp_path / 'h.sqlite'}: "
        "RuntimeError: injected",
        "warning: notification to https://hooks.example.com failed: injected",
    ]
    assert len(list((tmp_path / "out").glob("gpuaudit-demo-*.json"))) == 1


def commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every command of the tree, as the words that name it, nested groups walked."""
    found = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            if command.invoke_without_command:  # a command of its own too (history)
                found.append(((*path, name), command))
            found += commands(command, (*path, name))
        else:
            found.append(((*path, name), command))
    return found


def arguments(command: click.Command) -> list[str]:
    """Values for the command's required parameters, enough for click to call it."""
    given: list[str] = []
    for param in command.params:
        if isinstance(param, click.Argument):
            given.append("x.json")
        elif param.required:
            number = isinstance(param.type, click.types.IntParamType)
            given += [param.opts[0], "1" if number else "x.json"]
    return given


def test_the_command_tree_is_walked_whole() -> None:
    names = {" ".join(path) for path, _ in commands(main)}
    assert {"scan", "collect", "diff", "history", "rules", "baseline create"} <= names
    assert "policy waive" in names


@pytest.mark.parametrize(
    ("path", "command"), commands(main), ids=lambda p: " ".join(p) if isinstance(p, tuple) else ""
)
def test_every_command_ends_an_unexpected_exception_with_status_70(
    monkeypatch: pytest.MonkeyPatch, path: tuple[str, ...], command: click.Command
) -> None:
    monkeypatch.setattr(command, "callback", boom)
    done = CliRunner().invoke(main, [*path, *arguments(command)])
    assert done.exit_code == 70, (done.output, done.exception)
    assert crash_line(done)["stage"] == "gpuaudit"


def test_an_unexpected_exception_before_the_command_runs_is_status_70(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(Console, "configure", boom)  # the group's own set-up
    done = CliRunner().invoke(main, ["rules"])
    assert done.exit_code == 70
    crash_line(done)


def test_the_crash_file_is_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuaudit.common.debuglog import add_secret

    add_secret("crash-s3cret-value")
    path = crash.write_crash_file(RuntimeError("with crash-s3cret-value inside"), "scan")
    assert path is not None
    assert "crash-s3cret-value" not in path.read_text(encoding="utf-8")
    line = crash.crash_line(RuntimeError("crash-s3cret-value"), path)
    assert "crash-s3cret-value" not in line and json.dumps(line)
