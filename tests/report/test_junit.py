"""JUnit XML: CI servers read audit results, and read them against their schemas.

Both schemas are vendored in tests/schemas (see its README): Jenkins' xUnit plugin
checks a JUnit report against junit-10.xsd; Apache Ant's aggregated JUnitReport
schema is the stricter one (no attribute on <testsuites>; each suite's package, id,
timestamp without a zone, hostname, <properties>, <system-out> and <system-err>).

The JUnit XML of a small result (tests/support/small_report.py's) is also written
out whole by hand: one suite per category, sorted, numbered from 0; the totals on
each suite (Ant's JUnitReport schema allows none on <testsuites>); the timestamp in
UTC without a zone.
"""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
import xmlschema

from gpuaudit.report import render_junit
from gpuaudit.report.junit import licence_properties
from gpuaudit.results import AuditResult, Finding, RuleError, Waiver
from tests.conftest import RECORDED
from tests.support import checked_estates
from tests.support.builders import healthy
from tests.support.report_fixtures import ALL, HOSTILE, large_result
from tests.support.small_report import HA_01, declared_passthrough_result, small_result


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


SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"


JENKINS = xmlschema.XMLSchema10(SCHEMAS / "junit-10.xsd")


ANT = xmlschema.XMLSchema10(SCHEMAS / "ant-junit.xsd")


def schema_errors(body: bytes) -> list[str]:
    return [
        f"{name}: {error.path}: {error.reason}"
        for name, schema in (("junit-10.xsd", JENKINS), ("ant-junit.xsd", ANT))
        for error in schema.iter_errors(body.decode("utf-8"))
    ]


@pytest.mark.parametrize("name", RECORDED)
def test_junit_of_every_recorded_scenario_is_valid(name: str) -> None:
    assert schema_errors(render_junit(checked_estates.recorded(name))) == []


@pytest.mark.parametrize("name", sorted(ALL))
def test_junit_of_the_report_fixtures_is_valid(name: str) -> None:
    # realistic holds failed, waived and passed findings and a rule that raised;
    # hostile, names with markup and control characters.
    assert schema_errors(render_junit(ALL[name]())) == []


def test_the_schemas_refuse_what_they_should() -> None:
    """The validation is real: each schema refuses a report the other would take."""
    good = render_junit(ALL["realistic"]())
    assert schema_errors(good) == []
    root = ET.fromstring(good)
    root.set("skipped", "2")  # junit-10.xsd allows no skipped count on <testsuites>
    assert any(e.startswith("junit-10.xsd") for e in schema_errors(ET.tostring(root)))
    root = ET.fromstring(good)
    suite = root.find("testsuite")
    assert suite is not None
    suite.remove(suite.findall("system-err")[0])  # Ant's requires it
    errors = schema_errors(ET.tostring(root))
    assert errors and all(e.startswith("ant-junit.xsd") for e in errors)


def test_suites_carry_what_ant_requires() -> None:
    root = ET.fromstring(render_junit(ALL["realistic"]()))
    assert root.attrib == {}
    suites = root.findall("testsuite")
    assert [s.get("id") for s in suites] == [str(i) for i in range(len(suites))]
    for suite in suites:
        assert suite.get("package") == suite.get("name")
        # report_fixtures: checked at 2026-11-30T08:50:00Z, on vcsa01.corp.example
        assert suite.get("timestamp") == "2026-11-30T08:50:00"
        assert suite.get("hostname") == "vcsa01.corp.example"
        assert [c.tag for c in suite][-2:] == ["system-out", "system-err"]


def _without_times(result: AuditResult, checked_at: str, collected_at: str) -> AuditResult:
    inventory = dataclasses.replace(result.inventory, collected_at=collected_at, source="")
    return dataclasses.replace(result, inventory=inventory, checked_at=checked_at)


