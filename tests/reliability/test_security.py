"""Secrets kept and certificates checked: no password at the highest verbosity, in any
output, report or cassette; a certificate for another name refused; password files
that others may read warned about, as ssh does."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import pytest
from click.testing import CliRunner, Result

from gpuaudit.cli.main import main
from gpuaudit.errors import ExitCode
from gpuaudit.jobs import fleet
from tests.conftest import ROOT, SCENARIOS, unused_port

# Recognisable, and hard to redact: markup, quotes, an ampersand, non-ASCII.
PASSWORD = "Zebra&Quokka<7391>'\"ü-pw"
WRONG = "Wrong&Walrus<4242>-pw"


def forms(secret: str) -> list[str]:
    """The ways a password can appear: as is, XML-escaped, in a bytes repr, URL-quoted."""
    from urllib.parse import quote

    xml = escape(secret)
    return sorted(
        {
            secret,
            xml,
            escape(secret, {'"': "&quot;", "'": "&apos;"}),
            repr(secret.encode())[2:-1],
            repr(xml.encode())[2:-1],
            quote(secret, safe=""),
        }
    )


def leaks(data: bytes, secret: str) -> list[str]:
    text = data.decode("utf-8", "replace")
    return [f for f in forms(secret) if f in text or f.encode() in data]


def files_under(folder: Path) -> dict[str, bytes]:
    """Every file's bytes; a workbook also by each member of its zip."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        found[str(path)] = path.read_bytes()
        if path.suffix == ".xlsx":
            with zipfile.ZipFile(path) as book:
                for member in book.namelist():
                    found[f"{path}!{member}"] = book.read(member)
    return found


def gpuaudit(*args: str, password: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gpuaudit", *args],
        env={**os.environ, "GPUAUDIT_PASSWORD": password, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        timeout=300,
        cwd=cwd,
    )


@pytest.mark.live
def test_no_password_anywhere_at_the_highest_verbosity(lab_factory: Any, tmp_path: Path) -> None:
    lab = lab_factory("scenario-b", password=PASSWORD)
    out, cassette = tmp_path / "reports", tmp_path / "case.yaml"
    done = gpuaudit(
        "-vv",
        "scan",
        *("--server", lab.url, "--user", lab.user, "--record", str(cassette)),
        *("-o", str(out), "-f", "html", "-f", "xlsx", "-f", "json", "-f", "junit", "-f", "sarif"),
        password=PASSWORD,
        cwd=tmp_path,
    )
    assert done.returncode in (ExitCode.OK, ExitCode.FINDINGS), done.stderr[-3000:]
    stderr = done.stderr.decode("utf-8", "replace")
    # -vv really shows the wire: requests with their bodies, answers with their headers.
    assert "send: b'POST /sdk HTTP/1.1" in stderr and "reply: 'HTTP/1.1 200 OK" in stderr
    assert re.search(r"<password[^>]*>\*{5}</password>", stderr)  # Login was logged, masked
    assert "RetrievePropertiesEx answered in" in stderr
    cookies = re.findall(r'vmware_soap_session=\\?"?([^";\s\\]*)', stderr)
    assert cookies and set(cookies) == {"*****"}, set(cookies)
    # The session key, in Login's answer (vcrpy logs it whole while recording) and in
    # the session-bound morefs of container views, is masked as the cookie is.
    keys = re.findall(r"LoginResponse[^>]*>(?:\\n)?<returnval><key>([^<]*)<", stderr)
    assert keys and set(keys) == {"*****"}, set(keys)
    bound = re.findall(r"session\[([^\]]*)\]", stderr)
    assert bound and set(bound) == {"*****"}, set(bound)
    assert leaks(done.stdout, PASSWORD) == []
    assert leaks(done.stderr, PASSWORD) == []
    written = files_under(tmp_path)
    assert any(name.endswith(".xlsx") for name in written) and str(cassette) in written
    for name, data in written.items():
        assert leaks(data, PASSWORD) == [], name


@pytest.mark.live
def test_a_wrong_password_is_not_shown_either(lab_factory: Any, tmp_path: Path) -> None:
    lab = lab_factory("scenario-b", password=PASSWORD)
    done = gpuaudit(
        "-vv",
        "collect",
        *("--server", lab.url, "--user", lab.user, "-o", str(tmp_path / "inv.json")),
        password=WRONG,
        cwd=tmp_path,
    )
    assert done.returncode == ExitCode.CONNECT
    assert b"user name or password is wrong" in done.stderr
    assert re.search(rb"<password[^>]*>\*{5}</password>", done.stderr)
    assert leaks(done.stdout + done.stderr, WRONG) == []
    assert done.stderr.count(b"Login") >= 1 and b"trying again" not in done.stderr


def test_a_server_url_with_a_password_is_not_echoed() -> None:
    result = CliRunner().invoke(
        main,
        ["collect", "--server", f"https://audit:{WRONG}@vc01:notaport/sdk", "--user", "u"],
        env={"GPUAUDIT_PASSWORD": "x", "GOVC_URL": None},
    )
    assert result.exit_code == 2
    assert "cannot parse server" in result.output
    assert leaks(result.output.encode(), WRONG) == []


# -- TLS ---------------------------------------------------------------------
# Refused by default and accepted with --ca-file or --insecure: tests/vsphere/test_connect.py.


def collect(server: str, *extra: str, password: str) -> Result:
    return CliRunner().invoke(
        main,
        ["collect", "--server", server, "--user", "gpuaudit-lab", *extra],
        env={"GPUAUDIT_PASSWORD": password, "GOVC_URL": None},
    )


@pytest.mark.live
def test_tls_certificate_for_another_name_is_refused(lab_factory: Any, tmp_path: Path) -> None:
    lab = lab_factory("scenario-b", tls=True, cert_name="vcenter.other.example")
    result = collect(
        f"https://127.0.0.1:{lab.port}/sdk",
        *("--ca-file", str(lab.cert_file), "-o", str(tmp_path / "inv.json")),
        password=lab.password,
    )
    assert result.exit_code == ExitCode.CONNECT, result.output
    assert "TLS verification failed for 127.0.0.1" in result.output
    assert "mismatch" in result.output and "'127.0.0.1'" in result.output
    assert "--ca-file" in result.output and "--insecure" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "inv.json").exists()


