"""Obtain an inventory, from one of four sources: a live server, a recorded cassette
(``--replay``), the bundled demo cassette (``--demo``), or a saved inventory
(``--from``). Everything after that is the same for all of them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import errno
import functools
import http.client
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.parsers.expat import ExpatError

from pyVmomi import vim, vmodl

from gpuaudit.common import shipped
from gpuaudit.common.progress import Progress
from gpuaudit.inventory import Inventory
from gpuaudit.vsphere import cassette, connect, resilience
from gpuaudit.vsphere.credentials import Credentials

DEMO_CASSETTE = "demo.yaml"
# A replayed session logs in as someone; the cassette holds no real credentials.
REPLAY_USER = "gpuaudit"


@dataclass(frozen=True)
class Live:
    credentials: Credentials
    timeout: float = connect.DEFAULT_TIMEOUT
    record: Path | None = None
    # Replace every entity name in the recording, and so in the reports, by a pseudonym.
    anonymize: bool = False
    telemetry_window: dt.timedelta | None = None  # None: 24 hours


@dataclass(frozen=True)
class Replay:
    path: Path
    label: str = ""
    # The window of the recorded session: a replay must ask what was asked then.
    telemetry_window: dt.timedelta | None = None


@dataclass(frozen=True)
class Saved:
    path: Path


Source = Live | Replay | Saved


def demo_source() -> Replay:
    return Replay(path=demo_cassette_path(), label="demo")


def demo_cassette_path() -> Path:
    return shipped.file_path(shipped.CASSETTES, DEMO_CASSETTE)


def server_name(source: Source) -> str:
    """The name reports carry for this source."""
    if isinstance(source, Live):
        if source.anonymize:
            return "anonymized"
        return connect.parse_server(source.credentials.server).display
    if isinstance(source, Replay):
        return source.label or source.path.stem
    return source.path.stem


# What a live scan may raise once it is logged in, besides ConnectError.
_SERVER_FAILURES = (
    OSError,
    http.client.HTTPException,
    ExpatError,
    vmodl.MethodFault,
    resilience.ReadInterrupted,
    resilience.ServerAnswerError,
)


def obtain_inventory(source: Source, progress: Progress | None = None) -> Inventory:
    """Collect, replay or load the inventory that ``source`` names.

    A live scan that fails raises ConnectError; a cassette that cannot be replayed
    raises CassetteError; an inventory that cannot be loaded raises InventoryError.
    A recording (``--record FILE``) replaces FILE only when the scan succeeds.
    """
    if isinstance(source, Replay):
        cassette_problem = check_cassette(source.path)
        if cassette_problem:
            raise cassette.CassetteError(cassette_problem)
        try:
            with resilience.using(resilience.NO_RETRY):  # a recording answers the same again
                return _obtain_inventory(source, progress)
        except cassette.CassetteError:
            raise
        except Exception as exc:
            raise cassette.CassetteError(
                f"{source.path}: cannot be replayed: {exc.__class__.__name__}: {exc}"
            ) from None
    if isinstance(source, Live):
        try:
            if source.record is None:
                return _obtain_inventory(source, progress)
            return _record_safely(source, progress)
        except connect.ConnectError:
            raise
        except _SERVER_FAILURES as exc:
            creds = source.credentials
            server = connect.parse_server(creds.server)
            reason = describe_read_failure(exc, server, creds.user, source.timeout)
            raise connect.ConnectError(f"reading the inventory failed: {reason}") from None
    return _obtain_inventory(source, progress)


def describe_read_failure(
    exc: BaseException, server: connect.Server, user: str, timeout: float
) -> str:
    """As ``connect.describe_failure``, for a call made once logged in: a fault then is
    the server refusing that call, not the login."""
    session_faults = (vim.fault.NotAuthenticated, vim.fault.InvalidLogin)
    if not isinstance(exc, vmodl.MethodFault) or isinstance(exc, session_faults):
        return connect.describe_failure(exc, server, user, timeout)
    call = resilience.call_of(exc) or "a call"
    fault = type(exc).__name__.rsplit(".", 1)[-1]
    said = " ".join(str(getattr(exc, "msg", "") or "").split())  # one line
    if isinstance(exc, vim.fault.NoPermission) and exc.privilegeId:
        # Name a privilege only when the server named it.
        said = f"user {user!r} lacks the {exc.privilegeId} privilege"
    return f"{server.display} refused {call} with {fault}" + (f": {said}" if said else "")


# Errors only a file system gives (an error about a named file is one too).
_DISK_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})


def _record_safely(source: Live, progress: Progress | None) -> Inventory:
    """Record into a scratch folder beside the cassette; move it into place on success."""
    assert source.record is not None
    final = source.record
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".gpuaudit-recording-", dir=final.parent))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise cassette.CassetteError(f"{final}: cannot record here: {reason}") from None
    try:
        inventory = _obtain_inventory(
            dataclasses.replace(source, record=scratch / final.name), progress
        )
        (scratch / final.name).replace(final)
        return inventory
    except OSError as exc:
        if exc.errno not in _DISK_ERRORS and exc.filename is None:
            raise  # the network's
        reason = exc.strerror or str(exc)
        raise cassette.CassetteError(f"{final}: cannot write the recording: {reason}") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def check_cassette(path: Path) -> str | None:
    """Why ``path`` is not a cassette (with the line, where YAML says), or None."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return f"{path}: no such cassette"
    except (OSError, UnicodeDecodeError) as exc:
        return f"{path}: cannot read: {exc}"
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        return f"{path}{line}: not valid YAML: {exc.problem or exc.context} (a truncated cassette?)"
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        return f"{path}: not valid YAML: {exc}"
    interactions = data.get("interactions") if isinstance(data, dict) else None
    if not isinstance(interactions, list) or not interactions:
        return f"{path}: not a cassette (no list of recorded interactions)"
    for i, item in enumerate(interactions):
        request = item.get("request") if isinstance(item, dict) else None
        response = item.get("response") if isinstance(item, dict) else None
        if not (
            isinstance(request, dict)
            and isinstance(response, dict)
            and isinstance(response.get("status"), dict)
            and isinstance(response.get("body"), dict)
            and isinstance(request.get("uri"), str)
        ):
            return f"{path}: interaction {i + 1} is not a recorded request and response"
    return None


