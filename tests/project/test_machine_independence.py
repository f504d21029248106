"""Nothing committed depends on the machine that made it.

A cassette, fixture or page that carries the recording machine's kernel release,
host name, Python build or user agent matches nothing on the next machine: the
drift tests fail there, and the file says more about its author's machine than
anyone needs to know.
"""

from __future__ import annotations

import os
import platform
import re
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from gpuaudit.vsphere import cassette
from tests.conftest import CASSETTES, ROOT

# pyVmomi's user agent: "pyvmomi 9.1.1.0 OSS Python/3.11.7 (Linux; 6.1.0-13; x86_64)".
_PLATFORM_USER_AGENT = re.compile(r"Python/\d+\.\d+\.\d+\S* \((?:Linux|Darwin|Windows)[^)]*\)")


def _committed_text_files() -> list[Path]:
    """Every tracked file that is text (a clean clone has exactly these)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if listed.returncode == 0 and listed.stdout:
        paths = [ROOT / name for name in listed.stdout.decode().split("\0") if name]
    else:  # an exported tree without .git
        skip = {".git", ".venv", ".gopath", "bin", "__pycache__", "reports"}
        paths = [
            p for p in ROOT.rglob("*") if p.is_file() and not skip & set(p.relative_to(ROOT).parts)
        ]
    texts = []
    for path in paths:
        if not path.is_file():
            continue  # deleted in the work tree, not yet committed
        head = path.read_bytes()[:8192]
        if b"\0" not in head:
            texts.append(path)
    return texts


def _this_machine() -> dict[str, re.Pattern[str]]:
    """This machine's identity strings, each as a pattern that cannot match by accident."""
    marks: dict[str, re.Pattern[str]] = {}
    release = os.uname().release
    if len(release) >= 4:
        marks["kernel release"] = re.compile(re.escape(release))
    host = socket.gethostname()
    # A short or generic host name ("vm", "localhost") is an ordinary word elsewhere.
    if len(host) >= 6 and host.lower() not in ("localhost", "ubuntu", "debian"):
        marks["host name"] = re.compile(rf"(?<![\w.-]){re.escape(host)}(?![\w-])")
    build = platform.python_build()[1]  # "Dec  5 2023 20:32:06"
    marks["Python build"] = re.compile(re.escape(build))
    marks["Python version string"] = re.compile(re.escape(sys.version))
    return marks


def test_no_committed_file_names_this_machine() -> None:
    marks = _this_machine()
    found = []
    for path in _committed_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for what, pattern in marks.items():
            if pattern.search(text):
                found.append(f"{path.relative_to(ROOT)}: this machine's {what}")
    assert not found, "\n".join(found)


def test_no_committed_file_holds_a_platform_user_agent() -> None:
    found = [
        str(path.relative_to(ROOT))
        for path in _committed_text_files()
        # This file spells out such strings to prove the checks find them.
        if path != Path(__file__).resolve()
        and _PLATFORM_USER_AGENT.search(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not found, f"a client's platform string is committed in: {found}"


@pytest.mark.parametrize("path", sorted(CASSETTES.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_echoed_user_agent_in_a_cassette_is_normalised(path: Path) -> None:
    echoed = []
    for item in cassette.interactions(path):
        body = item["response"].get("body", {}).get("string", b"")
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
        echoed += re.findall(r"<userAgent>([^<]*)</userAgent>", text)
    assert echoed, "every recorded session logs in, and Login's answer names the user agent"
    assert set(echoed) == {cassette.USER_AGENT}


def test_the_recorder_normalises_the_user_agent_in_requests_and_answers() -> None:
    agent = "pyvmomi 9.9.9 OSS Python/3.99.1 (Linux; 9.9.9-other-machine; riscv64)"
    scrubber = cassette._Scrubber()

    request = SimpleNamespace(
        headers={"User-Agent": agent, "Cookie": "vmware_soap_session=abc"},
        body=b"<Envelope/>",
        uri="https://vc01.example.com:443/sdk",
        path="/sdk",
    )
    request = scrubber.request(request)
    assert "User-Agent" not in request.headers
    answer = (
        "<LoginResponse><returnval><userAgent>{0}</userAgent></returnval></LoginResponse>"
        "<event><fullFormattedMessage>User audit logged in as {0} &amp; more"
        "</fullFormattedMessage></event>"
        "<session><userAgent>govc/0.30 (another client)</userAgent></session>"
    ).format(agent.replace("&", "&amp;"))
    response = scrubber.response({"headers": {}, "body": {"string": answer.encode()}})
    body = response["body"]["string"].decode()
    assert "9.9.9-other-machine" not in body and "Python/3.99.1" not in body
    assert "govc/0.30" not in body
    assert body.count(cassette.USER_AGENT) == 3
    assert "logged in as " + cassette.USER_AGENT + " &amp; more" in body


def test_the_check_finds_a_recording_machine_in_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    # As the cassettes stood when recorded on a machine whose kernel was 6.18.44-fc-v595.
    recorded = "<userAgent>pyvmomi 9.1.1.0 OSS Python/3.11.7 (Linux; 6.18.44-fc-v595; x86_64)"
    real = os.uname()
    monkeypatch.setattr(
        os, "uname", lambda: os.uname_result((*real[:2], "6.18.44-fc-v595", *real[3:]))
    )
    monkeypatch.setattr(socket, "gethostname", lambda: "build-worker-17")
    marks = _this_machine()
    assert marks["kernel release"].search(recorded)
    assert marks["host name"].search("recorded on build-worker-17.")
    assert not marks["host name"].search("recorded on build-worker-170")
    assert _PLATFORM_USER_AGENT.search(recorded)