@pytest.mark.live
def test_tls_certificate_checked_by_name_not_by_address(lab_factory: Any, tmp_path: Path) -> None:
    """A certificate that names only localhost: refused at 127.0.0.1, accepted at localhost."""
    lab = lab_factory("scenario-b", tls=True, cert_name="localhost")
    by_address = collect(
        f"https://127.0.0.1:{lab.port}/sdk", "--ca-file", str(lab.cert_file), password=lab.password
    )
    assert by_address.exit_code == ExitCode.CONNECT
    assert "TLS verification failed" in by_address.output
    by_name = collect(
        f"https://localhost:{lab.port}/sdk",
        *("--ca-file", str(lab.cert_file), "-o", str(tmp_path / "inv.json")),
        password=lab.password,
    )
    assert by_name.exit_code == ExitCode.OK, by_name.output
    assert (tmp_path / "inv.json").is_file()


# -- password files -------------------------------------------------------------


@pytest.mark.parametrize(("mode", "warned"), [(0o644, True), (0o640, True), (0o600, False)])
def test_password_file_readable_by_others_warns(
    tmp_path: Path, fast: None, mode: int, warned: bool
) -> None:
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\n", encoding="utf-8")
    secret.chmod(mode)
    result = CliRunner().invoke(
        main,
        [
            *("collect", "--server", f"http://127.0.0.1:{unused_port()}/sdk"),
            *("--user", "audit", "--password-file", str(secret)),
        ],
        env={"GPUAUDIT_PASSWORD": None, "GOVC_PASSWORD": None, "GOVC_URL": None},
    )
    assert result.exit_code == ExitCode.CONNECT  # the password was read and used
    warning = (
        f"warning: password file {secret} is readable by group or others "
        f"(mode {mode:04o}); run: chmod 600 {secret}"
    )
    assert (warning in result.stderr) == warned, result.stderr
    assert leaks(result.output.encode(), PASSWORD) == []


