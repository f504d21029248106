"""The console: a live line with counts on a terminal, a few plain log lines anywhere
else, colour only where it is wanted, and a summary that names the failed rules."""

from __future__ import annotations

import io
import json
import logging
import os
import pty
import re
import select
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gpuaudit.cli import console
from gpuaudit.cli.main import main
from gpuaudit.common.progress import Step
from gpuaudit.jobs.outcome import FailedRule, Summary
from gpuaudit.results import SEVERITIES, Judgement
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.cli.test_global_options import as_a_process

ROOT = Path(__file__).resolve().parents[2]
SGR = re.compile(r"\x1b\[[0-9;]*m")  # a colour or bold: Select Graphic Rendition
ELAPSED = re.compile(r"(?<![\d:])\d+:\d\d:\d\d(?![\d:])")
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (INFO|WARNING) \S")
RULE_LINE = re.compile(r"^  (critical|high|medium|low|info) +(\S+) +(.+) \((\d+) objects?\)$")


def run(*args: str, env: dict[str, str | None] | None = None) -> Result:
    with as_a_process():
        return CliRunner().invoke(main, list(args), env=env)


def scan_on_a_terminal(tmp_path: Path, *extra: str, env: dict[str, str] | None = None) -> str:
    """`gpuaudit scan --demo` with stdout and stderr on a pseudo-terminal: all it wrote."""
    command = [sys.executable, "-m", "gpuaudit", "scan", "--demo", "-o", str(tmp_path)]
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environ.update({"TERM": "xterm", **(env or {})})
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [*command, "-f", "json", *extra], stdout=follower, stderr=follower, env=environ, cwd=ROOT
    )
    os.close(follower)
    chunks = []
    while select.select([leader], [], [], 120)[0]:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# -- progress ---------------------------------------------------------------------------


def test_a_terminal_shows_each_phase_with_its_counts_and_elapsed_time(tmp_path: Path) -> None:
    shown = scan_on_a_terminal(tmp_path)
    assert "simulating host failures" in shown and "/3 clusters" in shown, shown
    assert re.search(r"reading GPU counters +\d+/\d+ hosts", shown), shown
    assert ELAPSED.search(shown), shown


def test_the_live_line_counts_objects_and_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    shown = console.Console(color=False)
    shown.progress("reading inventory")
    shown.progress(Step("reading inventory", 1500, unit="objects", detail="3 pages"))
    shown.done()
    text = terminal.getvalue()
    assert "reading inventory" in text and "1,500 objects (3 pages)" in text, text
    assert ELAPSED.search(text), text


def test_collection_and_checks_report_their_counts() -> None:
    said: list[str | Step] = []
    inventory = obtain.obtain_inventory(obtain.demo_source(), progress=said.append)
    steps = [s for s in said if isinstance(s, Step)]
    reading = [s for s in steps if s.phase == "reading inventory"]
    assert reading and reading[-1].unit == "objects" and reading[-1].detail == "1 page"
    assert "read 40 objects" in said and reading[-1].done == 40
    gpu_hosts = [h for h in inventory.hosts if h.gpus and h.connected]
    counters = [s for s in steps if s.phase == "reading GPU counters"]
    assert counters[0].done == 0 and counters[-1].done == counters[-1].total == len(gpu_hosts)

    simulated: list[str | Step] = []
    result = run_checks(inventory, progress=simulated.append)
    totals = {(s.done, s.total) for s in simulated if isinstance(s, Step)}
    n = len(result.simulations)
    assert n == 3 and totals == {(i, n) for i in range(n + 1)}


def test_off_a_terminal_phases_are_a_few_plain_log_lines(tmp_path: Path) -> None:
    result = run("scan", "--demo", "-o", str(tmp_path), "-f", "json")
    assert result.exit_code == 1, result.output
    lines = result.stderr.splitlines()
    assert "\x1b" not in result.output and "\r" not in result.output
    assert lines and all(LOG_LINE.match(line) for line in lines), lines
    assert any(line.endswith("INFO simulating host failures: 3/3 clusters") for line in lines)
    assert len(lines) < 15, lines  # phases, not objects nor pages


