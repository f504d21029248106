"""gpuaudit.vsphere.connect: servers, TLS settings, negotiation, login and logout, and every
connection failure as a clear message (no traceback, exit status 3 from the command line).
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
from collections.abc import Iterator
from typing import Any, ClassVar
from xml.parsers.expat import ExpatError

import pytest
from click.testing import CliRunner, Result
from pyVmomi import vim, vmodl

from gpuaudit.cli.main import main
from gpuaudit.errors import ExitCode
from gpuaudit.vsphere import connect, resilience
from gpuaudit.vsphere.answers import ServerAnswerError
from gpuaudit.vsphere.connect import ConnectError, Server, describe_failure, parse_server
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
    import gpuaudit.vsphere.connect as module

    ended: list[object] = []
    monkeypatch.setattr(module, "login", lambda *_a, **_k: "service-instance")
    monkeypatch.setattr(module, "logout", ended.append)
    with pytest.raises(RuntimeError), module.session(Server("vc01", 443), "u", "p"):
        raise RuntimeError("collection failed half way")
    assert ended == ["service-instance"]


VC = Server("vc01", 443)


def test_server_url_and_display() -> None:
    assert Server("vc01", 443).url == "https://vc01:443/sdk"
    assert Server("::1", 8989, "http", "/api").url == "http://[::1]:8989/api"
    assert Server("::1", 443).display == "[::1]"
    assert Server("::1", 80, "http").display == "[::1]"
    assert Server("vc01", 80).display == "vc01:80"
    assert Server("vc01", 443, "http").display == "vc01:443"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("  vc01  ", ("vc01", None)),
        ("audit:pw@vc01", ("vc01", "audit:pw")),
        ("https://audit:p@ss/w#rd@vc01:443/sdk", ("https://vc01:443/sdk", "audit:p@ss/w#rd")),
        ("https://vc01/sdk", ("https://vc01/sdk", None)),
        ("@vc01", ("vc01", "")),
    ],
)
def test_split_userinfo_cuts_at_the_last_at(given: str, expected: tuple[str, str | None]) -> None:
    assert connect.split_userinfo(given) == expected


def test_shown_server_never_holds_the_password() -> None:
    assert connect.shown_server("https://audit:pw@vc01") == "https://vc01"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no server given: pass --server (a host name, host:port or URL)"),
        ("ftp://vc01", "server 'ftp://vc01': the scheme must be https (or http for a lab)"),
        ("https://:443", "server 'https://:443' names no host"),
        (
            "u:pw@vc01:notaport",
            "cannot parse server 'vc01:notaport': Port could not be cast to integer value "
            "as 'notaport'",
        ),
    ],
)
def test_parse_server_messages(text: str, message: str) -> None:
    with pytest.raises(ConnectError) as caught:
        parse_server(text)
    assert str(caught.value) == message


def test_parse_server_defaults_and_paths() -> None:
    assert parse_server("http://lab") == Server("lab", 80, "http", "/sdk")
    assert parse_server("https://vc01/custom/sdk/") == Server("vc01", 443, "https", "/custom/sdk")
    assert parse_server("HTTPS://VC01") == Server("vc01", 443, "https", "/sdk")


def test_ssl_context_insecure_skips_every_check() -> None:
    context = connect.ssl_context(insecure=True)
    assert context.check_hostname is False
    assert context.verify_mode == ssl.CERT_NONE


def test_ssl_context_verifies_by_default() -> None:
    context = connect.ssl_context()
    assert context.check_hostname is True
    assert context.verify_mode == ssl.CERT_REQUIRED


def test_ssl_context_names_a_ca_file_it_cannot_load(tmp_path: Any) -> None:
    missing = tmp_path / "ca.pem"
    with pytest.raises(ConnectError, match=f"^cannot load the CA file {missing}: "):
        connect.ssl_context(ca_file=str(missing))


def _tried(exc: BaseException, times: int) -> BaseException:
    vars(exc)["_gpuaudit_attempts"] = times
    return exc


def _said(exc: BaseException, timeout: float = 60.0) -> str:
    return describe_failure(exc, VC, "audit", timeout)


def test_message_for_an_interrupted_read() -> None:
    assert _said(resilience.ReadInterrupted("view gone")) == (
        "reading the inventory from vc01 was interrupted too often: view gone. "
        "Check the vCenter's health and scan again"
    )


def test_message_for_a_session_that_ended() -> None:
    assert _said(vim.fault.NotAuthenticated()) == (
        "vc01 ended the session of user 'audit' and logging in again did not restore it; "
        "check the vCenter's session limits and scan again"
    )


def test_message_for_a_wrong_password() -> None:
    assert _said(vim.fault.InvalidLogin()) == (
        "login to vc01 failed for user 'audit': the user name or password is wrong "
        "(check GPUAUDIT_PASSWORD, --password-file or --user)"
    )


def test_message_for_a_missing_privilege() -> None:
    named = vim.fault.NoPermission(privilegeId="System.View", msg="ignored")
    assert _said(named) == "user 'audit' may not log in to vc01: it lacks the System.View privilege"
    unnamed = vim.fault.NoPermission(msg="  Permission\n  to perform   this operation was denied.")
    assert _said(unnamed) == (
        "user 'audit' may not log in to vc01: Permission to perform this operation was denied."
    )
    assert _said(vim.fault.NoPermission()) == "user 'audit' may not log in to vc01: NoPermission"


@pytest.mark.parametrize(
    ("kind", "transient", "advice"),
    [
        (
            "not-soap",
            False,
            "check that --server names the vCenter itself, not a proxy or a sign-in page",
        ),
        ("not-soap", True, "check the vCenter's health and scan again"),
        (
            "unknown-fault",
            False,
            "the vCenter may be newer than this gpuaudit: update it and scan again",
        ),
        ("malformed", False, "check the vCenter's health and scan again"),
    ],
)
def test_message_for_an_answer_that_is_not_soap(kind: Any, transient: bool, advice: str) -> None:
    exc = _tried(ServerAnswerError("Login", "an HTML page", kind, transient), 3)
    assert _said(exc) == f"vc01 sent an HTML page in answer to Login (tried 3 times); {advice}"


def test_message_for_a_certificate_not_trusted() -> None:
    exc = ssl.SSLCertVerificationError(1, "certificate verify failed")
    exc.verify_message = "self-signed certificate"
    assert _said(exc) == (
        "TLS verification failed for vc01: self-signed certificate. "
        "Pass --ca-file with the CA that signed the server's certificate, "
        "or --insecure to skip verification (not recommended)"
    )


def test_message_for_a_tls_handshake_that_fails() -> None:
    exc = ssl.SSLError(1, "wrong version")
    exc.reason = "WRONG_VERSION_NUMBER"
    assert _said(exc) == (
        "TLS handshake with vc01 failed (WRONG_VERSION_NUMBER). Is it an https port? "
        "Use an http:// URL only for a lab"
    )


def test_message_for_a_name_that_does_not_resolve() -> None:
    assert _said(socket.gaierror(-2, "Name or service not known")) == (
        "cannot resolve 'vc01': check the name given to --server and DNS"
    )


def test_message_for_a_refused_connection() -> None:
    assert _said(ConnectionRefusedError(111, "refused")) == (
        "connection refused by vc01: nothing listens there. "
        "Check the host and port given to --server"
    )
    assert _said(_tried(ConnectionRefusedError(111, "refused"), 2)).startswith(
        "connection refused by vc01 (tried 2 times): "
    )


def test_message_for_no_answer_in_time() -> None:
    assert _said(_tried(TimeoutError("timed out"), 4), timeout=2.5) == (
        "vc01 did not answer within 2.5 s (tried 4 times). "
        "Check the network path, or raise --timeout"
    )
    assert _said(TimeoutError(), timeout=60.0).startswith("vc01 did not answer within 60 s. ")


def test_message_for_an_http_error_status() -> None:
    exc = _tried(http.client.HTTPException("503 Service Unavailable"), 5)
    assert _said(exc) == (
        "vc01 answered HTTP 503 Service Unavailable (tried 5 times); "
        "check the vCenter's health and --server"
    )


def test_message_for_broken_xml() -> None:
    assert _said(ExpatError("not well-formed (invalid token): line 1, column 0")) == (
        "vc01 sent an answer that is not well-formed XML "
        "(not well-formed (invalid token): line 1, column 0)"
    )


def test_message_for_a_broken_connection() -> None:
    assert _said(ConnectionResetError(104, "reset by peer")) == (
        "the connection to vc01 broke: ConnectionResetError: [Errno 104] reset by peer"
    )
    assert _said(http.client.RemoteDisconnected("closed")) == (
        "the connection to vc01 broke: RemoteDisconnected: closed"
    )
    assert _said(http.client.IncompleteRead(b"ab")) == (
        "the connection to vc01 broke: IncompleteRead: IncompleteRead(2 bytes read)"
    )


def test_message_for_another_socket_error() -> None:
    assert _said(OSError(101, "Network is unreachable")) == (
        "cannot connect to vc01: Network is unreachable"
    )
    assert _said(OSError("no route")) == "cannot connect to vc01: no route"


def test_message_for_another_fault_or_error() -> None:
    assert _said(vim.fault.InvalidState(msg="host busy")) == "vc01 refused the login: host busy"
    assert _said(vmodl.fault.SystemError()) == "vc01 refused the login: vmodl.fault.SystemError"
    assert _said(ValueError("odd")) == "cannot connect to vc01: ValueError: odd"


# -- negotiate_version with a fake connection -----------------------------------------------

VERSIONS_XML = (
    b"<namespaces version='1.0'>"
    b"<namespace><name>urn:vim25</name><version>8.0.3.0</version>"
    b"<priorVersions><version>8.0.2.0</version><version>7.0.3.0</version></priorVersions>"
    b"</namespace>"
    b"<namespace><name>urn:sms</name><version>9.1.0.0</version></namespace>"
    b"</namespaces>"
)


class _Answer:
    def __init__(self, status: int, body: bytes) -> None:
        self.status, self.reason, self.body = status, "Reason", body

    def read(self) -> bytes:
        return self.body


class _Connection:
    """Stands in for http.client's connections: answers one GET, records what was asked."""

    made: ClassVar[list[tuple[str, int, dict[str, Any]]]] = []
    asked: ClassVar[list[tuple[str, str]]] = []
    closed = 0
    answer = _Answer(200, VERSIONS_XML)

    def __init__(self, host: str, port: int, **kwargs: Any) -> None:
        type(self).made.append((host, port, kwargs))

    def request(self, method: str, path: str) -> None:
        type(self).asked.append((method, path))

    def getresponse(self) -> _Answer:
        return type(self).answer

    def close(self) -> None:
        type(self).closed += 1


