"""gpuaudit.vsphere.cassette on hand-written requests and answers: matching and scrubbing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import pyVmomi.SoapAdapter

from gpuaudit.vsphere import cassette

ENV = '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">'


def _envelope(call: str) -> str:
    return f"{ENV}<soapenv:Body>{call}</soapenv:Body></soapenv:Envelope>"


RETRIEVE = _envelope(
    '<RetrieveProperties xmlns="urn:vim25">'
    '<_this type="PropertyCollector">propertyCollector</_this>'
    "<specSet>\n   <objectSet><obj>group-d1</obj></objectSet></specSet>"
    "</RetrieveProperties>"
)


def test_soap_call_names_operation_moref_and_arguments() -> None:
    assert cassette.soap_call(RETRIEVE) == (
        "RetrieveProperties",
        "PropertyCollector:propertyCollector",
        '<ns0:specSet xmlns:ns0="urn:vim25"> <ns0:objectSet><ns0:obj>group-d1</ns0:obj>'
        "</ns0:objectSet></ns0:specSet>",
    )
    assert cassette.soap_call(RETRIEVE.encode()) == cassette.soap_call(RETRIEVE)


def test_soap_call_of_a_moref_without_type_or_value() -> None:
    body = _envelope('<CurrentTime xmlns="urn:vim25"><_this/></CurrentTime>')
    assert cassette.soap_call(body) == ("CurrentTime", ":", "")


def test_soap_call_ignores_what_a_login_sends() -> None:
    login = _envelope(
        '<Login xmlns="urn:vim25"><_this type="SessionManager">SessionManager</_this>'
        "<userName>audit</userName><password>secret</password></Login>"
    )
    assert cassette.soap_call(login) == ("Login", "SessionManager:SessionManager", "")


def test_soap_call_of_no_body_something_not_xml_or_no_call() -> None:
    assert cassette.soap_call(None) == ("", "", "")
    assert cassette.soap_call(b"") == ("", "", "")
    assert cassette.soap_call(b"GET \xff<") == ("?", "", "GET \ufffd<")
    assert cassette.soap_call(_envelope("")) == ("?", "", "")
    assert cassette.soap_call(f"{ENV}</soapenv:Envelope>") == ("?", "", "")


def test_requests_match_on_their_call_not_their_bytes() -> None:
    spaced = RETRIEVE.replace("<specSet>\n   ", "<specSet>      ")
    cassette._match_soap(SimpleNamespace(body=RETRIEVE), SimpleNamespace(body=spaced))
    other = RETRIEVE.replace("group-d1", "group-d2")
    with pytest.raises(AssertionError) as caught:
        cassette._match_soap(SimpleNamespace(body=RETRIEVE), SimpleNamespace(body=other))
    assert str(caught.value) == (
        "('RetrieveProperties', 'PropertyCollector:propertyCollector') != "
        "('RetrieveProperties', 'PropertyCollector:propertyCollector')"
    )


def _request(body: Any, headers: dict[str, Any]) -> Any:
    return SimpleNamespace(
        headers=headers, body=body, uri="http://vc01.example.com:8989/sdk", path="/sdk"
    )


def test_recorded_request_loses_cookie_agent_password_and_host() -> None:
    scrubber = cassette._Scrubber()
    request = scrubber.request(
        _request(
            "<Login><password>p&amp;w</password><password xsi:type='s'>x</password></Login>",
            {
                "cookie": "vmware_soap_session=abc",
                "user-agent": b"pyvmomi 1.2 (riscv64)",
                "SOAPAction": "urn:vim25/8.0",
            },
        )
    )
    assert request.headers == {"SOAPAction": "urn:vim25/8.0"}
    assert request.body == (
        b"<Login><password>*****</password><password xsi:type='s'>*****</password></Login>"
    )
    assert request.uri == "http://vcenter.invalid/sdk"
    answer = b"<userName>pyvmomi 1.2 (riscv64)</userName>"
    out = scrubber.response({"headers": {}, "body": {"string": answer}})
    assert out["body"]["string"] == b"<userName>pyvmomi (user agent normalised)</userName>"


def test_recorded_request_without_body_keeps_none() -> None:
    request = cassette._Scrubber().request(_request(None, {"User-Agent": ""}))
    assert request.body is None
    assert request.headers == {}


def test_a_secret_learnt_from_an_answer_is_scrubbed_from_later_requests() -> None:
    scrubber = cassette._Scrubber()
    scrubber.response(
        {
            "headers": {"set-cookie": ['vmware_soap_session="c00k1e"; Path=/']},
            "body": {"string": b"<ok/>"},
        }
    )
    request = scrubber.request(_request(b"<x>c00k1e</x>", {}))
    assert request.body == b"<x>*****</x>"


def test_only_the_set_cookie_header_is_rewritten() -> None:
    headers = {
        "Set-Cookie": ['vmware_soap_session="s3ss"; Path=/'],
        "X-Note": ['vmware_soap_session="kept"'],
    }
    out = cassette._Scrubber().response({"headers": headers, "body": {"string": b"s3ss kept"}})
    assert out["headers"] == {
        "Set-Cookie": ['vmware_soap_session="*****"; Path=/'],
        "X-Note": ['vmware_soap_session="kept"'],
    }
    assert out["body"]["string"] == b"***** kept"


def test_session_key_is_scrubbed_only_from_a_login_answer() -> None:
    body = b"<RetrievePropertiesResponse><returnval><key>vm-42</key></returnval>"
    out = cassette._Scrubber().response({"headers": {}, "body": {"string": body}})
    assert out["body"]["string"] == body


def test_licence_keys_keep_their_last_group() -> None:
    body = b"<licenseKey>AB12C-DE34F-GH56I-JK78L-MN90P</licenseKey><licenseKey>00000</licenseKey>"
    out = cassette._Scrubber().response({"headers": {}, "body": {"string": body}})
    assert out["body"]["string"] == (
        b"<licenseKey>*****-*****-*****-*****-MN90P</licenseKey><licenseKey>00000</licenseKey>"
    )


def test_an_answer_without_a_body_is_left_alone() -> None:
    out = cassette._Scrubber().response({"headers": {}, "body": {"string": "text"}})
    assert out == {"headers": {}, "body": {"string": "text"}}
    assert cassette._Scrubber().response({}) == {}


def test_first_line_of_a_vcr_message() -> None:
    assert cassette._first_line("\n  Can't overwrite\nmore detail\n") == "Can't overwrite"
    assert cassette._first_line("   ") == "   "


def test_replaying_a_missing_cassette_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "none.yaml"
    with (
        pytest.raises(cassette.CassetteError, match=f"^{missing}: no such cassette$"),
        cassette.replaying(missing),
    ):
        pass


@pytest.mark.parametrize("text", ["[]\n", "interactions: {}\n", "version: 1\n"])
def test_a_file_that_is_no_cassette(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(cassette.CassetteError, match=f"^{path}: not a cassette$"):
        cassette.interactions(path)


def test_interactions_of_a_cassette(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("interactions:\n- {request: 1}\n- {request: 2}\nversion: 1\n", "utf-8")
    assert cassette.interactions(path) == [{"request": 1}, {"request": 2}]


def test_an_echoed_user_agent_element_holds_only_the_normalised_agent() -> None:
    body = b"<session><userAgent>govc/0.30 (another client)</userAgent></session>"
    out = cassette._Scrubber().response({"headers": {}, "body": {"string": body}})
    assert out["body"]["string"] == (
        b"<session><userAgent>pyvmomi (user agent normalised)</userAgent></session>"
    )


def test_answers_are_recorded_decompressed() -> None:
    # A gzip body would be stored as bytes no scrubber could read.
    assert cassette._vcr("none").decode_compressed_response is True


def test_a_user_agent_that_is_not_utf8_is_still_normalised() -> None:
    scrubber = cassette._Scrubber()
    scrubber.request(_request(None, {"User-Agent": b"pyvmomi caf\xe9"}))
    assert scrubber.user_agents == {"pyvmomi caf\ufffd"}


def test_the_scheme_is_what_precedes_the_first_separator() -> None:
    request = _request(None, {})
    request.uri = "https://vc01:443/sdk?next=http://elsewhere"
    assert cassette._Scrubber().request(request).uri == "https://vcenter.invalid/sdk"


# -- a real recording and replay, through the names pyVmomi binds ---------------------------

SECRET_SESSION = "52c0ffee-0d15-4a1e-9e5e-000000000001"


class _Vcenter(BaseHTTPRequestHandler):
    """Answers each POST with the count of calls so far, and a session cookie."""

    calls = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).calls += 1
        body = f"<answer>{type(self).calls}</answer>".encode()
        self.send_response(200)
        self.send_header("Set-Cookie", f'vmware_soap_session="{SECRET_SESSION}"; Path=/')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def vcenter() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Vcenter)
    _Vcenter.calls = 0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _post(host: str, port: int, call: str) -> bytes:
    # Looked up at call time, as pyVmomi does: the cassette patches this name.
    conn = pyVmomi.SoapAdapter.HTTPConnection(host, port, timeout=10)
    try:
        conn.request(
            "POST",
            "/sdk",
            _envelope(call),
            {"Cookie": f'vmware_soap_session="{SECRET_SESSION}"', "User-Agent": "pyvmomi t/1"},
        )
        return conn.getresponse().read()
    finally:
        conn.close()


LOGIN = (
    '<Login xmlns="urn:vim25"><_this type="SessionManager">SessionManager</_this>'
    "<userName>audit</userName><password>hunter2</password></Login>"
)
TIME = (
    '<CurrentTime xmlns="urn:vim25">'
    '<_this type="ServiceInstance">ServiceInstance</_this></CurrentTime>'
)


def test_recording_sends_every_call_and_scrubs_what_it_writes(vcenter: int, tmp_path: Path) -> None:
    path = tmp_path / "session.yaml"
    with cassette.recording(path):
        answers = [_post("127.0.0.1", vcenter, c) for c in (LOGIN, TIME, TIME)]
    # The same call twice reaches the server twice: nothing is answered from the recording.
    assert answers == [b"<answer>1</answer>", b"<answer>2</answer>", b"<answer>3</answer>"]
    text = path.read_text(encoding="utf-8")
    for secret in ("hunter2", SECRET_SESSION, "pyvmomi t/1", "127.0.0.1", str(vcenter)):
        assert secret not in text
    recorded = cassette.interactions(path)
    assert [r["request"]["uri"] for r in recorded] == ["http://vcenter.invalid/sdk"] * 3
    # The only headers sent were the cookie and the user agent.
    assert [r["request"]["headers"] for r in recorded] == [{}] * 3
    (cookie,) = recorded[0]["response"]["headers"]["Set-Cookie"]
    assert cookie == 'vmware_soap_session="*****"; Path=/'


def test_replay_answers_each_call_with_its_own_answer_in_any_order(
    vcenter: int, tmp_path: Path
) -> None:
    path = tmp_path / "session.yaml"
    with cassette.recording(path):
        _post("127.0.0.1", vcenter, LOGIN)
        _post("127.0.0.1", vcenter, TIME)
    with cassette.replaying(path):
        assert _post(cassette.REPLAY_HOST, 80, TIME) == b"<answer>2</answer>"
        assert _post(cassette.REPLAY_HOST, 80, LOGIN) == b"<answer>1</answer>"


def test_soap_call_without_namespaces_or_without_this() -> None:
    plain = _envelope(
        '<CurrentTime><_this type="ServiceInstance">ServiceInstance</_this></CurrentTime>'
    )
    assert cassette.soap_call(plain) == ("CurrentTime", "ServiceInstance:ServiceInstance", "")
    assert cassette.soap_call(_envelope('<CurrentTime xmlns="urn:vim25"/>')) == (
        "CurrentTime",
        "",
        "",
    )


def test_a_login_matches_whatever_order_its_parts_come_in() -> None:
    login = _envelope(
        '<Login xmlns="urn:vim25"><userName>audit</userName>'
        '<_this type="SessionManager">SessionManager</_this><password>x</password></Login>'
    )
    assert cassette.soap_call(login) == ("Login", "SessionManager:SessionManager", "")


def test_the_arguments_of_a_call_are_joined_with_nothing_between() -> None:
    wait = _envelope(
        '<WaitForUpdatesEx xmlns="urn:vim25"><_this type="PropertyCollector">pc</_this>'
        "<version>1</version><options><maxWaitSeconds>0</maxWaitSeconds></options>"
        "</WaitForUpdatesEx>"
    )
    _, _, args = cassette.soap_call(wait)
    assert args.startswith('<ns0:version xmlns:ns0="urn:vim25">1</ns0:version><ns0:options ')
    assert args.endswith("<ns0:maxWaitSeconds>0</ns0:maxWaitSeconds></ns0:options>")