def test_fleet_password_file_readable_by_others_warns(
    tmp_path: Path, fast: None, caplog: pytest.LogCaptureFixture
) -> None:
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\n", encoding="utf-8")
    secret.chmod(0o644)
    targets = tmp_path / "targets.yaml"
    targets.write_text(
        f"targets:\n  - {{name: east, server: 'http://127.0.0.1:{unused_port()}/sdk',"
        " user: audit, password_file: password}\n"
    )
    caplog.set_level(logging.WARNING, logger="gpuaudit.jobs.fleet")
    outcomes = fleet.scan_fleet(fleet.load_targets(targets), tmp_path / "out", ["json"], "high", {})
    assert outcomes[0].verdict == "ERROR" and "connection refused" in str(outcomes[0].error)
    said = [r.getMessage() for r in caplog.records if r.name == "gpuaudit.jobs.fleet"]
    assert said == [
        f"east: password file {secret} is readable by group or others (mode 0644); "
        f"run: chmod 600 {secret}"
    ]


# -- hostile names through the live path ---------------------------------------
# Reports of names with markup, formula prefixes and every control character are
# tested on fixtures (tests/report/; the Chromium test runs the HTML).
# Here the names come from the lab over SOAP, which (XML 1.0) carries tab, newline,
# carriage return, DEL, C1 controls and Unicode separators and overrides, but no
# other C0 control: those can reach a report only through a saved inventory.

HOSTILE_NAMES = {
    "host": "esx\ttab\r\ncrlf<script>alert(1)</script>",
    "vm": '=HYPERLINK("http://evil.example")\x7f\x85\u2028\u202eexe.pdf',
    "cluster": "@SUM(1)\u2029<img src=x onerror=alert(2)>",
}


def hostile_scenario() -> dict[str, Any]:
    from tests.lab.scenario import load_scenario

    scenario = load_scenario(SCENARIOS / "scenario-b.yaml")
    dc = scenario["datacenters"][0]
    cluster = dc["clusters"][0]
    old_host = cluster["hosts"][0]["name"]
    cluster["name"] = HOSTILE_NAMES["cluster"]
    cluster["hosts"][0]["name"] = HOSTILE_NAMES["host"]
    for mount in dc["datastores"][0]["mounts"]:
        if mount["host"] == old_host:
            mount["host"] = HOSTILE_NAMES["host"]
    for vm in dc["vms"]:
        if vm["host"] == old_host:
            vm["host"] = HOSTILE_NAMES["host"]
    dc["vms"][0]["name"] = HOSTILE_NAMES["vm"]
    scenario["expect"] = []
    return scenario


@pytest.mark.live
def test_hostile_names_with_control_characters_from_the_lab(
    lab_factory: Any, tmp_path: Path
) -> None:
    import json
    import xml.etree.ElementTree as ET

    import openpyxl

    lab = lab_factory(hostile_scenario())
    result = CliRunner().invoke(
        main,
        [
            *("scan", "--server", lab.url, "--user", lab.user, "-o", str(tmp_path)),
            *("-f", "html", "-f", "xlsx", "-f", "json", "-f", "junit", "-f", "sarif"),
        ],
        env={"GPUAUDIT_PASSWORD": lab.password, "GOVC_URL": None},
    )
    assert result.exit_code in (ExitCode.OK, ExitCode.FINDINGS), result.output
    report = json.loads(next(tmp_path.glob("*.json")).read_text(encoding="utf-8"))
    inventory = report["inventory"]
    assert HOSTILE_NAMES["host"] in [h["name"] for h in inventory["hosts"]]
    assert HOSTILE_NAMES["vm"] in [v["name"] for v in inventory["vms"]]
    assert HOSTILE_NAMES["cluster"] in [c["name"] for c in inventory["clusters"]]
    html = next(tmp_path.glob("*.html")).read_text(encoding="utf-8")
    assert "<script>alert(1)" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    for path in (next(tmp_path.glob("*.xml")), next(tmp_path.glob("*.sarif"))):
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".xml":
            ET.fromstring(text)  # well-formed XML 1.0
        else:
            json.loads(text)
    book = openpyxl.load_workbook(next(tmp_path.glob("*.xlsx")))
    cells = [c for ws in book.worksheets for row in ws.iter_rows() for c in row]
    assert [c.coordinate for c in cells if c.data_type == "f"] == []
    assert any(c.value == HOSTILE_NAMES["vm"] for c in cells)
    # Every report file sits in the output folder with a plain name.
    for path in tmp_path.iterdir():
        assert re.fullmatch(r"gpuaudit-[A-Za-z0-9._-]+\.(html|xlsx|json|xml|sarif)", path.name)
