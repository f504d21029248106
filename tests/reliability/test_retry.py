"""The resilient stub on scripted answers: which failures are retried, how long it waits,
when it logs in again, and when the read must start over. No server needed."""

from __future__ import annotations

import errno
import http.client
import socket
import ssl
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any
from xml.parsers.expat import ExpatError

import pytest
from pyVmomi import SoapAdapter, vim, vmodl

from gpuaudit.vsphere import resilience
from gpuaudit.vsphere.resilience import ReadInterrupted, ResilientStub, RetryPolicy

POLICY = RetryPolicy(attempts=3, base_delay=0.5, max_delay=0.8, jitter=0.5, restarts=2)
Answer = Any  # a value to return, an exception to raise, or a callable of (op, mo, args)


class Script:
    """Stands in for SoapStubAdapter.InvokeMethod: answers from a list, records the calls."""

    def __init__(self, answers: list[Answer]) -> None:
        self.answers = list(answers)
        self.calls: list[str] = []

    def __call__(self, mo: Any, info: Any, args: Any, outer: Any = None) -> Any:
        self.calls.append(info.wsdlName)
        answer = self.answers.pop(0)
        if callable(answer) and not isinstance(answer, type):
            answer = answer(info.wsdlName, mo, args)
        if isinstance(answer, BaseException):
            raise answer
        return answer


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[list[Answer]], Any]]:
    made: list[Any] = []

    def make(answers: list[Answer]) -> Any:
        script = Script(answers)
        monkeypatch.setattr(SoapAdapter.SoapStubAdapter, "InvokeMethod", script)
        s = ResilientStub(host="vcenter.invalid", port=-80, retry=POLICY)
        s.waits = []
        s.sleep = s.waits.append
        s.script = script
        made.append(s)
        return s

    yield make


def call(s: Any, operation: str, mo: Any = None, args: Any = ()) -> Any:
    return s.InvokeMethod(mo, SimpleNamespace(wsdlName=operation), list(args))


def http_error(status: int, reason: str) -> http.client.HTTPException:
    return http.client.HTTPException(f"{status} {reason}")  # as pyVmomi raises it


TRANSIENT = [
    pytest.param(ConnectionResetError(errno.ECONNRESET, "reset"), id="reset"),
    pytest.param(http.client.RemoteDisconnected("closed"), id="dropped"),
    pytest.param(TimeoutError("timed out"), id="timeout"),
    pytest.param(http_error(503, "Service Unavailable"), id="503"),
    pytest.param(http_error(500, "Internal Server Error"), id="500"),
    pytest.param(ExpatError("no element found: line 1, column 0"), id="malformed"),
    pytest.param(http.client.IncompleteRead(b"<soap"), id="truncated"),
]


@pytest.mark.parametrize("failure", TRANSIENT)
def test_a_read_is_retried_then_succeeds(stub: Any, failure: BaseException) -> None:
    s = stub([failure, failure, "answer"])
    assert call(s, "RetrievePropertiesEx") == "answer"
    assert s.script.calls == ["RetrievePropertiesEx"] * 3
    assert len(s.waits) == 2


@pytest.mark.parametrize("failure", TRANSIENT)
def test_a_read_gives_up_after_the_last_attempt(stub: Any, failure: BaseException) -> None:
    s = stub([failure] * 3)
    with pytest.raises(type(failure)) as caught:
        call(s, "RetrieveServiceContent")
    assert len(s.script.calls) == POLICY.attempts
    assert resilience.attempts_of(caught.value) == POLICY.attempts


def test_backoff_doubles_within_its_bounds(stub: Any) -> None:
    policy = RetryPolicy(attempts=6, base_delay=0.5, max_delay=3.0, jitter=0.5)
    for draw in (0.0, 0.5, 0.999):
        waits = [policy.delay(i, lambda d=draw: d) for i in range(1, 6)]
        ceilings = [0.5, 1.0, 2.0, 3.0, 3.0]
        for wait, ceiling in zip(waits, ceilings, strict=True):
            assert ceiling * 0.5 <= wait <= ceiling
    assert policy.worst_wait == 0.5 + 1.0 + 2.0 + 3.0 + 3.0
    s = stub([TimeoutError()] * 2 + ["ok"])
    call(s, "QueryOptions")
    assert 0.25 <= s.waits[0] <= 0.5 and 0.4 <= s.waits[1] <= 0.8


NOT_TRANSIENT = [
    pytest.param(ssl.SSLCertVerificationError("certificate verify failed"), id="certificate"),
    pytest.param(socket.gaierror(socket.EAI_NONAME, "Name or service not known"), id="dns"),
    pytest.param(http_error(404, "Not Found"), id="404"),
    pytest.param(vim.fault.InvalidLogin(), id="invalid-login"),
    pytest.param(vim.fault.NoPermission(privilegeId="System.View"), id="no-permission"),
    pytest.param(vmodl.fault.InvalidArgument(invalidProperty="token"), id="fault"),
    pytest.param(KeyError("bug"), id="bug"),
]


@pytest.mark.parametrize("failure", NOT_TRANSIENT)
def test_what_retrying_cannot_fix_is_raised_at_once(stub: Any, failure: BaseException) -> None:
    s = stub([failure, "never asked"])
    with pytest.raises(type(failure)):
        call(s, "RetrievePropertiesEx")
    assert len(s.script.calls) == 1 and s.waits == []


def test_invalid_login_is_never_retried(stub: Any) -> None:
    s = stub([vim.fault.InvalidLogin(), "never asked"])
    with pytest.raises(vim.fault.InvalidLogin):
        call(s, "Login")
    assert s.script.calls == ["Login"]


