"""Run the Go lab: a GPU-aware vCenter (the govmomi simulator) on loopback.

    with Lab("tests/scenarios/scenario-b.yaml") as lab:
        si = SmartConnect(protocol="http", host=lab.host, port=lab.port,
                          user=lab.user, pwd=lab.password)

``Lab`` builds the binary when it is missing (tests/lab/build.sh), writes the
normalised scenario to a temporary directory, starts the lab in its own process
group and waits for its ``ready`` line. ``stop()`` always terminates and reaps
it, also when start-up fails; start-up failures raise ``LabError`` with the
lab's one-line message.

Fault switches (docs/scenario-format.md, "Fault switches") go in ``faults``, by
name without the ``-fault-`` prefix; a list value repeats the switch:

    Lab("tests/scenarios/scenario-b.yaml", faults={"status": "503@RetrievePropertiesEx:1"})

For people:

    python -m tests.lab.lab serve tests/scenarios/scenario-b.yaml [--port N] [--tls]
        [--cert-name NAME] [--fault NAME=VALUE ...]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from .scenario import ScenarioError, load_scenario, normalise

# Test-only credentials: the lab accepts nothing else. Recorded sessions must
# never contain the password (a cassette test searches for this exact string).
LAB_USER = "gpuaudit-lab"
LAB_PASSWORD = "lab-only-S3cret-7c1e"

LAB_DIR = Path(__file__).resolve().parent
BINARY = LAB_DIR / "bin" / "gpuaudit-lab"
BUILD_SCRIPT = LAB_DIR / "build.sh"
BUILD_TIMEOUT = 900.0  # seconds; includes apt-get on a fresh machine


class LabError(RuntimeError):
    """The lab could not be built or started."""


def ensure_binary() -> Path:
    """The lab binary, built with build.sh when it is missing or older than a Go
    source (a checkout whose lab gained a flag must not run the binary without it)."""
    if BINARY.is_file() and os.access(BINARY, os.X_OK) and not _stale(BINARY):
        return BINARY
    try:
        result = subprocess.run(
            ["sh", str(BUILD_SCRIPT)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LabError(f"cannot build the lab: {exc}") from None
    if result.returncode != 0 or not BINARY.is_file():
        lines = (result.stderr + result.stdout).strip().splitlines()
        reason = lines[-1] if lines else f"build.sh exited with {result.returncode}"
        raise LabError(f"cannot build the lab: {reason}")
    return BINARY


def _stale(binary: Path) -> bool:
    built = binary.stat().st_mtime
    sources = [*LAB_DIR.glob("*.go"), LAB_DIR / "govmomi-fields.patch"]
    return any(p.stat().st_mtime > built for p in sources if p.is_file())


class Lab:
    """One running lab; use as a context manager or call start() and stop()."""

    def __init__(
        self,
        scenario: str | Path | dict[str, Any],
        tls: bool = False,
        port: int = 0,
        host: str = "127.0.0.1",
        user: str = LAB_USER,
        password: str = LAB_PASSWORD,
        timeout: float = 60.0,
        faults: Mapping[str, str | Sequence[str]] | None = None,
        cert_name: str | None = None,
        instance_uuid: str | None = None,
    ) -> None:
        self.scenario_source = scenario
        # The vCenter's about.instanceUuid; None: the simulator's, the same in every lab.
        self.instance_uuid = instance_uuid
        self.tls = tls
        self.faults = dict(faults or {})
        self.cert_name = cert_name
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.timeout = timeout
        self.url = ""
        self.cert_file: str | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._dir: str | None = None
        self._stderr_path: str | None = None

    # -- life cycle ---------------------------------------------------------

    def __enter__(self) -> Lab:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> Lab:
        if self.process is not None:
            raise LabError("the lab is already running")
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        scenario = self._scenario()
        binary = ensure_binary()
        self._dir = tempfile.mkdtemp(prefix="gpuaudit-lab-")
        scenario_file = os.path.join(self._dir, "scenario.json")
        with open(scenario_file, "w", encoding="utf-8") as f:
            json.dump(scenario, f)
        self._stderr_path = os.path.join(self._dir, "stderr.log")
        command = [
            str(binary),
            "-scenario", scenario_file,
            "-listen", f"{self.host}:{self.port}",
            "-user", self.user,
            "-password", self.password,
        ]  # fmt: skip
        if self.tls:
            self.cert_file = os.path.join(self._dir, "lab-cert.pem")
            command += ["-tls", "-cert-out", self.cert_file]
        if self.cert_name:
            command += ["-cert-name", self.cert_name]
        if self.instance_uuid:
            command += ["-instance-uuid", self.instance_uuid]
        command += fault_flags(self.faults)
        with open(self._stderr_path, "wb") as stderr:
            # Its own process group, so that stop() can end everything it started;
            # stderr goes to a file, which nobody has to drain.
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
            )
        line = self._read_ready_line()
        if not line.startswith("ready "):
            raise LabError(f"the lab said {line!r} instead of 'ready <url>'")
        self.url = line.split(" ", 1)[1].strip()
        parts = urlsplit(self.url)
        self.host = parts.hostname or self.host
        self.port = parts.port or 0

    def _scenario(self) -> dict[str, Any]:
        try:
            if isinstance(self.scenario_source, dict):
                return normalise(self.scenario_source)
            return load_scenario(self.scenario_source)
        except ScenarioError as exc:
            raise LabError(str(exc)) from None

    def _read_ready_line(self) -> str:
        """The first line on stdout, within the timeout; LabError if the lab dies."""
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        deadline = time.monotonic() + self.timeout
        buffer = b""
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            while b"\n" not in buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise LabError(f"the lab did not report ready within {self.timeout:g} s")
                if not selector.select(timeout=min(remaining, 0.5)):
                    continue
                chunk = os.read(stdout.fileno(), 4096)
                if not chunk:  # the lab exited
                    self.process.wait(timeout=5)
                    raise LabError(self._failure_message())
                buffer += chunk
        return buffer.split(b"\n", 1)[0].decode("utf-8", "replace")

    def _failure_message(self) -> str:
        text = ""
        if self._stderr_path and os.path.exists(self._stderr_path):
            with open(self._stderr_path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        errors = [line[len("error: ") :] for line in lines if line.startswith("error: ")]
        if errors:
            return errors[-1]
        if lines:
            return lines[-1]
        code = self.process.returncode if self.process else None
        return f"the lab exited with status {code} before it was ready"

    def stop(self) -> None:
        """Terminate the lab and its process group, reap it and remove its files."""
        process, self.process = self.process, None
        if process is not None:
            _end_group(process)
            if process.stdout is not None:
                process.stdout.close()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


def fault_flags(faults: Mapping[str, str | Sequence[str]]) -> list[str]:
    """``{"status": "503@4", "drop": ["2", "5"]}`` as the lab's -fault-... switches."""
    flags = []
    for name, value in faults.items():
        for item in [value] if isinstance(value, str) else value:
            flags += [f"-fault-{name}", str(item)]
    return flags


