"""Surviving a flaky vCenter: bounded retries, one re-login, and a fresh read when needed.

Every SOAP call goes through ``ResilientStub``, a pyVmomi ``SoapStubAdapter``:

- A read (RetrieveServiceContent, RetrievePropertiesEx, QueryOptions, views, Login;
  see ``retryable``) that fails in transit (dropped connection, timeout, HTTP 5xx,
  a malformed answer) is tried again, at most ``RetryPolicy.attempts`` times in
  all, after an exponential backoff with jitter. Any call is tried again when the
  server certainly did not act on it (connection refused, HTTP 429, 502, 503).
- ``NotAuthenticated`` (the session expired or was terminated) leads to exactly
  one new Login with the same credentials, then the call is made again. A
  failed Login is never repeated for InvalidLogin.
- A call that cannot simply be repeated, because what it refers to (a
  ContainerView, a paging token) belonged to the session that is gone, or
  because its answer was lost after the server may have moved its paging on,
  raises ``ReadInterrupted``: the caller reads the inventory again from the
  start, in the same session (``read_with_restarts``), at most
  ``RetryPolicy.restarts`` times.
- An answer pyVmomi cannot understand, or reads as nothing when it is not a SOAP
  answer at all (an HTML page, non-SOAP XML, an empty SOAP Body, a corrupt gzip
  body, a fault of a type it does not know), raises ``ServerAnswerError``, which
  names the call and what came back (``judge_answer``). Only a damaged body and
  a non-SOAP answer with HTTP 500 are transient; the rest is refused at once.

Every wait is bounded: each socket operation by the connection timeout, each
backoff by ``RetryPolicy.max_delay``, the number of attempts by the policy.
"""

from __future__ import annotations

import contextlib
import contextvars
import http.client
import logging
import random
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar
from xml.parsers.expat import ExpatError

from pyVmomi import SoapAdapter, vim, vmodl

from gpuaudit.answers import KeepingConnection, ServerAnswerError, WholeAnswer, judge_answer

log = logging.getLogger("gpuaudit.resilience")
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3  # tries per call, the first one included
    base_delay: float = 0.5  # seconds before the first retry; doubles each time
    max_delay: float = 4.0  # cap on any one wait
    jitter: float = 0.5  # each wait is drawn from [delay * (1 - jitter), delay]
    restarts: int = 2  # fresh reads of the inventory after ReadInterrupted

    def delay(self, retry: int, draw: Callable[[], float] = random.random) -> float:
        """The wait before retry number ``retry`` (1 for the first)."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** (retry - 1))
        return ceiling * (1 - self.jitter * draw())

    @property
    def worst_wait(self) -> float:
        """The longest a call can spend waiting between its attempts."""
        return sum(
            min(self.max_delay, self.base_delay * 2 ** (i - 1)) for i in range(1, self.attempts)
        )


DEFAULT = RetryPolicy()
NO_RETRY = RetryPolicy(attempts=1, restarts=0)

_override: contextvars.ContextVar[RetryPolicy | None] = contextvars.ContextVar(
    "gpuaudit_retry_policy", default=None
)


def current_policy() -> RetryPolicy:
    """The policy new connections get: ``DEFAULT`` unless ``using`` says otherwise."""
    return _override.get() or DEFAULT


@contextlib.contextmanager
def using(policy: RetryPolicy) -> Iterator[None]:
    """Connections made in this block (in this thread) use ``policy``."""
    token = _override.set(policy)
    try:
        yield
    finally:
        _override.reset(token)


class ReadInterrupted(Exception):
    """A call refers to state the server no longer has; the read must start over."""


# -- what failed, and may it be tried again ----------------------------------

_STATUS = re.compile(r"^(\d{3})\b")
# Statuses a vCenter, its reverse proxy or a load balancer answer when it is busy
# or restarting; 429, 502 and 503 also mean that the request was not acted on.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
NOT_PROCESSED_STATUSES = frozenset({429, 502, 503})

# Calls that read, or whose repetition is harmless (a second view, a second session).
_RETRYABLE = frozenset(
    {
        "CreateContainerView",
        "CreateListView",
        "CreateInventoryView",
        "DestroyView",
        "Login",
        "CurrentTime",
        "Fetch",
    }
)
_READ_PREFIXES = ("Retrieve", "Query")
# Calls that start, continue or end a session: NotAuthenticated is final for them.
_SESSION_CALLS = frozenset({"Login", "LoginByToken", "LoginBySSPI", "Logout"})


def retryable(operation: str) -> bool:
    """May ``operation`` be sent again after its answer was lost?"""
    return operation in _RETRYABLE or operation.startswith(_READ_PREFIXES)


def http_status(exc: BaseException) -> int | None:
    """The status of pyVmomi's ``HTTPException("503 Service Unavailable")``, if it is one."""
    if type(exc) is http.client.HTTPException:
        match = _STATUS.match(str(exc))
        if match:
            return int(match.group(1))
    return None


