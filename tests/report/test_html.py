"""The HTML report without a browser: self-contained, escaped, and its data intact.

Also the HTML report's own computations for tests/support/small_report.py's result,
written out by hand: the page data's ages and worst severities, and the packed data
blocks.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import hashlib
import json
import re
from datetime import date, datetime
from html.parser import HTMLParser
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import gpuaudit
from gpuaudit.inventory import VCenter
from gpuaudit.report import html, render_html
from gpuaudit.report.html import (
    _csp_hash,
    _data,
    _plain,
    _table_data,
    _when,
    packed,
    template_root,
    worst_first,
    worst_severity,
)
from gpuaudit.report.summary import ClusterSummary
from gpuaudit.report.tables import Column, Table
from gpuaudit.results import AuditResult, ClusterSimulation, Finding, HostFailure, Placement
from tests.support.builders import Estate
from tests.support.report_fixtures import ALL, HOSTILE, build_result, large_result
from tests.support.small_report import declared_passthrough_result, small_result


class Page(HTMLParser):
    """Every element and attribute, and the text of each script."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._script: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script, self._text = dict(attrs), []

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._script is not None:
            self.scripts.append((self._script, "".join(self._text)))
            self._script = None


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def embedded(page: Page) -> dict:
    """The page's data, in two blocks.

    The first, JSON, holds the rules and the failed and waived findings; the second,
    JSON gzip-compressed and base64-encoded, the passed findings and the inventory
    tables. Failed and waived findings come first, then the passed ones.
    """
    (first,) = [
        json.loads(text) for attrs, text in page.scripts if attrs.get("type") == "application/json"
    ]
    (more,) = [
        json.loads(gzip.decompress(base64.b64decode(text, validate=True)))
        for attrs, text in page.scripts
        if attrs.get("type") == "application/octet-stream"
    ]
    order = {"fail": 0, "waived": 0, "pass": 1}
    assert [order[f[1]] for f in first["findings"]] == [0] * len(first["findings"])
    assert [f[1] for f in more["findings"]] == ["pass"] * len(more["findings"])
    assert first["passed"] == len(more["findings"])
    return {**first, "findings": first["findings"] + more["findings"], "tables": more["tables"]}


def assert_safe(html: str) -> Page:
    page = parse(html)
    # Exactly our three scripts: the two data blocks and the code; nothing else executes.
    assert [a.get("type") for a, _ in page.scripts] == [
        "application/json",
        "application/octet-stream",
        None,
    ]
    assert sum(1 for tag, _ in page.tags if tag == "script") == 3
    for tag, attrs in page.tags:
        assert tag not in ("img", "iframe", "object", "embed", "link", "base", "form"), tag
        for name, value in attrs.items():
            assert not name.startswith("on"), f"<{tag} {name}=...>"
            if name in ("src", "href", "action", "xlink:href"):
                assert (value or "").startswith("#"), f"<{tag} {name}={value!r}>"
    return page