def _obtain_inventory(source: Source, progress: Progress | None = None) -> Inventory:
    say = progress or (lambda _m: None)
    if isinstance(source, Saved):
        say(f"loading {source.path}")
        return Inventory.load(source.path)
    if isinstance(source, Replay):
        say(f"replaying {source.path.name}")
        with cassette.replaying(source.path):
            server = connect.Server(host=cassette.REPLAY_HOST, port=80, protocol="http")
            label = source.label or "replay"
            window = source.telemetry_window
            return _collect(server, REPLAY_USER, "replay", {}, say, label, window)
    creds = source.credentials
    server = connect.parse_server(creds.server)
    tls = {"insecure": creds.insecure, "ca_file": creds.ca_file, "timeout": source.timeout}
    recorder: contextlib.AbstractContextManager[Any] = (
        cassette.recording(source.record) if source.record else contextlib.nullcontext()
    )
    say(f"connecting to {server.display}")
    with recorder:
        inventory = _collect(
            server, creds.user, creds.password, tls, say, server.display, source.telemetry_window
        )
    if source.record and source.anonymize:
        from gpuaudit.vsphere.anonymize import anonymize_cassette

        say(f"anonymizing {source.record.name}")
        anonymize_cassette(source.record)
        # The reports must carry the pseudonyms too: build them from the rewritten cassette.
        replay = Replay(source.record, "anonymized", source.telemetry_window)
        inventory = obtain_inventory(replay, say)
    return inventory


def _collect(
    server: connect.Server,
    user: str,
    password: str,
    tls: dict[str, Any],
    say: Progress,
    label: str,
    window: dt.timedelta | None = None,
) -> Inventory:
    from gpuaudit.vsphere.collect import collect as collect_once

    collect = _restartable(collect_once)

    with connect.session(server, user, password, **tls) as si:
        say("collecting")
        return collect(si, source=label, progress=say, telemetry_window=window)


def _restartable(collect: Callable[..., Inventory]) -> Callable[..., Inventory]:
    """``collect``, read again from the start, in the same session, after ReadInterrupted."""

    @functools.wraps(collect)
    def read(si: Any, *args: Any, **kwargs: Any) -> Inventory:
        say = kwargs.get("progress") or (lambda _m: None)
        return resilience.read_with_restarts(
            lambda: collect(si, *args, **kwargs), getattr(si, "_stub", None), say
        )

    return read
