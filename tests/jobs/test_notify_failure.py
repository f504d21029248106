"""A night that fails is heard: exit 2, exit 3, DATA-02 and a crash each notify
every --notify target (a webhook and an SMTP server), naming the error and the target."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gpuaudit.cli.main import main
from gpuaudit.inventory import Inventory
from gpuaudit.vsphere import obtain
from tests.jobs.test_notify import Mailbox, Received, start_smtp, start_webhook


@pytest.fixture
def sinks() -> Iterator[tuple[Mailbox, Received, list[str]]]:
    """An SMTP server and a webhook on loopback, and the --notify options for both."""
    box, received = Mailbox(), Received()
    controller, port = start_smtp(box)
    hook, url = start_webhook(received)
    options = ["--notify", f"smtp://127.0.0.1:{port}/?to=ops@example.com", "--notify", url]
    yield box, received, options
    hook.shutdown()
    hook.server_close()
    controller.stop()


def run(tmp_path: Path, options: list[str], *args: str) -> Result:
    command = ["--no-color", "-q", "scan", "-f", "json", "-o", str(tmp_path / "out")]
    return CliRunner().invoke(main, [*command, "--no-history", *options, *args])


def heard(sinks: tuple[Mailbox, Received, list[str]]) -> tuple[str, dict[str, Any]]:
    """The one mail's subject and the one webhook's summary; both must have come."""
    box, received, _ = sinks
    assert len(box.messages) == 1 and len(received.posts) == 1
    posted = json.loads(received.posts[0][2])
    subject = " ".join(str(box.messages[0]["Subject"]).split())  # a long header is folded
    assert posted["subject"] == subject
    return subject, posted["summary"]


def test_an_unreadable_policy_exit_2_notifies_both_sinks(
    tmp_path: Path, sinks: tuple[Mailbox, Received, list[str]]
) -> None:
    done = run(tmp_path, sinks[2], "--demo", "--policy", str(tmp_path / "missing.yaml"))
    assert done.exit_code == 2, done.output
    subject, summary = heard(sinks)
    assert subject.startswith("gpuaudit demo: ERROR (exit 2): ")
    assert "missing.yaml" in subject
    assert summary["verdict"] == "ERROR" and summary["exit_status"] == 2
    assert summary["server"] == "demo" and "missing.yaml" in summary["error"]


def test_a_usage_error_after_notify_was_read_notifies(
    tmp_path: Path, sinks: tuple[Mailbox, Received, list[str]]
) -> None:
    done = run(tmp_path, sinks[2], "--demo", "--baseline-create")
    assert done.exit_code == 2, done.output
    subject, summary = heard(sinks)
    assert "--baseline-create needs --baseline" in subject
    assert summary["exit_status"] == 2


def test_an_unreachable_server_exit_3_notifies_both_sinks(
    tmp_path: Path, sinks: tuple[Mailbox, Received, list[str]]
) -> None:
    password = tmp_path / "password"
    password.write_text("secret\n", encoding="utf-8")
    password.chmod(0o600)
    target = "127.0.0.1:1"  # nothing listens on port 1
    done = run(
        tmp_path, sinks[2], "--server", target, "--user", "audit", "--password-file", str(password)
    )
    assert done.exit_code == 3, done.output
    subject, summary = heard(sinks)
    assert subject.startswith(f"gpuaudit {target}: ERROR (exit 3): connection refused")
    assert summary == {
        "server": target,
        "verdict": "ERROR",
        "exit_status": 3,
        "error": summary["error"],
    }
    assert "secret" not in json.dumps(summary)


def test_nothing_examined_data_02_names_the_error(
    tmp_path: Path, sinks: tuple[Mailbox, Received, list[str]]
) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text(Inventory().to_json(), encoding="utf-8")
    done = run(tmp_path, sinks[2], "--from", str(empty))
    assert done.exit_code == 1, done.output
    subject, summary = heard(sinks)
    assert subject.startswith("gpuaudit empty: FAIL, nothing examined (DATA-02): ")
    assert summary["nothing_examined"] and summary["nothing_examined"] in subject


def test_a_crash_exit_70_notifies_with_the_crash_line(
    tmp_path: Path, sinks: tuple[Mailbox, Received, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("injected")

    monkeypatch.setattr(obtain, "obtain_inventory", boom)
    done = run(tmp_path, sinks[2], "--demo")
    assert done.exit_code == 70, done.output
    subject, summary = heard(sinks)
    assert subject.startswith("gpuaudit demo: ERROR (exit 70): ")
    assert "RuntimeError: injected" in subject and summary["exit_status"] == 70
    assert "gpuaudit: crash: " in done.stderr  # the line comes all the same


def test_a_night_that_succeeds_sends_its_summary_once(
    tmp_path: Path, sinks: tuple[Mailbox, Received, list[str]]
) -> None:
    done = run(tmp_path, sinks[2], "--demo")
    assert done.exit_code == 1, done.output
    subject, summary = heard(sinks)
    assert "ERROR" not in subject and summary["verdict"] == "FAIL"