@pytest.fixture
def fake_http(monkeypatch: pytest.MonkeyPatch) -> type[_Connection]:
    class Fake(_Connection):
        made: ClassVar[list[tuple[str, int, dict[str, Any]]]] = []
        asked: ClassVar[list[tuple[str, str]]] = []
        closed = 0

    monkeypatch.setattr(connect.SoapAdapter, "HTTPSConnection", Fake)
    monkeypatch.setattr(connect.SoapAdapter, "HTTPConnection", Fake)
    return Fake


def _negotiate(server: Server, context: Any = None) -> str:
    return connect.negotiate_version(server, context, 7.5, resilience.NO_RETRY)


def test_negotiation_takes_the_newest_version_both_speak(fake_http: type[_Connection]) -> None:
    context = ssl.create_default_context()
    assert _negotiate(Server("vc01", 443, "https", "/sdk"), context) == "vim.version.v8_0_3_0"
    assert fake_http.made == [("vc01", 443, {"timeout": 7.5, "context": context})]
    assert fake_http.asked == [("GET", "/sdk/vimServiceVersions.xml")]
    assert fake_http.closed == 1


def test_negotiation_over_http_has_no_tls_context(fake_http: type[_Connection]) -> None:
    fake_http.answer = _Answer(
        200,
        b"<namespaces><namespace><name>urn:vim25</name><version>1.0</version>"
        b"<priorVersions><version>7.0.3.0</version></priorVersions></namespace></namespaces>",
    )
    assert _negotiate(Server("lab", 8989, "http", "/api")) == "vim.version.v7_0_3_0"
    assert fake_http.made == [("lab", 8989, {"timeout": 7.5})]
    assert fake_http.asked == [("GET", "/api/vimServiceVersions.xml")]


