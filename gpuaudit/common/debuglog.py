"""Debug logging that never shows a secret.

``gpuaudit -vv`` logs every SOAP call and turns on http.client's wire debugging
(request lines, headers and bodies; response status and headers), which
http.client prints to standard output; here it goes to the log instead. Every
log record passes ``redact`` on its way out: the password (as given, XML-escaped
and as Python writes it in a bytes repr), ``<password>`` elements, session
cookies and ``Authorization`` headers are replaced by ``*****``.

So is the session key, which identifies the live session as its cookie does:
in the ``UserSession`` a ``Login`` answers (vcrpy logs that answer whole while it
records) and in the session-bound morefs that hold it (``session[KEY]...``, a
container view's). A key seen once is registered as a secret, so it is masked
wherever it appears later.

A secret is masked with the whole token that holds it (the run of characters
between white space): masking only the secret itself would let its surroundings
tell it (the password ``pass`` in "the *****word is ..." says what it is).
"""

from __future__ import annotations

import http.client
import logging
import re
import threading
from typing import Any
from urllib.parse import quote
from xml.sax.saxutils import escape

MASK = "*****"
_PATTERNS = (
    (re.compile(r"(<password[^>]*>)[^<]*(</password>)"), rf"\g<1>{MASK}\g<2>"),
    (re.compile(r"(vmware_soap_session=)(\\?\"?)[^\"';\s\\]+"), rf"\g<1>\g<2>{MASK}"),
    (re.compile(r"(Authorization:\s*)[^\r\n\\']+", re.IGNORECASE), rf"\g<1>{MASK}"),
)

# The session key: in a Login's (or LoginByToken's, ...) UserSession, in a UserSession
# property value, and in a session-bound moref. Group 2 is the key.
_SESSION_KEYS = (
    re.compile(r"(Login\w*Response[^>]*>(?:\s|\\[rn])*<returnval[^>]*>(?:\s|\\[rn])*<key>)([^<]+)"),
    re.compile(r"(xsi:type=[\"\\']*UserSession[\"\\']*>(?:\s|\\[rn])*<key>)([^<]+)"),
    re.compile(r"(session\[)([^\]\s'\"]+)(?=\])"),
)

_secrets: set[str] = set()
_lock = threading.Lock()
_http_log = logging.getLogger("http.client")


def add_secret(value: str | None) -> None:
    """Never log ``value``, in any of the forms it takes on the wire or in a repr."""
    if not value:
        return
    forms = {
        value,
        escape(value, {'"': "&quot;", "'": "&apos;"}),
        escape(value),
        repr(value.encode("utf-8"))[2:-1],
        repr(escape(value).encode("utf-8"))[2:-1],
        quote(value, safe=""),
    }
    with _lock:
        _secrets.update(f for f in forms if len(f) >= 1)


def redact(text: str) -> str:
    """``text`` with every known secret and every credential-shaped value masked."""
    for key_pattern in _SESSION_KEYS:
        for match in key_pattern.finditer(text):
            if match.group(2) != MASK:
                add_secret(match.group(2))
        text = key_pattern.sub(rf"\g<1>{MASK}", text)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            # The whole token: what stands around a secret must not spell it out.
            text = re.sub(rf"\S*{re.escape(secret)}\S*", MASK, text)
    return text


class RedactingFilter(logging.Filter):
    """Rewrites each record's message (and traceback) with ``redact``."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string must not leak its arguments
            message = str(record.msg)
        record.msg = redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


_FILTER = RedactingFilter()


def _http_print(*args: Any, **_kwargs: Any) -> None:
    """http.client's debug output, as log records rather than lines on stdout."""
    _http_log.debug(" ".join(str(a) for a in args))


def install(wire: bool) -> None:
    """Redact every handler of the root logger; with ``wire``, log http.client's traffic."""
    for handler in logging.getLogger().handlers:
        if _FILTER not in handler.filters:
            handler.addFilter(_FILTER)
    if wire:
        http.client.print = _http_print  # type: ignore[attr-defined]
        http.client.HTTPConnection.debuglevel = 1


def uninstall() -> None:
    """Undo ``install`` (for a command line run inside a longer-lived process)."""
    http.client.HTTPConnection.debuglevel = 0
    if getattr(http.client, "print", None) is _http_print:
        del http.client.print  # type: ignore[attr-defined]
    for handler in logging.getLogger().handlers:
        handler.removeFilter(_FILTER)