def test_timestamp_and_hostname_when_the_result_lacks_them() -> None:
    result = ALL["realistic"]()
    # No check time: the collection time, converted to UTC and written without a zone.
    body = render_junit(_without_times(result, "", "2026-11-30T10:49:12+02:00"))
    assert schema_errors(body) == []
    suite = ET.fromstring(body).find("testsuite")
    assert suite is not None and suite.get("timestamp") == "2026-11-30T08:49:12"
    assert suite.get("hostname") == "localhost"  # the schemas' word for an unknown host
    # Neither: no timestamp rather than an invented one (Jenkins takes that; Ant does not).
    body = render_junit(_without_times(result, "", ""))
    suite = ET.fromstring(body).find("testsuite")
    assert suite is not None and "timestamp" not in suite.attrib
    assert not [e for e in schema_errors(body) if e.startswith("junit-10.xsd")]


NOTE = (
    "Passthrough GPU VMs count under the edition the policy declares for their "
    "guests' NVIDIA driver (licensing.passthrough)."
)


PROPS = f"""\
    <properties>
      <property name="source" value="vc01.corp.example" />
      <property name="rules_version" value="2026.12.3" />
      <property name="tool_version" value="9.9.9" />
      <property name="licences.total" value="0" />
      <property name="licences.note" value="{NOTE}" />
    </properties>
"""


SUITE = (
    'package="gpuaudit.{0}" id="{1}" timestamp="2026-12-01T10:30:00" hostname="vc01.corp.example"'
)


EXPECTED = (
    "<?xml version='1.0' encoding='utf-8'?>\n"
    "<testsuites>\n"
    '  <testsuite name="gpuaudit.gpu" '
    + SUITE.format("gpu", 0)
    + ' time="0" tests="2" failures="0" errors="0" skipped="2">\n'
    + PROPS
    + '    <testcase classname="gpuaudit.gpu.GPU-02" name="vm vdi 1/a% (cluster gpu-a)" time="0">\n'
    '      <skipped message="waived: CAB-7 (ops, until 2027-01-31)" />\n'
    "    </testcase>\n"
    '    <testcase classname="gpuaudit.gpu.GPU-02" name="vm .." time="0">\n'
    '      <skipped message="waived" />\n'
    "    </testcase>\n"
    "    <system-out />\n"
    "    <system-err />\n"
    "  </testsuite>\n"
    '  <testsuite name="gpuaudit.ha" '
    + SUITE.format("ha", 1)
    + ' time="0" tests="2" failures="1" errors="0" skipped="0">\n'
    + PROPS
    + '    <testcase classname="gpuaudit.ha.HA-01" name="cluster gpu-a" time="0">\n'
    '      <failure message="HA is off" type="critical">Rule: HA-01 HA is on\n'
    "Severity: critical\n"
    "Object: cluster gpu-a\n"
    "Cluster: gpu-a\n"
    "Message: HA is off\n"
    'Evidence: {"ha_enabled": false}\n'
    "Remediation: Turn HA on.\n"
    "</failure>\n"
    "    </testcase>\n"
    '    <testcase classname="gpuaudit.ha.HA-01" name="cluster gpu-b" time="0" />\n'
    "    <system-out />\n"
    "    <system-err />\n"
    "  </testsuite>\n"
    '  <testsuite name="gpuaudit.other" '
    + SUITE.format("other", 2)
    + ' time="0" tests="2" failures="1" errors="1" skipped="0">\n'
    + PROPS
    + '    <testcase classname="gpuaudit.other.X-99" name="host esx-09.corp" time="0">\n'
    '      <failure message="odd" type="low">Rule: X-99\n'
    "Severity: low\n"
    "Object: host esx-09.corp\n"
    "Host: esx-09.corp\n"
    "Message: odd\n"
    "</failure>\n"
    "    </testcase>\n"
    '    <testcase classname="gpuaudit.other.DS-01" name="rule raised" time="0">\n'
    "      <error message=\"KeyError: 'x'\" type=\"RuleError\">KeyError: 'x'</error>\n"
    "    </testcase>\n"
    "    <system-out />\n"
    "    <system-err />\n"
    "  </testsuite>\n"
    "</testsuites>"
)


def test_the_whole_document() -> None:
    assert render_junit(small_result()).decode("utf-8") == EXPECTED


def _suites(result: AuditResult) -> list[ET.Element]:
    return ET.fromstring(render_junit(result)).findall("testsuite")