def transient(exc: BaseException) -> str | None:
    """Why ``exc`` may pass if tried again, or None when it will not."""
    if isinstance(exc, ssl.SSLCertVerificationError | socket.gaierror):
        return None  # a certificate or a name does not fix itself
    if isinstance(exc, ssl.SSLError) and not isinstance(exc, ssl.SSLEOFError):
        return None
    status = http_status(exc)
    if status is not None:
        return f"HTTP {exc}" if status in RETRY_STATUSES else None
    if isinstance(exc, TimeoutError):
        return "no answer within the timeout"
    if isinstance(exc, ExpatError):
        return f"malformed answer ({exc})"
    if isinstance(exc, ServerAnswerError):
        return exc.what if exc.transient else None
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, OSError | http.client.HTTPException):
        return f"connection broken ({exc.__class__.__name__}: {exc})"
    return None


def not_processed(exc: BaseException) -> bool:
    """Did the server certainly not act on the request?"""
    return isinstance(exc, ConnectionRefusedError) or http_status(exc) in NOT_PROCESSED_STATUSES


def attempts_of(exc: BaseException) -> int:
    """How many times the call that raised ``exc`` was tried."""
    return int(getattr(exc, "_gpuaudit_attempts", 1))


def call_of(exc: BaseException) -> str | None:
    """The SOAP call that raised ``exc``, when a ResilientStub made it."""
    call = getattr(exc, "_gpuaudit_call", None)
    return call if isinstance(call, str) else None


def _mark(exc: BaseException, name: str, value: object) -> None:
    # Through __dict__: pyVmomi's faults refuse attributes set the usual way.
    with contextlib.suppress(TypeError):
        vars(exc)[name] = value


def call_with_retry(
    what: str, call: Callable[[], T], policy: RetryPolicy, sleep: Callable[[float], None]
) -> T:
    """``call()``, tried again after transient failures as the policy allows."""
    attempt = 1
    while True:
        try:
            return call()
        except Exception as exc:
            reason = transient(exc)
            if reason is None or attempt >= policy.attempts:
                if reason is not None:
                    exc._gpuaudit_attempts = attempt  # type: ignore[attr-defined]
                raise
            wait = policy.delay(attempt)
            attempt += 1
            log.info(
                "%s: %s; trying again in %.1f s (attempt %d of %d)",
                what,
                reason,
                wait,
                attempt,
                policy.attempts,
            )
            sleep(wait)


# -- the stub ----------------------------------------------------------------


def _returns_fault(info: Any) -> bool:
    """Does the method ``info`` describes answer with a fault object as its result?"""
    return isinstance(info.result, type) and issubclass(info.result, vmodl.MethodFault)