def _end_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the lab's process group, SIGKILL it if it lingers; always reap.

    Signals go only to a group whose leader has not been reaped yet: until then
    its id cannot belong to anybody else.
    """
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=10.0)
            return
        except subprocess.TimeoutExpired:
            continue
    process.wait()


# ---------------------------------------------------------------------------
# python -m tests.lab.lab serve FILE


def _serve(args: argparse.Namespace) -> int:
    host, port = "127.0.0.1", args.port
    if args.listen:
        host, _, port_text = args.listen.rpartition(":")
        host = host or "127.0.0.1"
        try:
            port = int(port_text)
        except ValueError:
            sys.stderr.write(f"--listen wants HOST:PORT, not {args.listen!r}\n")
            return 2
    faults: dict[str, list[str]] = {}
    for item in args.fault:
        name, sep, value = item.partition("=")
        if not sep or not name:
            sys.stderr.write(f"--fault wants NAME=VALUE (status=503@4-5), not {item!r}\n")
            return 2
        faults.setdefault(name.removeprefix("-fault-"), []).append(value)
    lab = Lab(
        args.scenario,
        tls=args.tls,
        port=port,
        host=host,
        timeout=args.timeout,
        faults=faults,
        cert_name=args.cert_name,
    )
    stopping = False

    def interrupt(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, interrupt)
    try:
        lab.start()
        print(f"url:      {lab.url}")
        print(f"user:     {lab.user}")
        print(f"password: {lab.password}")
        if lab.cert_file:
            print(f"cert:     {lab.cert_file}  (a CA file for this server only)")
        for flag, value in zip(*[iter(fault_flags(lab.faults))] * 2, strict=True):
            print(f"fault:    {flag} {value}")
        print("serving; Ctrl-C stops", flush=True)
        while not stopping and lab.running:
            time.sleep(0.2)
        if not stopping:
            sys.stderr.write("the lab stopped on its own\n")
            return 1
    except LabError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    except KeyboardInterrupt:
        pass
    finally:
        lab.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.lab.lab", description=__doc__.split("\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve a scenario until Ctrl-C")
    serve.add_argument("scenario", help="a scenario YAML file (tests/scenarios/...)")
    serve.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)"
    )
    serve.add_argument(
        "--listen", metavar="HOST:PORT", help="address to listen on instead of --port"
    )
    serve.add_argument(
        "--tls", action="store_true", help="serve https with a self-signed certificate"
    )
    serve.add_argument(
        "--cert-name", help="with --tls: the only name the certificate holds (default: loopback)"
    )
    serve.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a fault switch, repeatable: latency=20ms, drop=5, status=503@4-5, malformed=N, "
        "stall=N, invalidate-session=N (docs/scenario-format.md)",
    )
    serve.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for start-up")
    args = parser.parse_args(argv)
    return _serve(args)


if __name__ == "__main__":
    sys.exit(main())
