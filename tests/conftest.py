"""Shared fixtures: scenarios, cassettes, the live lab, and a network that refuses."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Where scenarios and cassettes live, and which scenarios are recorded: one list,
# shared with the command that records them.
from tests.lab.record import CASSETTES as CASSETTES
from tests.lab.record import RECORDED as RECORDED
from tests.lab.record import ROOT as ROOT
from tests.lab.record import SCENARIOS
from tests.support.zones import local_zone


@pytest.fixture(autouse=True)
def _own_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no remembered secrets.

    A gpuaudit process masks every password it was given in every later log line
    (gpuaudit.common.debuglog). The suite runs many logins in one process: a test that
    logs in with the password "x" would otherwise mask every "x" that a later
    test's log assertions look for.
    """
    from gpuaudit.common import debuglog

    monkeypatch.setattr(debuglog, "_secrets", set())


@pytest.fixture(autouse=True, scope="session")
def _no_history_at_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The suite's scans never keep their history in the real home, not even those a
    module-scoped fixture runs before any test's own fixtures.

    The default history store is $XDG_STATE_HOME/gpuaudit/history.sqlite; commands
    the suite runs in child processes inherit the variable.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("session-state")))
        # Nor do they read a gpuaudit.toml of the real home (gpuaudit.cli.config_file).
        patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("session-config")))
        yield


@pytest.fixture(autouse=True)
def _own_history(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each test keeps its scan history in a folder of its own."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_tool(name: str, why: str) -> str:
    """The path of a tool the test needs: a skip on a laptop, a failure in CI."""
    path = shutil.which(name)
    if path is None:
        message = f"{name} is not installed ({why}); scripts/test installs it"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse every outbound connection, so a replay that tries the network fails loudly."""

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise ConnectionRefusedError("outbound connections are refused in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture
def lab_factory() -> Iterator[Any]:
    """Start labs on demand; every one started is stopped at the end of the test."""
    from tests.lab.lab import Lab

    require_tool("go", "the live tier builds the Go lab")
    started: list[Lab] = []

    def start(scenario: str | Path | dict[str, Any], **kwargs: Any) -> Lab:
        if isinstance(scenario, str) and not scenario.endswith(".yaml"):
            scenario = SCENARIOS / f"{scenario}.yaml"
        lab = Lab(scenario, **kwargs)
        started.append(lab)
        lab.start()
        return lab

    yield start
    for lab in started:
        lab.stop()


def unused_port() -> int:
    """A loopback port nothing listens on (bound, read, released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries with millisecond backoff, so tests of failing servers end quickly."""
    from gpuaudit.vsphere import resilience

    fast_policy = resilience.RetryPolicy(base_delay=0.01, max_delay=0.02)
    monkeypatch.setattr(resilience, "DEFAULT", fast_policy)


@pytest.fixture
def far_from_utc() -> Iterator[None]:
    """A local zone nine hours east of UTC, so that a time taken as local shows."""
    with local_zone("JST-9"):
        yield