def test_counts_off_a_terminal_are_logged_at_the_end_and_every_ten_seconds(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    clock = iter(i / 100 for i in range(2001))  # 2,000 steps over 20 seconds
    monkeypatch.setattr(console.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    shown = console.Console()
    with caplog.at_level(logging.INFO, logger="gpuaudit"):
        for done in range(2001):
            shown.progress(Step("reading", done, 2000, "objects"))
    assert [r.getMessage() for r in caplog.records] == [
        "reading: 1,000/2,000 objects",
        "reading: 2,000/2,000 objects",
    ]


# -- colour -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "extra", "coloured"),
    [
        ({}, [], True),
        ({"NO_COLOR": "1"}, [], False),
        ({}, ["--no-color"], False),
        ({"NO_COLOR": ""}, [], True),  # https://no-color.org: set and not empty
    ],
)
def test_colour_on_a_terminal_unless_refused(
    tmp_path: Path, env: dict[str, str], extra: list[str], coloured: bool
) -> None:
    shown = scan_on_a_terminal(tmp_path, *extra, env=env)
    assert "FAIL: findings at or above high" in shown, shown
    assert bool(SGR.search(shown)) is coloured, shown


@pytest.mark.parametrize(
    ("args", "env", "coloured"),
    [
        (["scan", "--demo"], {"FORCE_COLOR": "1"}, True),
        (["scan", "--demo"], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        (["--no-color", "scan", "--demo"], {"FORCE_COLOR": "1"}, False),
        (["scan", "--demo", "--no-color"], {"FORCE_COLOR": "1"}, False),
        (["scan", "--demo"], {"FORCE_COLOR": None, "NO_COLOR": None}, False),  # not a terminal
    ],
)
def test_colour_with_click_runner(
    tmp_path: Path, args: list[str], env: dict[str, str | None], coloured: bool
) -> None:
    result = run(*args, "-o", str(tmp_path), "-f", "json", env=env)
    assert result.exit_code == 1, result.output
    assert "FAIL: findings at or above high" in result.stdout
    assert bool(SGR.search(result.stdout)) is coloured, result.stdout


@pytest.mark.parametrize(("env", "coloured"), [({}, False), ({"FORCE_COLOR": "1"}, True)])
def test_a_warning_into_a_pipe_has_no_colour(
    tmp_path: Path, env: dict[str, str], coloured: bool
) -> None:
    """Standard error is a real pipe: the warning is plain text, unless FORCE_COLOR asks."""
    with socket.socket() as closed:  # bound and never listening: a connection is refused
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/hook"
        environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
        command = [sys.executable, "-m", "gpuaudit", "scan", "--demo", "-o", str(tmp_path)]
        proc = subprocess.run(
            [*command, "-f", "json", "--no-history", "--notify", url],
            capture_output=True,
            text=True,
            env={**environ, "TERM": "xterm", **env},
            cwd=ROOT,
            timeout=120,
        )
    warnings = [line for line in proc.stderr.splitlines() if "warning: notification to" in line]
    assert len(warnings) == 1, proc.stderr
    assert bool(SGR.search(warnings[0])) is coloured, warnings


# -- the summary ------------------------------------------------------------------------


def _demo_report(tmp_path: Path) -> tuple[Result, dict[str, Any]]:
    result = run("scan", "--demo", "-o", str(tmp_path), "-f", "json")
    report = json.loads(next(tmp_path.glob("gpuaudit-*.json")).read_text())
    return result, report


def test_the_summary_names_the_failed_rules_worst_first(tmp_path: Path) -> None:
    result, report = _demo_report(tmp_path)
    # An info finding is a notice, counted on a line of its own, never as failed.
    failed = [f for f in report["findings"] if f["status"] == "fail" and f["severity"] != "info"]
    notices = sum(f["status"] == "fail" and f["severity"] == "info" for f in report["findings"])
    objects = Counter(f["rule"] for f in failed)
    worst = {
        rule: min((f["severity"] for f in failed if f["rule"] == rule), key=SEVERITIES.index)
        for rule in objects
    }
    titles = {r["id"]: r["title"] for r in report["rules"]}
    shown = [m.groups() for line in result.stdout.splitlines() if (m := RULE_LINE.match(line))]
    assert len(objects) > 10 and len(shown) == 10, result.stdout
    for severity, rule, title, count in shown:
        assert (severity, title, int(count)) == (worst[rule], titles[rule], objects[rule])
    ranks = [SEVERITIES.index(severity) for severity, *_ in shown]
    assert ranks == sorted(ranks) and ranks[0] == min(SEVERITIES.index(s) for s in worst.values())
    assert f"  ... and {len(objects) - 10} more rules\n" in result.stdout
    lines = result.stdout.splitlines()
    assert lines[0].startswith("failed findings: ") and lines[12].startswith("  ... and ")
    assert lines[1] == f"notices (info): {notices}" and notices > 0
    # The demo's findings not proven are counted apart, before the passes.
    unproven = Counter(f["severity"] for f in report["findings"] if f["status"] == "unproven")
    assert lines[13].startswith(f"not proven: {sum(unproven.values())} (")
    assert lines[14].startswith("passed: ")


def test_with_a_baseline_each_rule_says_how_many_are_new(tmp_path: Path) -> None:
    _, report = _demo_report(tmp_path / "first")
    kept = [f for f in report["findings"] if f["rule"] != "HA-05"]
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({**report, "findings": kept}))
    result = run("scan", "--demo", "-o", str(tmp_path / "second"), "--baseline", str(baseline))
    assert "HA-05    After the loss of its host" in result.stdout
    line = next(t for t in result.stdout.splitlines() if " HA-05 " in t)
    assert line.endswith("(6 objects, 6 new)"), line
    assert next(t for t in result.stdout.splitlines() if " HA-08 " in t).endswith(", 0 new)")


def _summary(clusters: int, failing: int, rules: int) -> Summary:
    names = [f"gpu-{i:02d}" for i in range(clusters)]
    return Summary(
        threshold="high",
        judgement=Judgement("pass", "high"),
        failed={s: 0 for s in SEVERITIES},
        designs=dict.fromkeys(names, "A"),
        tolerates=dict.fromkeys(names, 1),
        failing_clusters=set(names[:failing]),
        failed_rules=[FailedRule(f"R-{i:02d}", f"rule {i}", "low", 2) for i in range(rules)],
    )


def test_design_lines_only_for_clusters_that_fail(capsys: pytest.CaptureFixture[str]) -> None:
    console.print_summary(_summary(clusters=5, failing=2, rules=1), [], color=False, quiet=False)
    printed = capsys.readouterr().out
    assert re.findall(r"^cluster (\S+): design A, tolerates N\+1$", printed, re.M) == [
        "gpu-00",
        "gpu-01",
    ]
    assert "  low      R-00     rule 0 (2 objects)\n" in printed and "more" not in printed


def test_a_large_estate_summary_is_capped(capsys: pytest.CaptureFixture[str]) -> None:
    console.print_summary(_summary(clusters=64, failing=64, rules=40), [], color=False, quiet=False)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 + 10 + 1 + 1 + 10 + 1 + 1, lines
    assert "  ... and 30 more rules" in lines and "  ... and 54 more clusters" in lines
    assert lines[-1] == "PASS: nothing at or above high"