def test_negotiation_with_a_server_that_is_not_vsphere(fake_http: type[_Connection]) -> None:
    fake_http.answer = _Answer(404, b"<html>not here</html>")
    with pytest.raises(ConnectError) as caught:
        _negotiate(Server("web", 443, "https", "/x"))
    assert str(caught.value) == (
        "web does not look like vCenter or ESXi (no vimServiceVersions.xml at /x); "
        "check the URL given to --server: HTTP 404"
    )
    fake_http.answer = _Answer(200, b"<html>")
    with pytest.raises(ConnectError) as caught:
        _negotiate(Server("web", 443))
    assert str(caught.value) == (
        "web does not look like vCenter or ESXi (no vimServiceVersions.xml at /sdk); "
        "check the URL given to --server"
    )


def test_negotiation_with_no_common_version(fake_http: type[_Connection]) -> None:
    fake_http.answer = _Answer(
        200,
        b"<namespaces><namespace><name>urn:vim25</name><version>1.5</version>"
        b"<priorVersions><version>1.0</version><version/></priorVersions></namespace>"
        b"<namespace><name>urn:sms</name><version>8.0.3.0</version></namespace></namespaces>",
    )
    with pytest.raises(ConnectError) as caught:
        _negotiate(Server("old", 443))
    assert str(caught.value) == (
        "old offers API versions ['1.0', '1.5'] and this pyVmomi speaks none of them"
    )


