"""Edges of what a person or a server hands gpuaudit: secrets in URLs, numbers that
are not numbers, hostile names on the console, interruptions and signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from hypothesis import example, given, settings

from gpuaudit.cli.main import main
from gpuaudit.errors import ExitCode
from gpuaudit.vsphere.credentials import CredentialError, read_password_file, resolve
from tests.conftest import unused_port
from tests.reliability.test_fuzz_loaders import BASE_INVENTORY, FUZZ, VALUES, mutated

# Test-only, and long enough that the log redaction it joins (process-wide) masks
# nothing else that later tests look for.
PASSWORD = "edges-test-only-pw"


def run(*args: str, env: dict[str, str | None] | None = None, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env={"GOVC_URL": None, **(env or {})}, input=stdin)


def one_error_line(result: Result, code: int = ExitCode.INPUT) -> str:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuaudit: error: "), lines
    return lines[0]


def fragments(secret: str, size: int = 3) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


# -- a password inside a server URL ----------------------------------------------

PASSWORDS = ["Zqk/8Wx", "Zqk#8Wx", "Zqk?8Wx", "Zqk@8Wx", "Zqk:8Wx", "Zqk\uff038Wx"]


@pytest.mark.parametrize("password", PASSWORDS)
@pytest.mark.parametrize("via", ["--server", "GOVC_URL"])
@pytest.mark.parametrize("rest", ["vc01:notaport", "vc01:99999/sdk", "vc\uff0f01"])
def test_a_password_in_a_server_url_is_never_echoed(password: str, via: str, rest: str) -> None:
    url = f"https://auditor7:{password}@{rest}"
    if via == "--server":
        result = run("collect", "--server", url, "--user", "u", env={"GPUAUDIT_PASSWORD": PASSWORD})
    else:
        result = run("collect", env={"GOVC_URL": url, "GPUAUDIT_PASSWORD": PASSWORD})
    message = one_error_line(result)
    assert "server" in message
    assert "auditor7" not in result.output
    assert [f for f in fragments(password) if f in result.output] == []


def test_a_govc_url_password_with_url_characters_stays_whole() -> None:
    env = {"GOVC_URL": "https://auditor7:Zq/k#8?W@x:y@vc01.example.com/sdk"}
    creds = resolve(None, None, env=env)
    assert creds.server == "https://vc01.example.com/sdk"
    assert (creds.user, creds.password) == ("auditor7", "Zq/k#8?W@x:y")


# -- timeouts -------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "0", "-5", "86401", "1e9", "soon"])
def test_an_absurd_timeout_is_a_usage_error(value: str) -> None:
    server = f"http://127.0.0.1:{unused_port()}/sdk"
    result = run(
        "collect", "--server", server, "--user", "u", "--timeout", value,
        env={"GPUAUDIT_PASSWORD": PASSWORD},
    )  # fmt: skip
    assert result.exit_code == ExitCode.INPUT, result.output
    assert "--timeout" in result.output
    assert "Traceback" not in result.output


# -- passwords that are empty, endless or missing their CA ------------------------


def offline(*extra: str, env: dict[str, str | None], stdin: str | None = None) -> Result:
    """collect against a port nothing listens on: a login attempt would be exit 3."""
    server = f"http://127.0.0.1:{unused_port()}/sdk"
    return run("collect", "--server", server, "--user", "u", *extra, env=env, stdin=stdin)


def test_an_empty_password_is_refused_before_any_login(tmp_path: Path) -> None:
    empty = tmp_path / "pw"
    empty.write_text("\n")
    empty.chmod(0o600)
    for result, word in [
        (offline(env={"GPUAUDIT_PASSWORD": ""}), "GPUAUDIT_PASSWORD"),
        (
            offline("--password-stdin", env={"GPUAUDIT_PASSWORD": None}, stdin="\n"),
            "standard input",
        ),
        (offline("--password-stdin", env={"GPUAUDIT_PASSWORD": None}, stdin=""), "standard input"),
        (offline("--password-file", str(empty), env={"GPUAUDIT_PASSWORD": None}), str(empty)),
    ]:
        assert word in one_error_line(result)


def test_a_huge_password_file_is_refused(tmp_path: Path) -> None:
    huge = tmp_path / "pw"
    huge.write_bytes(b"x" * (1 << 20))
    huge.chmod(0o600)
    message = one_error_line(offline("--password-file", str(huge), env={"GPUAUDIT_PASSWORD": None}))
    assert str(huge) in message and "longer than 4096 bytes" in message


def test_only_the_first_line_of_a_large_password_file_is_read(tmp_path: Path) -> None:
    large = tmp_path / "pw"
    large.write_bytes(b"Zqk8Wx\n" + b"y" * (1 << 20))
    assert read_password_file(str(large)) == "Zqk8Wx"
    with pytest.raises(CredentialError, match="longer than"):
        resolve("vc01", "u", password_stdin=True, env={}, stdin=_Text("z" * 5000))


class _Text:
    def __init__(self, text: str) -> None:
        from io import StringIO

        self.stream = StringIO(text)

    def readline(self, size: int = -1) -> str:
        return self.stream.readline(size)

    def isatty(self) -> bool:
        return False


def test_dev_zero_as_a_password_file_is_a_clear_error() -> None:
    # Run apart, with a bounded address space: reading /dev/zero unbounded would
    # exhaust the memory rather than end.
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30));"
        "from gpuaudit.cli.main import main;"
        "sys.argv = ['gpuaudit', 'collect', '--server', 'vc01', '--user', 'u',"
        " '--password-file', '/dev/zero'];"
        "main()"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == ExitCode.INPUT, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("gpuaudit: error: password file /dev/zero"), lines
    assert "Traceback" not in done.stderr


def test_a_missing_govc_ca_file_is_an_input_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-ca.pem"
    result = offline(env={"GPUAUDIT_PASSWORD": PASSWORD, "GOVC_TLS_CA_CERTS": str(missing)})
    assert str(missing) in one_error_line(result)
    assert result.exit_code != ExitCode.CONNECT


# -- numbers in policy and targets files: finite and in range --------------------

BAD_POLICY_NUMBERS = [
    ("intent:\n  max_restart_minutes: .nan\n", 3, "'.nan'"),
    ("intent:\n  max_restart_minutes: .inf\n", 3, "'.inf'"),
    ("intent:\n  max_restart_minutes: 20000.5\n", 3, "from 0 to 10080"),
    ("intent:\n  max_restart_minutes: -3\n", 3, "from 0 to 10080"),
    ("clusters:\n  c1:\n    intent: {max_restart_minutes: .NaN}\n", 4, "'.NaN'"),
    ("monitoring:\n  max_temperature_c: .nan\n", 3, "'.nan'"),
    ("monitoring:\n  max_temperature_c: -.inf\n", 3, "'-.inf'"),
    ("monitoring:\n  max_temperature_c: 1000\n", 3, "from 0 to 150"),
    ("monitoring:\n  idle_utilization_percent: 500\n", 3, "from 0 to 100"),
    ("monitoring:\n  idle_utilization_percent: .inf\n", 3, "'.inf'"),
    ("monitoring:\n  framebuffer_ratio: .nan\n", 3, "'.nan'"),
    ("monitoring:\n  framebuffer_ratio: 1.0e+9\n", 3, "from 0 to 1000"),
]


@pytest.mark.parametrize(("text", "line", "word"), BAD_POLICY_NUMBERS)
def test_a_policy_number_that_is_not_finite_or_in_range_is_refused(
    tmp_path: Path, text: str, line: int, word: str
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("version: 1\n" + text)
    out = tmp_path / "out"
    result = run("scan", "--demo", "--policy", str(policy), "-o", str(out), "-f", "json")
    message = one_error_line(result)
    assert f"{policy}:{line}:" in message and word in message, message
    assert not out.exists()


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "0", "-1", "0.5", "1e9"])
def test_a_target_timeout_that_is_not_finite_or_in_range_is_refused(
    tmp_path: Path, value: str
) -> None:
    targets = tmp_path / "targets.yaml"
    targets.write_text(f"targets:\n  - server: vc01\n    user: u\n    timeout: {value}\n")
    out = tmp_path / "out"
    message = one_error_line(run("scan", "--targets", str(targets), "-o", str(out)))
    assert f"{targets}:4:" in message and "timeout" in message, message
    assert not out.exists()


def test_no_report_holds_nan_or_infinity(tmp_path: Path) -> None:
    from gpuaudit.report import write_reports
    from tests.support.report_fixtures import realistic_result

    for number in (float("nan"), float("inf"), float("-inf")):
        in_evidence = realistic_result()
        failed = next(f for f in in_evidence.findings if f.status == "fail")
        failed.evidence["peak"] = number
        in_inventory = realistic_result()
        in_inventory.inventory.hosts[0].memory_mb = number  # type: ignore[assignment]
        for result, formats in ((in_evidence, ["json", "sarif"]), (in_inventory, ["json", "html"])):
            for fmt in formats:
                out = tmp_path / f"{fmt}-{number}"
                with pytest.raises(ValueError, match="not JSON compliant"):
                    write_reports(result, out, [fmt], "vc01")
                assert list(out.glob("*")) == []
        with pytest.raises(ValueError, match="not JSON compliant"):
            in_inventory.inventory.save(tmp_path / "inventory.json")
        assert not (tmp_path / "inventory.json").exists()


def test_diff_refuses_nan_in_a_report(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text('{"findings": [{"rule": "HA-01", "status": "fail", "peak": NaN}]}')
    message = one_error_line(run("diff", str(report), str(report)))
    assert str(report) in message and "NaN" in message


# -- YAML a person did not mean: NUL, tags, a boolean version ---------------------

BAD_YAML = [
    ("version: 1\ndescription: ok\x00\n", 2, "U+0000"),
    ('version: 1\ndescription: "a\\0b"\n', 2, "NUL"),
    ("version: 1\nintent: !foo {stateless: true}\n", 2, "'!foo'"),
    ("version: 1\nintent: !!python/object:os.system {stateless: true}\n", 2, "python/object"),
    ("version: !!python/object/apply:os.system [echo]\n", 1, "python/object/apply"),
    ("version: 1\nwaivers:\n  - !foo\n    rule: HA-01\n", 3, "'!foo'"),
    ("version: !foo 1\n", 1, "'!foo'"),
]


@pytest.mark.parametrize(("text", "line", "word"), BAD_YAML)
def test_policy_with_a_nul_or_an_unknown_tag(
    tmp_path: Path, text: str, line: int, word: str
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(text)
    out = tmp_path / "out"
    result = run("scan", "--demo", "--policy", str(policy), "-o", str(out), "-f", "json")
    message = one_error_line(result)
    assert f"{policy}:{line}:" in message and word in message, message
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "line", "word"),
    [
        ("targets:\n  - server: vc01\x00\n    user: u\n", 2, "U+0000"),
        ("targets:\n  - !foo {server: vc01, user: u}\n", 2, "'!foo'"),
        ("targets: !!python/object:list\n  - {server: vc01, user: u}\n", 1, "python/object"),
    ],
)
def test_targets_with_a_nul_or_an_unknown_tag(
    tmp_path: Path, text: str, line: int, word: str
) -> None:
    targets = tmp_path / "targets.yaml"
    targets.write_text(text)
    out = tmp_path / "out"
    message = one_error_line(run("scan", "--targets", str(targets), "-o", str(out)))
    assert f"{targets}:{line}:" in message and word in message, message
    assert not out.exists()


@pytest.mark.parametrize("version", ["true", "1.0", "'1'"])
def test_a_policy_version_must_be_the_whole_number_1(tmp_path: Path, version: str) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(f"version: {version}\n")
    out = tmp_path / "out"
    result = run("scan", "--demo", "--policy", str(policy), "-o", str(out), "-f", "json")
    assert f"{policy}:1: version: expected 1" in one_error_line(result)


# -- diff: a report or inventory with wrong types inside -------------------------


def _report() -> dict[str, Any]:
    from gpuaudit.report import render_json
    from tests.support.report_fixtures import realistic_result

    return render_json(realistic_result())


REPORT = _report()
WRONG_TYPES = [
    ("findings", {"a": 1}, "findings: expected a list"),
    ("findings", [1], "findings[0]: expected an object"),
    ("findings", [{"rule": "HA-01", "object": "c1", "status": 3}], "findings[0].status"),
    ("findings", [{"rule": "HA-01", "status": "fail"}], "findings[0]: no 'object'"),
    ("findings", [{"rule": ["HA-01"], "object": "c", "status": "fail"}], "findings[0].rule"),
    ("findings", [{"rule": "HA", "object": "c", "status": "fail", "severity": 2}], "severity"),
    ("inventory", [], "inventory: expected an object"),
    ("inventory", {"hosts": {"h": 1}}, "inventory.hosts: expected a list"),
    ("inventory", {"vms": [{"name": {"x": 1}}]}, "inventory.vms[0].name"),
    ("inventory", {"hosts": [{"name": "h", "gpus": [{"model": []}]}]}, "gpus[0].model"),
    ("inventory", {"datastores": ["ds1"]}, "inventory.datastores[0]"),
]


@pytest.mark.parametrize(("key", "value", "word"), WRONG_TYPES)
def test_diff_with_wrong_types_inside_is_an_input_error(
    tmp_path: Path, key: str, value: Any, word: str
) -> None:
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(REPORT))
    bad.write_text(json.dumps({**REPORT, key: value}))
    for old, new in ((good, bad), (bad, good)):
        message = one_error_line(run("diff", str(old), str(new), "--fail-on", "info"))
        assert str(bad) in message and word in message, message


def diff_any(tmp_path: Path, data: Any) -> None:
    """``gpuaudit diff`` with ``data`` on one side: a diff, or exit 2 with one line."""
    other, side = tmp_path / "report.json", tmp_path / "side.json"
    if not other.exists():
        other.write_text(json.dumps(REPORT))
    side.write_text(json.dumps(data))
    for args in ((side, other), (other, side)):
        result = run("diff", *map(str, args), "--fail-on", "high", "--format", "json")
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exception
        )
        assert "Traceback" not in result.output
        if result.exit_code == ExitCode.INPUT:
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("gpuaudit: error: "), lines
        else:
            assert result.exit_code in (0, 1), result.output
            json.loads(result.stdout)


@FUZZ
@given(VALUES)
@example({"findings": {"a": 1}})
@example({"findings": [{"rule": "HA-01", "object": "c1", "status": 3}]})
@example({"findings": [], "inventory": {"hosts": [{"name": "h", "gpus": [1]}]}})
@example({"schema_version": 1, "hosts": {}})
@example({"findings": [{"rule": "X", "object": "o", "status": "fail", "severity": "bogus"}]})
@example({"findings": [{"rule": "X", "object": "o", "status": "fail"}]})
def test_diff_of_any_json_value(tmp_path_factory: pytest.TempPathFactory, data: Any) -> None:
    diff_any(tmp_path_factory.mktemp("diff"), data)


@FUZZ
@given(mutated(REPORT))
def test_diff_of_a_report_with_one_value_changed(
    tmp_path_factory: pytest.TempPathFactory, data: Any
) -> None:
    diff_any(tmp_path_factory.mktemp("diff"), data)


@settings(FUZZ, max_examples=40)
@given(mutated(BASE_INVENTORY))
def test_diff_of_an_inventory_with_one_value_changed(
    tmp_path_factory: pytest.TempPathFactory, data: Any
) -> None:
    diff_any(tmp_path_factory.mktemp("diff"), data)


# -- names from a server, printed on a terminal ---------------------------------

FAKE_PASS = "\r\x1b[2K\x1b[32mPASS: nothing at or above high\x1b[0m"
HOSTILE_CLUSTERS = {"c1": "c1" + FAKE_PASS, "c2": "c2\x9b2J\x07", "c3": "c3\nFAIL\x7f"}


def hostile_inventory(tmp_path: Path) -> Path:
    from tests.support.report_fixtures import build_result

    path = tmp_path / "inventory.json"
    path.write_text(build_result(HOSTILE_CLUSTERS).inventory.to_json())
    return path


def assert_escaped(text: str, *shown: str) -> None:
    raw = [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0]
    assert raw == [], raw
    assert "\nFAIL\\x7f" not in text
    for name in shown:
        assert name in text, text


def test_cluster_names_are_escaped_in_the_summary(tmp_path: Path) -> None:
    inventory = hostile_inventory(tmp_path)
    out = tmp_path / "out"
    result = run("scan", "--from", str(inventory), "-o", str(out), "-f", "json")
    assert result.exit_code == 1, result.output
    assert_escaped(result.stdout, "c1\\r\\x1b[2K\\x1b[32mPASS", "c2\\x9b2J\\x07", "c3\\nFAIL\\x7f")


def test_cluster_names_are_escaped_on_a_colour_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    from gpuaudit.cli import console
    from gpuaudit.jobs import outcome
    from tests.support.report_fixtures import build_result

    summary = outcome.summarise(build_result(HOSTILE_CLUSTERS), "high", None)
    console.print_summary(summary, [], color=True, quiet=False)
    printed = capsys.readouterr().out
    assert "\x1b[1;31m" in printed  # the colours of the summary itself
    assert "\x1b[2K" not in printed and "\r" not in printed and "\x9b" not in printed
    assert "c1\\r\\x1b[2K\\x1b[32mPASS" in printed


def test_names_are_escaped_in_a_text_diff(tmp_path: Path) -> None:
    from gpuaudit.report import render_json
    from tests.support.report_fixtures import build_result

    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(REPORT))
    new.write_text(json.dumps(render_json(build_result(HOSTILE_CLUSTERS))))
    result = run("diff", str(old), str(new))
    assert result.exit_code == 0, result.output
    assert_escaped(result.stdout, "c2\\x9b2J\\x07", "c3\\nFAIL\\x7f")


def test_fleet_lines_and_errors_are_escaped(tmp_path: Path, fast: None) -> None:
    targets = tmp_path / "targets.yaml"
    server = f"http://127.0.0.1:{unused_port()}/sdk"
    name = json.dumps("lab" + FAKE_PASS)  # a JSON string is YAML, escapes and all
    targets.write_text(f"targets:\n  - name: {name}\n    server: {server}\n    user: u\n")
    result = run("scan", "--targets", str(targets), "-o", str(tmp_path / "out"),
                 env={"GPUAUDIT_PASSWORD": PASSWORD})  # fmt: skip
    assert result.exit_code == ExitCode.CONNECT, result.output
    raw = [c for c in result.output if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0]
    assert raw == [], raw
    assert "lab\\r\\x1b[2K\\x1b[32mPASS: nothing at or above high\\x1b[0m: ERROR" in result.stdout


def test_error_lines_are_escaped(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text('version: 1\nclusters:\n  "c\\r\\x1b[2KPASS":\n    severity: {HA-99: low}\n')
    message = one_error_line(run("scan", "--demo", "--policy", str(policy), "-o", str(tmp_path)))
    assert "HA-99" in message and "\r" not in message and "\x1b" not in message


# -- Ctrl-C, SIGTERM, SIGHUP -------------------------------------------------------


@pytest.mark.parametrize(
    ("raised", "code", "line"),
    [
        (KeyboardInterrupt, 130, "gpuaudit: interrupted"),
        (click.Abort, 130, "gpuaudit: interrupted"),  # Ctrl-C at the password prompt
    ],
)
def test_an_interrupt_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    raised: type[BaseException],
    code: int,
    line: str,
) -> None:
    from gpuaudit.vsphere import obtain

    def interrupted(*_args: Any, **_kwargs: Any) -> None:
        raise raised()

    monkeypatch.setattr(obtain, "obtain_inventory", interrupted)
    result = run("scan", "--demo", "-o", str(tmp_path / "out"))
    assert result.exit_code == code, result.output
    assert result.stderr.strip().splitlines() == [line]
    assert "Aborted" not in result.output


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_stopping_signal_is_one_line_and_its_exit_status(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, signum: int, code: int
) -> None:
    from gpuaudit.vsphere import obtain

    def unhandled(_signum: int, _frame: Any) -> None:
        raise RuntimeError("the signal reached the test's own handler")

    # The test's handler stands in for the default, which would end pytest itself.
    before = signal.signal(signum, unhandled)

    def signalled(*_args: Any, **_kwargs: Any) -> None:
        os.kill(os.getpid(), signum)
        time.sleep(5)  # the handler raises before this ends

    monkeypatch.setattr(obtain, "obtain_inventory", signalled)
    result = run("scan", "--demo", "-o", str(tmp_path / "out"))
    assert result.exit_code == code, result.output
    name = signal.Signals(signum).name
    assert result.stderr.strip().splitlines() == [f"gpuaudit: stopped by {name}"]
    try:
        assert signal.getsignal(signum) is unhandled  # put back as it was
    finally:
        signal.signal(signum, before)


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stop_a_recording_scan(lab: Any, tmp_path: Path, signum: int) -> tuple[int, str, Path, Path]:
    """Start a recording scan, wait until it collects, send ``signum``; what is left."""
    out, scratch_tmp = tmp_path / "out", tmp_path / "tmp"
    scratch_tmp.mkdir()
    env = {
        **os.environ,
        "GPUAUDIT_PASSWORD": lab.password,
        "TMPDIR": str(scratch_tmp),
        "GOVC_URL": "",
    }
    command = [
        sys.executable, "-m", "gpuaudit", "scan", "--server", lab.url, "--user", lab.user,
        "--record", str(out / "session.yaml"), "-o", str(out),
    ]  # fmt: skip
    with subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A suite started in the background (`scripts/test &`, a CI runner's job) hands its
        # children SIGINT ignored, and Python then leaves it ignored: Ctrl-C at a terminal
        # is what this test stands for, so the scan starts with SIGINT at its default.
        preexec_fn=_sigint_default,
    ) as process:
        assert process.stderr is not None
        seen = []
        for text in process.stderr:  # INFO log lines: the scan's progress
            seen.append(text)
            if "collecting" in text:
                break
        time.sleep(0.5)  # inside the collection: a few requests of 200 ms each
        assert process.poll() is None, "".join(seen)
        process.send_signal(signum)
        _, rest = process.communicate(timeout=60)
    return process.returncode, "".join(seen) + rest, out, scratch_tmp


@pytest.mark.live
@pytest.mark.parametrize(
    ("signum", "code", "line"),
    [
        (signal.SIGINT, 130, "gpuaudit: interrupted"),
        (signal.SIGTERM, 143, "gpuaudit: stopped by SIGTERM"),
        (signal.SIGHUP, 129, "gpuaudit: stopped by SIGHUP"),
    ],
)
def test_a_signal_during_a_recording_leaves_nothing_behind(
    lab_factory: Any, tmp_path: Path, signum: int, code: int, line: str
) -> None:
    lab = lab_factory("scenario-b", faults={"latency": "200ms"})
    returncode, stderr, out, scratch_tmp = _stop_a_recording_scan(lab, tmp_path, signum)
    assert returncode == code, stderr
    assert stderr.strip().splitlines()[-1] == line, stderr
    assert [t for t in stderr.splitlines() if t.startswith("gpuaudit:")] == [line]
    assert "Traceback" not in stderr and "Aborted" not in stderr
    assert sorted(p.name for p in out.rglob("*")) == []  # no scratch folder, cassette, report
    assert sorted(p.name for p in scratch_tmp.rglob("*")) == []


def test_the_exit_statuses_of_a_signal_are_documented() -> None:
    from tests.conftest import ROOT

    help_text = run("scan", "--help").output
    readme = (ROOT / "README.md").read_text()
    for code, word in (("130", "interrupted"), ("143", "SIGTERM"), ("129", "SIGHUP")):
        assert code in help_text and word in help_text, help_text
        assert f"| {code}" in readme or f", {code} |" in readme
        assert word in readme
    import gpuaudit.cli.main

    assert "130  interrupted (Ctrl-C)" in (gpuaudit.cli.main.__doc__ or "")


def test_a_password_in_a_target_server_url_is_never_shown(tmp_path: Path, fast: None) -> None:
    password = "Zqk/8Wx"
    targets = tmp_path / "targets.yaml"
    server = f"http://auditor7:{password}@127.0.0.1:{unused_port()}/sdk"
    targets.write_text(f"targets:\n  - server: '{server}'\n    user: u\n")
    out = tmp_path / "out"
    result = run(
        "scan", "--targets", str(targets), "-o", str(out), env={"GPUAUDIT_PASSWORD": PASSWORD}
    )
    assert result.exit_code == ExitCode.CONNECT, result.output
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) == 3  # the fleet summary as HTML, xlsx and JSON
    written = [p.read_text("utf-8") for p in files if p.suffix != ".xlsx"]
    for book in (p for p in files if p.suffix == ".xlsx"):
        with zipfile.ZipFile(book) as members:
            written += [members.read(m).decode("utf-8") for m in members.namelist()]
    for text in [result.output, *written, *(p.name for p in out.rglob("*"))]:
        assert "auditor7" not in text
        assert [f for f in fragments(password) if f in text] == []


def test_a_stopped_fleet_starts_no_further_target(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from gpuaudit.jobs import fleet

    journal = tmp_path / "journal"  # each target runs in a process of its own

    def slow_scan(target: Any, *_args: Any) -> Any:
        with journal.open("a") as out:
            out.write(f"start {target.name}\n")
        if target.name == "vc01":  # the fleet is stopped while this target runs
            os.kill(os.getppid(), signal.SIGTERM)
            time.sleep(5)
        with journal.open("a") as out:
            out.write(f"end {target.name}\n")
        return fleet.TargetOutcome(target, 0, "PASS")

    monkeypatch.setattr(fleet, "scan_target", slow_scan)
    targets = tmp_path / "targets.yaml"
    listed = "".join(f"  - {{server: vc{i:02d}, user: u}}\n" for i in range(8))
    targets.write_text(f"concurrency: 1\ntargets:\n{listed}")

    def unhandled(_signum: int, _frame: Any) -> None:
        raise RuntimeError("the signal reached the test's own handler")

    before = signal.signal(signal.SIGTERM, unhandled)
    began = time.monotonic()
    try:
        result = run("scan", "--targets", str(targets), "-o", str(tmp_path / "out"))
        time.sleep(0.4)  # were another target started, it would be in the journal by now
    finally:
        signal.signal(signal.SIGTERM, before)
    assert result.exit_code == 143, result.output
    # The running target was stopped with the fleet, not waited for.
    assert time.monotonic() - began < 5
    assert journal.read_text().splitlines() == ["start vc00", "end vc00", "start vc01"]


# A lone surrogate (which a JSON file may escape) and the bidirectional controls.
INVISIBLE_CLUSTERS = {
    "c1": "c1\ud800",
    "c2": "c2\u202eexe.txt",
    "c3": "c3\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u202a\u202b\u202c\u202d",
}
INVISIBLE_SHOWN = [
    "c1\\ud800",
    "c2\\u202eexe.txt",
    "c3\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c\\u202a\\u202b\\u202c\\u202d",
]
BIDI = {*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C}


def gpuaudit_process(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """gpuaudit with real pipes: UTF-8, strict, as a cron job's or a terminal's."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("PYTHONIOENCODING", None)
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    return subprocess.run(
        [sys.executable, "-m", "gpuaudit", *args],
        capture_output=True,
        timeout=300,
        env=env,
        check=False,
    )


