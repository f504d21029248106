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
others, and never touches the reports already written.
"""

from __future__ import annotations

import ipaddress
import json
import os
import smtplib
import ssl
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit, urlunsplit

from gpuaudit import __version__
from gpuaudit.debuglog import add_secret, redact

PASSWORD_ENV = "GPUAUDIT_SMTP_PASSWORD"
WEBHOOK_FORMATS = ("json", "slack", "teams")
MAIL_SCHEMES = ("smtp", "smtps")
WEB_SCHEMES = ("https", "http")
TIMEOUT = 30.0


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
    """A notification target from its URL; raises NotifyError."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    query = parse_qs(parts.query)
    if scheme in MAIL_SCHEMES:
        return _mail_target(url, scheme, parts, query)
    if scheme in WEB_SCHEMES:
        if not parts.hostname:
            raise NotifyError(f"{_shown(parts)}: a webhook URL needs a host")
        if scheme == "http" and not is_loopback(parts.hostname):
            raise NotifyError(f"{_shown(parts)}: http:// only to this machine; use https://")
        fmt = query.pop("format", [default_format])[-1].lower()
        if fmt not in WEBHOOK_FORMATS:
            raise NotifyError(
                f"{_shown(parts)}: format={fmt} is not one of {', '.join(WEBHOOK_FORMATS)}"
            )
        rest = urlencode(query, doseq=True)
        posted = urlunsplit((parts.scheme, parts.netloc, parts.path, rest, ""))
        return Target(scheme, posted, _shown(parts), fmt)
    raise NotifyError(
        f"{_shown(parts)}: a notification URL starts with smtp://, smtps://, https:// or http://"
    )


def _mail_target(url: str, scheme: str, parts: Any, query: dict[str, list[str]]) -> Target:
    recipients = tuple(r for given in query.get("to", []) for r in given.split(",") if r)
    if not parts.hostname or not recipients:
        raise NotifyError(f"{_shown(parts)}: an email URL needs a host and ?to=ADDRESS")
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else os.environ.get(PASSWORD_ENV)
    add_secret(password)
    sender = query.get("from", [f"gpuaudit@{parts.hostname}"])[-1]
    port = parts.port or (465 if scheme == "smtps" else 25)
    return Target(
        scheme, url, _shown(parts), "email", parts.hostname, port, user, password, sender,
        recipients,
    )  # fmt: skip


def is_loopback(host: str) -> bool:
    """localhost or a loopback address: what is sent there never crosses a network."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _shown(parts: Any) -> str:
    """The URL as it may be logged: no password, no query (webhook URLs carry tokens)."""
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}@" if parts.username else ""
    return f"{parts.scheme}://{user}{host}{parts.path if parts.scheme.startswith('smtp') else ''}"


def send_all(targets: Sequence[Target], message: Message) -> list[str]:
    """Send ``message`` to every target; return one line for each that failed."""
    failures = []
    for target in targets:
        try:
            if target.scheme in MAIL_SCHEMES:
                send_mail(target, message)
            else:
                post_webhook(target, message)
        except (OSError, smtplib.SMTPException, ValueError) as exc:
            reason = redact(" ".join(str(exc).split()) or type(exc).__name__)
            failures.append(f"notification to {target.shown} failed: {reason}")
    return failures


def send_mail(target: Target, message: Message) -> None:
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
        smtp = smtplib.SMTP_SSL(target.host, target.port, timeout=TIMEOUT, context=context)
    else:
        smtp = smtplib.SMTP(target.host, target.port, timeout=TIMEOUT)
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


def post_webhook(target: Target, message: Message) -> None:
    body = json.dumps(webhook_body(target.fmt, message), ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(
        target.url,
        data=body,
        headers={"Content-Type": "application/json", "User-Agent": f"gpuaudit/{__version__}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            answer.read()
    except urllib.error.HTTPError as exc:
        raise OSError(f"HTTP {exc.code} {exc.reason}") from exc
