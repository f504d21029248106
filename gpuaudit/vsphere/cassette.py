"""Recording and replaying vCenter sessions as vcrpy cassettes.

pyVmomi binds HTTPConnection and HTTPSConnection when it is imported, so vcrpy's
default patching of http.client never sees its traffic: both modules that hold
those names (pyVmomi.SoapAdapter for SOAP calls, pyVim.connect for the version
negotiation) are patched explicitly.

Every SOAP call is ``POST /sdk``, so requests are matched on the SOAP operation,
the ``_this`` moref and the call's arguments, never on recorded order alone.

Before anything is written, the password, session cookies (wherever they appear,
bodies included), and the server's host and port are scrubbed, and licence keys
are cut to their last group, so a cassette can be attached to a support case.

The user agent is normalised wherever it appears: pyVmomi's names the recording
machine (``pyvmomi <version> Python/<version> (<system>; <kernel release>; <arch>)``)
and vCenter echoes it in answers (the ``UserSession`` of ``Login``, sessions and
events), so a cassette recorded on one machine would not match a recording of the
same estate on another. The request header is dropped and every echo in a
response body becomes :data:`USER_AGENT`.
"""

from __future__ import annotations

import contextlib
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape as xml_escape

import pyVim.connect
import pyVmomi.SoapAdapter
import vcr
import vcr.errors
from vcr.stubs import VCRHTTPConnection, VCRHTTPSConnection

# Where a replayed session "connects": the host is never resolved.
REPLAY_HOST = "vcenter.invalid"
SCRUBBED = "*****"
# What a recorded answer says in place of the recording machine's user agent.
USER_AGENT = "pyvmomi (user agent normalised)"

_SOAP_BODY = "{http://schemas.xmlsoap.org/soap/envelope/}Body"
_PASSWORD = re.compile(rb"(<password[^>]*>)[^<]*(</password>)")
_COOKIE_VALUE = re.compile(r'vmware_soap_session="?([^";\s]+)"?')
# A user agent echoed by the server, whoever sent it (a session listed by
# SessionManager may belong to another client).
_USER_AGENT_ELEMENT = re.compile(rb"(<userAgent>)[^<]*(</userAgent>)")
_SESSION_KEY = re.compile(rb"(<returnval[^>]*>\s*<key>)([^<]+)(</key>)")
# A licence key keeps its last group only, enough to tell keys apart.
_LICENCE_KEY = re.compile(rb"(<licenseKey>)(?:[0-9A-Za-z*]{5}-){4}([0-9A-Za-z]{5}</licenseKey>)")
_PATCHES = tuple(
    (module, name, stub)
    for module in (pyVmomi.SoapAdapter, pyVim.connect)
    for name, stub in (
        ("HTTPConnection", VCRHTTPConnection),
        ("HTTPSConnection", VCRHTTPSConnection),
    )
)


class CassetteError(Exception):
    """A cassette that cannot be read or does not hold the session asked of it."""


def soap_call(body: bytes | str | None) -> tuple[str, str, str]:
    """(operation, _this moref, canonical arguments) of a SOAP request body."""
    if not body:
        return ("", "", "")
    if isinstance(body, str):
        body = body.encode("utf-8")
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return ("?", "", body.decode("utf-8", "replace"))
    soap_body = root.find(_SOAP_BODY)
    call = soap_body[0] if soap_body is not None and len(soap_body) else None
    if call is None:
        return ("?", "", "")
    operation = call.tag.rsplit("}", 1)[-1]
    this = ""
    args = []
    for child in call:
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "_this":
            this = f"{child.get('type', '')}:{child.text or ''}"
        elif operation == "Login":
            continue  # credentials are scrubbed: any login matches the recorded one
        else:
            args.append(ET.tostring(child, encoding="unicode"))
    return (operation, this, re.sub(r"\s+", " ", "".join(args)))


def _match_soap(r1: Any, r2: Any) -> None:
    call1, call2 = soap_call(r1.body), soap_call(r2.body)
    assert call1 == call2, f"{call1[:2]} != {call2[:2]}"


