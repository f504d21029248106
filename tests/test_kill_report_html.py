"""The HTML report's own computations for tests/small_report.py's result, written out by
hand: the page data's ages and worst severities, and the packed data blocks.
"""

from __future__ import annotations

import base64
import gzip
import json

from gpuaudit.report.html import _data, packed, render_html, worst_severity
from gpuaudit.report.summary import ClusterSummary
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


def test_each_failed_finding_row_ends_with_its_age_and_first_seen_or_two_blanks() -> None:
    # HA-01 on gpu-a was first seen 2026-11-01 00:00 UTC, 30 whole days before the scan
    # (2026-12-01 10:30 UTC); no other finding has a first-seen date.
    first, _ = _data(small_result(), [])
    assert first["ages"] is True
    assert [row[2:4] + row[-2:] for row in first["findings"]] == [
        ["HA-01", "gpu-a", 30, "2026-11-01T00:00:00+00:00"],
        ["GPU-02", "vdi 1/a%", "", ""],
        ["X-99", "esx-09.corp", "", ""],
        ["GPU-02", "..", "", ""],
    ]


def test_a_cluster_s_worst_severity_is_its_most_severe_failed_one() -> None:
    failed = {"critical": 0, "high": 0, "medium": 2, "low": 1, "info": 0}
    assert worst_severity(ClusterSummary("gpu-a", failed_by_severity=failed)) == "medium"
    assert worst_severity(ClusterSummary("gpu-b", failed_by_severity={})) is None
