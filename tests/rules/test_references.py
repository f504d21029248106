"""Every rule cites where its guidance is published, and every report shows it."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import jsonschema
import pytest
from click.testing import CliRunner

from gpuaudit.cli.main import main
from gpuaudit.report import write_reports
from gpuaudit.report.catalogue import BEGIN, END, with_catalogue
from gpuaudit.report.html import render_html
from gpuaudit.report.json_report import from_json_data, render_json, report_schema
from gpuaudit.report.sarif import render_sarif
from gpuaudit.report.tables import findings_table
from gpuaudit.results import AuditResult, Reference
from gpuaudit.rules import catalogue, registry
from gpuaudit.verdict.check import run_checks
from tests.support.builders import healthy
from tests.support.report_tools import Chromium

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
# Where VMware/Broadcom and NVIDIA publish their documentation and KB articles.
PUBLISHERS = {
    "docs.vmware.com",
    "core.vmware.com",
    "vdc-download.vmware.com",
    "vmw-docs.broadcom.com",
    "techdocs.broadcom.com",
    "developer.broadcom.com",
    "knowledge.broadcom.com",
    "kb.vmware.com",
    "docs.nvidia.com",
    "www.nvidia.com",
    "blogs.vmware.com",
    "pubs.vmware.com",
    "developer.vmware.com",
    # The Kubernetes project's documentation, for the K8S rules
    "kubernetes.io",
    # VMware's download server, which serves the vCloud Architecture Toolkit (vCAT)
    "download3.vmware.com",
}
# NVIDIA publishes its security bulletins in its own GitHub organisation.
NVIDIA_ON_GITHUB = "/NVIDIA/"


def ha_off() -> AuditResult:
    """The healthy estate with vSphere HA off: HA-01 fails on cluster c1."""
    estate = healthy()
    estate.inv.clusters[0].ha_enabled = False
    result = run_checks(estate.inv)
    assert result.errors == []
    assert any(f.rule == "HA-01" and f.failed for f in result.findings)
    return result


def register(**given: object) -> None:
    """Register a throwaway rule with ``given`` on top of valid metadata."""
    meta: dict[str, object] = {
        "id": "XX-98",
        "title": "t",
        "category": "gpu",
        "severity": "info",
        "object_kind": "gpu",
        "rationale": "r",
        "remediation": "m",
        "references": [("A page", "https://docs.vmware.com/a.html")],
    }
    meta.update(given)
    registry.rule(**meta)  # type: ignore[call-overload]


# --- the catalogue ------------------------------------------------------------------------


def test_a_rule_without_a_reference_is_refused() -> None:
    with pytest.raises(ValueError, match="XX-98: a rule needs at least one reference"):
        register(references=[])
    with pytest.raises(ValueError, match="XX-98: a rule needs at least one reference"):
        meta = {"id": "XX-98", "title": "t", "category": "gpu", "severity": "info"}
        registry.rule(**meta, object_kind="gpu", rationale="r", remediation="m")  # type: ignore[call-overload]


@pytest.mark.parametrize(
    "reference",
    [("", "https://docs.vmware.com/a.html"), ("A page", "http://docs.vmware.com/a.html")],
)
def test_a_reference_needs_a_title_and_an_https_url(reference: tuple[str, str]) -> None:
    with pytest.raises(ValueError, match="a reference needs a title and an https URL"):
        register(references=[reference])


def test_a_reference_may_be_given_as_a_title_and_url_pair() -> None:
    def spy(ctx: object, item: object) -> None:
        return None

    decorate = registry.rule(
        id="XX-97",
        title="t",
        category="gpu",
        severity="info",
        object_kind="gpu",
        rationale="r",
        remediation="m",
        references=[("A page", "https://docs.nvidia.com/a.html")],
    )
    decorate(spy)  # type: ignore[arg-type]
    try:
        captured = [s.rule for s in registry.registered() if s.rule.id == "XX-97"]
        assert captured[0].references == (Reference("A page", "https://docs.nvidia.com/a.html"),)
    finally:
        registry._REGISTRY.pop("XX-97", None)


def test_every_rule_cites_vmware_broadcom_or_nvidia_documentation() -> None:
    for rule in catalogue():
        assert rule.references, rule.id
        for ref in rule.references:
            url = urlparse(ref.url)
            nvidia = url.netloc == "github.com" and url.path.startswith(NVIDIA_ON_GITHUB)
            assert url.scheme == "https" and (url.netloc in PUBLISHERS or nvidia), (
                rule.id,
                ref.url,
            )
            assert ref.title.strip() and ref.title == ref.title.strip(), (rule.id, ref)


def test_a_source_has_one_title_wherever_it_is_cited() -> None:
    titles: dict[str, set[str]] = {}
    for rule in catalogue():
        for ref in rule.references:
            titles.setdefault(ref.url, set()).add(ref.title)
    assert {url: t for url, t in titles.items() if len(t) > 1} == {}


def test_rationales_state_the_guidance_and_never_an_unseen_document() -> None:
    unseen = re.compile(r"\bseed\b|strategy document|the document|\bnote:", re.I)
    for rule in catalogue():
        for text in (rule.title, rule.rationale, rule.remediation):
            assert not unseen.search(text), (rule.id, text)


# --- the reports --------------------------------------------------------------------------


def test_json_report_lists_each_rules_references_and_stays_valid() -> None:
    result = ha_off()
    doc = render_json(result)
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    by_id = {r["id"]: r for r in doc["rules"]}
    for rule in catalogue():
        expected = [{"title": ref.title, "url": ref.url} for ref in rule.references]
        assert by_id[rule.id]["references"] == expected
    assert from_json_data(doc).rules == result.rules


def test_a_report_written_before_references_still_validates_and_loads() -> None:
    doc = render_json(ha_off())
    for rule in doc["rules"]:
        del rule["references"]
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    assert all(rule.references == () for rule in from_json_data(doc).rules)


def test_sarif_help_uri_is_the_first_reference_and_help_lists_every_one() -> None:
    sarif = render_sarif(ha_off())
    descriptors = {d["id"]: d for d in sarif["runs"][0]["tool"]["driver"]["rules"]}
    for rule in catalogue():
        descriptor = descriptors[rule.id]
        assert descriptor["helpUri"] == rule.references[0].url
        assert descriptor["help"]["text"].startswith(rule.remediation)
        for ref in rule.references:
            assert f"- {ref.title}: {ref.url}" in descriptor["help"]["text"]
            assert f"- [{ref.title}]({ref.url})" in descriptor["help"]["markdown"]


def test_sarif_rule_without_references_has_no_help_uri() -> None:
    result = ha_off()
    bare = [dataclasses.replace(r, references=()) for r in result.rules]
    sarif = render_sarif(dataclasses.replace(result, rules=bare))
    for descriptor in sarif["runs"][0]["tool"]["driver"]["rules"]:
        assert "helpUri" not in descriptor
        assert descriptor["help"] == {
            "text": next(r.remediation for r in bare if r.id == descriptor["id"])
        }


def test_workbook_findings_carry_their_rules_references() -> None:
    result = ha_off()
    table = findings_table(result)
    assert table.columns[-1].name == "References"
    rule_at, refs_at = table.column_index("Rule"), table.column_index("References")
    by_id = {r.id: r for r in catalogue()}
    assert table.rows
    for row in table.rows:
        refs = by_id[str(row[rule_at])].references
        assert row[refs_at] == "\n".join(f"{ref.title}: {ref.url}" for ref in refs)


def test_html_embeds_every_rules_references_for_its_finding_detail() -> None:
    html = render_html(ha_off())
    opening = '<script type="application/json" id="gpuaudit-data">'
    start = html.index(opening) + len(opening)
    data = json.loads(html[start : html.index("</script>", start)])
    for rule in catalogue():
        assert data["rules"][rule.id][4] == [[ref.title, ref.url] for ref in rule.references]


# --- gpuaudit rules and docs/rules.md --------------------------------------------------------


def test_rules_command_prints_one_line_per_reference() -> None:
    runner = CliRunner()
    text = runner.invoke(main, ["rules"])
    assert text.exit_code == 0
    as_json = json.loads(runner.invoke(main, ["rules", "--format", "json"]).output)
    markdown = runner.invoke(main, ["rules", "--format", "markdown"]).output
    refs_of = {r["id"]: r["references"] for r in as_json}
    for rule in catalogue():
        for ref in rule.references:
            assert f"\n         Ref: {ref.title} <{ref.url}>\n" in text.output
            assert f"\n- [{ref.title}]({ref.url})\n" in markdown
        assert refs_of[rule.id] == [{"title": r.title, "url": r.url} for r in rule.references]


def test_docs_rules_md_holds_exactly_the_generated_catalogue() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert with_catalogue(text, catalogue()) == text, "run scripts/rules-doc"
    section = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    markdown = CliRunner().invoke(main, ["rules", "--format", "markdown"]).output
    assert section == f"\n\n{markdown}\n"
    # The hand-written parts stay outside the markers.
    assert text.index("## Writing a rule") > text.index(END)


def test_catalogue_markers_missing_is_an_error() -> None:
    with pytest.raises(ValueError, match="no catalogue markers"):
        with_catalogue("# Rules\n", catalogue())


# --- the HTML finding detail, in a browser ----------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    with Chromium(width=1400, height=1000) as chromium:
        yield chromium


def open_detail(
    browser: Chromium, result: AuditResult, folder: Path, rule_id: str
) -> list[list[str]]:
    """Open the report, show the first finding of ``rule_id`` and return its reference links."""
    (path,) = write_reports(result, folder, ["html"], result.inventory.source)
    browser.open(path)
    assert browser.evaluate("window.gpuauditReady === true")
    browser.evaluate(
        "(() => { const s = document.getElementById('f-rule');"
        f" s.value = {json.dumps(rule_id)}; s.dispatchEvent(new Event('change')); }})()"
    )
    browser.evaluate("document.querySelector('#findings-body tr.row').click()")
    return list(
        browser.evaluate(
            "[...document.querySelectorAll('#findings-body tr.detail ul.refs li')].map(li => {"
            " const a = li.querySelector('a');"
            " return a ? [a.textContent, a.href, a.rel, a.target] : [li.textContent]; })"
        )
    )


@pytest.mark.browser
def test_finding_detail_links_to_each_reference(browser: Chromium, tmp_path: Path) -> None:
    links = open_detail(browser, ha_off(), tmp_path, "HA-01")
    ha01 = next(r for r in catalogue() if r.id == "HA-01")
    assert links == [
        [ref.title, ref.url, "noopener noreferrer", "_blank"] for ref in ha01.references
    ]
    assert browser.console_errors() == []


@pytest.mark.browser
def test_a_reference_that_is_not_https_is_shown_as_text(browser: Chromium, tmp_path: Path) -> None:
    result = ha_off()
    hostile = Reference("Click me", "javascript:window.__pwned=1")
    rules = [
        dataclasses.replace(r, references=(hostile,)) if r.id == "HA-01" else r
        for r in result.rules
    ]
    links = open_detail(browser, dataclasses.replace(result, rules=rules), tmp_path, "HA-01")
    assert links == [["Click me (javascript:window.__pwned=1)"]]
    browser.evaluate(
        "document.querySelectorAll('#findings-body tr.detail li').forEach(e => e.click())"
    )
    assert browser.evaluate("typeof window.__pwned") == "undefined"