def test_negotiation_gives_up_on_a_busy_server_without_retries(
    fake_http: type[_Connection],
) -> None:
    fake_http.answer = _Answer(503, b"")
    with pytest.raises(http.client.HTTPException, match=r"^503 Reason$"):
        _negotiate(Server("busy", 443))
    assert fake_http.closed == 1


# -- logout -----------------------------------------------------------------------------------


def test_logout_never_waits_long_nor_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    stub = resilience.ResilientStub(host="vc01", port=443, version="vim.version.v8_0_3_0")
    stub.relogin = lambda: None
    stub.schemeArgs["timeout"] = 60.0

    class Sock:
        timeouts: ClassVar[list[float]] = []

        def settimeout(self, value: float) -> None:
            self.timeouts.append(value)

    class Conn:
        sock = Sock()

    stub.pool = [(Conn(), 0.0)]
    ended: list[Any] = []
    monkeypatch.setattr(connect.pyvim_connect, "Disconnect", ended.append)
    si = vim.ServiceInstance("ServiceInstance", stub)
    connect.logout(si)
    assert ended == [si]
    assert stub.retry is resilience.NO_RETRY
    assert stub.relogin is None
    assert stub.schemeArgs["timeout"] == 10.0
    assert Sock.timeouts == [10.0]


def test_logout_keeps_a_shorter_timeout_and_survives_a_failing_disconnect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stub = resilience.ResilientStub(host="vc01", port=443, version="vim.version.v8_0_3_0")
    stub.schemeArgs["timeout"] = 3.0

    def fail(_si: Any) -> None:
        raise OSError("gone")

    monkeypatch.setattr(connect.pyvim_connect, "Disconnect", fail)
    connect.logout(vim.ServiceInstance("ServiceInstance", stub))
    assert stub.schemeArgs["timeout"] == 3.0
    stub.schemeArgs.pop("timeout")
    connect.logout(vim.ServiceInstance("ServiceInstance", stub))
    assert stub.schemeArgs["timeout"] == 10.0


# -- login with a fake stub and service instance ---------------------------------------------


class _Sessions:
    def __init__(self, fail: Exception | None = None) -> None:
        self.logins: list[tuple[str, str, None]] = []
        self.fail = fail

    def Login(self, user: str, password: str, locale: None) -> None:
        if self.fail is not None:
            raise self.fail
        self.logins.append((user, password, locale))


class _Stub:
    made: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        type(self).made.append(kwargs)
        self.relogin: Any = None


