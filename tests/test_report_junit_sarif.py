"""JUnit XML and SARIF: CI servers and code-scanning tools read audit results."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter

import pytest

from gpuaudit.report import render_junit, render_sarif
from gpuaudit.report.text import xml_text
from tests.support.report_fixtures import ALL, HOSTILE, large_result


@pytest.mark.parametrize("name", sorted(ALL))
def test_junit_is_well_formed_with_one_case_per_rule_and_object(name: str) -> None:
    result = ALL[name]()
    root = ET.fromstring(render_junit(result))
    assert root.tag == "testsuites"
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == len(result.findings) + len(result.errors)
    statuses = Counter(f.status for f in result.findings)
    # The totals live on the suites: Ant's schema allows no attribute on <testsuites>.
    assert root.attrib == {}
    suites = root.findall("testsuite")

    def total(attribute: str) -> int:
        return sum(int(suite.get(attribute, -1)) for suite in suites)

    notices = sum(f.failed and f.severity == "info" for f in result.findings)
    failures = statuses["fail"] - notices  # an info finding is a notice: <skipped>
    assert len(root.findall(".//failure")) == failures == total("failures")
    assert len(root.findall(".//skipped")) == statuses["waived"] + notices == total("skipped")
    assert len(root.findall(".//error")) == len(result.errors) == total("errors")
    assert total("tests") == len(cases)
    for suite in suites:
        assert int(suite.get("tests", -1)) == len(suite.findall("testcase"))


def test_junit_classname_is_category_and_rule() -> None:
    root = ET.fromstring(render_junit(ALL["realistic"]()))
    suites = {s.get("name") for s in root.findall("testsuite")}
    categories = ("ha", "vmotion", "gpu", "storage", "design", "data")
    # "other": the rule that raised is not in the catalogue.
    assert suites == {f"gpuaudit.{c}" for c in categories} | {"gpuaudit.other"}
    case = root.find(".//testcase[@classname='gpuaudit.ha.HA-03']/failure/..")
    assert case is not None
    assert case.get("name") == "cluster gpu-pt-edge"
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "critical"
    assert "Remediation: Add a buffer host" in (failure.text or "")
    assert '"worst_host": "edge-01.corp.example"' in (failure.text or "")
    waived = root.find(".//testcase[@classname='gpuaudit.ha.HA-01']/skipped")
    assert waived is not None and "CAB-1234" in (waived.get("message") or "")
    error = root.find(".//error")
    assert error is not None and "KeyError" in (error.get("message") or "")


def test_junit_keeps_hostile_names_as_text() -> None:
    root = ET.fromstring(render_junit(ALL["hostile"]()))
    names = {(c.get("name") or "").split(" (cluster ")[0] for c in root.iter("testcase")}
    assert f"vm {HOSTILE['vdi1']}" in names
    assert "vm bell\\x07and\\x00nul" in names  # forbidden characters shown, not dropped
    assert f"host {HOSTILE['p1']}" in names
    texts = " ".join(f.text or "" for f in root.iter("failure"))
    assert "</script><!--" in texts


def test_junit_for_a_large_estate() -> None:
    root = ET.fromstring(render_junit(large_result(3_000)))
    assert len(root.findall(".//testcase")) == 9_000


def _run(result_name: str) -> dict:
    sarif = render_sarif(ALL[result_name]())
    json.dumps(sarif)  # plain JSON
    assert sarif["version"] == "2.1.0"
    assert sarif["$schema"].endswith("sarif-2.1.0.json")
    (run,) = sarif["runs"]
    return run


def test_sarif_failed_findings_are_results() -> None:
    result = ALL["realistic"]()
    run = _run("realistic")
    driver = run["tool"]["driver"]
    assert driver["name"] == "gpuaudit"
    assert [r["id"] for r in driver["rules"]] == [r.id for r in result.rules]
    for descriptor, rule in zip(driver["rules"], result.rules, strict=True):
        assert descriptor["help"]["text"] == rule.remediation
        assert descriptor["shortDescription"]["text"] == rule.title
        assert descriptor["defaultConfiguration"]["level"] in ("error", "warning", "note")
    failed = [f for f in result.findings if f.status == "fail"]
    active = [r for r in run["results"] if "suppressions" not in r]
    assert len(active) == len(failed)
    for res, f in zip(active, failed, strict=True):
        assert res["ruleId"] == f.rule
        assert driver["rules"][res["ruleIndex"]]["id"] == f.rule
        assert res["message"]["text"] == f.message
        expected = {"critical": "error", "high": "error", "medium": "warning"}
        assert res["level"] == expected.get(f.severity, "note")
        (loc,) = res["locations"]
        (logical,) = loc["logicalLocations"]
        assert logical["name"] == f.object and logical["kind"] == f.object_kind
        assert logical["fullyQualifiedName"].endswith(f.object)
        assert res["properties"]["evidence"] == f.evidence
        assert len(res["partialFingerprints"]["gpuaudit/v1"]) == 64
    assert run["invocations"][0]["executionSuccessful"] is False  # a rule raised
    assert run["invocations"][0]["endTimeUtc"] == "2026-11-30T08:50:00Z"


def test_sarif_waived_findings_are_suppressed() -> None:
    run = _run("realistic")
    suppressed = [r for r in run["results"] if "suppressions" in r]
    assert len(suppressed) == 2
    for res in suppressed:
        (s,) = res["suppressions"]
        assert s["kind"] == "external" and s["status"] == "accepted"
        assert "CAB-1234" in s["justification"]


def test_sarif_location_path() -> None:
    run = _run("realistic")
    names = {r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] for r in run["results"]}
    assert "DC-East/gpu-pt-edge/edge-01.corp.example/infer-01" in names
    assert "DC-East/vdi-a16" in names


def test_sarif_hostile_names_stay_data() -> None:
    run = _run("hostile")
    names = {r["locations"][0]["logicalLocations"][0]["name"] for r in run["results"]}
    assert HOSTILE["ds_fc"] in names and HOSTILE["c3"] in names


def test_xml_text_replaces_only_forbidden_characters() -> None:
    assert xml_text("a\x00b\x01c\x0bd\x1fe") == "a\\x00b\\x01c\\x0bd\\x1fe"
    assert xml_text("tab\there\nnew\rcr") == "tab\there\nnew\rcr"
    assert xml_text("\ufffe\uffff\ud800") == "\\ufffe\\uffff\\ud800"
    assert xml_text("Ünïcødé 集群 \u2028") == "Ünïcødé 集群 \u2028"