@pytest.mark.parametrize("name", sorted(ALL))
def test_page_is_self_contained_and_safe(name: str) -> None:
    html = render_html(ALL[name]())
    assert html.startswith("<!DOCTYPE html>")
    page = assert_safe(html)
    (csp,) = [a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv")]
    assert csp is not None and "default-src 'none'" in csp and "'unsafe-inline'" not in csp
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "@import" not in html and "url(" not in html.split("<script type")[0]


def test_hostile_names_are_text_not_markup() -> None:
    html = render_html(ALL["hostile"]())
    assert_safe(html)
    assert "<script>alert(1)</script>" not in html
    assert '<img src=x onerror="window.__pwned=1">' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&#34;window.__pwned=1&#34;&gt;" in html
    # Jinja syntax in a name is shown, not evaluated.
    assert "{{ 7*7 }}" in html and ">49<" not in html


def test_embedded_json_cannot_be_closed_by_a_name() -> None:
    html = render_html(ALL["hostile"]())
    opening = '<script type="application/json" id="gpuaudit-data">'
    start = html.index(opening) + len(opening)
    block = html[start : html.index("</script>", start)]
    assert "<!--" not in block and "</" not in block and "<script" not in block.lower()
    opening = '<script type="application/octet-stream" id="gpuaudit-more">'
    start = html.index(opening) + len(opening)
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", html[start : html.index("</script>", start)])
    data = embedded(parse(html))
    objects = {f[3] for f in data["findings"]}
    assert HOSTILE["vdi1"] in objects and HOSTILE["c3"] in objects
    vms = next(t for t in data["tables"] if t["key"] == "gpu-vms")
    assert HOSTILE["vdi8"] in {r[0] for r in vms["rows"]}


def test_top_of_page_shows_estate_and_counts() -> None:
    html = render_html(ALL["realistic"]())
    assert "vcsa01.corp.example" in html and "8.0.3" in html and "2026-11-30 08:49 UTC" in html
    # Eleven failing checks, one of them info: a notice (tests/report/test_json_report.py).
    assert "10 failed findings: 2 critical, 2 high, 4 medium, 2 low; 1 notice" in html
    for cat, n in (("ha", 3), ("vmotion", 2), ("storage", 2)):
        assert re.search(rf"{cat} <b>{n}</b>", html)
    assert "Design B" in html and "Design C" in html
    assert ">N+1<" in html and ">N+0<" in html
    assert "3 data gaps" not in html and "3 properties could not be read" in html


def test_cluster_cards_draw_capacity_before_and_after_the_worst_failure() -> None:
    html = render_html(ALL["realistic"]())
    assert html.count('<article class="card"') == 3
    assert html.count('<svg class="capacity"') == 3
    assert "After esx-p01.corp.example fails" in html
    # Cluster 1: 6 GPUs of 6 slots; 10 used before; after the failure 4 slots
    # on the survivors are taken by restarted VMs.
    card = html[html.index('aria-label="Cluster gpu-vgpu-prod"') :]
    card = card[: card.index("</article>")]
    titles = re.findall(r'class="panel-title"[^>]*>([^<]*)<', card)
    assert titles == ["Now", "After esx-p01.corp.example fails (HA restart)"]
    assert card.count('class="s-moved"') == 4 + 1  # four slots, one legend entry
    assert card.count('class="s-failed"') == 1 + 1
    # Each host drawn once, 12 slots each. p1 (failed) as it is: 4 used, 8 free. p2
    # and p3 after the failure, with the restarted VMs' slots marked: p2 keeps its 3
    # and takes 3 (6 free), p3 keeps its 3 and takes 1 (8 free). Each count has one
    # more for the legend.
    assert card.count('class="s-used-vgpu"') == 4 + 3 + 3 + 1
    assert card.count('class="s-free"') == 8 + 6 + 8 + 1
    # Free slots per host, now and after: p1 8 (then failed), p2 9 then 6, p3 9 then 8.
    free = re.findall(r'class="free-label"[^>]*>([^<]*)<', card)
    assert free == ["8 free", "9 free", "6 free", "9 free", "8 free"]
    assert "taken by restarted VMs" in card and "host failed" in card


def test_passthrough_and_gpu_less_hosts_are_drawn() -> None:
    html = render_html(ALL["realistic"]())
    card = html[html.index('aria-label="Cluster gpu-pt-edge"') :]
    card = card[: card.index("</article>")]
    # Three passthrough GPUs in use now, each drawn once (e1's as it is, the two on
    # the survivors after e1 fails), and the legend's entry.
    assert card.count('class="s-used-pt"') == 3 + 1
    assert "no GPU" in card  # the buffer node
    assert "infer-01" in card and "no free passthrough GPU" in card


def test_passing_page_is_green() -> None:
    html = render_html(ALL["passing"]())
    assert "verdict-pass" in html and "No failed findings" in html
    assert "Incomplete" not in html


def test_inventory_sections_are_all_there() -> None:
    data = embedded(parse(render_html(ALL["realistic"]())))
    keys = [t["key"] for t in data["tables"]]
    assert keys == [
        "hosts", "gpus", "profiles", "gpu-vms", "datastores", "adapters", "vmotion",
        "failover", "host-licences", "gaps",
    ]  # fmt: skip
    assert len(data["findings"]) == 33


def test_large_estate_page_stays_small_enough() -> None:
    result = large_result()
    html = render_html(result)
    assert len(html) < 15_000_000
    page = assert_safe(html)
    data = embedded(page)
    assert len(data["findings"]) == 30_000
    # Inventory rows and passed findings travel as JSON, not as DOM rows; failed
    # findings are rendered on the server, one row each, under Top actions.
    assert html.count("<tr") < len(result.failed()) + 200


def test_templates_are_found_outside_the_checkout(tmp_path: Path) -> None:
    root = template_root()
    assert root.joinpath("report.html.j2").is_file()
    assert root.joinpath("report.js").is_file() and root.joinpath("report.css").is_file()


_names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
    min_size=1,
    max_size=40,
) | st.sampled_from(list(HOSTILE.values()))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(sorted(HOSTILE)), _names, min_size=1))
def test_any_names_render_safely(names: dict[str, str]) -> None:
    # Distinct names keep the estate's lookups meaningful.
    assume(len(set(names.values())) == len(names))
    result = build_result(names)
    page = assert_safe(render_html(result))
    data = embedded(page)
    unpassed = [f.object for f in result.findings if f.status != "pass"]
    passed = [f.object for f in result.findings if f.status == "pass"]
    assert [f[3] for f in data["findings"]] == unpassed + passed