@pytest.fixture
def fake_login(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    world: dict[str, Any] = {"sessions": _Sessions(), "stubs": []}

    class Stub(_Stub):
        made: ClassVar[list[dict[str, Any]]] = world["stubs"]

    class ServiceInstance:
        def __init__(self, name: str, stub: Stub) -> None:
            world["si"], world["stub"] = self, stub

        def RetrieveContent(self) -> Any:
            return type("Content", (), {"sessionManager": world["sessions"]})()

    monkeypatch.setattr(connect, "negotiate_version", lambda *_a: "vim.version.v8_0_3_0")
    monkeypatch.setattr(connect.resilience, "ResilientStub", Stub)
    monkeypatch.setattr(connect.vim, "ServiceInstance", ServiceInstance)
    return world


def test_login_over_https_with_the_options_given(fake_login: dict[str, Any]) -> None:
    policy = resilience.RetryPolicy(attempts=2, restarts=0)
    si = connect.login(
        Server("vc01", 443), "audit", "pw", insecure=True, timeout=12.0, retry=policy
    )
    assert si is fake_login["si"]
    (made,) = fake_login["stubs"]
    context = made.pop("sslContext")
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_NONE
    assert made == {
        "host": "vc01",
        "port": 443,
        "path": "/sdk",
        "version": "vim.version.v8_0_3_0",
        "httpConnectionTimeout": 12.0,
        "retry": policy,
    }
    assert fake_login["sessions"].logins == [("audit", "pw", None)]
    fake_login["stub"].relogin()
    assert fake_login["sessions"].logins == [("audit", "pw", None)] * 2


def test_login_over_http_uses_a_negative_port_and_no_tls(fake_login: dict[str, Any]) -> None:
    connect.login(Server("lab", 8989, "http", "/api"), "audit", "pw")
    (made,) = fake_login["stubs"]
    assert (made["port"], made["path"], made["sslContext"]) == (-8989, "/api", None)
    assert made["httpConnectionTimeout"] == 60.0
    assert made["retry"] is resilience.current_policy()


def test_login_to_a_server_without_session_manager(fake_login: dict[str, Any]) -> None:
    fake_login["sessions"] = None
    with pytest.raises(ConnectError) as caught:
        connect.login(Server("vc01", 8443), "audit", "pw")
    assert str(caught.value) == "vc01:8443 offers no SessionManager to log in to"


def test_login_failure_becomes_one_message(fake_login: dict[str, Any]) -> None:
    fake_login["sessions"] = _Sessions(fail=vim.fault.InvalidLogin())
    with pytest.raises(ConnectError) as caught:
        connect.login(Server("vc01", 443), "audit", "pw")
    assert str(caught.value).startswith("login to vc01 failed for user 'audit': ")
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_login_lets_a_cassette_that_ran_out_say_so(fake_login: dict[str, Any]) -> None:
    class CannotOverwriteExistingCassetteException(Exception):
        pass

    fake_login["sessions"] = _Sessions(fail=CannotOverwriteExistingCassetteException("no"))
    with pytest.raises(CannotOverwriteExistingCassetteException):
        connect.login(Server("vc01", 443), "audit", "pw")


# -- survivors of the mutation run ------------------------------------------------------------


def test_a_password_holding_a_scheme_separator_is_still_cut_off() -> None:
    assert connect.split_userinfo("https://audit:pa://ss@vc01") == (
        "https://vc01",
        "audit:pa://ss",
    )


def test_a_path_keeps_its_letters_and_loses_only_trailing_slashes() -> None:
    assert parse_server("https://vc01/apiX//").path == "/apiX"


def test_an_insecure_context_is_still_a_client_context() -> None:
    assert connect.ssl_context(insecure=True).protocol == ssl.PROTOCOL_TLS_CLIENT


def test_logout_of_a_session_without_a_stub_or_with_a_closed_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ended: list[Any] = []
    monkeypatch.setattr(connect.pyvim_connect, "Disconnect", ended.append)
    plain = object()
    connect.logout(plain)
    stub = resilience.ResilientStub(host="vc01", port=443, version="vim.version.v8_0_3_0")

    class Closed:
        sock = None

    stub.pool = [(Closed(), 0.0)]
    si = vim.ServiceInstance("ServiceInstance", stub)
    connect.logout(si)
    assert ended == [plain, si]


def test_login_verifies_certificates_unless_told_and_negotiates_with_its_context(
    fake_login: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    context = ssl.create_default_context()
    contexts: list[tuple[bool, str | None]] = []
    negotiated: list[tuple[Any, ...]] = []

    def made_context(insecure: bool, ca_file: str | None) -> ssl.SSLContext:
        contexts.append((insecure, ca_file))
        return context

    def negotiate(*args: Any) -> str:
        negotiated.append(args)
        return "vim.version.v8_0_3_0"

    monkeypatch.setattr(connect, "ssl_context", made_context)
    monkeypatch.setattr(connect, "negotiate_version", negotiate)
    policy = resilience.RetryPolicy(attempts=2, restarts=0)
    server = Server("vc01", 443)
    connect.login(server, "audit", "pw", ca_file="/etc/vc-ca.pem", timeout=9.0, retry=policy)
    assert contexts == [(False, "/etc/vc-ca.pem")]  # no --insecure: certificates verified
    assert negotiated == [(server, context, 9.0, policy)]
    assert fake_login["stubs"][0]["sslContext"] is context


def test_a_retried_version_request_is_named_in_the_log(
    fake_http: type[_Connection], caplog: pytest.LogCaptureFixture
) -> None:
    answers = [_Answer(503, b""), _Answer(200, VERSIONS_XML)]
    fake_http.getresponse = lambda self: answers.pop(0)  # type: ignore[method-assign]
    policy = resilience.RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.01, restarts=0)
    with caplog.at_level("INFO", logger="gpuaudit.resilience"):
        version = connect.negotiate_version(Server("vc01", 443), None, 7.5, policy)
    assert version == "vim.version.v8_0_3_0"
    (retry,) = [r.getMessage() for r in caplog.records]
    assert retry.startswith("vimServiceVersions.xml: HTTP 503 Reason; trying again in ")
