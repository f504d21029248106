"""A throwaway PostgreSQL server in a temporary folder, for the history store's tests.

PostgreSQL refuses to run as root: when the suite runs as root (CI does), the
server runs as the unprivileged user ``nobody`` through runuser.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import IN_CI, unused_port

USER = "gpuaudit"


def pg_tool(name: str) -> str | None:
    """Debian keeps initdb and pg_ctl under /usr/lib/postgresql/VERSION/bin, off PATH."""
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


class PostgresServer:
    def __init__(self) -> None:
        # Not under pytest's own temporary folder, which only root may enter.
        self.folder = Path(tempfile.mkdtemp(prefix="gpuaudit-postgres-"))
        self.data = self.folder / "data"
        self.port = unused_port()
        self.as_root = os.geteuid() == 0

    def _run(self, *args: str) -> None:
        command = list(args)
        if self.as_root:
            command = ["runuser", "-u", "nobody", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:1])} failed: {done.stderr or done.stdout}")

    def start(self) -> None:
        initdb, pg_ctl = pg_tool("initdb"), pg_tool("pg_ctl")
        assert initdb and pg_ctl
        if self.as_root:
            shutil.chown(self.folder, "nobody")
        self._run(initdb, "-D", str(self.data), "-U", USER, "--auth=trust", "-E", "UTF8")
        options = f"-k {self.folder} -p {self.port} -c listen_addresses=127.0.0.1 -c fsync=on"
        log = str(self.folder / "server.log")
        self._run(pg_ctl, "-D", str(self.data), "-o", options, "-l", log, "-w", "start")

    def stop(self) -> None:
        pg_ctl = pg_tool("pg_ctl")
        assert pg_ctl
        self._run(pg_ctl, "-D", str(self.data), "-m", "immediate", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def serve_postgres() -> Iterator[PostgresServer]:
    """A fixture's body: a server for the module's tests (a skip on a laptop without
    PostgreSQL, a failure in CI)."""
    if pg_tool("initdb") is None or pg_tool("pg_ctl") is None:
        message = "PostgreSQL is not installed (the test starts a server); scripts/test installs it"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    pg = PostgresServer()
    pg.start()
    try:
        yield pg
    finally:
        pg.stop()
