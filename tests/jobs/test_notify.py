"""--notify: an email through a real SMTP server (plain and TLS), and webhooks over HTTP.

The SMTP server is aiosmtpd, in this process on loopback; the TLS one uses a
certificate made here by trustme. The webhook receiver is http.server in a thread.
"""

from __future__ import annotations

import email
import email.policy
import http.server
import json
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
import trustme
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from click.testing import CliRunner, Result

from gpuaudit.cli.main import main
from gpuaudit.jobs.notify import NotifyError, parse_target, webhook_body
from tests.conftest import unused_port

USER, PASSWORD = "mailer", "s3cret-Pa55"


@dataclass
class Mailbox:
    messages: list[EmailMessage] = field(default_factory=list)
    logins: list[tuple[str, str]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.messages.append(parsed)
        return "250 OK"

    def authenticate(
        self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> AuthResult:
        if isinstance(data, LoginPassword):
            login = (data.login.decode(), data.password.decode())
            self.logins.append(login)
            return AuthResult(success=login == (USER, PASSWORD))
        return AuthResult(success=False)


def start_smtp(mailbox: Mailbox, context: ssl.SSLContext | None = None) -> tuple[Controller, int]:
    port = unused_port()
    controller = Controller(
        mailbox,
        hostname="127.0.0.1",
        port=port,
        ssl_context=context,
        authenticator=mailbox.authenticate,
        auth_require_tls=False,
    )
    controller.start()
    return controller, port


@pytest.fixture
def smtp_server() -> Iterator[tuple[Mailbox, int]]:
    mailbox = Mailbox()
    controller, port = start_smtp(mailbox)
    yield mailbox, port
    controller.stop()


@pytest.fixture
def smtps_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Mailbox, int, Path]]:
    """A TLS SMTP server with a self-signed CA; the CA file is returned, not yet trusted."""
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    mailbox = Mailbox()
    controller, port = start_smtp(mailbox, context)
    yield mailbox, port, ca_file
    controller.stop()


@dataclass
class Received:
    status: int = 200
    posts: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)