def test_a_long_host_name_is_cut_in_the_panel_title_not_the_restart_kind() -> None:
    from gpuaudit.report.capacity import Chart

    chart = Chart.__new__(Chart)
    chart.worst_host = "edge-gpu-01.north.example"
    chart.manual = True
    assert chart.after_title == "After edge-gpu-01.north.… fails (manual restart)"
    chart.worst_host = "esx-p01.corp.example"
    chart.manual = False
    assert chart.after_title == "After esx-p01.corp.example fails (HA restart)"


def test_each_host_and_gpu_is_drawn_once_in_its_cluster_card() -> None:
    # Eight clusters of 16 hosts, one L4 and one vGPU VM on each: near-identical
    # cards, each with a worst single-host failure whose VM restarts elsewhere.
    from gpuaudit.verdict.check import run_checks
    from tests.support.builders import Estate

    estate = Estate()
    members: dict[str, list[str]] = {}
    for c in range(8):
        cluster = f"c{c}"
        estate.cluster(cluster)
        hosts = [estate.host(f"h{c}-{i:02}", cluster) for i in range(16)]
        for host in hosts:
            estate.gpu(host)
        estate.datastore(f"san{c}", hosts)
        for i, host in enumerate(hosts):
            estate.vm(f"v{c}-{i:02}", host, [f"san{c}"], vgpu="grid_l4-8q")
        members[cluster] = [h.name for h in hosts]
    html = render_html(run_checks(estate.inv))
    assert html.count('<article class="card"') == 8
    # 128 hosts in all, each one row; 128 GPUs, each one bar.
    assert html.count('<g class="host') == 128
    assert html.count('<g class="gpu">') == 128
    for cluster, hosts in members.items():
        card = html[html.index(f'aria-label="Cluster {cluster}"') :]
        card = card[: card.index("</article>")]
        assert "fails (HA restart)" in card  # the failure is drawn, in the same rows
        labels = re.findall(r'class="host-label"[^>]*><title>([^<]*)</title>', card)
        assert sorted(labels) == hosts
        assert card.count('<g class="gpu">') == 16


def test_changes_strip_counts_newly_waived_apart_from_resolved_as_the_console_does() -> None:
    import dataclasses

    from gpuaudit.jobs.outcome import summarise
    from gpuaudit.report.actions import finding_id
    from gpuaudit.results import FindingRef, ScanHistory

    result = ALL["realistic"]()
    failed = [f for f in result.findings if f.status == "fail"]
    waived = [f for f in result.findings if f.status == "waived"]
    passed = [f for f in result.findings if f.status == "pass"]
    assert len(waived) == 2 and len(result.expired_waivers) == 1  # as the fixture builds them

    def ref(f: Finding) -> FindingRef:  # as the last scan held it: failed
        return FindingRef(finding_id(f), f.rule, f.object, f.severity, "fail")

    # Open at the last scan and no more: the two findings waived since, and one that
    # passes now, as the history classifies them. One finding failed now and not then.
    history = ScanHistory(
        previous_checked_at="2026-11-29T08:49:12Z",
        new=[ref(failed[0])],
        resolved=[ref(passed[0])],
        newly_waived=[ref(waived[0]), ref(waived[1])],
    )
    html = render_html(dataclasses.replace(result, history=history))
    strip = html[html.index('id="changes"') :]
    strip = re.sub(r"<[^>]+>", "", strip[: strip.index("</div>")])
    strip = " ".join(strip.split())
    for said in ("1 new", "1 resolved", "2 newly waived", "1 waiver expired"):
        assert said in strip, (said, strip)
    # The console's count against a baseline holding the same three findings agrees.
    known = {(f.rule, f.object) for f in (waived[0], passed[0], waived[1])}
    summary = summarise(dataclasses.replace(result, judgement=None), "low", known)
    assert (summary.resolved, summary.newly_waived) == (1, 2)


def test_without_history_the_strip_still_names_expired_waivers() -> None:
    html = render_html(ALL["realistic"]())
    strip = html[html.index('id="changes"') :]
    strip = " ".join(re.sub(r"<[^>]+>", "", strip[: strip.index("</div>")]).split())
    assert "not known" in strip and "1 waiver expired" in strip
    strip = render_html(ALL["passing"]())
    strip = strip[strip.index('id="changes"') :]
    assert "expired" not in strip[: strip.index("</div>")]


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