def assert_invisible_escaped(data: bytes, *shown: str) -> None:
    text = data.decode("utf-8")  # strict: a surrogate cannot have been written
    raw = [f"U+{ord(c):04X}" for c in text if ord(c) in BIDI or 0xD800 <= ord(c) < 0xE000]
    assert raw == [], raw
    for name in shown:
        assert name in text, text


def invisible_inventory(tmp_path: Path) -> Path:
    from tests.support.report_fixtures import build_result

    path = tmp_path / "invisible.json"
    path.write_text(build_result(INVISIBLE_CLUSTERS).inventory.to_json(), encoding="ascii")
    return path


def test_lone_surrogates_and_bidi_controls_are_escaped_in_the_summary(tmp_path: Path) -> None:
    inventory = invisible_inventory(tmp_path)
    done = gpuaudit_process(
        tmp_path, "scan", "--from", str(inventory), "-o", str(tmp_path / "out"), "-f", "json"
    )
    assert done.returncode == ExitCode.FINDINGS, done.stderr.decode(errors="replace")
    assert b"Traceback" not in done.stderr
    assert_invisible_escaped(done.stdout, *INVISIBLE_SHOWN)
    assert_invisible_escaped(done.stderr)
    assert b"FAIL: findings at or above high" in done.stdout


