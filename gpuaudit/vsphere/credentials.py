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
from urllib.parse import unquote

SAFE_WAYS = (
    "set GPUAUDIT_PASSWORD, use --password-file FILE, pipe it to --password-stdin, "
    "or type it at the prompt"
)


# A password file is read this far and no further (its first line is the password).
MAX_PASSWORD_FILE = 4096


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
    if password == "":
        raise CredentialError(f"GPUAUDIT_PASSWORD is set but empty: {SAFE_WAYS}")
    if password is None and password_file:
        password = read_password_file(password_file, warn)
    if password is None and password_stdin:
        password = _read_stdin_line(stdin)
    if password is None:
        password = env.get("GOVC_PASSWORD") or govc_password
    if password is None and prompt is not None and stdin.isatty():
        password = prompt(f"Password for {user}") or None
    if password is None:
        raise CredentialError(f"no password for {user}: {SAFE_WAYS}")

    insecure = insecure or _truthy(env.get("GOVC_INSECURE"))
    if not ca_file and env.get("GOVC_TLS_CA_CERTS"):
        ca_file = env["GOVC_TLS_CA_CERTS"]
        # Checked as --ca-file is, unless verification is off and it goes unused.
        if not insecure and not Path(ca_file).is_file():
            raise CredentialError(f"GOVC_TLS_CA_CERTS names {ca_file}, which is not a file")
    return Credentials(
        server=server,
        user=user,
        password=password,
        insecure=insecure,
        ca_file=ca_file or None,
    )


def _read_stdin_line(stdin: IO[str]) -> str:
    """The first line of standard input, read no further than a password file is."""
    line = stdin.readline(MAX_PASSWORD_FILE + 1)
    if len(line) > MAX_PASSWORD_FILE and not line.endswith("\n"):
        raise CredentialError(
            f"standard input: the first line is longer than {MAX_PASSWORD_FILE} characters"
        )
    password = line.rstrip("\r\n")
    if not password:
        raise CredentialError("standard input gave no password (an empty first line)")
    return password


def _split_govc_url(url: str) -> tuple[str, str | None, str | None]:
    """GOVC_URL may carry user:password@; the server part never keeps them.

    The user information ends at the last ``@`` and the user at the first ``:``,
    so that a password holding ``/``, ``#``, ``?``, ``@`` or ``:`` stays whole.
    """
    from gpuaudit.vsphere.connect import split_userinfo

    server, userinfo = split_userinfo(url)
    if userinfo is None:
        return server, None, None
    user, colon, password = userinfo.partition(":")
    return server, unquote(user) or None, unquote(password) if colon and password else None


def read_password_file(path: str, warn: Callable[[str], None] | None = None) -> str:
    """The first line of ``path``; warns, as ssh does, when others may read it.

    At most MAX_PASSWORD_FILE bytes are read, so that /dev/zero or a huge file
    given by mistake is an error rather than a process that grows without bound.
    """
    file = Path(path)
    try:
        mode = file.stat().st_mode
        with file.open("rb") as handle:
            head = handle.read(MAX_PASSWORD_FILE + 1)
    except OSError as exc:
        raise CredentialError(f"cannot read password file {path}: {exc}") from None
    first, newline, _ = head.partition(b"\n")
    if not newline and len(head) > MAX_PASSWORD_FILE:
        raise CredentialError(
            f"password file {path}: its first line is longer than {MAX_PASSWORD_FILE} bytes; "
            "is it the right file?"
        )
    try:
        line = first.decode("utf-8").rstrip("\r")
    except UnicodeDecodeError as exc:
        raise CredentialError(f"cannot read password file {path}: {exc}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO) and warn is not None:
        warn(
            f"password file {path} is readable by group or others "
            f"(mode {stat.S_IMODE(mode):04o}); run: chmod 600 {path}"
        )
    if not line:
        raise CredentialError(f"password file {path} is empty")
    return line