def test_login_is_retried_when_the_connection_drops(stub: Any) -> None:
    s = stub([http.client.RemoteDisconnected("closed"), "session"])
    assert call(s, "Login") == "session"


def test_a_call_that_changes_state_is_retried_only_when_the_server_did_not_act(stub: Any) -> None:
    s = stub([TimeoutError("timed out"), "never asked"])
    with pytest.raises(TimeoutError):
        call(s, "PowerOnVM_Task")
    assert s.script.calls == ["PowerOnVM_Task"]
    s = stub([http_error(503, "Service Unavailable"), ConnectionRefusedError(), "done"])
    assert call(s, "PowerOnVM_Task") == "done"


def test_a_lost_page_restarts_the_read(stub: Any) -> None:
    s = stub([http.client.RemoteDisconnected("closed"), "never asked"])
    with pytest.raises(ReadInterrupted):
        call(s, "ContinueRetrievePropertiesEx", args=["token-1"])
    assert s.script.calls == ["ContinueRetrievePropertiesEx"]
    s = stub([http_error(503, "Service Unavailable"), "page"])  # 503: never processed
    assert call(s, "ContinueRetrievePropertiesEx", args=["token-1"]) == "page"


def not_authenticated() -> vim.fault.NotAuthenticated:
    return vim.fault.NotAuthenticated(privilegeId="System.View")


def test_one_relogin_then_the_call_again(stub: Any) -> None:
    logins: list[int] = []
    s = stub([not_authenticated(), "content"])
    s.relogin = lambda: logins.append(1)
    assert call(s, "RetrieveServiceContent") == "content"
    assert logins == [1] and s.relogins == 1 and s.generation == 1


def test_a_second_not_authenticated_is_final(stub: Any) -> None:
    logins: list[int] = []
    s = stub([not_authenticated(), not_authenticated(), "never asked"])
    s.relogin = lambda: logins.append(1)
    with pytest.raises(vim.fault.NotAuthenticated):
        call(s, "QueryOptions")
    assert logins == [1] and len(s.script.calls) == 2


def test_a_failed_relogin_is_raised_and_not_repeated(stub: Any) -> None:
    attempts: list[int] = []

    def relogin() -> None:
        attempts.append(1)
        raise vim.fault.InvalidLogin()

    s = stub([not_authenticated(), "never asked"])
    s.relogin = relogin
    with pytest.raises(vim.fault.InvalidLogin):
        call(s, "RetrievePropertiesEx")
    assert attempts == [1]


def test_no_relogin_for_session_calls_or_before_the_first_login(stub: Any) -> None:
    s = stub([not_authenticated()])
    with pytest.raises(vim.fault.NotAuthenticated):
        call(s, "RetrieveServiceContent")  # no relogin set yet: the first Login failed
    for operation in ("Login", "Logout"):
        s = stub([not_authenticated()])
        s.relogin = lambda: pytest.fail("must not log in again")
        with pytest.raises(vim.fault.NotAuthenticated):
            call(s, operation)


def view(s: Any, moid: str) -> Any:
    return vim.view.ContainerView(moid, s)


def filter_spec(obj: Any) -> Any:
    spec = vmodl.query.PropertyCollector.FilterSpec()
    spec.objectSet = [vmodl.query.PropertyCollector.ObjectSpec(obj=obj)]
    return spec


def test_what_a_dead_session_owned_is_not_asked_for_again(stub: Any) -> None:
    s = stub([])
    old = view(s, "session[1]view-1")
    page = [vmodl.query.PropertyCollector.ObjectContent(obj=old)]
    result = vmodl.query.PropertyCollector.RetrieveResult(token="t1", objects=page)
    s.script.answers = [
        lambda *_: old,  # CreateContainerView, in the first session
        result,  # RetrievePropertiesEx with a token
        not_authenticated(),  # ContinueRetrievePropertiesEx: the session has ended
    ]
    s.relogin = lambda: None
    assert call(s, "CreateContainerView") is old
    assert call(s, "RetrievePropertiesEx", args=[[filter_spec(old)], None]) is result
    with pytest.raises(ReadInterrupted, match="paging token"):
        call(s, "ContinueRetrievePropertiesEx", args=["t1"])
    assert s.relogins == 1
    # The view went with its session: reading it restarts, destroying it is a no-op.
    with pytest.raises(ReadInterrupted, match="view"):
        call(s, "RetrievePropertiesEx", args=[[filter_spec(old)], None])
    assert call(s, "DestroyView", mo=old) is None
    assert s.script.calls == [
        "CreateContainerView",
        "RetrievePropertiesEx",
        "ContinueRetrievePropertiesEx",
    ]


def test_destroy_view_whose_answer_was_lost(stub: Any) -> None:
    s = stub([TimeoutError(), vmodl.fault.ManagedObjectNotFound()])
    assert call(s, "DestroyView", mo=view(s, "view-1")) is None


def test_read_with_restarts_is_bounded(stub: Any) -> None:
    s = stub([])
    reads: list[int] = []

    def read() -> str:
        reads.append(1)
        if len(reads) <= POLICY.restarts:
            raise ReadInterrupted("lost")
        return "inventory"

    assert resilience.read_with_restarts(read, s, lambda _m: None) == "inventory"
    reads.clear()

    def never() -> str:
        reads.append(1)
        raise ReadInterrupted("lost")

    with pytest.raises(ReadInterrupted):
        resilience.read_with_restarts(never, s, lambda _m: None)
    assert len(reads) == POLICY.restarts + 1


def test_replays_do_not_retry() -> None:
    assert resilience.current_policy() is resilience.DEFAULT
    with resilience.using(resilience.NO_RETRY):
        assert resilience.current_policy().attempts == 1
    assert resilience.current_policy() is resilience.DEFAULT
