"""Answers pyVmomi cannot use, put in place of the lab's by tests/support/faultproxy.py: each one
is retried as transient and the scan completes as a clean one, or it ends the scan
with exit status 3 and one line naming the call and what came back; never a
traceback, never exit 1, never an empty result."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gpuaudit.cli.main import main
from gpuaudit.errors import ExitCode
from gpuaudit.vsphere import resilience
from gpuaudit.vsphere.resilience import RetryPolicy
from tests.support import faultproxy
from tests.support.faultproxy import Answer, Fault, FaultProxy

pytestmark = pytest.mark.live

FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02, jitter=0.5, restarts=2)

# Calls made once logged in, each a step of the inventory read.
OPERATIONS = [
    "CreateContainerView",
    "RetrievePropertiesEx",
    "CurrentTime",
    "QueryOptions",
    "QueryPerf",
]

REFUSED = [
    # (id, the answer, what the error line must say it was)
    ("HTML page", faultproxy.HTML_PAGE, "sent an HTML page in answer to"),
    ("XHTML page", faultproxy.XHTML_PAGE, "sent an HTML page in answer to"),
    ("non-SOAP XML", faultproxy.NON_SOAP_XML, "sent non-SOAP XML (root element <status>)"),
    ("empty SOAP body", faultproxy.EMPTY_SOAP_BODY, "sent an empty SOAP body in answer to"),
    (
        "unknown fault",
        faultproxy.UNKNOWN_FAULT,
        'sent an unknown fault type FrobnicationFault ("the frobnicator is jammed")',
    ),
]

TRANSIENT = [
    ("HTTP 500 non-SOAP XML", faultproxy.NON_SOAP_XML_500, "HTTP 500 with non-SOAP XML"),
    ("corrupt gzip", faultproxy.CORRUPT_GZIP, "a corrupt gzip body"),
    ("HTTP 500 HTML page", faultproxy.HTML_PAGE_500, "HTTP 500 with an HTML page"),
    ("empty body", faultproxy.EMPTY_BODY, "an empty body"),
]


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(resilience, "DEFAULT", FAST)
    caplog.set_level(logging.INFO, logger="gpuaudit.resilience")


def scan(lab: Any, proxy: FaultProxy, out: Path) -> Result:
    return CliRunner().invoke(
        main,
        [
            *("-q", "scan", "--server", proxy.url, "--user", lab.user),
            *("--timeout", "5", "-o", str(out), "-f", "json", "--no-history"),
        ],
        env={"GPUAUDIT_PASSWORD": lab.password, "GOVC_URL": None},
    )


def report(out: Path) -> dict[str, Any]:
    """The JSON report in ``out``, without what differs from one scan to the next."""
    (path,) = out.glob("gpuaudit-*.json")
    data = json.loads(path.read_text())
    del data["source"]  # the proxy's port, the times
    for key in ("source", "collected_at"):
        del data["inventory"][key]
    for key in ("start", "end"):
        del data["inventory"]["telemetry"][key]
    return dict(data)


def one_error_line(result: Result, *words: str) -> str:
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == ExitCode.CONNECT, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    (line,) = lines
    assert line.startswith("gpuaudit: error: reading the inventory failed: 127.0.0.1:"), line
    for word in words:
        assert word in line, line
    assert "login" not in line, line  # the login had worked
    return line


def retries_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "gpuaudit.resilience" and "trying again" in r.getMessage()
    ]


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize(("answer", "said"), [pytest.param(a, s, id=i) for i, a, s in REFUSED])
def test_an_answer_that_is_not_soap_is_refused(
    lab_factory: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    operation: str,
    answer: Answer,
    said: str,
) -> None:
    lab = lab_factory("scenario-b")
    with FaultProxy(lab.url, [Fault(operation, answer)]) as proxy:
        result = scan(lab, proxy, tmp_path)
    assert proxy.injected == 1
    line = one_error_line(result, said, f"in answer to {operation}")
    assert "tried" not in line
    assert proxy.calls.count(operation) == 1  # a whole answer would come back the same
    assert not retries_logged(caplog)
    assert not list(tmp_path.iterdir()), "no report from a scan that failed"


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize(("answer", "said"), [pytest.param(a, s, id=i) for i, a, s in TRANSIENT])
def test_a_damaged_or_busy_answer_is_retried(
    lab_factory: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    operation: str,
    answer: Answer,
    said: str,
) -> None:
    lab = lab_factory("scenario-b")
    with FaultProxy(lab.url) as proxy:
        clean = scan(lab, proxy, tmp_path / "clean")
    clean_calls = proxy.calls.count(operation)
    with FaultProxy(lab.url, [Fault(operation, answer)]) as proxy:
        result = scan(lab, proxy, tmp_path / "faulty")
    assert proxy.injected == 1
    assert "Traceback" not in result.output
    assert result.exit_code == clean.exit_code, result.output
    assert report(tmp_path / "faulty") == report(tmp_path / "clean")
    assert proxy.calls.count(operation) == clean_calls + 1
    (logged,) = retries_logged(caplog)
    assert logged.startswith(f"{operation}: {said}") and "; trying again" in logged, logged


@pytest.mark.parametrize("operation", ["CreateContainerView", "CurrentTime", "QueryPerf"])
@pytest.mark.parametrize(("answer", "said"), [pytest.param(a, s, id=i) for i, a, s in TRANSIENT])
def test_a_damaged_or_busy_answer_for_good_is_refused_after_the_attempts(
    lab_factory: Any, tmp_path: Path, operation: str, answer: Answer, said: str
) -> None:
    lab = lab_factory("scenario-b")
    with FaultProxy(lab.url, [Fault(operation, answer, last=None)]) as proxy:
        result = scan(lab, proxy, tmp_path)
    one_error_line(result, f"sent {said}", f"in answer to {operation} (tried 3 times)")
    assert proxy.calls.count(operation) == 3


NO_PERMISSION_NAMED = Answer(
    500,
    faultproxy.soap_fault(
        "NoPermission",
        "Permission to perform this operation was denied.",
        "<object type='Folder'>group-d1</object><privilegeId>System.Read</privilegeId>",
    ),
)
NO_PERMISSION_UNNAMED = Answer(
    500, faultproxy.soap_fault("NoPermission", "Permission to perform this operation was denied.")
)
SYSTEM_ERROR = Answer(
    500,
    faultproxy.soap_fault(
        "SystemError", "A general system error occurred:\n disk full", "<reason>disk full</reason>"
    ),
)


@pytest.mark.parametrize(
    ("operation", "answer", "said", "unsaid"),
    [
        pytest.param(
            "RetrievePropertiesEx",
            NO_PERMISSION_NAMED,
            "refused RetrievePropertiesEx with NoPermission: "
            "user 'gpuaudit-lab' lacks the System.Read privilege",
            "System.View",
            id="privilege named",
        ),
        pytest.param(
            "CreateContainerView",
            NO_PERMISSION_UNNAMED,
            "refused CreateContainerView with NoPermission: "
            "Permission to perform this operation was denied.",
            "privilege",
            id="privilege not named",
        ),
        pytest.param(
            "RetrievePropertiesEx",
            Answer(200, SYSTEM_ERROR.body),
            "refused RetrievePropertiesEx with SystemError: "
            "A general system error occurred: disk full",
            "privilege",
            id="a fault with HTTP 200",
        ),
        pytest.param(
            "CurrentTime",
            SYSTEM_ERROR,
            "refused CurrentTime with SystemError: A general system error occurred: disk full",
            "privilege",
            id="another fault",
        ),
    ],
)
def test_a_fault_once_logged_in_names_the_call(
    lab_factory: Any, tmp_path: Path, operation: str, answer: Answer, said: str, unsaid: str
) -> None:
    lab = lab_factory("scenario-b")
    with FaultProxy(lab.url, [Fault(operation, answer)]) as proxy:
        result = scan(lab, proxy, tmp_path)
    line = one_error_line(result, said)
    assert unsaid not in line


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        pytest.param(
            NO_PERMISSION_UNNAMED,
            "Permission to perform this operation was denied.",
            id="privilege not named",
        ),
        pytest.param(
            NO_PERMISSION_NAMED, "it lacks the System.Read privilege", id="privilege named"
        ),
    ],
)
def test_a_refused_login_names_a_privilege_only_when_the_server_did(
    lab_factory: Any, tmp_path: Path, answer: Answer, said: str
) -> None:
    lab = lab_factory("scenario-b")
    with FaultProxy(lab.url, [Fault("Login", answer)]) as proxy:
        result = scan(lab, proxy, tmp_path)
    assert result.exit_code == ExitCode.CONNECT, result.output
    (line,) = result.stderr.strip().splitlines()
    where = proxy.url.removeprefix("http://").removesuffix("/sdk")
    assert line == f"gpuaudit: error: user 'gpuaudit-lab' may not log in to {where}: {said}"
