"""The HTML report's own computations, written out by hand: the order of the
cluster cards, the data blocks the page's script reads, and the page's values.

The result is tests/small_report.py's unless a test says otherwise.
"""

from __future__ import annotations

import base64
import gzip
import json

from gpuaudit.report.html import packed, render_html
from gpuaudit.results import Finding
from tests.small_report import small_result
from tests.test_report_html import embedded, parse


def _unpacked(text: str) -> object:
    return json.loads(gzip.decompress(base64.b64decode(text, validate=True)))


def test_a_lone_surrogate_in_a_passed_finding_is_replaced_not_fatal() -> None:
    # An inventory file may escape one ("vm\\udc80"); every format writes "?" for it.
    result = small_result()
    result.findings.append(Finding("HA-01", "vm\udc80", "cluster", "pass", "critical", "HA is on"))
    data = embedded(parse(render_html(result)))
    assert [f[3] for f in data["findings"] if f[1] == "pass"] == ["gpu-b", "vm?"]
    assert _unpacked(packed({"name": "a\udc80b"})) == {"name": "a?b"}