class ResilientStub(SoapAdapter.SoapStubAdapter):
    """A SoapStubAdapter that retries, logs in again once, and knows what a session owns."""

    def __init__(self, *args: Any, retry: RetryPolicy | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.retry = retry or current_policy()
        self.sleep: Callable[[float], None] = time.sleep
        # Logs in again with the same credentials; set once the first Login worked.
        self.relogin: Callable[[], Any] | None = None
        self.generation = 0  # sessions begun after the first one
        self.relogins = 0
        self._renewing = threading.Lock()
        # Views and paging tokens -> the generation of the session they belong to.
        self._owner: dict[str, int] = {}
        self._answers = threading.local()  # .last: this thread's latest whole answer

    def GetConnection(self) -> Any:
        connection = super().GetConnection()
        if isinstance(connection, KeepingConnection):
            return connection
        return KeepingConnection(connection, self._keep)

    def _keep(self, answer: WholeAnswer) -> None:
        self._answers.last = answer

    def _judged(self, operation: str, caught: Exception) -> Exception:
        """``caught``, or a ServerAnswerError saying what the answer to ``operation`` was."""
        if isinstance(caught, ServerAnswerError | vmodl.MethodFault | OSError):
            return caught
        if isinstance(caught, http.client.HTTPException | ReadInterrupted):
            return caught
        answer: WholeAnswer | None = getattr(self._answers, "last", None)
        if answer is None:
            return caught
        judged = self._judge(operation, answer)
        if judged is None:
            what = f"an answer that could not be read ({caught.__class__.__name__}: {caught})"
            return ServerAnswerError(operation, what, "unreadable")
        if isinstance(caught, ExpatError) and judged.kind == "malformed":
            return caught  # truncated or damaged XML: retried and described as it always was
        return judged

    def _judge(self, operation: str, answer: WholeAnswer) -> ServerAnswerError | None:
        return judge_answer(
            operation,
            answer.status,
            answer.getheader("Content-Encoding") or "",
            answer.getheader("Content-Type") or "",
            answer.body,
        )

    def _nothing_read(self, operation: str) -> None:
        """pyVmomi read no result: fine for a SOAP answer that says so, never for another."""
        answer: WholeAnswer | None = getattr(self._answers, "last", None)
        if answer is not None:
            judged = self._judge(operation, answer)
            if judged is not None:
                raise judged

    def InvokeMethod(self, mo: Any, info: Any, args: Any, outerStub: Any = None) -> Any:
        operation = str(info.wsdlName)
        attempt = 1
        renewed = False
        while True:
            stale = self._stale(operation, mo, args)
            if stale is not None:
                if operation == "DestroyView":
                    return None  # the view ended with its session
                raise ReadInterrupted(
                    f"{operation} refers to {stale}, which belonged to a session that has ended"
                )
            generation = self.generation
            started = time.monotonic()
            self._answers.last = None
            try:
                result = super().InvokeMethod(mo, info, args, outerStub)
                if result is None:
                    self._nothing_read(operation)
                elif isinstance(result, vmodl.MethodFault) and not _returns_fault(info):
                    raise result  # a fault sent with HTTP 200 is a fault all the same
            except vim.fault.NotAuthenticated:
                if renewed or self.relogin is None or operation in _SESSION_CALLS:
                    raise
                log.info("%s: the session has ended; logging in again", operation)
                self._renew(generation)
                renewed = True
                continue
            except vmodl.fault.ManagedObjectNotFound:
                if operation == "DestroyView" and attempt > 1:
                    return None  # an earlier attempt destroyed it; its answer was lost
                raise
            except Exception as caught:
                exc = self._judged(operation, caught)
                _mark(exc, "_gpuaudit_call", operation)
                reason = transient(exc)
                if reason is None:
                    raise exc from (None if exc is caught else caught)
                again = retryable(operation) or not_processed(exc)
                if not again and operation == "ContinueRetrievePropertiesEx":
                    # The server may have moved past this page: only a fresh read is safe.
                    raise ReadInterrupted(
                        f"{operation} failed after the server may have acted on it: {reason}"
                    ) from exc
                if not again or attempt >= self.retry.attempts:
                    _mark(exc, "_gpuaudit_attempts", attempt)
                    raise exc from (None if exc is caught else caught)
                wait = self.retry.delay(attempt)
                attempt += 1
                log.info(
                    "%s: %s; trying again in %.1f s (attempt %d of %d)",
                    operation,
                    reason,
                    wait,
                    attempt,
                    self.retry.attempts,
                )
                self.sleep(wait)
                continue
            log.debug("%s answered in %.3f s", operation, time.monotonic() - started)
            self._remember(result, generation)
            return result

    def _renew(self, generation: int) -> None:
        """Log in again, once for all the callers that saw the same session end."""
        assert self.relogin is not None
        with self._renewing:
            if self.generation != generation:
                return  # another thread has logged in already
            self.relogin()
            self.generation += 1
            self.relogins += 1

    def _remember(self, result: Any, generation: int) -> None:
        if isinstance(result, vim.view.View):
            self._owner[result._moId] = generation
        elif isinstance(result, vmodl.query.PropertyCollector.RetrieveResult) and result.token:
            self._owner[f"token:{result.token}"] = generation

    def _stale(self, operation: str, mo: Any, args: Any) -> str | None:
        """What this call refers to that belonged to an earlier session, if anything."""
        if not self._owner:
            return None

        def old(key: str) -> bool:
            owner = self._owner.get(key)
            return owner is not None and owner < self.generation

        if mo is not None and old(str(getattr(mo, "_moId", ""))):
            return f"view {mo._moId}"
        if operation in ("ContinueRetrievePropertiesEx", "CancelRetrievePropertiesEx"):
            if args and old(f"token:{args[0]}"):
                return "a paging token"
            return None
        for arg in args or ():
            specs = arg if isinstance(arg, list) else [arg]
            for spec in specs:
                if isinstance(spec, vmodl.query.PropertyCollector.FilterSpec):
                    for item in spec.objectSet or []:
                        if item.obj is not None and old(str(item.obj._moId)):
                            return f"view {item.obj._moId}"
        return None


def read_with_restarts(read: Callable[[], T], stub: Any, say: Callable[[str], None]) -> T:
    """``read()``, started again after ReadInterrupted as often as the stub's policy allows."""
    policy: RetryPolicy = getattr(stub, "retry", NO_RETRY)
    restarts = 0
    while True:
        try:
            return read()
        except ReadInterrupted as exc:
            if restarts >= policy.restarts:
                raise
            restarts += 1
            log.info("%s; reading the inventory again (%d of %d)", exc, restarts, policy.restarts)
            say("reading the inventory again")