def test_without_a_scan_time_the_collection_time_stamps_the_suites() -> None:
    result = dataclasses.replace(small_result(), checked_at="")
    assert {s.get("timestamp") for s in _suites(result)} == {"2026-12-01T10:00:00"}
    result.inventory.collected_at = ""
    assert all("timestamp" not in s.attrib for s in _suites(result))


def test_an_unknown_source_is_localhost() -> None:
    result = small_result()
    result.inventory.source = ""
    (suite, *_) = _suites(result)
    assert suite.get("hostname") == "localhost"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["source"] == "localhost"


def test_a_known_rule_that_raised_counts_in_its_category() -> None:
    result = dataclasses.replace(
        small_result(), findings=[], errors=[RuleError("HA-01", "boom\n  twice \x07")]
    )
    (suite,) = _suites(result)
    assert suite.get("name") == "gpuaudit.ha"
    assert (suite.get("tests"), suite.get("errors")) == ("1", "1")
    (case,) = suite.findall("testcase")
    assert case.get("classname") == "gpuaudit.ha.HA-01"
    error = case.find("error")
    assert error is not None
    # The message on one line; the text kept whole; a control character shown, not dropped.
    assert error.get("message") == "boom twice \\x07"
    assert error.text == "boom\n  twice \\x07"


def test_messages_are_one_line_and_forbidden_characters_visible() -> None:
    waiver = Waiver("HA-01", "*", "a\nlong\x07 reason", "me", "2027-01-01")
    findings = [
        Finding("HA-01", "c\x01", "cluster", "fail", "high", "line one\nline two\x07"),
        Finding("HA-01", "d", "cluster", "waived", "high", "m", waiver=waiver),
    ]
    result = dataclasses.replace(small_result(), findings=findings, errors=[])
    (suite,) = _suites(result)
    fail_case, waived_case = suite.findall("testcase")
    assert fail_case.get("name") == "cluster c\\x01"
    failure = fail_case.find("failure")
    assert failure is not None
    assert failure.get("message") == "line one line two\\x07"
    assert failure.text == (
        "Rule: HA-01 HA is on\nSeverity: high\nObject: cluster c\\x01\n"
        "Message: line one\nline two\\x07\nRemediation: Turn HA on.\n"
    )
    skipped = waived_case.find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "waived: a long\\x07 reason (me, until 2027-01-01)"


def test_a_host_finding_in_a_cluster_names_both() -> None:
    f = Finding("HA-01", "esx-01.corp", "host", "fail", "high", "m", "gpu-a", "esx-01.corp")
    result = dataclasses.replace(small_result(), findings=[f], errors=[], rules=[HA_01])
    (suite,) = _suites(result)
    (case,) = suite.findall("testcase")
    assert case.get("name") == "host esx-01.corp (cluster gpu-a)"
    failure = case.find("failure")
    assert failure is not None
    assert failure.text == (
        "Rule: HA-01 HA is on\nSeverity: high\nObject: host esx-01.corp\n"
        "Cluster: gpu-a\nHost: esx-01.corp\nMessage: m\nRemediation: Turn HA on.\n"
    )


def test_licence_properties_count_powered_on_vgpu_vms_per_edition() -> None:
    # healthy(): three powered-on VMs with grid_l4-8q, a Q-series profile, which
    # NVIDIA licenses as RTX Virtual Workstation.
    result = dataclasses.replace(small_result(), inventory=healthy().inv, findings=[])
    assert licence_properties(result) == {
        "licences.NVIDIA RTX Virtual Workstation": "3",
        "licences.total": "3",
        "licences.note": "Passthrough GPU VMs count under the edition the policy declares "
        "for their guests' NVIDIA driver (licensing.passthrough).",
    }


def test_licence_properties_take_the_passthrough_editions_lic_01_found() -> None:
    # passthrough_estate(): powered-on passthrough VMs pv1 and pv2; the policy declares
    # pv1's guest as NVIDIA AI Enterprise, pv2's not at all.
    result = declared_passthrough_result()
    assert licence_properties(result) == {
        "licences.NVIDIA AI Enterprise": "1",
        "licences.total": "1",
        "licences.note": "Passthrough GPU VMs count under the edition the policy declares "
        "for their guests' NVIDIA driver (licensing.passthrough). 1 passthrough GPU VM "
        "with no edition declared is assumed to need no NVIDIA licence.",
    }