class _Scrubber:
    """Removes secrets from requests and responses before vcrpy writes them."""

    def __init__(self) -> None:
        self.secrets: set[str] = set()
        # The user agents this process sent: echoed anywhere in an answer
        # (an event's message, a fault's text), they are normalised too.
        self.user_agents: set[str] = set()

    def request(self, request: Any) -> Any:
        for header in ("User-Agent", "user-agent"):
            agent = request.headers.get(header)
            if isinstance(agent, bytes):
                agent = agent.decode("utf-8", "replace")
            if agent:
                self.user_agents.add(agent)
        for header in ("Cookie", "User-Agent", "cookie", "user-agent"):
            request.headers.pop(header, None)
        if request.body:
            body = request.body if isinstance(request.body, bytes) else request.body.encode()
            request.body = self._scrub(
                _PASSWORD.sub(rb"\g<1>" + SCRUBBED.encode() + rb"\g<2>", body)
            )
        scheme = request.uri.split("://", 1)[0]
        request.uri = f"{scheme}://{REPLAY_HOST}{request.path}"
        return request

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        headers = response.get("headers", {})
        for name in list(headers):
            if name.lower() == "set-cookie":
                for value in headers[name]:
                    self.secrets.update(_COOKIE_VALUE.findall(value))
                headers[name] = [
                    _COOKIE_VALUE.sub(f'vmware_soap_session="{SCRUBBED}"', v) for v in headers[name]
                ]
        body = response.get("body", {}).get("string")
        if isinstance(body, bytes):
            if b"LoginResponse" in body:
                # The UserSession key identifies the live session.
                for match in _SESSION_KEY.finditer(body):
                    self.secrets.add(match.group(2).decode())
                body = _SESSION_KEY.sub(rb"\g<1>" + SCRUBBED.encode() + rb"\g<3>", body)
            body = _LICENCE_KEY.sub(rb"\g<1>*****-*****-*****-*****-\g<2>", body)
            response["body"]["string"] = self._normalise_user_agent(self._scrub(body))
        return response

    def _normalise_user_agent(self, data: bytes) -> bytes:
        normalised = USER_AGENT.encode()
        data = _USER_AGENT_ELEMENT.sub(rb"\g<1>" + normalised + rb"\g<2>", data)
        for agent in self.user_agents:
            for form in {agent, xml_escape(agent)}:
                data = data.replace(form.encode(), normalised)
        return data

    def _scrub(self, data: bytes) -> bytes:
        for secret in self.secrets:
            data = data.replace(secret.encode(), SCRUBBED.encode())
        return data


def _vcr(record_mode: str, scrubber: _Scrubber | None = None) -> vcr.VCR:
    scrub = scrubber or _Scrubber()
    recorder = vcr.VCR(
        record_mode=record_mode,
        match_on=["method", "path", "soap"],
        custom_patches=_PATCHES,
        decode_compressed_response=True,
        before_record_request=scrub.request,
        before_record_response=scrub.response,
    )
    recorder.register_matcher("soap", _match_soap)
    return recorder


@contextlib.contextmanager
def recording(path: str | Path) -> Iterator[None]:
    """Record every vSphere call made inside the block into a new cassette at ``path``."""
    target = Path(path)
    target.unlink(missing_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    failure: OSError | None = None
    with _vcr("all").use_cassette(str(target)) as recorded:
        try:
            yield
        finally:
            # Saved here: when vcrpy's own save fails (a full disk), it leaves its
            # patches of http.client and pyVmomi in place for the rest of the process.
            try:
                recorded._save()
            except OSError as exc:
                recorded.dirty = False
                failure = exc
    if failure is not None:
        raise failure


@contextlib.contextmanager
def replaying(path: str | Path) -> Iterator[None]:
    """Serve vSphere calls made inside the block from the cassette at ``path`` only.

    A request the cassette does not hold raises instead of reaching a network.
    """
    source = Path(path)
    if not source.is_file():
        raise CassetteError(f"{source}: no such cassette")
    try:
        with _vcr("none").use_cassette(str(source)):
            yield
    except vcr.errors.CannotOverwriteExistingCassetteException as exc:
        raise CassetteError(
            f"{source}: the session asked for a call the cassette does not hold "
            f"({_first_line(str(exc))})"
        ) from None


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def interactions(path: str | Path) -> list[dict[str, Any]]:
    """The recorded request/response pairs of a cassette, as vcrpy stores them."""
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise CassetteError(f"{path}: not a cassette")
    return list(data["interactions"])
