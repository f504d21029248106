"""Conventions every subcommand keeps: format lists, `-o -`, help texts, exit codes in help."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from gpuaudit.cli.main import main
from gpuaudit.errors import ExitCode

KNOWN_FORMATS = ("html", "xlsx", "json", "junit", "sarif")  # README.md, "--format"


ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def written(folder: Path) -> list[str]:
    """The report extensions in ``folder``, sorted."""
    return sorted(p.name.split(".", 1)[1] for p in folder.glob("gpuaudit-*"))


@pytest.mark.parametrize(
    "formats",
    [
        ["-f", "html,json"],
        ["-f", "HTML", "-f", "Json"],
        ["--format", " html , JSON "],
        ["-f", "html", "-f", "json,html"],
    ],
)
def test_format_takes_comma_lists_in_any_case(tmp_path: Path, formats: list[str]) -> None:
    result = run("scan", "--demo", "-o", str(tmp_path), *formats)
    assert result.exit_code == ExitCode.FINDINGS, result.output  # the demo fails high
    assert written(tmp_path) == ["html", "json"]


@pytest.mark.parametrize("formats", [["-f", "pdf"], ["-f", "html,pdf"], ["-f", "html,"]])
def test_an_unknown_format_is_a_usage_error_naming_the_known_ones(
    tmp_path: Path, formats: list[str]
) -> None:
    result = run("scan", "--demo", "-o", str(tmp_path), *formats)
    assert result.exit_code == 2, result.output
    assert "Usage:" in result.output
    for name in KNOWN_FORMATS:
        assert name in result.output.split("Error:", 1)[1]
    assert not tmp_path.exists() or written(tmp_path) == []


@pytest.mark.parametrize("fmt", ["JSON", "Text"])
def test_diff_format_takes_any_case(tmp_path: Path, fmt: str) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"findings": []}))
    result = run("diff", "--format", fmt, str(report), str(report))
    assert result.exit_code == ExitCode.OK, result.output
    if fmt == "JSON":
        assert json.loads(result.output)["new"] == []
    else:
        assert "No changes." in result.output


def test_rules_format_takes_any_case() -> None:
    result = run("rules", "--format", "JSON")
    assert result.exit_code == ExitCode.OK, result.output
    assert "HA-01" in {rule["id"] for rule in json.loads(result.output)}


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_dash_output_writes_the_one_report_to_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("scan", "--demo", "-o", "-", "-f", fmt)
    assert result.exit_code == ExitCode.FINDINGS, result.output
    report = json.loads(result.stdout)  # nothing else on standard output
    if fmt == "json":
        assert any(f["rule"] == "HA-01" and f["status"] == "fail" for f in report["findings"])
    else:
        assert report["runs"][0]["tool"]["driver"]["name"] == "gpuaudit"
    assert "FAIL: findings at or above high" in result.stderr  # the summary moves there
    assert list(tmp_path.iterdir()) == []  # no folder named "-", no file


@pytest.mark.parametrize(
    "command",
    [
        ["scan", "--demo"],
        # plan takes -o - as scan does (one check for both commands)
        ["plan", "--demo", "--change", str(ROOT / "docs" / "examples" / "plan-retire-host.yaml")],
    ],
    ids=["scan", "plan"],
)
@pytest.mark.parametrize(
    "formats",
    [[], ["-f", "html"], ["-f", "junit"], ["-f", "json,sarif"], ["-f", "json", "-f", "xlsx"]],
)
def test_dash_output_without_exactly_one_json_format_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], formats: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run(*command, "-o", "-", *formats)
    assert result.exit_code == 2, result.output
    assert "Usage:" in result.output and "standard output" in result.output
    assert "--format json or sarif" in result.output
    assert result.stdout == "" and list(tmp_path.iterdir()) == []


def test_dash_output_with_targets_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("targets.yaml").write_text("targets:\n  - {server: vc.example.com, user: audit}\n")
    result = run("scan", "--targets", "targets.yaml", "-o", "-", "-f", "json")
    assert result.exit_code == 2, result.output
    assert "--targets cannot be combined with -o -" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["targets.yaml"]


def test_collect_help_shows_only_the_exit_codes_of_collect() -> None:
    text = run("collect", "--help").output
    codes = text.split("Exit status:", 1)[1]
    listed = {line.split()[0] for line in codes.splitlines() if line.strip()[:1].isdigit()}
    assert listed == {"0", "2", "3", "70", "130", "143"}
    assert "129" in codes  # SIGHUP, beside SIGTERM
    assert "--fail-on" not in codes and "finding" not in codes


def _commands() -> list[tuple[str, click.Command]]:
    assert isinstance(main, click.Group)
    return [("gpuaudit", main), *((f"gpuaudit {n}", c) for n, c in main.commands.items())]


@pytest.mark.parametrize(("name", "command"), _commands(), ids=lambda v: str(v))
def test_every_option_has_help(name: str, command: click.Command) -> None:
    options = [p for p in command.params if isinstance(p, click.Option) and not p.hidden]
    assert options, name
    missing = [o.opts[0] for o in options if not (o.help or "").strip()]
    assert missing == [], f"{name}: options without help: {missing}"
