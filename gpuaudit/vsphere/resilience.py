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

tenacity runs the loops: the attempts, their exponential backoff, when to stop
and the log line before each wait (``RetryPolicy.retrying``), and the fresh
reads after ReadInterrupted. What stays here is what a retry library cannot
know: which SOAP calls may be repeated and which failures are transient
(``transient``, ``retryable``, ``not_processed``), the judgement of an answer
pyVmomi could not read, the one new Login per call after NotAuthenticated (it
is not an attempt: the call is made again at once, without backoff), and the
views and paging tokens a session owns, which make a call after a new Login
stale rather than repeatable.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
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

import tenacity
from pyVmomi import SoapAdapter, vim, vmodl

from gpuaudit.vsphere.answers import KeepingConnection, ServerAnswerError, WholeAnswer, judge_answer

# The name JSON logs show as "logger", kept when the module moved into gpuaudit.vsphere.
log = logging.getLogger("gpuaudit.resilience")
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3  # tries per call, the first one included
    base_delay: float = 0.5  # seconds before the first retry; doubles each time
    max_delay: float = 4.0  # cap on any one wait
    jitter: float = 0.5  # each wait is drawn from [delay * (1 - jitter), delay]
    restarts: int = 2  # fresh reads of the inventory after ReadInterrupted

    def backoff(self, draw: Callable[[], float] = random.random) -> tenacity.wait.wait_base:
        """Exponential waits from ``base_delay``, capped at ``max_delay``, each shortened
        by up to ``jitter`` of itself so that clients do not retry in step."""
        ceiling = tenacity.wait_exponential(multiplier=self.base_delay, max=self.max_delay)
        return _Shortened(ceiling, self.jitter, draw)

    def delay(self, retry: int, draw: Callable[[], float] = random.random) -> float:
        """The wait before retry number ``retry`` (1 for the first)."""
        return self.backoff(draw)(_after_attempt(retry))

    @property
    def worst_wait(self) -> float:
        """The longest a call can spend waiting between its attempts."""
        return sum(self.delay(i, lambda: 0.0) for i in range(1, self.attempts))

    def retrying(
        self,
        what: str,
        worth_repeating: Callable[[BaseException], bool],
        sleep: Callable[[float], None],
    ) -> tenacity.Retrying:
        """A tenacity loop for the call ``what``: repeats what ``worth_repeating`` accepts,
        up to ``attempts`` tries in all, and logs why before each wait."""
        return tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.attempts),
            wait=self.backoff(),
            retry=tenacity.retry_if_exception(worth_repeating),
            before_sleep=functools.partial(_log_retry, what, self.attempts),
            sleep=sleep,
            reraise=True,
        )


class _Shortened(tenacity.wait.wait_base):
    """A tenacity wait shortened by a random part, at most ``jitter``, of itself."""

    def __init__(
        self, wait: tenacity.wait.wait_base, jitter: float, draw: Callable[[], float]
    ) -> None:
        self.wait = wait
        self.jitter = jitter
        self.draw = draw

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        return float(self.wait(retry_state)) * (1 - self.jitter * self.draw())


def _after_attempt(attempt: int) -> tenacity.RetryCallState:
    """A tenacity call state as it is once attempt number ``attempt`` has failed."""
    state = tenacity.RetryCallState(tenacity.Retrying(), None, (), {})
    state.attempt_number = attempt
    return state


def _log_retry(what: str, attempts: int, state: tenacity.RetryCallState) -> None:
    failure = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0.0
    log.info(
        "%s: %s; trying again in %.1f s (attempt %d of %d)",
        what,
        transient(failure) if failure else None,
        wait,
        state.attempt_number + 1,
        attempts,
    )


def _attempts(retrying: tenacity.Retrying, call: Callable[[int], T]) -> T:
    """``call(attempt number)``, made as often as ``retrying`` says."""
    for attempt in retrying:
        with attempt:
            return call(attempt.retry_state.attempt_number)
    raise AssertionError("tenacity ends with a result or an exception")


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

    def attempt(number: int) -> T:
        try:
            return call()
        except Exception as exc:
            if transient(exc) is not None:
                _mark(exc, "_gpuaudit_attempts", number)
            raise

    return _attempts(policy.retrying(what, lambda exc: transient(exc) is not None, sleep), attempt)


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
        renewed = False

        def attempt(number: int) -> Any:
            nonlocal renewed
            while True:
                stale = self._stale(operation, mo, args)
                if stale is not None:
                    if operation == "DestroyView":
                        return None  # the view ended with its session
                    raise ReadInterrupted(
                        f"{operation} refers to {stale}, which belonged to a session that has ended"
                    )
                generation = self.generation
                try:
                    return self._send(operation, mo, info, args, outerStub, number, generation)
                except vim.fault.NotAuthenticated:
                    if renewed or self.relogin is None or operation in _SESSION_CALLS:
                        raise
                    log.info("%s: the session has ended; logging in again", operation)
                    self._renew(generation)
                    renewed = True

        def worth_repeating(exc: BaseException) -> bool:
            return transient(exc) is not None and (retryable(operation) or not_processed(exc))

        return _attempts(self.retry.retrying(operation, worth_repeating, self.sleep), attempt)

    def _send(
        self,
        operation: str,
        mo: Any,
        info: Any,
        args: Any,
        outerStub: Any,
        attempt: int,
        generation: int,
    ) -> Any:
        """One try of ``operation``: its answer, or the failure as the retry loop should see it."""
        started = time.monotonic()
        self._answers.last = None
        try:
            result = super().InvokeMethod(mo, info, args, outerStub)
            if result is None:
                self._nothing_read(operation)
            elif isinstance(result, vmodl.MethodFault) and not _returns_fault(info):
                raise result  # a fault sent with HTTP 200 is a fault all the same
        except vim.fault.NotAuthenticated:
            raise  # as it is: the caller logs in again
        except vmodl.fault.ManagedObjectNotFound:
            if operation == "DestroyView" and attempt > 1:
                return None  # an earlier attempt destroyed it; its answer was lost
            raise
        except Exception as caught:
            exc = self._judged(operation, caught)
            _mark(exc, "_gpuaudit_call", operation)
            reason = transient(exc)
            cause = None if exc is caught else caught
            if reason is None:
                raise exc from cause
            again = retryable(operation) or not_processed(exc)
            if not again and operation == "ContinueRetrievePropertiesEx":
                # The server may have moved past this page: only a fresh read is safe.
                raise ReadInterrupted(
                    f"{operation} failed after the server may have acted on it: {reason}"
                ) from exc
            _mark(exc, "_gpuaudit_attempts", attempt)
            raise exc from cause
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

    def again(state: tenacity.RetryCallState) -> None:
        failure = state.outcome.exception() if state.outcome else None
        log.info(
            "%s; reading the inventory again (%d of %d)",
            failure,
            state.attempt_number,
            policy.restarts,
        )
        say("reading the inventory again")

    restarts = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(policy.restarts + 1),
        retry=tenacity.retry_if_exception_type(ReadInterrupted),
        before_sleep=again,
        reraise=True,
    )
    return restarts(read)
