"""Report file names: gpuaudit-<server>-<UTC timestamp>.<extension>.

The server part is safe as a file name and tells apart every two servers (or
fleet targets) whose names differ; the fleet summary, gpuaudit-fleet-<time>, is
a name no server can take.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import UTC, datetime

EXTENSIONS = {
    "html": "html",
    "xlsx": "xlsx",
    "json": "json",
    "junit": "junit.xml",
    "sarif": "sarif",
    "openmetrics": "prom",
}
FORMATS = tuple(EXTENSIONS)
DEFAULT_FORMATS = ("html", "xlsx", "json")

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_SERVER = 64
_FLEET = "fleet"


def safe_server(server: str) -> str:
    """A server name reduced to ``[A-Za-z0-9._-]``, with no ``..`` and no leading dot.

    Accents are dropped (``Zürich`` gives ``Zurich``); separators, ports, user names
    and anything else become ``_``; an empty result becomes ``unknown``. The result
    can never name another folder. Whenever the name had to be changed, a short
    hash of the original follows (``vc01_443-1f3a9c2b``), so that names which reduce
    alike (``a/b`` and ``a:b``, ``ü1`` and ``ü2``) still give different files; so
    does ``fleet`` in any case, which the fleet summary's name holds.
    """
    text = _UNSAFE.sub("_", _without_accents(server.strip()))
    text = re.sub(r"\.{2,}", "_", text)
    text = re.sub(r"_{2,}", "_", text)
    text = text.strip("._-")[:_MAX_SERVER].strip("._-") or "unknown"
    if text != server or text.lower() == _FLEET:
        text = f"{text}-{_digest(server)}"
    return text


def _without_accents(text: str) -> str:
    # NFKD splits ü into u and a combining mark; the marks go, the letters stay.
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _digest(text: str) -> str:
    # Stable across runs and machines (unlike hash()); a lone surrogate from a
    # mis-encoded argument still hashes.
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()[:8]


def utc_stamp(now: datetime) -> str:
    """20261130T085000Z: ``now`` in UTC; a naive datetime is taken to be UTC."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def report_stem(server: str, now: datetime) -> str:
    return f"gpuaudit-{safe_server(server)}-{utc_stamp(now)}"


def fleet_stem(now: datetime) -> str:
    """gpuaudit-fleet-<time>: no report_stem gives it, as safe_server never gives ``fleet``."""
    return f"gpuaudit-{_FLEET}-{utc_stamp(now)}"


def report_filename(server: str, fmt: str, now: datetime | None = None) -> str:
    """gpuaudit-vcsa01.example.com-20261130T085000Z.html (``now`` defaults to the current time)"""
    try:
        extension = EXTENSIONS[fmt]
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r}; known: {', '.join(FORMATS)}") from None
    return f"{report_stem(server, now or datetime.now(UTC))}.{extension}"
