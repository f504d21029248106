"""Telling people a scan has ended: an email with the summary and the HTML report,
or a webhook that posts the summary in Slack's, Teams' or gpuaudit's own JSON shape.

Targets are URLs (docs/scheduling.md):

- ``smtp://[user@]host[:port]/?to=a@example.com&from=gpuaudit@example.com``
  (STARTTLS when the server offers it) or ``smtps://`` (TLS from the start, port
  465). A password is sent only encrypted, or to this machine; it is best taken
  from GPUAUDIT_SMTP_PASSWORD, one in the URL works too, and neither is logged.
- ``https://...`` (``http://`` only to this machine) with ``format=slack|teams|json``
  in its query, or the default format given by the caller.

A notification that fails is returned as a one-line message: it never stops the
others, and never touches the reports already written. Each one has a total
deadline (``DEADLINE`` unless given), however slowly a server answers, and at
most ``MAX_ANSWER`` bytes of a webhook's answer are read.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import os
import smtplib
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from gpuaudit import __version__
from gpuaudit.common import urls
from gpuaudit.common.debuglog import add_secret, redact

PASSWORD_ENV = "GPUAUDIT_SMTP_PASSWORD"
WEBHOOK_FORMATS = ("json", "slack", "teams")
MAIL_SCHEMES = ("smtp", "smtps")
WEB_SCHEMES = ("https", "http")
TIMEOUT = 30.0  # seconds for any one answer
DEADLINE = 60.0  # seconds for a whole notification (--notify-timeout)
MAX_ANSWER = 64 * 1024  # bytes of a webhook's answer read at most


class NotifyError(ValueError):
    """A notification URL that cannot be used; the message is one line."""


@dataclass(frozen=True)
class Target:
    """Where one notification goes; ``shown`` is the URL without any password."""

    scheme: str
    url: str
    shown: str
    fmt: str = "json"
    host: str = ""
    port: int = 0
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    sender: str = ""
    recipients: tuple[str, ...] = ()


@dataclass
class Message:
    """What a notification says: a subject, the summary as text and as data, the HTML."""

    subject: str
    text: str
    data: dict[str, Any]
    html: Path | None = None


def parse_target(url: str, default_format: str = "json") -> Target:
    """A notification target from its URL; raises NotifyError, which never quotes
    the URL's password, path or query."""
    scheme = urls.scheme_of(url)
    if scheme not in MAIL_SCHEMES + WEB_SCHEMES:
        raise NotifyError(
            f"{urls.shown(url)}: a notification URL starts with smtp://, smtps://, https:// "
            "or http://"
        )
    try:
        parsed = urls.parse(url)
    except urls.URLError as exc:
        raise NotifyError(f"{urls.shown(url)}: {exc}") from None
    add_secret(parsed.password)
    query = parse_qs(parsed.query)
    if scheme in MAIL_SCHEMES:
        return _mail_target(url, parsed, query)
    shown = parsed.shown()
    if not parsed.host:
        raise NotifyError(f"{shown}: a webhook URL needs a host")
    if scheme == "http" and not is_loopback(parsed.host):
        raise NotifyError(f"{shown}: http:// only to this machine; use https://")
    fmt = query.pop("format", [default_format])[-1].lower()
    if fmt not in WEBHOOK_FORMATS:
        shown_fmt = fmt if fmt.isascii() and fmt.isalnum() else "..."
        raise NotifyError(f"{shown}: format={shown_fmt} is not one of {', '.join(WEBHOOK_FORMATS)}")
    parts = urlsplit(url)
    rest = urlencode(query, doseq=True)
    posted = urlunsplit((parts.scheme, parts.netloc, parts.path, rest, ""))
    return Target(scheme, posted, shown, fmt)


def _mail_target(url: str, parsed: urls.URL, query: dict[str, list[str]]) -> Target:
    shown = parsed.shown(path=True)
    recipients = tuple(r for given in query.get("to", []) for r in given.split(",") if r)
    if not parsed.host or not recipients:
        raise NotifyError(f"{shown}: an email URL needs a host and ?to=ADDRESS")
    password = parsed.password if parsed.password else os.environ.get(PASSWORD_ENV)
    add_secret(password)
    sender = query.get("from", [f"gpuaudit@{parsed.host}"])[-1]
    port = parsed.port or (465 if parsed.scheme == "smtps" else 25)
    return Target(
        parsed.scheme, url, shown, "email", parsed.host, port, parsed.user or None, password,
        sender, recipients,
    )  # fmt: skip


