"""Edges of what a person or a server hands gpuaudit: secrets in URLs, numbers that
are not numbers, hostile names on the console, interruptions and signals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpuaudit.cli import EXIT_CONNECT, EXIT_INPUT, main
from gpuaudit.credentials import CredentialError, read_password_file, resolve
from tests.conftest import unused_port


def run(*args: str, env: dict[str, str | None] | None = None, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env={"GOVC_URL": None, **(env or {})}, input=stdin)


def one_error_line(result: Result, code: int = EXIT_INPUT) -> str:
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
        result = run("collect", "--server", url, "--user", "u", env={"GPUAUDIT_PASSWORD": "x"})
    else:
        result = run("collect", env={"GOVC_URL": url, "GPUAUDIT_PASSWORD": "x"})
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
        env={"GPUAUDIT_PASSWORD": "x"},
    )  # fmt: skip
    assert result.exit_code == EXIT_INPUT, result.output
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
        "from gpuaudit.cli import main;"
        "sys.argv = ['gpuaudit', 'collect', '--server', 'vc01', '--user', 'u',"
        " '--password-file', '/dev/zero'];"
        "main()"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == EXIT_INPUT, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("gpuaudit: error: password file /dev/zero"), lines
    assert "Traceback" not in done.stderr


def test_a_missing_govc_ca_file_is_an_input_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-ca.pem"
    result = offline(env={"GPUAUDIT_PASSWORD": "x", "GOVC_TLS_CA_CERTS": str(missing)})
    assert str(missing) in one_error_line(result)
    assert result.exit_code != EXIT_CONNECT
