"""Connecting to vCenter or ESXi: server parsing, TLS, login, and clear failures.

Every way a connection can fail becomes a ConnectError whose message says what
happened and what to do; the command line prints it and exits 3. A session is
always logged out, on errors too. Calls are retried and a lost session renewed
as gpuaudit/vsphere/resilience.py describes; every socket operation has ``timeout``.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit
from xml.parsers.expat import ExpatError

from pyVim import connect as pyvim_connect
from pyVmomi import SoapAdapter, VmomiSupport, vim, vmodl

from gpuaudit.common import debuglog
from gpuaudit.vsphere import resilience

DEFAULT_TIMEOUT = 60.0
# A timeout outside these bounds is a mistake: too short for any vCenter, or never.
MIN_TIMEOUT, MAX_TIMEOUT = 1.0, 86400.0
# Logging out is a courtesy to the server: it never waits long, nor twice.
LOGOUT_TIMEOUT = 10.0


@dataclass(frozen=True)
class Server:
    """Where to connect: parsed from a host, host:port or URL."""

    host: str
    port: int
    protocol: str = "https"
    path: str = "/sdk"

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.protocol}://{host}:{self.port}{self.path}"

    @property
    def display(self) -> str:
        """The name to show and to use in report file names."""
        default = 443 if self.protocol == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default else f"{host}:{self.port}"


class ConnectError(Exception):
    """A connection or login failure, with a message a person can act on."""


def split_userinfo(server: str) -> tuple[str, str | None]:
    """``server`` without any user:password@ it carries, and that user:password.

    The user information ends at the last ``@``: a password typed into a URL
    unquoted may hold ``/``, ``#``, ``?``, ``@`` or ``:``, which would otherwise
    be read as the end of the host, and so be shown in a message.
    """
    text = server.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "", text
    userinfo, at, host_part = rest.rpartition("@")
    if not at:
        return text, None
    return f"{scheme}{sep}{host_part}", userinfo


def shown_server(server: str) -> str:
    """``server`` for a message or a report: never with its user:password@."""
    return split_userinfo(server)[0]


def parse_server(server: str) -> Server:
    """Parse ``vc.example.com``, ``vc.example.com:8443``, ``[::1]:443`` or a URL.

    Plain http is used only when the URL says so (the lab); anything else is https.
    User information in a URL is ignored here: credentials travel separately, and
    messages never repeat it (nor does urlsplit see it, so its errors cannot).
    """
    text, _ = split_userinfo(server)
    shown = text
    if not text:
        raise ConnectError("no server given: pass --server (a host name, host:port or URL)")
    if "://" not in text:
        text = "https://" + text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ConnectError(f"cannot parse server {shown!r}: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise ConnectError(f"server {shown!r}: the scheme must be https (or http for a lab)")
    if not parts.hostname:
        raise ConnectError(f"server {shown!r} names no host")
    if port is None:
        port = 443 if parts.scheme == "https" else 80
    path = parts.path.rstrip("/") or "/sdk"
    return Server(host=parts.hostname, port=port, protocol=parts.scheme, path=path)


def ssl_context(insecure: bool = False, ca_file: str | None = None) -> ssl.SSLContext:
    """Verify against the system CAs, or ``ca_file``; skip verification only if asked."""
    if insecure:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    try:
        return ssl.create_default_context(cafile=ca_file)
    except (OSError, ssl.SSLError) as exc:
        raise ConnectError(f"cannot load the CA file {ca_file}: {exc}") from None


@contextlib.contextmanager
def session(server: Server, user: str, password: str, **options: Any) -> Iterator[Any]:
    """Log in (``options`` as for ``login``) and yield the service instance; always log out."""
    si = login(server, user, password, **options)
    try:
        yield si
    finally:
        logout(si)


def login(
    server: Server,
    user: str,
    password: str,
    *,
    insecure: bool = False,
    ca_file: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    retry: resilience.RetryPolicy | None = None,
) -> Any:
    """Negotiate the API version, log in, and return the service instance.

    The session renews itself once when the server ends it (resilience.py).
    """
    debuglog.add_secret(password)
    policy = retry or resilience.current_policy()
    context = ssl_context(insecure, ca_file) if server.protocol == "https" else None
    try:
        version = negotiate_version(server, context, timeout, policy)
        stub = resilience.ResilientStub(
            host=server.host,
            # pyVmomi's convention: a negative port means plain http.
            port=server.port if server.protocol == "https" else -server.port,
            path=server.path,
            version=version,
            sslContext=context,
            httpConnectionTimeout=timeout,
            retry=policy,
        )
        si = vim.ServiceInstance("ServiceInstance", stub)
        sessions = si.RetrieveContent().sessionManager
        if sessions is None:
            raise ConnectError(f"{server.display} offers no SessionManager to log in to")
        sessions.Login(user, password, None)
        stub.relogin = lambda: sessions.Login(user, password, None)
        return si
    except ConnectError:
        raise
    except Exception as exc:  # every failure becomes one clear message
        if exc.__class__.__name__ == "CannotOverwriteExistingCassetteException":
            raise  # a replayed session ran past its cassette: not a network failure
        raise ConnectError(describe_failure(exc, server, user, timeout)) from None


def negotiate_version(
    server: Server,
    context: ssl.SSLContext | None,
    timeout: float,
    retry: resilience.RetryPolicy | None = None,
) -> str:
    """The newest API version both pyVmomi and the server speak (vimServiceVersions.xml).

    Done here rather than by SmartConnect so that the request has a timeout, is
    retried like any other read, and a server that is not vSphere gets a message
    that says so.
    """

    def fetch() -> tuple[int, bytes]:
        # Looked up at call time: cassettes patch the names in pyVmomi.SoapAdapter.
        if server.protocol == "https":
            conn: http.client.HTTPConnection = SoapAdapter.HTTPSConnection(
                server.host, server.port, timeout=timeout, context=context
            )
        else:
            conn = SoapAdapter.HTTPConnection(server.host, server.port, timeout=timeout)
        try:
            conn.request("GET", server.path + "/vimServiceVersions.xml")
            response = conn.getresponse()
            body = response.read()
        finally:
            conn.close()
        if response.status in resilience.RETRY_STATUSES:
            raise http.client.HTTPException(f"{response.status} {response.reason}")
        return response.status, body

    policy = retry or resilience.current_policy()
    status, body = resilience.call_with_retry("vimServiceVersions.xml", fetch, policy, time.sleep)
    not_vsphere = (
        f"{server.display} does not look like vCenter or ESXi "
        "(no vimServiceVersions.xml at {path}); check the URL given to --server"
    ).replace("{path}", server.path)
    if status != 200:
        raise ConnectError(f"{not_vsphere}: HTTP {status}")
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        raise ConnectError(not_vsphere) from None
    offered = set()
    for namespace in root.findall("namespace"):
        if namespace.findtext("name") == "urn:vim25":
            offered.add(namespace.findtext("version"))
            offered.update(v.text for v in namespace.findall("priorVersions/version"))
    for candidate in VmomiSupport.GetServiceVersions("vim25"):
        if VmomiSupport.versionIdMap.get(candidate) in offered:
            return str(candidate)
    raise ConnectError(
        f"{server.display} offers API versions {sorted(v for v in offered if v)} "
        "and this pyVmomi speaks none of them"
    )


def logout(si: Any) -> None:
    """End the session; a failure to log out never hides the real outcome, nor waits long."""
    stub = getattr(si, "_stub", None)
    if isinstance(stub, resilience.ResilientStub):
        stub.retry = resilience.NO_RETRY
        stub.relogin = None
        current = stub.schemeArgs.get("timeout") or LOGOUT_TIMEOUT
        stub.schemeArgs["timeout"] = min(current, LOGOUT_TIMEOUT)
        for conn, _ in list(stub.pool):
            with contextlib.suppress(Exception):
                conn.sock.settimeout(min(current, LOGOUT_TIMEOUT))
    with contextlib.suppress(Exception):
        pyvim_connect.Disconnect(si)


def describe_failure(exc: BaseException, server: Server, user: str, timeout: float) -> str:
    """One sentence that says what went wrong and what to do. Never echoes a password."""
    where = server.display
    tries = resilience.attempts_of(exc)
    tried = f" (tried {tries} times)" if tries > 1 else ""
    if isinstance(exc, resilience.ReadInterrupted):
        return (
            f"reading the inventory from {where} was interrupted too often: {exc}. "
            "Check the vCenter's health and scan again"
        )
    if isinstance(exc, vim.fault.NotAuthenticated):
        return (
            f"{where} ended the session of user {user!r} and logging in again did not "
            "restore it; check the vCenter's session limits and scan again"
        )
    if isinstance(exc, vim.fault.InvalidLogin):
        return (
            f"login to {where} failed for user {user!r}: the user name or password is wrong "
            "(check GPUAUDIT_PASSWORD, --password-file or --user)"
        )
    if isinstance(exc, vim.fault.NoPermission):
        # Name a privilege only when the server named it.
        said = " ".join(str(getattr(exc, "msg", "") or "NoPermission").split())
        lacks = f"it lacks the {exc.privilegeId} privilege" if exc.privilegeId else said
        return f"user {user!r} may not log in to {where}: {lacks}"
    if isinstance(exc, resilience.ServerAnswerError):
        return f"{where} sent {exc}{tried}; {_answer_advice(exc)}"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return (
            f"TLS verification failed for {where}: {exc.verify_message}. "
            "Pass --ca-file with the CA that signed the server's certificate, "
            "or --insecure to skip verification (not recommended)"
        )
    if isinstance(exc, ssl.SSLError):
        return (
            f"TLS handshake with {where} failed ({exc.reason or exc}). Is it an https port? "
            "Use an http:// URL only for a lab"
        )
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve {server.host!r}: check the name given to --server and DNS"
    if isinstance(exc, ConnectionRefusedError):
        return (
            f"connection refused by {where}{tried}: nothing listens there. "
            "Check the host and port given to --server"
        )
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return (
            f"{where} did not answer within {timeout:g} s{tried}. "
            "Check the network path, or raise --timeout"
        )
    status = resilience.http_status(exc)
    if status is not None:
        return f"{where} answered HTTP {exc}{tried}; check the vCenter's health and --server"
    if isinstance(exc, ExpatError):
        return f"{where} sent an answer that is not well-formed XML ({exc}){tried}"
    if isinstance(exc, (ConnectionError, http.client.HTTPException)):
        return f"the connection to {where} broke{tried}: {exc.__class__.__name__}: {exc}"
    if isinstance(exc, OSError):
        return f"cannot connect to {where}: {exc.strerror or exc}"
    if isinstance(exc, vmodl.MethodFault):
        return f"{where} refused the login: {getattr(exc, 'msg', '') or exc.__class__.__name__}"
    return f"cannot connect to {where}: {exc.__class__.__name__}: {exc}"


def _answer_advice(exc: resilience.ServerAnswerError) -> str:
    if exc.kind == "not-soap" and not exc.transient:
        return "check that --server names the vCenter itself, not a proxy or a sign-in page"
    if exc.kind == "unknown-fault":
        return "the vCenter may be newer than this gpuaudit: update it and scan again"
    return "check the vCenter's health and scan again"
