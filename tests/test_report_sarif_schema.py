"""SARIF against the official OASIS SARIF 2.1.0 schema and GitHub code scanning's rules.

The schema is the OASIS one, vendored in tests/schemas (see its README), with the
"uri" and "uri-reference" formats checked. GitHub's rules come from its "SARIF
support for code scanning" and "SARIF results exceed limits" pages: every result
needs a ruleId and a physicalLocation whose artifactLocation.uri is a relative
path (an absolute URI of another scheme is refused at upload); partialFingerprints
keep an alert from one upload to the next; a run holds at most 25,000 results and
25,000 rules, a rule at most 20 tags, a result at most 1,000 locations, and the
gzip-compressed file at most 10 MB.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import jsonschema
import pytest
from rfc3986_validator import validate_rfc3986

from gpuaudit.model.policy_file import parse_policy
from gpuaudit.report import render_sarif
from gpuaudit.results import AuditResult
from gpuaudit.rules import catalogue
from gpuaudit.verdict.check import run_checks
from tests.conftest import RECORDED
from tests.support import checked_estates
from tests.support.report_fixtures import ALL, HOSTILE

SCHEMA = json.loads(
    (Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8")
)
VALIDATOR = jsonschema.Draft4Validator(
    SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
)


def schema_errors(doc: dict[str, Any]) -> list[str]:
    return [
        f"{'/'.join(str(p) for p in e.absolute_path)}: {e.message}"
        for e in VALIDATOR.iter_errors(doc)
    ]


def reported(result: AuditResult) -> list[Any]:
    """The findings SARIF carries, in the order of the result: all but the passed ones."""
    return [f for f in result.findings if f.status != "pass"]


def test_the_schema_is_the_oasis_one_and_checks_uris() -> None:
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    assert SCHEMA["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    # Without a URI checker installed the formats would pass unchecked.
    minimal = {"version": "2.1.0", "runs": []}
    assert VALIDATOR.is_valid({**minimal, "$schema": "https://example.invalid/s.json"})
    assert not VALIDATOR.is_valid({**minimal, "$schema": "not a uri"})


@pytest.mark.parametrize("name", RECORDED)
def test_sarif_of_every_recorded_scenario_is_valid(name: str) -> None:
    doc = render_sarif(checked_estates.recorded(name))
    assert schema_errors(doc) == []


@pytest.mark.parametrize("name", sorted(ALL))
def test_sarif_of_the_report_fixtures_is_valid(name: str) -> None:
    assert schema_errors(render_sarif(ALL[name]())) == []


def test_sarif_of_a_waived_finding_is_valid() -> None:
    inventory = checked_estates.recorded("scenario-a").inventory
    policy = parse_policy(
        "waivers:\n"
        "  - {rule: HA-04, object: cv-inference-01, reason: CAB-77 fixed passthrough,"
        " owner: ml-ops@example.com, expires: 2099-12-31}\n",
        rule_ids=[r.id for r in catalogue()],
    )
    doc = render_sarif(run_checks(inventory, policy))
    assert schema_errors(doc) == []
    (waived,) = [r for r in doc["runs"][0]["results"] if "suppressions" in r]
    assert waived["ruleId"] == "HA-04"
    assert waived["locations"][0]["logicalLocations"][0]["name"] == "cv-inference-01"
    (suppression,) = waived["suppressions"]
    assert suppression["kind"] == "external" and suppression["status"] == "accepted"
    assert "CAB-77" in suppression["justification"]


def test_rule_tags_are_unique() -> None:
    # SARIF's tags are a set: a gpu-category rule once listed "gpu" twice.
    rules = render_sarif(ALL["realistic"]())["runs"][0]["tool"]["driver"]["rules"]
    tags = {r["id"]: r["properties"]["tags"] for r in rules}
    assert tags["GPU-01"] == ["vsphere", "gpu"]
    assert tags["HA-01"] == ["vsphere", "gpu", "ha"]


def _segments(uri: str) -> list[str]:
    return [unquote(s) for s in uri.split("/")]


@pytest.mark.parametrize("name", [*RECORDED, "fixture-realistic", "fixture-hostile"])
def test_every_result_has_a_relative_artifact_uri(name: str) -> None:
    fixture = name.removeprefix("fixture-")
    result = ALL[fixture]() if fixture != name else checked_estates.recorded(name)
    (run,) = render_sarif(result)["runs"]
    assert run["results"], "every estate here fails something"
    for res, finding in zip(run["results"], reported(result), strict=True):
        (location,) = res["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        uri = artifact["uri"]
        assert validate_rfc3986(uri, rule="URI_reference"), uri  # a relative path...
        assert not validate_rfc3986(uri, rule="URI"), uri  # ...with no scheme
        assert artifact["uriBaseId"] in run["originalUriBaseIds"]
        raw = uri.split("/")
        assert raw[0] == "vsphere" and "." not in raw and ".." not in raw, uri
        names = _segments(uri)[1:]
        assert names[-1] == finding.object
        for container in (finding.cluster, finding.host):
            assert not container or container in names
        # The logical location stays beside it.
        assert location["logicalLocations"][0]["name"] == finding.object


def test_artifact_uri_follows_the_inventory_tree() -> None:
    # tests/scenarios/scenario-a.yaml: datacenter edge-dc, cluster scen-a, and
    # cv-inference-01 on gpu-node-01.edge.local, in fixed passthrough without HA.
    (run,) = render_sarif(checked_estates.recorded("scenario-a"))["runs"]
    uris = {
        (r["ruleId"], r["locations"][0]["logicalLocations"][0]["name"]): r["locations"][0][
            "physicalLocation"
        ]["artifactLocation"]["uri"]
        for r in run["results"]
    }
    vm = "vsphere/edge-dc/scen-a/gpu-node-01.edge.local/cv-inference-01"
    assert uris[("HA-04", "cv-inference-01")] == vm
    assert uris[("HA-01", "scen-a")] == "vsphere/edge-dc/scen-a"


def test_hostile_names_stay_one_segment_of_the_uri() -> None:
    result = ALL["realistic"]()
    first, second = reported(result)[:2]
    first.host, first.object = "..", "a/../../b?c#d e"
    second.host, second.object = None, "."
    (one, two) = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in render_sarif(result)["runs"][0]["results"][:2]
    ]
    assert one.split("/")[-2:] == ["%2E%2E", "a%2F..%2F..%2Fb%3Fc%23d%20e"]
    assert _segments(one)[-2:] == ["..", "a/../../b?c#d e"]
    assert two.split("/")[-1] == "%2E"
    hostile = render_sarif(ALL["hostile"]())["runs"][0]["results"]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in hostile]
    assert any(HOSTILE["vdi1"] in _segments(uri) for uri in uris)


def test_the_uri_base_names_the_vcenter() -> None:
    (run,) = render_sarif(ALL["realistic"]())["runs"]
    (base,) = run["originalUriBaseIds"].values()
    # No file system holds the inventory: the base is named, with no URI to resolve.
    assert "uri" not in base
    assert base["properties"]["vcenter"] == "vcsa01.corp.example"
    assert "vcsa01.corp.example" in base["description"]["text"]


def test_the_large_estate_is_within_githubs_limits() -> None:
    result = checked_estates.large()
    doc = render_sarif(result)
    assert len(doc["runs"]) <= 20
    (run,) = doc["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert len(run["results"]) == len(reported(result)) <= 25_000
    assert len(rules) <= 25_000
    assert all(len(r["properties"]["tags"]) <= 20 for r in rules)
    ids = {r["id"] for r in rules}
    for res in run["results"]:
        assert res["ruleId"] in ids
        assert len(res["partialFingerprints"]["gpuaudit/v1"]) == 64
        assert 1 <= len(res["locations"]) <= 1_000
        assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    text = json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8")
    assert len(gzip.compress(text)) <= 10 * 1024 * 1024
