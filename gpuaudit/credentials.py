"""Where the server, user and password come from, and how they are kept out of sight.

A password is never taken as a command-line argument (it would sit in shell
history and in ``ps``). It comes from, in order: GPUAUDIT_PASSWORD, a password
file, standard input, or a prompt when standard input is a terminal. govc's
variables (GOVC_URL, GOVC_USERNAME, GOVC_PASSWORD, GOVC_INSECURE,
GOVC_TLS_CA_CERTS) are honoured as fallbacks, since VMware admins have them set.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import unquote, urlsplit

SAFE_WAYS = (
    "set GPUAUDIT_PASSWORD, use --password-file FILE, pipe it to --password-stdin, "
    "or type it at the prompt"
)


class CredentialError(Exception):
    """Credentials that are missing or cannot be read."""


@dataclass(frozen=True)
class Credentials:
    server: str
    user: str
    password: str = ""
    insecure: bool = False
    ca_file: str | None = None

    def __repr__(self) -> str:  # never print a password by accident
        return f"Credentials(server={self.server!r}, user={self.user!r}, password='***')"


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def resolve(
    server: str | None,
    user: str | None,
    *,
    password_file: str | None = None,
    password_stdin: bool = False,
    insecure: bool = False,
    ca_file: str | None = None,
    env: Mapping[str, str] | None = None,
    stdin: IO[str] | None = None,
    prompt: Callable[[str], str] | None = None,
    warn: Callable[[str], None] | None = None,
) -> Credentials:
    """Combine options, gpuaudit's environment and govc's into one set of credentials."""
    env = os.environ if env is None else env
    stdin = sys.stdin if stdin is None else stdin
    govc_user = govc_password = None
    govc_url = env.get("GOVC_URL")
    if not server and govc_url:
        server, govc_user, govc_password = _split_govc_url(govc_url)
    if not server:
        raise CredentialError("no server: pass --server (or set GOVC_URL)")
    user = user or env.get("GOVC_USERNAME") or govc_user
    if not user:
        raise CredentialError("no user: pass --user (or set GOVC_USERNAME)")

    password = env.get("GPUAUDIT_PASSWORD")
    if password is None and password_file:
        password = read_password_file(password_file, warn)
    if password is None and password_stdin:
        password = stdin.readline().rstrip("\r\n")
    if password is None:
        password = env.get("GOVC_PASSWORD") or govc_password
    if password is None and prompt is not None and stdin.isatty():
        password = prompt(f"Password for {user}")
    if password is None:
        raise CredentialError(f"no password for {user}: {SAFE_WAYS}")

    return Credentials(
        server=server,
        user=user,
        password=password,
        insecure=insecure or _truthy(env.get("GOVC_INSECURE")),
        ca_file=ca_file or env.get("GOVC_TLS_CA_CERTS") or None,
    )


def _split_govc_url(url: str) -> tuple[str, str | None, str | None]:
    """GOVC_URL may carry user:password@; the server part never keeps them."""
    text = url if "://" in url else "https://" + url
    parts = urlsplit(text)
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return f"{parts.scheme}://{netloc}{parts.path}", user, password


def read_password_file(path: str, warn: Callable[[str], None] | None = None) -> str:
    """The first line of ``path``; warns, as ssh does, when others may read it."""
    file = Path(path)
    try:
        mode = file.stat().st_mode
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CredentialError(f"cannot read password file {path}: {exc}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO) and warn is not None:
        warn(
            f"password file {path} is readable by group or others "
            f"(mode {stat.S_IMODE(mode):04o}); run: chmod 600 {path}"
        )
    lines = text.splitlines()
    if not lines or not lines[0]:
        raise CredentialError(f"password file {path} is empty")
    return lines[0]
