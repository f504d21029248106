"""The HTML report's own computations for tests/support/small_report.py's result, written out by
hand: the page data's ages and worst severities, and the packed data blocks.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import hashlib
import json
import re
from datetime import date, datetime
from unittest import mock

import pytest

import gpuaudit
from gpuaudit.inventory import VCenter
from gpuaudit.report import html
from gpuaudit.report.html import (
    _csp_hash,
    _data,
    _plain,
    _table_data,
    _when,
    packed,
    render_html,
    template_root,
    worst_first,
    worst_severity,
)
from gpuaudit.report.summary import ClusterSummary
from gpuaudit.report.tables import Column, Table
from gpuaudit.results import AuditResult, ClusterSimulation, Finding, HostFailure, Placement
from tests.support.builders import Estate
from tests.support.small_report import declared_passthrough_result, small_result
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


HA_01_RULE = [
    "HA is on",
    "ha",
    "Turn HA on.",
    "HA restarts GPU VMs.",
    [["vSphere HA", "https://docs.example/ha"], ["KB 2", "https://kb.example/2"]],
]
GPU_02_RULE = ["Profiles fit", "gpu", "", "", []]
# The small result's findings as the page's rows: severity, status, rule, object,
# kind, cluster, host, message, evidence, waiver (reason, owner, expiry) or null.
ROWS = [
    [
        "critical",
        "fail",
        "HA-01",
        "gpu-a",
        "cluster",
        "gpu-a",
        "",
        "HA is off",
        {"ha_enabled": False},
        None,
    ],
    [
        "medium",
        "waived",
        "GPU-02",
        "vdi 1/a%",
        "vm",
        "gpu-a",
        "esx-01.corp",
        "",
        {},
        ["CAB-7", "ops", "2027-01-31"],
    ],
    ["low", "fail", "X-99", "esx-09.corp", "host", "", "esx-09.corp", "odd", {}, None],
    ["high", "waived", "GPU-02", "..", "vm", "", "", "dots", {}, None],
]
PASSED = ["critical", "pass", "HA-01", "gpu-b", "cluster", "gpu-b", "", "HA is on", {}, None]


def test_the_page_data_of_the_small_result_whole() -> None:
    table = Table("hosts", "Hosts", [Column("Host"), Column("Seen", "datetime")])
    table.rows = [["esx-01.corp", datetime(2026, 12, 1, 10, 0, 5)]]
    first, later = _data(small_result(), [table])
    assert first == {
        "severities": ["critical", "high", "medium", "low", "info"],
        "rules": {"HA-01": HA_01_RULE, "GPU-02": GPU_02_RULE},
        "findings": [
            ROWS[0] + [30, "2026-11-01T00:00:00+00:00"],
            ROWS[1] + ["", ""],
            ROWS[2] + ["", ""],
            ROWS[3] + ["", ""],
        ],
        "passed": 1,
        "ages": True,
    }
    assert later == {
        "findings": [[*PASSED, "", ""]],
        "tables": [
            {
                "key": "hosts",
                "title": "Hosts",
                "columns": [["Host", "text"], ["Seen", "datetime"]],
                "rows": [["esx-01.corp", "2026-12-01 10:00:05"]],
            }
        ],
    }


def test_without_a_first_seen_date_no_row_has_age_cells() -> None:
    first, later = _data(dataclasses.replace(small_result(), first_seen={}), [])
    assert first == {
        "severities": ["critical", "high", "medium", "low", "info"],
        "rules": {"HA-01": HA_01_RULE, "GPU-02": GPU_02_RULE},
        "findings": ROWS,
        "passed": 1,
    }
    assert later == {"findings": [PASSED], "tables": []}


def test_table_values_become_plain_json() -> None:
    assert _plain(datetime(2026, 1, 2, 3, 4, 5)) == "2026-01-02 03:04:05"
    assert _plain(date(2026, 1, 2)) == "2026-01-02"
    assert _plain(1.5) == 1.5
    assert _plain(None) is None
    assert _table_data(Table("t", "T", [])) == {"key": "t", "title": "T", "columns": [], "rows": []}


def test_times_show_in_utc_to_the_minute_or_as_given() -> None:
    assert _when("2026-12-01T11:30:59+01:00") == "2026-12-01 10:30 UTC"
    assert _when("yesterday") == "yesterday"
    assert _when("") == "unknown"


def test_the_csp_hash_of_the_empty_text_is_sha256_s_published_one() -> None:
    # SHA-256 of no bytes is e3b0c442...b855 (FIPS 180-2 test vectors), in base64:
    assert _csp_hash("") == "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="


def cluster(name: str, tolerates: int | None, **failed: int) -> ClusterSummary:
    return ClusterSummary(name, tolerates=tolerates, failed_by_severity=failed)


def test_clusters_sort_by_worst_severity_then_tolerance_then_name() -> None:
    clusters = [
        cluster("e", None),
        cluster("b", 1, critical=0, high=1),
        cluster("d", 0),
        cluster("f", 2, info=0),
        cluster("a", 1, high=2, low=1),
        cluster("c", None, critical=1),
        cluster("g", 0, high=1),
    ]
    # c (critical); g, a, b (high: N+0, then N+1 by name); d, f (none: N+0, N+2);
    # e (none, not simulated: after every N+k).
    got = [c.name for c in worst_first(clusters)]
    assert got == ["c", "g", "a", "b", "d", "f", "e"]


def _asset_hash(name: str) -> str:
    # Worked out apart from _csp_hash: SHA-256 of the file's bytes, in base64.
    digest = hashlib.sha256(template_root().joinpath(name).read_bytes()).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def between(page: str, start: str, end: str) -> str:
    """The text from ``start`` to ``end``, its runs of white space made one space."""
    head = page.index(start) + len(start)
    return " ".join(page[head : page.index(end, head)].split())


def test_the_small_result_s_page_names_its_server_versions_and_assets() -> None:
    page = render_html(small_result())
    assert (
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        f"script-src '{_asset_hash('report.js')}'; style-src '{_asset_hash('report.css')}'; "
        "img-src data:; base-uri 'none'; form-action 'none'\">" in page
    )
    assert '<meta name="generator" content="gpuaudit 9.9.9">' in page
    assert between(page, "<title>", "</title>") == (
        "vc01.corp.example &middot; 2026-12-01 10:00 UTC &middot; FAIL &middot; vSphere "
        "&middot; gpuaudit"
    )
    script = template_root().joinpath("report.js").read_text(encoding="utf-8")
    style = template_root().joinpath("report.css").read_text(encoding="utf-8")
    assert f"<style>{style}</style>" in page
    assert page.endswith(f"<script>{script}</script>\n</body>\n</html>")
    assert between(page, "<footer>", "</footer>") == (
        "gpuaudit 9.9.9 &middot; rules 2026.12.3 &middot; report schema 3 &middot; "
        "checked 2026-12-01 10:30 UTC &middot; 2 waivers applied"
    )


def test_the_failed_by_category_chips_list_the_eight_categories_in_order() -> None:
    page = render_html(small_result())
    chips = re.findall(r'<span class="chip( zero)?">(\S+) <b>(\d+)</b></span>', page)
    assert chips == [
        ("", "ha", "1"),
        (" zero", "vmotion", "0"),
        (" zero", "gpu", "0"),
        (" zero", "storage", "0"),
        (" zero", "design", "0"),
        (" zero", "data", "0"),
        (" zero", "monitoring", "0"),
        (" zero", "licensing", "0"),
    ]


def test_a_server_without_a_source_is_named_by_vcenter_else_unknown() -> None:
    named = dataclasses.replace(small_result().inventory, source="")
    page = render_html(dataclasses.replace(small_result(), inventory=named))
    assert 'title="vc01">vc01</span>' in page
    blank = dataclasses.replace(named, vcenter=VCenter(name=""))
    page = render_html(dataclasses.replace(small_result(), inventory=blank, tool_version=""))
    assert 'title="unknown server">unknown server</span>' in page
    # A result that names no tool version is the running gpuaudit's.
    assert f'<meta name="generator" content="gpuaudit {gpuaudit.__version__}">' in page


def test_the_verdict_line_counts_gpus_and_gpu_vms() -> None:
    # Cluster pt: two hosts with a passthrough GPU each, two passthrough GPU VMs; the
    # one finding (LIC-01 on pv1) passed.
    result = declared_passthrough_result()
    result.designs = {"pt": "A"}
    page = render_html(result)
    assert between(page, '<div class="verdict-sub">', "</div>") == (
        "1 cluster &middot; 2 hosts &middot; 2 GPUs &middot; 2 GPU VMs &middot; 0 waived, 1 passed"
    )
    assert "Design A &middot; Dedicated GPU nodes, no SAN</span>" in page


@pytest.mark.parametrize(
    ("script", "style"), [("a</b", ""), ("a<!--b", ""), ("", "a</b"), ("a</b<!--", "a</b")]
)
def test_a_script_or_style_that_could_close_its_element_is_refused(script: str, style: str) -> None:
    assets = {"report.js": script, "report.css": style}
    with (
        mock.patch.object(html, "_asset", side_effect=assets.__getitem__),
        pytest.raises(ValueError) as raised,
    ):
        render_html(small_result())
    assert str(raised.value) == "report.js and report.css must not contain '</' or '<!--'"


def test_a_script_or_style_that_closes_nothing_is_taken() -> None:
    # Each check on its own: "<" and "!--" alone close nothing.
    real = html._asset

    def assets(name: str) -> str:
        return {"report.js": "a<b!--c", "report.css": "d<e"}.get(name) or real(name)

    with mock.patch.object(html, "_asset", side_effect=assets):
        page = render_html(small_result())
    assert page.endswith("<script>a<b!--c</script>\n</body>\n</html>")


def test_the_card_names_the_vms_the_worst_host_s_failure_leaves_without_a_gpu() -> None:
    # gpu-a: esx-1 runs vm-1, esx-2 runs vm-2, one L4 each. Either host's failure
    # leaves its own VM without a GPU; esx-2 is the worst.
    estate = Estate()
    estate.cluster("gpu-a")
    one = estate.host("esx-1", "gpu-a")
    two = estate.host("esx-2", "gpu-a")
    estate.vm("vm-1", one, [], vgpu="grid_l4-4q", gpu=estate.gpu(one))
    estate.vm("vm-2", two, [], vgpu="grid_l4-4q", gpu=estate.gpu(two))
    sim = ClusterSimulation(
        "gpu-a",
        hosts=2,
        gpu_vms=2,
        failures=[
            HostFailure("esx-1", unplaced=[Placement("vm-1", "esx-1")]),
            HostFailure("esx-2", unplaced=[Placement("vm-2", "esx-2")]),
        ],
        worst_host="esx-2",
        tolerates=0,
    )
    page = render_html(AuditResult(estate.inv, [], [], [sim]))
    assert between(page, '<p class="worst">', "</p>") == (
        "Worst single-host failure: <b>esx-2</b>. 1 GPU VM could not restart: "
        '<span class="vm">vm-2</span>.'
    )


def test_packed_data_is_compact_json_gzipped_at_level_6_with_no_timestamp() -> None:
    # The page's later rows travel as base64 of gzip (level 6, mtime 0: the same data
    # gives the same page) of compact JSON. 300 rows written out as their JSON text;
    # the expected bytes are made by the standard library from that text.
    rows = [
        [f"vm-{i:03d}", i * 7 % 13, "grid_l4-8q" if i % 3 else "grid_l4-4q"] for i in range(300)
    ]
    text = (
        '{"rows":['
        + ",".join(
            f'["vm-{i:03d}",{i * 7 % 13},"grid_l4-{"8" if i % 3 else "4"}q"]' for i in range(300)
        )
        + "]}"
    )
    expected = base64.b64encode(gzip.compress(text.encode(), compresslevel=6, mtime=0))
    assert packed({"rows": rows}) == expected.decode("ascii")
    raw = base64.b64decode(packed({"x": "é"}))
    assert raw[4:8] == b"\0\0\0\0"  # gzip's MTIME field: no time
    assert gzip.decompress(raw) == '{"x":"é"}'.encode()


def test_packed_data_refuses_a_nan() -> None:
    # A NaN would stop the page's JSON.parse: the report refuses it instead.
    with pytest.raises(ValueError):
        packed({"x": float("nan")})