def test_diff_escapes_lone_surrogates_and_bidi_controls(tmp_path: Path) -> None:
    plain, invisible = hostile_inventory(tmp_path), invisible_inventory(tmp_path)
    text = gpuaudit_process(tmp_path, "diff", str(plain), str(invisible))
    assert text.returncode == 0, text.stderr.decode(errors="replace")
    assert_invisible_escaped(text.stdout, *INVISIBLE_SHOWN)
    as_json = gpuaudit_process(tmp_path, "diff", "-f", "json", str(plain), str(invisible))
    assert as_json.returncode == 0, as_json.stderr.decode(errors="replace")
    assert_invisible_escaped(as_json.stdout)
    said = json.dumps(json.loads(as_json.stdout), ensure_ascii=False)
    for name in INVISIBLE_CLUSTERS.values():  # the same data, only escaped
        assert name in said


def test_printable_escapes_every_bidi_control_and_surrogate() -> None:
    from gpuaudit.common.terminal import printable, printable_lines

    for code in [*BIDI, 0xD800, 0xDBFF, 0xDC00, 0xDFFF]:
        assert printable(f"a{chr(code)}b") == f"a\\u{code:04x}b"
        assert printable_lines(f"a{chr(code)}\nb") == f"a\\u{code:04x}\nb"
    for kept in ("\u2028", "\u200d", "\u2065", "\u206a", "\u2029", "\u05d0", "\ue000", "é"):
        assert printable(kept) == kept and printable_lines(kept) == kept
    assert printable("\r\x1b\x9b\x7f") == "\\r\\x1b\\x9b\\x7f"
    assert printable_lines("\t\r\n") == "\t\r\n"


def test_log_lines_escape_lone_surrogates_and_bidi_controls() -> None:
    import logging

    from gpuaudit.cli.logs import JsonFormatter, UtcFormatter

    record = logging.LogRecord(
        "gpuaudit", logging.WARNING, __file__, 1, "vm %s", ("a\ud800\u202e",), None
    )
    assert UtcFormatter().format(record).endswith("WARNING vm a\\ud800\\u202e")
    line = JsonFormatter().format(record)
    line.encode("utf-8")
    assert json.loads(line)["message"] == "vm a\ud800\u202e"
