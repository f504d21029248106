"""Connection failures: each one a clear message, no traceback, exit status 3."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from click.testing import CliRunner, Result

from gpuaudit.cli import main
from gpuaudit.connect import ConnectError, Server, parse_server
from gpuaudit.errors import ExitCode
from tests.conftest import unused_port


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("vc01.example.com", Server("vc01.example.com", 443, "https", "/sdk")),
        ("vc01.example.com:8443", Server("vc01.example.com", 8443, "https", "/sdk")),
        ("https://vc01/sdk", Server("vc01", 443, "https", "/sdk")),
        ("http://127.0.0.1:8989/sdk", Server("127.0.0.1", 8989, "http", "/sdk")),
        ("http://127.0.0.1:8989", Server("127.0.0.1", 8989, "http", "/sdk")),
        ("[::1]:9443", Server("::1", 9443, "https", "/sdk")),
        ("https://user:secret@vc01:443/sdk", Server("vc01", 443, "https", "/sdk")),
    ],
)
def test_parse_server(text: str, expected: Server) -> None:
    assert parse_server(text) == expected


@pytest.mark.parametrize("text", ["", "ftp://vc01", "https://:443", "vc01:notaport"])
def test_parse_server_rejects(text: str) -> None:
    with pytest.raises(ConnectError):
        parse_server(text)


def test_display_name_drops_default_port() -> None:
    assert parse_server("vc01").display == "vc01"
    assert parse_server("vc01:8443").display == "vc01:8443"


def collect(server: str, *extra: str, password: str = "pw", user: str = "audit") -> Result:
    return CliRunner().invoke(
        main,
        ["collect", "--server", server, "--user", user, *extra],
        env={"GPUAUDIT_PASSWORD": password, "GOVC_URL": None},
    )


def assert_clean_failure(result: Result, code: int, *words: str) -> None:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    for word in words:
        assert word in result.output, result.output


def test_dns_failure() -> None:
    result = collect("vcenter.does-not-exist.invalid")
    assert_clean_failure(result, ExitCode.CONNECT, "cannot resolve", "--server")


def test_connection_refused() -> None:
    port = unused_port()
    result = collect(f"127.0.0.1:{port}")
    assert_clean_failure(result, ExitCode.CONNECT, "connection refused", f"127.0.0.1:{port}")


@pytest.fixture
def silent_server() -> Iterator[int]:
    """Accepts connections and never answers: a stalled server."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
                held.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


def test_timeout(silent_server: int) -> None:
    result = collect(f"http://127.0.0.1:{silent_server}/sdk", "--timeout", "1")
    assert_clean_failure(result, ExitCode.CONNECT, "did not answer within 1 s", "--timeout")


def test_password_argument_is_refused() -> None:
    result = CliRunner().invoke(
        main, ["collect", "--server", "vc01", "--user", "u", "--password", "hunter2"]
    )
    assert result.exit_code == ExitCode.INPUT
    assert "hunter2" not in result.output
    assert "GPUAUDIT_PASSWORD" in result.output and "--password-file" in result.output


@pytest.mark.live
def test_bad_credentials(lab_factory) -> None:  # type: ignore[no-untyped-def]
    lab = lab_factory("scenario-b")
    result = collect(lab.url, password="not-the-password", user=lab.user)
    assert_clean_failure(result, ExitCode.CONNECT, "login to", "user name or password is wrong")
    assert "not-the-password" not in result.output


@pytest.mark.live
def test_tls_self_signed_refused_by_default(lab_factory) -> None:  # type: ignore[no-untyped-def]
    lab = lab_factory("scenario-b", tls=True)
    result = collect(f"https://127.0.0.1:{lab.port}/sdk", password=lab.password, user=lab.user)
    assert_clean_failure(
        result, ExitCode.CONNECT, "TLS verification failed", "--ca-file", "--insecure"
    )


@pytest.mark.live
def test_tls_accepted_with_ca_file(lab_factory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    lab = lab_factory("scenario-b", tls=True)
    out = tmp_path / "inv.json"
    result = CliRunner().invoke(
        main,
        [
            "collect",
            "--server",
            f"https://127.0.0.1:{lab.port}/sdk",
            "--user",
            lab.user,
            "--ca-file",
            str(lab.cert_file),
            "-o",
            str(out),
        ],
        env={"GPUAUDIT_PASSWORD": lab.password},
    )
    assert result.exit_code == 0, result.output
    assert out.is_file()


@pytest.mark.live
def test_tls_insecure_skips_verification(lab_factory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    lab = lab_factory("scenario-b", tls=True)
    out = tmp_path / "inv.json"
    result = collect(
        f"https://127.0.0.1:{lab.port}/sdk",
        "--insecure",
        "-o",
        str(out),
        password=lab.password,
        user=lab.user,
    )
    assert result.exit_code == 0, result.output


def test_session_logs_out_when_the_block_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpuaudit.connect as module

    ended: list[object] = []
    monkeypatch.setattr(module, "login", lambda *_a, **_k: "service-instance")
    monkeypatch.setattr(module, "logout", ended.append)
    with pytest.raises(RuntimeError), module.session(Server("vc01", 443), "u", "p"):
        raise RuntimeError("collection failed half way")
    assert ended == ["service-instance"]
