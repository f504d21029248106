"""A fault-injecting HTTP proxy between pyVmomi and the lab, for answers the lab never gives.

    with FaultProxy(lab.url, [Fault("RetrievePropertiesEx", HTML_PAGE)]) as proxy:
        ... scan proxy.url ...
    assert proxy.injected == 1

``FaultProxy`` is a standard-library threaded HTTP server on 127.0.0.1 (an
ephemeral port). Each request is read whole; its SOAP operation is the local name
of the first child of the SOAP Body (a GET, such as ``vimServiceVersions.xml``,
has none). Calls are counted per operation from 1; a ``Fault`` replaces the
answers to calls ``first`` to ``last`` of its operation (``last=None``: every
one from ``first`` on) with its own status, headers and body, and the request
never reaches the lab. Every other request is forwarded to the lab on a fresh
http.client connection, and its answer comes back unchanged (framing headers
aside: the proxy sends each answer with a Content-Length and keeps the client's
connection open, as pyVmomi's connection pool expects). ``calls`` lists the
operations in the order they arrived, ``injected`` counts the answers replaced.
"""

from __future__ import annotations

import gzip
import http.client
import http.server
import re
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from urllib.parse import urlsplit

# Headers that describe one hop's framing, not the answer: the proxy sets its own.
_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length"})
# The first element after <...:Body>: the operation (pyVmomi and the lab both write it so).
_OPERATION = re.compile(rb"<(?:[\w.-]+:)?Body\b[^>]*>\s*<(?:[\w.-]+:)?([\w.-]+)")


@dataclass(frozen=True)
class Answer:
    """What the proxy sends instead of the lab's answer."""

    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "text/xml; charset=utf-8"),)


@dataclass(frozen=True)
class Fault:
    """Answer calls ``first`` to ``last`` (counted from 1) of ``operation`` with ``answer``."""

    operation: str
    answer: Answer
    first: int = 1
    last: int | None = 1  # None: every call from ``first`` on

    def covers(self, operation: str, number: int) -> bool:
        return (
            operation == self.operation
            and number >= self.first
            and (self.last is None or number <= self.last)
        )


def operation_of(request_body: bytes) -> str:
    """The SOAP operation a request calls, or "" for one that is not a SOAP call."""
    match = _OPERATION.search(request_body)
    return match.group(1).decode() if match else ""


class FaultProxy:
    """Forwards to ``target`` (the lab's URL); replaces the answers ``faults`` name."""

    def __init__(self, target: str, faults: Sequence[Fault] = ()) -> None:
        parts = urlsplit(target)
        if parts.scheme != "http" or not parts.hostname or not parts.port:
            raise ValueError(f"{target!r}: the proxy forwards to a plain http URL with a port")
        self.target_host, self.target_port = parts.hostname, parts.port
        self.path = parts.path or "/sdk"
        self.faults = list(faults)
        self.calls: list[str] = []
        self.injected = 0
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.path}"

    def start(self) -> FaultProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def replacement(self, request_body: bytes) -> Answer | None:
        """Count this request; the answer a fault puts in place of the lab's, if any."""
        operation = operation_of(request_body)
        with self._lock:
            self.calls.append(operation)
            self._counts[operation] += 1
            number = self._counts[operation]
            for fault in self.faults:
                if operation and fault.covers(operation, number):
                    self.injected += 1
                    return fault.answer
        return None

    def forward(
        self, method: str, path: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, str, list[tuple[str, str]], bytes]:
        conn = http.client.HTTPConnection(self.target_host, self.target_port, timeout=60)
        try:
            conn.request(method, path, body=body or None, headers=dict(headers))
            response = conn.getresponse()
            return response.status, response.reason, response.getheaders(), response.read()
        finally:
            conn.close()

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as vCenter does

            def do_GET(self) -> None:
                self._relay()

            def do_POST(self) -> None:
                self._relay()

            def _relay(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                answer = proxy.replacement(body)
                if answer is not None:
                    status, headers, payload = answer.status, list(answer.headers), answer.body
                else:
                    sent = [(k, v) for k, v in self.headers.items() if k.lower() not in _HOP]
                    status, _, headers, payload = proxy.forward(self.command, self.path, sent, body)
                self.send_response(status)
                for name, value in headers:
                    if name.lower() not in _HOP:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass  # quiet: pytest shows failures, not traffic

        return Handler


# -- the bad answers ---------------------------------------------------------

_ENVELOPE = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
    "<soapenv:Body>{}</soapenv:Body></soapenv:Envelope>"
)


def soap_fault(fault_type: str, message: str, detail: str = "") -> bytes:
    """A vSphere SOAP fault of ``fault_type`` (its detail element holds ``detail``)."""
    return _ENVELOPE.format(
        "<soapenv:Fault><faultcode>ServerFaultCode</faultcode>"
        f"<faultstring>{message}</faultstring><detail>"
        f'<{fault_type}Fault xmlns="urn:vim25" xsi:type="{fault_type}">{detail}'
        f"</{fault_type}Fault></detail></soapenv:Fault>"
    ).encode()


HTML_PAGE = Answer(
    200,
    b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head>"
    b"<body><p>Please sign in<br><form></form></body></html>",
    (("Content-Type", "text/html; charset=utf-8"),),
)
# Served as XML: only its root element says it is a page.
XHTML_PAGE = Answer(
    200,
    b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml">'
    b"<body><p>Service moved</p></body></html>",
)
HTML_PAGE_500 = Answer(
    500,
    b"<html><head><title>500 Internal Server Error</title></head>"
    b"<body><center><h1>500 Internal Server Error</h1></center><hr></body></html>",
    (("Content-Type", "text/html"),),
)
EMPTY_BODY = Answer(200, b"")
NON_SOAP_XML = Answer(200, b'<?xml version="1.0"?><status><code>ok</code></status>')
EMPTY_SOAP_BODY = Answer(200, _ENVELOPE.format("").encode())
NON_SOAP_XML_500 = Answer(
    500, b'<?xml version="1.0"?><error><code>42</code><text>backend down</text></error>'
)
CORRUPT_GZIP = Answer(
    200,
    gzip.compress(_ENVELOPE.format("").encode())[:12] + b"\x00 not gzip any more \xff" * 4,
    (("Content-Type", "text/xml; charset=utf-8"), ("Content-Encoding", "gzip")),
)
# Its message runs over two lines, as some of vCenter's do.
UNKNOWN_FAULT = Answer(500, soap_fault("FrobnicationFault", "the frobnicator\n  is jammed"))
