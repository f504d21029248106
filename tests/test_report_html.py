"""The HTML report without a browser: self-contained, escaped, and its data intact."""

from __future__ import annotations

import base64
import gzip
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gpuaudit.report import render_html
from gpuaudit.report.html import template_root
from tests.support.report_fixtures import ALL, HOSTILE, build_result, large_result


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
    # Eleven failing checks, one of them info: a notice (tests/test_report_json.py).
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
    from gpuaudit.results import Finding, FindingRef, ScanHistory

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
