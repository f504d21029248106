"""The HTML report printed to PDF: every failed finding with its remediation.

Chromium prints the report of the large estate (64 clusters, 10,240 VMs) the way a
reader's browser would, without help from the page's script; pdftotext reads the
PDF back.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from gpuaudit.report import write_reports
from gpuaudit.report.json_report import dump_json, render_json
from tests.support.large_estate import SERVER, large_estate_result
from tests.support.report_tools import CHROMIUM_NAMES, require_tool

pytestmark = pytest.mark.browser

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-pdf-header-footer",
]


def printed(html: Path, pdf: Path) -> str:
    """``html`` printed to ``pdf`` by headless Chromium, and the PDF's text."""
    chromium = require_tool(*CHROMIUM_NAMES)
    pdftotext = require_tool("pdftotext")
    with tempfile.TemporaryDirectory(prefix="gpuaudit-print-") as profile:
        subprocess.run(
            [chromium, *FLAGS, f"--user-data-dir={profile}", f"--print-to-pdf={pdf}", str(html)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=900,
            check=True,
        )
    run = subprocess.run(
        [pdftotext, str(pdf), "-"], capture_output=True, text=True, timeout=300, check=True
    )
    return run.stdout


def words(text: str) -> str:
    return " ".join(text.split())


def test_printed_large_estate_holds_every_failed_finding_with_its_remediation(
    tmp_path: Path,
) -> None:
    result = large_estate_result()
    (html,) = write_reports(result, tmp_path, ["html"], SERVER)
    text = printed(html, tmp_path / "report.pdf")

    # The failed findings, counted from the JSON report: the first 12 hex digits of
    # each one's stable id (rule, object kind, object), as the report prints them.
    failed = [f for f in json.loads(dump_json(render_json(result)))["findings"]]
    failed = [f for f in failed if f["status"] == "fail"]
    assert len(failed) > 10_000
    expected = Counter(
        hashlib.sha256(f"{f['rule']}\0{f['object_kind']}\0{f['object']}".encode()).hexdigest()[:12]
        for f in failed
    )
    assert Counter(re.findall(r"(?m)^([0-9a-f]{12})$", text)) == expected

    flat = words(text)
    for rule in {f["rule"] for f in failed}:
        remediation = next(r.remediation for r in result.rules if r.id == rule)
        assert words(remediation) in flat, rule
    notices = sum(f["severity"] == "info" for f in failed)  # never failed findings
    assert "FAIL" in flat and f"{len(failed) - notices} failed findings" in flat
    # What the printed copy leaves out, it says.
    assert "inventory tables" in flat and "are left out of the printed copy" in flat
    assert "clusters' cards are left out of the printed copy" in flat
