"""Report file names: gpuaudit-<server>-<UTC timestamp>.<extension>."""

from __future__ import annotations

import re
from datetime import UTC, datetime

EXTENSIONS = {
    "html": "html",
    "xlsx": "xlsx",
    "json": "json",
    "junit": "junit.xml",
    "sarif": "sarif",
}
FORMATS = tuple(EXTENSIONS)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_SERVER = 64


def safe_server(server: str) -> str:
    """A server name reduced to ``[A-Za-z0-9._-]``, with no ``..`` and no leading dot.

    Separators, ports, user names and anything else become ``_``; an empty result
    becomes ``unknown``. The result can never name another folder.
    """
    text = _UNSAFE.sub("_", server.strip())
    text = re.sub(r"\.{2,}", "_", text)
    text = re.sub(r"_{2,}", "_", text)
    text = text.strip("._-")[:_MAX_SERVER].strip("._-")
    return text or "unknown"


def utc_stamp(now: datetime) -> str:
    """20261130T085000Z: ``now`` in UTC; a naive datetime is taken to be UTC."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def report_stem(server: str, now: datetime) -> str:
    return f"gpuaudit-{safe_server(server)}-{utc_stamp(now)}"


def report_filename(server: str, fmt: str, now: datetime | None = None) -> str:
    """gpuaudit-vcsa01.example.com-20261130T085000Z.html (``now`` defaults to the current time)"""
    try:
        extension = EXTENSIONS[fmt]
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r}; known: {', '.join(FORMATS)}") from None
    return f"{report_stem(server, now or datetime.now(UTC))}.{extension}"
