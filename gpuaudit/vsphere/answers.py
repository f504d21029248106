"""Answers pyVmomi cannot use: read whole, judged, and named.

pyVmomi parses an answer as it arrives and reads an HTML page that happens to be
well-formed, any other XML and an empty SOAP Body as *no result*; a corrupt
gzip body or a fault type it does not know escapes as a zlib or KeyError. So
``ResilientStub`` (resilience.py) reads each answer whole first
(``KeepingConnection``, ``WholeAnswer``) and, when pyVmomi fails on it or reads
nothing from it, ``judge_answer`` says what came back as a ``ServerAnswerError``
naming the call: never an empty result.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Callable
from typing import Any, Literal

from pyVmomi import VmomiSupport

Kind = Literal["not-soap", "malformed", "damaged", "unknown-fault", "unreadable"]


class ServerAnswerError(Exception):
    """An answer to ``call`` that is not a SOAP answer gpuaudit can use: ``what`` came back.

    ``kind`` sorts it for the advice a message gives: "not-soap" (something other
    than vCenter answered), "malformed" (not well-formed XML), "damaged" (a body
    that does not decode), "unknown-fault" (a fault type this pyVmomi does not
    know), "unreadable" (anything else). ``transient``: the same call may well
    be answered properly if asked again.
    """

    def __init__(self, call: str, what: str, kind: Kind, transient: bool = False) -> None:
        super().__init__(f"{what} in answer to {call}")
        self.call = call
        self.what = what
        self.kind = kind
        self.transient = transient


SOAP_ENVELOPE = "http://schemas.xmlsoap.org/soap/envelope/"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
_HTML_START = re.compile(
    rb"^\s*(<\?xml[^>]*>\s*)?(<!--.*?-->\s*)*<(!doctype\s+html|html)\b", re.I | re.S
)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _inflate(body: bytes, encoding: str) -> bytes:
    """``body`` without its Content-Encoding; ValueError when it does not decode whole."""
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "x-gzip", "deflate"):
        return body  # pyVmomi reads it as it is; so does the judgement
    # gzip, or deflate with or without its zlib header (pyVmomi accepts all three).
    tries = (16 + zlib.MAX_WBITS,) if encoding != "deflate" else (zlib.MAX_WBITS, -zlib.MAX_WBITS)
    for wbits in tries:
        inflater = zlib.decompressobj(wbits)
        try:
            text = inflater.decompress(body) + inflater.flush()
        except zlib.error:
            continue
        if inflater.eof:
            return text
    raise ValueError(f"a corrupt {encoding} body")


def judge_answer(
    call: str, status: int, encoding: str, content_type: str, body: bytes
) -> ServerAnswerError | None:
    """What is wrong with this answer to ``call``, or None for a SOAP answer that names it.

    Damage in transit (a body that does not decode, an empty or truncated one)
    and a non-SOAP answer with a status a busy server or its proxy gives (HTTP
    500) are transient; a whole answer that is not SOAP, an empty SOAP Body or an
    unknown fault would come back the same, and is not.
    """
    busy = status != 200  # only 200 and 500 reach pyVmomi's parser; 500: a busy server

    def wrong(what: str, kind: Kind, transient: bool = busy) -> ServerAnswerError:
        prefix = "" if status == 200 else f"HTTP {status} with "
        return ServerAnswerError(call, prefix + what, kind, transient)

    try:
        text = _inflate(body, encoding.strip().lower())
    except ValueError as exc:
        return wrong(str(exc), "damaged", transient=True)
    if not text.strip():
        return wrong("an empty body", "damaged", transient=True)
    if _HTML_START.match(text):
        return wrong("an HTML page", "not-soap")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        if "html" in content_type.lower():
            return wrong("an HTML page", "not-soap")
        return wrong(f"an answer that is not well-formed XML ({exc})", "malformed", True)
    if _local(root.tag).lower() == "html":
        return wrong("an HTML page", "not-soap")
    if root.tag != f"{{{SOAP_ENVELOPE}}}Envelope":
        return wrong(f"non-SOAP XML (root element <{_local(root.tag)}>)", "not-soap")
    soap_body = root.find(f"{{{SOAP_ENVELOPE}}}Body")
    first = soap_body[0] if soap_body is not None and len(soap_body) else None
    if first is None:
        return wrong("an empty SOAP body", "unreadable")
    if first.tag == f"{{{SOAP_ENVELOPE}}}Fault":
        return _judge_fault(call, first)
    if _local(first.tag) != f"{call}Response":
        return wrong(f"a SOAP answer to another call (<{_local(first.tag)}>)", "unreadable")
    return None


def _judge_fault(call: str, fault: ET.Element) -> ServerAnswerError:
    """A SOAP fault pyVmomi could not read: most often, a fault type it does not know."""
    message = " ".join((fault.findtext("faultstring") or "").split())  # one line
    said = f' ("{message}")' if message else ""
    detail = fault.find("detail")
    if detail is not None and len(detail):
        name = detail[0].get(f"{{{XSI}}}type") or _local(detail[0].tag).removesuffix("Fault")
        name = name.rsplit(":", 1)[-1]
        try:
            VmomiSupport.GetWsdlType(VmomiSupport.XMLNS_VMODL_BASE, name)
        except KeyError:
            return ServerAnswerError(call, f"an unknown fault type {name}{said}", "unknown-fault")
        return ServerAnswerError(call, f"a {name} fault that could not be read{said}", "unreadable")
    return ServerAnswerError(call, f"a SOAP fault that could not be read{said}", "unreadable")


class WholeAnswer:
    """An HTTP answer read to its end before pyVmomi reads it, so that one it cannot
    understand can be judged (``judge_answer``). pyVmomi needs only these four."""

    def __init__(self, response: Any) -> None:
        self._response = response
        self.status: int = response.status
        self.reason: str = response.reason
        self.body: bytes = response.read()
        self._unread = io.BytesIO(self.body)

    def getheader(self, name: str, default: str | None = None) -> str | None:
        value = self._response.getheader(name, default)
        return None if value is None else str(value)

    def read(self, amount: int | None = -1) -> bytes:
        return self._unread.read(-1 if amount is None else amount)


class KeepingConnection:
    """A pooled HTTP connection that hands each whole answer to ``keep`` as well."""

    def __init__(self, connection: Any, keep: Callable[[WholeAnswer], None]) -> None:
        self._connection = connection
        self._keep = keep

    def getresponse(self) -> WholeAnswer:
        answer = WholeAnswer(self._connection.getresponse())
        self._keep(answer)
        return answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)
