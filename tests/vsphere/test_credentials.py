"""Where the server, user and password come from, in the documented order."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from gpuaudit.vsphere.credentials import CredentialError, read_password_file, resolve


class FakeStdin(io.StringIO):
    def __init__(self, text: str = "", tty: bool = False) -> None:
        super().__init__(text)
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def secret_file(tmp_path: Path, text: str, mode: int = 0o600) -> str:
    path = tmp_path / "password"
    path.write_text(text)
    os.chmod(path, mode)
    return str(path)


def test_environment_comes_first(tmp_path: Path) -> None:
    creds = resolve(
        "vc01",
        "audit",
        password_file=secret_file(tmp_path, "from-file\n"),
        password_stdin=True,
        env={"GPUAUDIT_PASSWORD": "from-env"},
        stdin=FakeStdin("from-stdin\n"),
    )
    assert creds.password == "from-env"


def test_file_before_stdin(tmp_path: Path) -> None:
    creds = resolve(
        "vc01",
        "audit",
        password_file=secret_file(tmp_path, "from-file\nsecond line ignored\n"),
        password_stdin=True,
        env={},
        stdin=FakeStdin("from-stdin\n"),
    )
    assert creds.password == "from-file"


def test_stdin_before_prompt() -> None:
    creds = resolve(
        "vc01",
        "audit",
        password_stdin=True,
        env={},
        stdin=FakeStdin("from-stdin\r\n", tty=True),
        prompt=lambda _t: "from-prompt",
    )
    assert creds.password == "from-stdin"


def test_prompt_only_on_a_terminal() -> None:
    asked: list[str] = []

    def prompt(text: str) -> str:
        asked.append(text)
        return "typed"

    creds = resolve("vc01", "audit", env={}, stdin=FakeStdin(tty=True), prompt=prompt)
    assert creds.password == "typed" and asked == ["Password for audit"]
    with pytest.raises(CredentialError, match="GPUAUDIT_PASSWORD"):
        resolve("vc01", "audit", env={}, stdin=FakeStdin(tty=False), prompt=prompt)


def test_govc_variables_are_fallbacks() -> None:
    env = {
        "GOVC_URL": "https://govc-user:p%40ss@vc02.example.com/sdk",
        "GOVC_INSECURE": "1",
        "GOVC_TLS_CA_CERTS": "/etc/ssl/vc.pem",
    }
    creds = resolve(None, None, env=env, stdin=FakeStdin())
    assert creds.server == "https://vc02.example.com/sdk"
    assert (creds.user, creds.password) == ("govc-user", "p@ss")
    assert creds.insecure and creds.ca_file == "/etc/ssl/vc.pem"
    # gpuaudit's own options and variables win over govc's.
    env |= {"GOVC_USERNAME": "govc-name", "GPUAUDIT_PASSWORD": "mine"}
    creds = resolve("vc01", "me", env=env, stdin=FakeStdin())
    assert (creds.server, creds.user, creds.password) == ("vc01", "me", "mine")


def test_password_never_in_repr() -> None:
    creds = resolve("vc01", "audit", env={"GPUAUDIT_PASSWORD": "hunter2"}, stdin=FakeStdin())
    assert "hunter2" not in repr(creds) and "hunter2" not in str(creds)


def test_world_readable_password_file_warns(tmp_path: Path) -> None:
    warnings: list[str] = []
    read_password_file(secret_file(tmp_path, "pw", 0o644), warnings.append)
    assert len(warnings) == 1 and "chmod 600" in warnings[0]
    warnings.clear()
    read_password_file(secret_file(tmp_path, "pw", 0o600), warnings.append)
    assert warnings == []


@pytest.mark.parametrize("content", ["", "\n"])
def test_empty_password_file_is_an_error(tmp_path: Path, content: str) -> None:
    with pytest.raises(CredentialError, match="is empty"):
        read_password_file(secret_file(tmp_path, content))


def test_missing_password_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CredentialError, match="cannot read password file"):
        read_password_file(str(tmp_path / "nope"))