def is_loopback(host: str) -> bool:
    """localhost or a loopback address: what is sent there never crosses a network."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def send_all(targets: Sequence[Target], message: Message, deadline: float = DEADLINE) -> list[str]:
    """Send ``message`` to every target, each within ``deadline`` seconds; return one
    line for each that failed. No failure, of any kind, stops the next target."""
    failures = []
    for target in targets:
        try:
            within(deadline, functools.partial(_send, target, message, min(TIMEOUT, deadline)))
        except Exception as exc:  # each target is independent of the others
            failures.append(f"notification to {target.shown} failed: {_reason(exc, target)}")
    return failures


def _send(target: Target, message: Message, timeout: float) -> None:
    if target.scheme in MAIL_SCHEMES:
        send_mail(target, message, timeout)
    else:
        post_webhook(target, message, timeout)


def within(deadline: float, action: Callable[[], None]) -> None:
    """Run ``action`` and wait for it at most ``deadline`` seconds in all.

    A server that trickles its answer a byte at a time meets no socket timeout; past
    the deadline the action is left to end by itself (it reads a bounded answer) and
    TimeoutError is raised.
    """
    failed: list[BaseException] = []

    def run() -> None:
        try:
            action()
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    worker = threading.Thread(target=run, name="notify", daemon=True)
    worker.start()
    worker.join(deadline)
    if worker.is_alive():
        raise TimeoutError(f"not done within {deadline:g} s (--notify-timeout)")
    if failed:
        raise failed[0]


def _reason(exc: BaseException, target: Target) -> str:
    """The failure in one line, without the password, nor a webhook's path or query."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if target.scheme in WEB_SCHEMES:
        parts = urlsplit(target.url)
        for secret in (parts.path, parts.query):
            if len(secret) > 1:
                text = text.replace(secret, "/...")
    return redact(text)


def send_mail(target: Target, message: Message, timeout: float = TIMEOUT) -> None:
    mail = EmailMessage()
    mail["Subject"] = message.subject
    mail["From"] = target.sender
    mail["To"] = ", ".join(target.recipients)
    mail["X-Mailer"] = f"gpuaudit {__version__}"
    mail.set_content(message.text)
    if message.html is not None:
        mail.add_attachment(
            message.html.read_bytes(),
            maintype="text",
            subtype="html",
            filename=message.html.name,
            params={"charset": "utf-8"},
        )
    context = ssl.create_default_context()
    smtp: smtplib.SMTP
    if target.scheme == "smtps":
        smtp = smtplib.SMTP_SSL(target.host, target.port, timeout=timeout, context=context)
    else:
        smtp = smtplib.SMTP(target.host, target.port, timeout=timeout)
    with smtp:
        smtp.ehlo()
        if target.scheme == "smtp" and smtp.has_extn("starttls"):
            smtp.starttls(context=context)
            smtp.ehlo()
        if target.user:
            # smtps and STARTTLS leave a TLS socket; a plain one would carry the password.
            if not isinstance(smtp.sock, ssl.SSLSocket) and not is_loopback(target.host):
                raise OSError(
                    "the server offers no STARTTLS: the password is not sent in clear "
                    "(use smtps://)"
                )
            smtp.login(target.user, target.password or "")
        smtp.send_message(mail)


def webhook_body(fmt: str, message: Message) -> dict[str, Any]:
    """The JSON posted: Slack's {"text"}, a Teams adaptive card, or the summary itself."""
    if fmt == "slack":
        return {"text": f"*{message.subject}*\n```\n{message.text}```"}
    if fmt == "teams":
        card = {
            "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
            "type": "AdaptiveCard",
            "version": "1.4",
            "body": [
                {"type": "TextBlock", "text": message.subject, "weight": "Bolder", "wrap": True},
                {"type": "TextBlock", "text": message.text, "fontType": "Monospace", "wrap": True},
            ],
        }
        return {
            "type": "message",
            "attachments": [
                {"contentType": "application/vnd.microsoft.card.adaptive", "content": card}
            ],
        }
    return {"subject": message.subject, "summary": message.data}


def post_webhook(target: Target, message: Message, timeout: float = TIMEOUT) -> None:
    body = json.dumps(webhook_body(target.fmt, message), ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(
        target.url,
        data=body,
        headers={"Content-Type": "application/json", "User-Agent": f"gpuaudit/{__version__}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            answer.read(MAX_ANSWER)  # what it says beyond that is not read
    except urllib.error.HTTPError as exc:
        raise OSError(f"HTTP {exc.code} {exc.reason}") from exc


# What each exit status of a scan that ended in an error asks of the people told.
FAILURE_MEANINGS = {
    2: "the job's options or an input file (policy, baseline, inventory) need attention",
    3: "the server could not be reached, or refused the login: nothing was audited",
    70: "gpuaudit crashed (a bug): the crash file the error names holds the traceback",
}


def failure_message(server: str, error: str, status: int) -> Message:
    """The notification of a scan that ended in an error: no reports, only the error."""
    meaning = FAILURE_MEANINGS.get(status, "the scan did not finish")
    return Message(
        subject=f"gpuaudit {server}: ERROR (exit {status}): {error}",
        text=f"gpuaudit could not audit {server}.\n\nerror: {error}\nexit status {status}: "
        f"{meaning}\n",
        data={"server": server, "verdict": "ERROR", "exit_status": status, "error": error},
    )
