"""Outside programs for the report tests: headless Chromium and LibreOffice.

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
NUL-terminated JSON on file descriptors 3 and 4), so the tests need no websocket
library and open no port. LibreOffice converts a workbook to one CSV per sheet.

A missing program skips its tests on a developer's machine and fails them in CI
(CI=true), where scripts/apt-packages.txt should have installed it.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def require_tool(*names: str) -> str:
    """The path of the first of ``names`` on PATH; else skip, or fail when CI=true."""
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    message = f"{names[0]} is not installed (scripts/apt-packages.txt lists it)"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


class CdpError(RuntimeError):
    pass


class Chromium:
    """A headless Chromium with one page, driven over the DevTools pipe."""

    def __init__(self, width: int = 1400, height: int = 1000) -> None:
        binary = require_tool(*CHROMIUM_NAMES)
        self.profile = tempfile.mkdtemp(prefix="gpuaudit-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire() -> None:  # in the child: the pipe on fds 3 and 4
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-dev-shm-usage",
            "--mute-audio",
            "--remote-debugging-pipe",
            f"--user-data-dir={self.profile}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire,
            pass_fds=(3, 4),
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session = ""
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.call(
                "Target.attachToTarget", {"targetId": target, "flatten": True}
            )["sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                self.call(f"{domain}.enable")
            self.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            )
        except BaseException:
            self.close()
            raise

    # The protocol.
    def _send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message).encode() + b"\0"
        while data:
            written = os.write(self._to_chrome, data)
            data = data[written:]

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CdpError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_chrome], [], [], left)
            if ready:
                chunk = os.read(self._from_chrome, 1 << 20)
                if not chunk:
                    raise CdpError("Chromium closed the DevTools pipe")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 30
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        self._send(message)
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CdpError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 30) -> dict[str, Any]:
        for event in self.events:
            if event["method"] == method:
                self.events.remove(event)
                return event
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("method") == method:
                return reply
            if "method" in reply:
                self.events.append(reply)

    # What a test needs.
    def open(self, path: Path, timeout: float = 60) -> float:
        """Load ``path``; return the seconds until its load event."""
        start = time.monotonic()
        self.call("Page.navigate", {"url": path.resolve().as_uri()})
        self.wait_event("Page.loadEventFired", timeout)
        return time.monotonic() - start

    def evaluate(self, expression: str, timeout: float = 30) -> Any:
        reply = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            timeout,
        )
        if "exceptionDetails" in reply:
            raise CdpError(f"{expression!r} raised: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def drain(self, seconds: float = 0.3) -> None:
        """Collect the events that arrive in the next ``seconds``."""
        self.evaluate(f"new Promise(r => setTimeout(r, {int(seconds * 1000)}))")

    def console_errors(self) -> list[str]:
        errors = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.exceptionThrown":
                errors.append(json.dumps(params.get("exceptionDetails", {}))[:500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(json.dumps(params.get("args", []))[:500])
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                errors.append(params["entry"].get("text", "")[:500])
        return errors

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            metrics = self.call("Page.getLayoutMetrics")["cssContentSize"]
            height = min(int(metrics["height"]), 16000)
            params.update(
                captureBeyondViewport=True,
                clip={"x": 0, "y": 0, "width": metrics["width"], "height": height, "scale": 1},
            )
        data = self.call("Page.captureScreenshot", params, timeout=60)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                try:
                    self._send({"id": 0, "method": "Browser.close"})
                    self.proc.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    self.proc.kill()
                    self.proc.wait(timeout=10)
        finally:
            for fd in (self._to_chrome, self._from_chrome):
                with contextlib.suppress(OSError):
                    os.close(fd)
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def xlsx_to_csv(workbook: Path, out_dir: Path, timeout: float = 240) -> dict[str, list[list[str]]]:
    """Every sheet of ``workbook`` as LibreOffice reads it: sheet name -> CSV rows.

    The CSV filter options: comma, double quote, UTF-8, from line 1, no cell format
    override, language 0, quote text cells only as needed, detect special numbers,
    store values (not as shown) and not formulas, keep spaces, all sheets (-1).
    """
    soffice = require_tool("soffice", "libreoffice")
    out_dir.mkdir(parents=True, exist_ok=True)
    profile = Path(tempfile.mkdtemp(prefix="gpuaudit-lo-"))
    filt = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1"
    try:
        run = subprocess.run(
            [
                soffice,
                f"-env:UserInstallation={profile.as_uri()}",
                "--headless",
                "--norestore",
                "--convert-to",
                filt,
                "--outdir",
                str(out_dir),
                str(workbook),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    prefix = workbook.stem + "-"
    sheets = {}
    for path in sorted(out_dir.glob(f"{workbook.stem}-*.csv")):
        with path.open(encoding="utf-8", newline="") as handle:
            sheets[path.stem[len(prefix) :]] = list(csv.reader(handle))
    if not sheets:
        raise AssertionError(f"LibreOffice wrote no CSV: {run.stdout} {run.stderr}")
    return sheets


def xlsx_to_pdf_pages(workbook: Path, out_dir: Path, timeout: float = 240) -> list[str]:
    """``workbook`` printed by LibreOffice to PDF: each page's text, as pdftotext lays it out."""
    soffice = require_tool("soffice", "libreoffice")
    pdftotext = require_tool("pdftotext")
    out_dir.mkdir(parents=True, exist_ok=True)
    profile = Path(tempfile.mkdtemp(prefix="gpuaudit-lo-"))
    try:
        subprocess.run(
            [
                soffice,
                f"-env:UserInstallation={profile.as_uri()}",
                "--headless",
                "--norestore",
                "--convert-to",
                "pdf",
                "--outdir",
                str(out_dir),
                str(workbook),
            ],
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=True,
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    pdf = out_dir / f"{workbook.stem}.pdf"
    text = subprocess.run(
        [pdftotext, "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    return text.split("\f")[:-1]  # pdftotext ends every page with a form feed
