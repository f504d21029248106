"""URLs people give gpuaudit (``--history``, ``--notify``): checked, and shown without secrets.

A password typed into a URL unquoted may hold ``/``, ``?``, ``#``, ``@`` or ``:``.
Python's and SQLAlchemy's parsers then take part of it for the host, the port or
the path, and quote it in their errors. ``parse`` finds where the user
information ends before any parser sees the URL, and refuses, naming only the
scheme, a URL whose user information is ambiguous; its messages never hold the
user information, the path or the query (a webhook's path is its token).
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass, field
from urllib.parse import unquote

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_HOST = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=%-]*")
ENCODE = "percent-encode it (/ as %2F, ? as %3F, # as %23, @ as %40)"


class URLError(ValueError):
    """A URL that cannot be used; the message is one line and holds no part of the URL."""


@dataclass(frozen=True)
class URL:
    """A URL split where RFC 3986 splits it, its user information unquoted."""

    scheme: str  # lower case
    host: str  # without the brackets of an IPv6 literal
    port: int | None
    path: str
    query: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)

    def shown(self, path: bool = False, mark: str | None = None) -> str:
        """``scheme://user@host:port`` (with ``path``, its path too); never the password
        (``mark``, such as ``***``, stands in its place) and never the query."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.port is not None:
            host = f"{host}:{self.port}"
        secret = f":{mark}" if mark and self.password is not None else ""
        user = f"{self.user}{secret}@" if self.user is not None else ""
        return f"{self.scheme}://{user}{host}{self.path if path else ''}"


def scheme_of(url: str) -> str:
    """The scheme of ``url`` in lower case, or "" when it has none."""
    scheme, sep, _ = url.partition("://")
    return scheme.lower() if sep and _SCHEME.fullmatch(scheme) else ""


def parse(url: str) -> URL:
    """Split ``url``; raises URLError, whose message never quotes the URL."""
    scheme = scheme_of(url)
    if not scheme:
        raise URLError("not a URL: it starts with a scheme and :// (such as https://)")
    if any(_unprintable(c) for c in url):
        raise URLError("holds a space or a control character: percent-encode it (a space as %20)")
    rest = url.partition("://")[2]
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:end], rest[end:]
    if authority.count("@") > 1 or _stray_at(tail):
        raise URLError(f"the user or password holds a character that ends it early: {ENCODE}")
    userinfo, at, hostport = authority.rpartition("@")
    if "[" in userinfo or "]" in userinfo:
        # RFC 3986 keeps them for an IPv6 host; Python's splitter refuses the whole URL.
        raise URLError(
            "the user or password holds [ or ], which a URL keeps for an IPv6 address: "
            "percent-encode them ([ as %5B, ] as %5D)"
        )
    user = password = None
    if at:
        given_user, colon, given_password = userinfo.partition(":")
        user = unquote(given_user)
        password = unquote(given_password) if colon else None
    host, port = _host_port(hostport)
    path, _, query = tail.partition("#")[0].partition("?")
    return URL(scheme, host, port, path, query, user, password)


def shown(url: str, path: bool = False, mark: str | None = None) -> str:
    """``url`` for a message: as ``URL.shown``, or only its scheme when it cannot be parsed."""
    try:
        return parse(url).shown(path, mark)
    except URLError:
        scheme = scheme_of(url)
        return f"{scheme}://..." if scheme else "a URL"


def _unprintable(c: str) -> bool:
    """A space, a control, a format character (bidi controls among them) or a separator."""
    return c.isspace() or unicodedata.category(c) in ("Cc", "Cf", "Zs", "Zl", "Zp")


def _stray_at(tail: str) -> bool:
    """An ``@`` after the authority that is not inside a query value: the user
    information held ``/``, ``?`` or ``#`` and the authority ended inside it."""
    before_fragment, _, fragment = tail.partition("#")
    path, _, query = before_fragment.partition("?")
    if "@" in path or "@" in fragment:
        return True
    return any("@" in field.partition("=")[0] for field in query.split("&"))


def _host_port(hostport: str) -> tuple[str, int | None]:
    if hostport.startswith("["):
        literal, bracket, after = hostport[1:].partition("]")
        if not bracket:
            raise URLError("the host's IPv6 address has no closing ]")
        try:
            ipaddress.IPv6Address(literal.split("%", 1)[0])
        except ValueError:
            raise URLError("the host in [ ] is not an IPv6 address") from None
        host, port_text = literal, after
        if port_text and not port_text.startswith(":"):
            raise URLError("after the IPv6 address's ] comes only :PORT")
        port_text = port_text[1:]
    else:
        if "]" in hostport:
            raise URLError("the host has a ] without [")
        if hostport.count(":") > 1:
            raise URLError("an IPv6 address is written in brackets: [2001:db8::1]:PORT")
        host, _, port_text = hostport.partition(":")
        if not _HOST.fullmatch(host):
            raise URLError("the host name holds a character no host name holds")
    return host, _port(port_text)


def _port(text: str) -> int | None:
    if not text:
        return None
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 65535:
        raise URLError("the port is not a number from 1 to 65535")
    return int(text)