def start_webhook(received: Received) -> tuple[http.server.ThreadingHTTPServer, str]:
    """An HTTP server on loopback that records every POST and answers received.status."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.posts.append((self.path, dict(self.headers), body))
            self.send_response(received.status)
            self.end_headers()

        def log_message(self, *args: Any) -> None:  # quiet test output
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def webhook() -> Iterator[tuple[Received, str]]:
    received = Received()
    server, url = start_webhook(received)
    yield received, url
    server.shutdown()
    server.server_close()


def scan(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(
        main,
        ["scan", "--demo", "--no-color", "-f", "html,json", "-o", str(tmp_path / "r"), *args],
        env=env,
    )


def reports(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "r").glob("gpuaudit-demo-*"))


def test_an_email_carries_the_summary_and_the_html_report(
    tmp_path: Path, smtp_server: tuple[Mailbox, int]
) -> None:
    mailbox, port = smtp_server
    url = (
        f"smtp://{USER}@127.0.0.1:{port}/?to=ops@example.com,audit@example.com&from=ga@example.com"
    )
    result = scan(tmp_path, "--notify", url, env={"GPUAUDIT_SMTP_PASSWORD": PASSWORD})
    assert result.exit_code == 1, result.output  # the demo fails high findings
    assert mailbox.logins == [(USER, PASSWORD)]
    (message,) = mailbox.messages
    report = json.loads(next(p for p in reports(tmp_path) if p.suffix == ".json").read_text())
    # info findings are notices, not in the failed count
    failed = sum(f["status"] == "fail" and f["severity"] != "info" for f in report["findings"])
    assert failed > 0
    assert message["Subject"] == f"gpuaudit demo: FAIL, {failed} failed findings"
    assert message["To"] == "ops@example.com, audit@example.com"
    assert message["From"] == "ga@example.com"
    body = message.get_body(("plain",))
    assert body is not None
    text = body.get_content()
    assert "FAIL: findings at or above high" in text and "top actions:" in text
    (attachment,) = message.iter_attachments()
    html = next(p for p in reports(tmp_path) if p.suffix == ".html")
    assert attachment.get_filename() == html.name
    assert attachment.get_payload(decode=True) == html.read_bytes()
    assert PASSWORD not in result.output


def test_smtps_with_a_self_signed_certificate_is_trusted_through_ssl_cert_file(
    tmp_path: Path,
    smtps_server: tuple[Mailbox, int, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mailbox, port, ca_file = smtps_server
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    url = f"smtps://{USER}:{PASSWORD}@127.0.0.1:{port}/?to=ops@example.com"
    result = scan(tmp_path, "--notify", url)
    assert result.exit_code == 1, result.output
    assert mailbox.logins == [(USER, PASSWORD)]
    assert len(mailbox.messages) == 1
    assert "warning" not in result.output


def test_an_untrusted_certificate_fails_on_one_line_and_keeps_the_reports(
    tmp_path: Path, smtps_server: tuple[Mailbox, int, Path]
) -> None:
    mailbox, port, _ = smtps_server
    url = f"smtps://{USER}:{PASSWORD}@127.0.0.1:{port}/?to=ops@example.com"
    result = scan(tmp_path, "--notify", url)
    assert result.exit_code == 1  # the scan's own status, not the notification's
    assert mailbox.messages == []
    (warning,) = [line for line in result.output.splitlines() if "notification" in line]
    assert warning.startswith(f"warning: notification to smtps://{USER}@127.0.0.1:{port}/ failed:")
    assert "CERTIFICATE_VERIFY_FAILED" in warning
    assert PASSWORD not in result.output
    assert [p.suffix for p in reports(tmp_path)] == [".html", ".json"]


def test_a_password_in_a_failing_url_is_never_shown(tmp_path: Path) -> None:
    port = unused_port()  # nothing listens
    result = scan(tmp_path, "-vv", "--notify", f"smtp://u:{PASSWORD}@127.0.0.1:{port}/?to=a@b.c")
    assert f"notification to smtp://u@127.0.0.1:{port}/ failed" in result.output
    assert PASSWORD not in result.output
    assert len(reports(tmp_path)) == 2


def test_a_json_webhook_gets_the_summary(tmp_path: Path, webhook: tuple[Received, str]) -> None:
    received, base = webhook
    result = scan(tmp_path, "--notify", f"{base}/hook/T0K3N")
    assert result.exit_code == 1, result.output
    ((path, headers, body),) = received.posts
    assert path == "/hook/T0K3N"
    assert headers["Content-Type"] == "application/json"
    posted = json.loads(body)
    written = json.loads(next(p for p in reports(tmp_path) if p.suffix == ".json").read_text())
    # An info finding is a notice: counted apart, never as failed.
    fails = [f for f in written["findings"] if f["status"] == "fail" and f["severity"] != "info"]
    summary = posted["summary"]
    assert summary["verdict"] == "FAIL" and summary["server"] == "demo"
    assert sum(summary["failed"].values()) == len(fails)
    assert summary["failed"]["high"] == sum(f["severity"] == "high" for f in fails)
    assert summary["notices"] == sum(
        f["status"] == "fail" and f["severity"] == "info" for f in written["findings"]
    )
    assert summary["new"] is None and summary["resolved"] is None
    assert summary["top_actions"][0]["rule"] == "HA-05"
    assert sorted(summary["reports"]) == [str(p) for p in reports(tmp_path)]


def test_the_format_in_the_url_wins_and_is_not_posted(
    tmp_path: Path, webhook: tuple[Received, str]
) -> None:
    received, base = webhook
    result = scan(
        tmp_path,
        "--notify-format",
        "teams",
        "--notify",
        f"{base}/slack?format=slack&x=1",
        "--notify",
        f"{base}/teams",
    )
    assert result.exit_code == 1, result.output
    (slack_path, _, slack), (teams_path, _, teams) = received.posts
    assert slack_path == "/slack?x=1"
    assert json.loads(slack)["text"].startswith("*gpuaudit demo: FAIL")
    assert teams_path == "/teams"
    attachment = json.loads(teams)["attachments"][0]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    assert attachment["content"]["type"] == "AdaptiveCard"


def test_a_failing_webhook_is_one_line_and_the_next_target_still_gets_it(
    tmp_path: Path, webhook: tuple[Received, str], smtp_server: tuple[Mailbox, int]
) -> None:
    received, base = webhook
    received.status = 500
    mailbox, port = smtp_server
    result = scan(
        tmp_path, "--notify", f"{base}/down", "--notify", f"smtp://127.0.0.1:{port}/?to=a@b.c"
    )
    assert result.exit_code == 1
    warnings = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: notification to {base} failed: HTTP 500 Internal Server Error"]
    assert len(mailbox.messages) == 1
    assert len(reports(tmp_path)) == 2


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://example.com", "starts with smtp://"),
        ("smtp://mail.example.com", "?to=ADDRESS"),
        ("https://hooks.example.com/x?format=xml", "format=xml is not one of"),
        ("http://hooks.example.com/x", "http:// only to this machine; use https://"),
    ],
)
def test_a_bad_notify_url_is_a_usage_error_before_scanning(
    tmp_path: Path, url: str, why: str
) -> None:
    result = scan(tmp_path, "--notify", url)
    assert result.exit_code == 2
    assert why in result.output
    assert not (tmp_path / "r").exists()


def test_parse_target_reads_the_password_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GPUAUDIT_SMTP_PASSWORD", "from-env")
    target = parse_target("smtps://me@mail.example.com/?to=a@b.c")
    assert (target.user, target.password, target.port) == ("me", "from-env", 465)
    assert "from-env" not in repr(target)
    with pytest.raises(NotifyError):
        parse_target("gopher://x")


def test_webhook_shapes_are_what_slack_and_teams_take() -> None:
    from gpuaudit.jobs.notify import Message

    message = Message("subject", "line one\nline two\n", {"verdict": "PASS"})
    assert webhook_body("slack", message) == {"text": "*subject*\n```\nline one\nline two\n```"}
    assert webhook_body("json", message) == {"subject": "subject", "summary": {"verdict": "PASS"}}
    card = webhook_body("teams", message)["attachments"][0]["content"]
    assert [block["text"] for block in card["body"]] == ["subject", "line one\nline two\n"]


def test_a_password_is_never_sent_in_clear_beyond_this_machine(
    tmp_path: Path, smtp_server: tuple[Mailbox, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuaudit.jobs import notify

    mailbox, port = smtp_server
    # The test server is on loopback and offers no STARTTLS: take it for a remote one.
    monkeypatch.setattr(notify, "is_loopback", lambda host: False)
    result = scan(tmp_path, "--notify", f"smtp://{USER}:{PASSWORD}@127.0.0.1:{port}/?to=a@b.c")
    assert mailbox.logins == [] and mailbox.messages == []
    assert "the password is not sent in clear (use smtps://)" in result.output
    assert result.exit_code == 1 and len(reports(tmp_path)) == 2


# Defects of issue 38: URLs that can never work, answers without end, slow sinks


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("smtp://mailuser:S3cr3t/PwTail@mail.example.com/?to=a@b.c", "ends it early"),
        ("smtp://mailuser:S3cr3t#PwTail@mail.example.com/?to=a@b.c", "ends it early"),
        ("smtp://mailuser:S3cr3t?PwTail@mail.example.com/?to=a@b.c", "ends it early"),
        ("smtp://mailuser:S3cr3t@PwTail@mail.example.com/?to=a@b.c", "ends it early"),
        ("smtp://mailuser:S3cr3tPwTail@mail.example.com:99999/?to=a@b.c", "port is not a number"),
        ("smtp://mailuser:S3cr3tPwTail@mail.example.com:x25/?to=a@b.c", "port is not a number"),
        ("smtp://mailuser:S3cr3tPwTail/?to=a@b.c", "port is not a number"),
        ("smtps://mailuser:S3cr3tPwTail@[::1/?to=a@b.c", "no closing ]"),
        ("smtps://mailuser:S3cr3tPwTail@[::zz]/?to=a@b.c", "not an IPv6 address"),
        ("https://hooks.example.com/services/S3cr3t PwTail", "a space or a control character"),
        ("https://hooks.example.com/services/S3cr3t\x07PwTail", "a space or a control character"),
        ("https://hooks.example.com/services/S3cr3t\u202ePwTail", "a space or a control character"),
        ("https://hooks.example.com/services/S3cr3t\nPwTail", "a space or a control character"),
    ],
)
def test_a_notify_url_that_can_never_work_is_a_usage_error_without_its_secrets(
    tmp_path: Path, url: str, why: str
) -> None:
    result = scan(tmp_path, "--notify", f"{WEBHOOK_BASE}/ok", "--notify", url)
    assert result.exit_code == 2, result.output
    assert why in result.stderr and "--notify " in result.stderr
    for part in ("S3cr3t", "PwTail", "services", "Traceback"):
        assert part not in result.output + result.stderr
    assert not (tmp_path / "r").exists()  # refused before the scan


WEBHOOK_BASE = "https://hooks.example.com"


@dataclass
class Sink:
    """What a misbehaving webhook sink sent before the client hung up."""

    sent: int = 0
    stop: threading.Event = field(default_factory=threading.Event)


def start_sink(behaviour: str) -> tuple[http.server.ThreadingHTTPServer, str, Sink]:
    """A sink that answers 200 with a body that never ends, or one byte every 2 s."""
    sink = Sink()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.end_headers()  # no length: the body ends when the connection does
            chunk = b"x" * 65536 if behaviour == "endless" else b"x"
            try:
                while not sink.stop.is_set() and sink.sent < 1 << 30:
                    self.wfile.write(chunk)
                    self.wfile.flush()
                    sink.sent += len(chunk)
                    if behaviour == "trickle":
                        sink.stop.wait(2)
            except OSError:
                pass  # the client hung up

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}", sink


@pytest.fixture
def sinks() -> Iterator[Any]:
    started: list[tuple[http.server.ThreadingHTTPServer, str, Sink]] = []

    def start(behaviour: str) -> tuple[str, Sink]:
        started.append(start_sink(behaviour))
        return started[-1][1], started[-1][2]

    yield start
    for server, _, sink in started:
        sink.stop.set()
        server.shutdown()
        server.server_close()


def test_an_endless_answer_is_read_only_up_to_the_cap(
    tmp_path: Path, sinks: Any, webhook: tuple[Received, str]
) -> None:
    from gpuaudit.jobs.notify import MAX_ANSWER

    base, sink = sinks("endless")
    received, next_base = webhook
    result = scan(tmp_path, "--notify", f"{base}/hook", "--notify", f"{next_base}/next")
    assert result.exit_code == 1, result.output
    assert [line for line in result.stderr.splitlines() if line.startswith("warning:")] == []
    assert len(received.posts) == 1  # the next target too
    # The client read at most the cap and hung up; the sink stopped soon after
    # (what the socket buffers hold besides), far from the gigabyte it offered.
    time.sleep(0.5)
    assert MAX_ANSWER <= sink.sent < 64 * MAX_ANSWER


def test_a_trickling_sink_ends_at_the_deadline_and_the_next_target_gets_it(
    tmp_path: Path, sinks: Any, webhook: tuple[Received, str]
) -> None:
    base, _ = sinks("trickle")
    received, next_base = webhook
    started = time.monotonic()
    result = scan(
        tmp_path,
        "--notify-timeout",
        "3",
        "--notify",
        f"{base}/hook/T0K3N",
        "--notify",
        f"{next_base}/next",
    )
    took = time.monotonic() - started
    assert result.exit_code == 1, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: notification to {base} failed: not done within 3 s (--notify-timeout)"
    ]
    assert len(received.posts) == 1
    assert took < 20  # the scan, about 3 s for the sink, and the next target
    assert "T0K3N" not in result.output + result.stderr


def test_the_notify_deadline_is_a_usage_error_outside_a_second_to_a_day(tmp_path: Path) -> None:
    for value in ("0", "nan", "-1", "100000", "x"):
        result = scan(tmp_path, "--notify-timeout", value)
        assert result.exit_code == 2 and "--notify-timeout" in result.stderr


def test_a_webhook_password_holding_a_bracket_is_refused_before_the_scan() -> None:
    # Python's URL splitter raises on a lone [ in the user information; the check
    # before the scan refuses it with its own words, never showing the password.
    from gpuaudit.jobs.notify import NotifyError, parse_target

    with pytest.raises(NotifyError) as refused:
        parse_target("https://mailer:PwX9[Zq7K@0?to=a@b.c")
    assert "percent-encode them ([ as %5B, ] as %5D)" in str(refused.value)
    assert "PwX9" not in str(refused.value) and "Zq7K" not in str(refused.value)
