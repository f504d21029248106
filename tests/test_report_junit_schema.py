"""JUnit XML against the schemas CI servers read it with.

Both are vendored in tests/schemas (see its README): Jenkins' xUnit plugin checks
a JUnit report against junit-10.xsd; Apache Ant's aggregated JUnitReport schema is
the stricter one (no attribute on <testsuites>; each suite's package, id,
timestamp without a zone, hostname, <properties>, <system-out> and <system-err>).
"""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from gpuaudit.report import render_junit
from gpuaudit.results import AuditResult
from tests.conftest import RECORDED
from tests.support import checked_estates
from tests.support.report_fixtures import ALL

SCHEMAS = Path(__file__).parent / "schemas"
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
