"""Global options: before or after the subcommand, -V, and log lines in UTC, as text or JSON."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gpuaudit import __version__
from gpuaudit.cli.main import main
from gpuaudit.common import debuglog
from gpuaudit.vsphere import connect, obtain

ROOT = Path(__file__).resolve().parents[2]
# Fourteen hours ahead of UTC: a local time there is never taken for UTC.
FAR_ZONE = "Pacific/Kiritimati"


@contextlib.contextmanager
def as_a_process() -> Iterator[None]:
    """The root logger without the test runner's handlers, as in a process of its own.

    gpuaudit, like logging.basicConfig, leaves the logging of a process that set up
    its own alone; pytest's handlers are put back before pytest removes them.
    """
    root = logging.getLogger()
    theirs = root.handlers[:]
    for handler in theirs:
        root.removeHandler(handler)
    try:
        yield
    finally:
        for handler in theirs:
            root.addHandler(handler)


def run(*args: str, env: dict[str, str | None] | None = None) -> Result:
    with as_a_process():
        return CliRunner().invoke(main, list(args), env=env)


def demo(tmp_path: Path, *args: str) -> Result:
    """``args`` (a subcommand among them) followed by a scan of the demo estate."""
    return run(*args, "--demo", "-o", str(tmp_path), "-f", "json")


@pytest.fixture(autouse=True)
def no_secrets_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a fresh process: no password registered by an earlier replay ("replay")."""
    monkeypatch.setattr(debuglog, "_secrets", set())


def utc_stamp(text: str) -> dt.datetime:
    """A log line's time, which must be UTC written with its zone, and about now."""
    assert text.endswith("Z"), text
    when = dt.datetime.fromisoformat(text)
    assert when.utcoffset() == dt.timedelta(0)
    assert abs(dt.datetime.now(dt.UTC) - when) < dt.timedelta(minutes=5), text
    return when


@pytest.mark.parametrize(
    "args",
    [["scan", "-q"], ["-q", "scan"], ["scan", "--quiet"]],
)
def test_quiet_before_or_after_the_subcommand(tmp_path: Path, args: list[str]) -> None:
    result = demo(tmp_path, *args)
    assert result.exit_code == 1, result.output
    assert result.stdout == "" and result.stderr == ""
    assert list(tmp_path.glob("gpuaudit-*.json"))  # the reports are still written


@pytest.mark.parametrize("args", [["scan", "-v"], ["-v", "scan"]])
def test_verbose_before_or_after_the_subcommand(tmp_path: Path, args: list[str]) -> None:
    result = demo(tmp_path, *args)
    assert result.exit_code == 1, result.output
    assert " DEBUG RetrievePropertiesEx answered in " in result.stderr, result.stderr


def test_verbose_counts_on_both_sides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wires: list[bool] = []
    monkeypatch.setattr(debuglog, "install", lambda wire: wires.append(wire))
    assert demo(tmp_path, "-v", "scan", "-v").exit_code == 1
    assert wires[-1] is True  # -v and -v make -vv: the HTTP traffic is logged


def test_global_options_after_other_subcommands(tmp_path: Path) -> None:
    assert run("rules", "-q", "--format", "json").exit_code == 0
    assert run("rules", "--no-color", "--log-format", "json").exit_code == 0


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(flag: str) -> None:
    result = run(flag)
    assert result.exit_code == 0
    assert result.output == f"gpuaudit, version {__version__}\n"


def test_help_lists_the_global_options() -> None:
    text = run("--help").output
    for option in ("-V, --version", "-v, --verbose", "-q, --quiet", "--no-color", "--log-format"):
        assert option in text, option
    assert "--log-format" in run("scan", "--help").output


def test_log_lines_are_utc_whatever_tz_says(tmp_path: Path) -> None:
    env = {**os.environ, "TZ": FAR_ZONE}
    command = [sys.executable, "-m", "gpuaudit", "scan", "--demo", "-o", str(tmp_path)]
    done = subprocess.run(
        [*command, "-f", "json"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert lines and "INFO replaying demo.yaml" in lines[0], lines
    for line in lines:
        stamp, level, _ = line.split(" ", 2)
        assert level in ("INFO", "WARNING"), line
        assert len(stamp) == len("2026-12-01T02:45:00Z"), line
        utc_stamp(stamp)


@pytest.mark.parametrize(
    "args", [["--log-format", "json", "scan"], ["scan", "--log-format", "json"]]
)
def test_json_log_lines(tmp_path: Path, args: list[str]) -> None:
    result = demo(tmp_path, *args)
    assert result.exit_code == 1, result.output
    entries = [json.loads(line) for line in result.stderr.splitlines()]
    assert entries and all(set(e) == {"time", "level", "logger", "message"} for e in entries)
    assert entries[0]["message"] == "replaying demo.yaml" and entries[0]["level"] == "INFO"
    assert {e["logger"] for e in entries} == {"gpuaudit"}
    for entry in entries:
        utc_stamp(entry["time"])
    assert "\x1b" not in result.output


def test_json_log_lines_are_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "Tr0ub4dor&3-console"
    debuglog.add_secret(secret)

    def refused(*_args: Any, **_kwargs: Any) -> None:
        log = logging.getLogger("gpuaudit.connect")
        log.warning("login as audit with %s failed", secret)
        try:
            raise ValueError(f"<password>{secret}</password>")
        except ValueError:
            log.exception("the answer was")
        raise connect.ConnectError("login failed")

    monkeypatch.setattr(obtain, "obtain_inventory", refused)
    result = demo(tmp_path, "scan", "--log-format", "json")
    assert result.exit_code == 3, result.output
    entries = [json.loads(line) for line in result.stderr.splitlines()[:-1]]
    assert entries[0]["message"] == "login as audit with ***** failed"
    assert (
        entries[1]["level"] == "ERROR" and "<password>*****</password>" in entries[1]["exception"]
    )
    assert secret not in result.stderr
    assert result.stderr.splitlines()[-1] == "gpuaudit: error: login failed"


def test_a_warning_is_a_json_log_line_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "password"
    secret.write_text("not-a-real-password\n", encoding="utf-8")
    secret.chmod(0o644)

    def unreachable(*_args: Any, **_kwargs: Any) -> None:
        raise connect.ConnectError("cannot connect")

    monkeypatch.setattr(obtain, "obtain_inventory", unreachable)
    server = ("--server", "http://127.0.0.1:9/sdk", "--user", "audit")
    result = run(
        "collect", *server, "--password-file", str(secret), "--log-format", "json",
        env={"GPUAUDIT_PASSWORD": None, "GOVC_PASSWORD": None, "GOVC_URL": None},
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    *lines, error = result.stderr.splitlines()
    warning = json.loads(lines[0])
    assert warning["level"] == "WARNING", lines
    assert warning["message"].startswith(f"password file {secret} is readable by group or others")
    assert error == "gpuaudit: error: cannot connect"


def test_a_host_process_keeps_its_own_logging(tmp_path: Path) -> None:
    root = logging.getLogger()
    before = (root.handlers[:], root.level)
    result = CliRunner().invoke(main, ["scan", "--demo", "-o", str(tmp_path), "-f", "json"])
    assert result.exit_code == 1, result.output
    assert result.stderr == ""  # the test runner's handlers took the log records
    assert (root.handlers, root.level) == before
