"""JUnit XML of a small result, the whole document written out by hand.

One suite per category, sorted, numbered from 0; the totals on each suite (Ant's
JUnitReport schema allows none on <testsuites>); the timestamp in UTC without a
zone. The result is tests/support/small_report.py's.
"""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

from gpuaudit.report.junit import licence_properties, render_junit
from gpuaudit.results import AuditResult, Finding, RuleError, Waiver
from tests.support.builders import healthy
from tests.support.small_report import HA_01, declared_passthrough_result, small_result

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
