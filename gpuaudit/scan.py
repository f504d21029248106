"""The scan pipeline behind the command line: obtain an inventory, check it, report.

An inventory comes from one of four sources: a live server, a recorded cassette
(``--replay``), the bundled demo cassette (``--demo``), or a saved inventory
(``--from``). Everything after that is the same for all of them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.resources
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuaudit import cassette, connect
from gpuaudit.credentials import Credentials
from gpuaudit.inventory import Inventory

DEMO_CASSETTE = "demo.yaml"
# A replayed session logs in as someone; the cassette holds no real credentials.
REPLAY_USER = "gpuaudit"

Progress = Callable[[str], None]


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
    resource = importlib.resources.files("gpuaudit.cassettes") / DEMO_CASSETTE
    return Path(str(resource))


def server_name(source: Source) -> str:
    """The name reports carry for this source."""
    if isinstance(source, Live):
        if source.anonymize:
            return "anonymized"
        return connect.parse_server(source.credentials.server).display
    if isinstance(source, Replay):
        return source.label or source.path.stem
    return source.path.stem


def obtain_inventory(source: Source, progress: Progress | None = None) -> Inventory:
    """Collect, replay or load the inventory that ``source`` names."""
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
        from gpuaudit.anonymize import anonymize_cassette

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
    from gpuaudit.collect import collect

    with connect.session(server, user, password, **tls) as si:
        say("collecting")
        return collect(si, source=label, progress=say, telemetry_window=window)
