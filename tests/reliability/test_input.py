"""Bad input files through the command line: exit status 2, one message that names
the file (and the line where there is one), never a traceback, never a report."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gpuaudit.cli.main import main
from gpuaudit.errors import ExitCode
from gpuaudit.inventory import SCHEMA_VERSION
from tests.conftest import CASSETTES
from tests.support.report_fixtures import realistic_result

CASSETTE = CASSETTES / "scenario-b.yaml"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"GOVC_URL": None})


def assert_refused(
    result: Result, path: Path, line: int | None, *words: str, once: bool = True
) -> None:
    assert result.exit_code == ExitCode.INPUT, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuaudit: error: "), lines
    message = lines[0]
    assert str(path) in message
    assert message.count(str(path)) == 1 or not once, message  # named once
    if line is not None:
        assert f"{path}:{line}:" in message or f"line {line}" in message, message
    for word in words:
        assert word in message, message


@pytest.fixture(scope="module")
def inventory_text() -> str:
    return realistic_result().inventory.to_json()


# -- policy and waivers -------------------------------------------------------

WAIVER = "waivers:\n  - {rule: HA-01, object: c1, reason: r, owner: o, expires: %s}\n"
POLICIES = [
    ("bad YAML", "intent:\n  stateless: [true\n", 3, ["not valid YAML"]),
    ("unknown key", "version: 1\ncolour: red\n", 2, ["unknown key 'colour'"]),
    ("wrong type", "intent:\n  stateless: maybe\n", 2, ["expected true or false"]),
    ("wrong number", "intent: {max_restart_minutes: soon}\n", 1, ["number"]),
    ("invalid date", WAIVER % "2027-02-30", 2, ["expires", "YYYY-MM-DD"]),
    ("not a date", WAIVER % "next-year", 2, ["expires", "YYYY-MM-DD"]),
    ("unknown rule", WAIVER.replace("HA-01", "HA-99") % "2027-01-01", 2, ["HA-99"]),
    ("missing field", "waivers:\n  - {rule: HA-01, object: c1}\n", 2, ["missing"]),
    ("a list", "- 1\n- 2\n", 1, ["expected a mapping"]),
    ("nested deep", "[" * 5000, None, ["not valid YAML"]),
]


@pytest.mark.parametrize(
    ("text", "line", "words"), [pytest.param(*c[1:], id=c[0]) for c in POLICIES]
)
def test_bad_policy(
    tmp_path: Path, inventory_text: str, text: str, line: int | None, words: list[str]
) -> None:
    inventory = tmp_path / "inventory.json"
    inventory.write_text(inventory_text)
    policy = tmp_path / "policy.yaml"
    policy.write_text(text)
    out = tmp_path / "out"
    result = run("scan", "--from", str(inventory), "--policy", str(policy), "-o", str(out))
    assert_refused(result, policy, line, *words)
    assert not out.exists()


def test_policy_that_is_not_text(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_bytes(b"\xff\xfe\x00garbage")
    result = run("scan", "--demo", "--policy", str(policy), "-o", str(tmp_path / "out"))
    assert_refused(result, policy, None, "cannot read")


# -- targets -------------------------------------------------------------------

TARGETS = [
    ("bad YAML", "targets: [\n", 2, ["not valid YAML"]),
    ("unknown key", "targets:\n  - {server: a, user: u, colour: red}\n", 2, ["unknown key"]),
    ("wrong type", "concurrency: many\ntargets: [{server: a, user: u}]\n", 1, ["whole number"]),
    ("timeout", "targets: [{server: a, user: u, timeout: soon}]\n", 1, ["timeout"]),
    ("nested deep", "targets: " + "[" * 5000, None, ["not valid YAML"]),
    ("empty", "", None, ["empty"]),
]


@pytest.mark.parametrize(
    ("text", "line", "words"), [pytest.param(*c[1:], id=c[0]) for c in TARGETS]
)
def test_bad_targets(tmp_path: Path, text: str, line: int | None, words: list[str]) -> None:
    targets = tmp_path / "targets.yaml"
    targets.write_text(text)
    out = tmp_path / "out"
    result = run("scan", "--targets", str(targets), "-o", str(out))
    assert_refused(result, targets, line, *words)
    assert not out.exists()


# -- inventories -----------------------------------------------------------------


def mutate(text: str, change: Any) -> str:
    data = json.loads(text)
    return json.dumps(change(data), indent=1)


INVENTORIES = [
    ("truncated", lambda t: t[: len(t) // 3], True, ["not valid JSON"]),
    ("not JSON", lambda t: "inventory: yes\n", True, ["not valid JSON"]),
    ("not an object", lambda t: "[1, 2, 3]", False, ["a JSON object"]),
    (
        "future schema",
        lambda t: mutate(t, lambda d: {**d, "schema_version": SCHEMA_VERSION + 1}),
        False,
        ["newer than this gpuaudit", "upgrade"],
    ),
    ("no schema", lambda t: mutate(t, lambda d: {"hosts": []}), False, ["schema_version"]),
    (
        "wrong type",
        lambda t: mutate(t, lambda d: {**d, "hosts": [{**d["hosts"][0], "cpu_cores": "many"}]}),
        False,
        ["inventory.hosts[0].cpu_cores", "whole number"],
    ),
    ("unknown key", lambda t: mutate(t, lambda d: {**d, "colour": 1}), False, ["'colour'"]),
    ("nested deep", lambda t: "[" * 100_000, False, ["nested too deeply"]),
    ("huge number", lambda t: '{"schema_version": 1' + "0" * 5000 + "}", False, ["digits"]),
    ("NaN", lambda t: re.sub(r'"schema_version": \d+', '"schema_version": NaN', t), False, ["NaN"]),
]


@pytest.mark.parametrize(
    ("change", "has_line", "words"), [pytest.param(*c[1:], id=c[0]) for c in INVENTORIES]
)
def test_bad_inventory(
    tmp_path: Path, inventory_text: str, change: Any, has_line: bool, words: list[str]
) -> None:
    inventory = tmp_path / "inventory.json"
    inventory.write_text(change(inventory_text))
    out = tmp_path / "out"
    result = run("scan", "--from", str(inventory), "-o", str(out))
    assert_refused(result, inventory, None, *words)
    if has_line:
        assert "line " in result.stderr
    assert not out.exists()


def test_inventory_that_is_not_utf8(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.json"
    inventory.write_bytes(b'{"schema_version": 1, "source": "\xff"}')
    result = run("scan", "--from", str(inventory), "-o", str(tmp_path / "out"))
    assert_refused(result, inventory, None, "cannot read")


def test_bad_baseline_nested_deep(tmp_path: Path, inventory_text: str) -> None:
    inventory = tmp_path / "inventory.json"
    inventory.write_text(inventory_text)
    baseline = tmp_path / "baseline.json"
    baseline.write_text("[" * 100_000)
    result = run("scan", "--from", str(inventory), "--baseline", str(baseline), "-o", str(tmp_path))
    assert_refused(result, baseline, None, "nested too deeply")


# -- cassettes -------------------------------------------------------------------


def cut_interactions(text: str, keep: int) -> str:
    """The cassette with only its first ``keep`` interactions (a clean cut)."""
    marker = "\n- request:"
    starts = [i for i in range(len(text)) if text.startswith(marker, i)]
    return text[: starts[keep]] + "\nversion: 1\n" if keep < len(starts) else text


CASSETTES_BAD = [
    ("truncated mid-line", lambda t: t[: len(t) // 2], ["not valid YAML", "truncated"]),
    ("bad YAML", lambda t: "interactions: [\n  {request: \n", ["not valid YAML"]),
    ("not a cassette", lambda t: "colour: blue\n", ["not a cassette"]),
    ("a list", lambda t: "- 1\n- 2\n", ["not a cassette"]),
    ("empty", lambda t: "", ["not a cassette"]),
    ("no response", lambda t: "interactions:\n- request: {uri: x}\n", ["interaction 1"]),
    (
        "missing calls",
        lambda t: cut_interactions(t, 3),
        ["does not hold"],
    ),
    ("nested deep", lambda t: "[" * 5000, ["not valid YAML"]),
]


@pytest.mark.parametrize(
    ("change", "words"), [pytest.param(*c[1:], id=c[0]) for c in CASSETTES_BAD]
)
def test_bad_cassette(tmp_path: Path, change: Any, words: list[str]) -> None:
    cassette = tmp_path / "case.yaml"
    cassette.write_text(change(CASSETTE.read_text(encoding="utf-8")), encoding="utf-8")
    out = tmp_path / "out"
    result = run("scan", "--replay", str(cassette), "-o", str(out))
    assert_refused(result, cassette, None, *words)
    assert not out.exists()


def test_truncated_cassette_names_the_line(tmp_path: Path) -> None:
    cassette = tmp_path / "case.yaml"
    text = CASSETTE.read_text(encoding="utf-8")
    cassette.write_text(text[: len(text) // 2], encoding="utf-8")
    result = run("scan", "--replay", str(cassette), "-o", str(tmp_path / "out"))
    assert_refused(result, cassette, None, "truncated")
    assert f"{cassette}:" in result.stderr.split("not valid YAML")[0]


def test_cassette_with_a_damaged_answer(tmp_path: Path) -> None:
    """Valid YAML, but an answer that is not XML: the replay fails as input, exit 2."""
    text = CASSETTE.read_text(encoding="utf-8")
    at = text.index("RetrievePropertiesExResponse")
    cassette = tmp_path / "case.yaml"
    cassette.write_text(text[:at] + "NotXml" + text[at:], encoding="utf-8")
    result = run("scan", "--replay", str(cassette), "-o", str(tmp_path / "out"))
    assert_refused(result, cassette, None, "cannot be replayed")


def test_missing_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "nowhere.yaml"
    result = run("scan", "--replay", str(cassette), "-o", str(tmp_path / "out"))
    assert_refused(result, cassette, None, "no such cassette")


# -- password files -------------------------------------------------------------


def test_unreadable_password_file(tmp_path: Path) -> None:
    missing = tmp_path / "password"
    result = CliRunner().invoke(
        main,
        ["collect", "--server", "vc01", "--user", "u", "--password-file", str(missing)],
        env={"GPUAUDIT_PASSWORD": None, "GOVC_PASSWORD": None, "GOVC_URL": None},
    )
    assert_refused(result, missing, None, "cannot read password file", once=False)
