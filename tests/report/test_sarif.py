"""SARIF as code-scanning tools read it: the OASIS SARIF 2.1.0 schema and GitHub's rules.

The schema is the OASIS one, vendored in tests/schemas (see its README), with the
"uri" and "uri-reference" formats checked. GitHub's rules come from its "SARIF
support for code scanning" and "SARIF results exceed limits" pages: every result
needs a ruleId and a physicalLocation whose artifactLocation.uri is a relative
path (an absolute URI of another scheme is refused at upload); partialFingerprints
keep an alert from one upload to the next; a run holds at most 25,000 results and
25,000 rules, a rule at most 20 tags, a result at most 1,000 locations, and the
gzip-compressed file at most 10 MB.

The SARIF of a small result (tests/support/small_report.py's) is also written out
by hand, every field. Levels follow SARIF's reportingConfiguration.level values
(error, warning, note); security-severity is GitHub code scanning's 0.0-10.0 scale
(critical above 9.0, high 7.0-8.9, medium 4.0-6.9, low 0.1-3.9).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import jsonschema
import pytest
from rfc3986_validator import validate_rfc3986

import gpuaudit
from gpuaudit.inventory import Cluster
from gpuaudit.model.policy_file import parse_policy
from gpuaudit.report import render_sarif
from gpuaudit.report.sarif import artifact_uri
from gpuaudit.results import AuditResult, Finding, Rule
from gpuaudit.rules import catalogue
from gpuaudit.verdict.check import run_checks
from tests.conftest import RECORDED
from tests.support import checked_estates
from tests.support.report_fixtures import ALL, HOSTILE
from tests.support.small_report import (
    HA_01,
    ID_DOTDOT,
    ID_HA_GPU_A,
    ID_VDI,
    ID_X99,
    declared_passthrough_result,
    small_result,
)


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


SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "schemas" / "sarif-schema-2.1.0.json").read_text(
        encoding="utf-8"
    )
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


NO_LICENCES = {
    "rows": [],
    "totals": {},
    "total": 0,
    "passthrough_vms": 0,
    "note": "Passthrough GPU VMs count under the edition the policy declares for their "
    "guests' NVIDIA driver (licensing.passthrough).",
    "passthrough_assumed": 0,
}


HA_01_DESCRIPTOR = {
    "id": "HA-01",
    "name": "HA01",
    "shortDescription": {"text": "HA is on"},
    "fullDescription": {"text": "HA restarts GPU VMs."},
    "help": {
        "text": "Turn HA on.\n\nReferences:\n"
        "- vSphere HA: https://docs.example/ha\n- KB 2: https://kb.example/2",
        "markdown": "Turn HA on.\n\n**References**\n\n"
        "- [vSphere HA](https://docs.example/ha)\n- [KB 2](https://kb.example/2)",
    },
    "defaultConfiguration": {"level": "error"},
    "properties": {
        "category": "ha",
        "severity": "critical",
        "object_kind": "cluster",
        "tags": ["vsphere", "gpu", "ha"],
        "security-severity": "9.5",
    },
    "helpUri": "https://docs.example/ha",
}


GPU_02_DESCRIPTOR = {
    "id": "GPU-02",
    "name": "GPU02",
    "shortDescription": {"text": "Profiles fit"},
    "fullDescription": {"text": "Profiles fit"},
    "help": {"text": "Profiles fit"},
    "defaultConfiguration": {"level": "warning"},
    "properties": {
        "category": "gpu",
        "severity": "medium",
        "object_kind": "vm",
        "tags": ["vsphere", "gpu"],
        "security-severity": "5.5",
    },
}


def _location(uri: str, name: str, qualified: str, kind: str) -> dict:
    return {
        "physicalLocation": {"artifactLocation": {"uri": uri, "uriBaseId": "VCENTER"}},
        "logicalLocations": [{"name": name, "fullyQualifiedName": qualified, "kind": kind}],
    }


EXPECTED_RESULTS = [
    {
        "ruleId": "HA-01",
        "level": "error",
        "message": {"text": "HA is off"},
        "locations": [_location("vsphere/DC-East/gpu-a", "gpu-a", "DC-East/gpu-a", "cluster")],
        "partialFingerprints": {"gpuaudit/v1": ID_HA_GPU_A},
        "properties": {
            "severity": "critical",
            "status": "fail",
            "cluster": "gpu-a",
            "host": None,
            "evidence": {"ha_enabled": False},
            "firstSeen": "2026-11-01T00:00:00+00:00",
            "ageDays": 30,
        },
        "ruleIndex": 0,
    },
    {
        "ruleId": "GPU-02",
        "level": "warning",
        "message": {"text": "GPU-02"},
        "locations": [
            _location(
                "vsphere/DC-East/gpu-a/esx-01.corp/vdi%201%2Fa%25",
                "vdi 1/a%",
                "DC-East/gpu-a/esx-01.corp/vdi 1/a%",
                "vm",
            )
        ],
        "partialFingerprints": {"gpuaudit/v1": ID_VDI},
        "properties": {
            "severity": "medium",
            "status": "waived",
            "cluster": "gpu-a",
            "host": "esx-01.corp",
            "evidence": {},
        },
        "ruleIndex": 1,
        "suppressions": [
            {
                "kind": "external",
                "status": "accepted",
                "justification": "CAB-7 (ops, until 2027-01-31)",
                "properties": {"owner": "ops", "expires": "2027-01-31"},
            }
        ],
    },
    {
        "ruleId": "X-99",
        "level": "note",
        "message": {"text": "odd"},
        "locations": [
            _location("vsphere/DC-West/esx-09.corp", "esx-09.corp", "DC-West/esx-09.corp", "host")
        ],
        "partialFingerprints": {"gpuaudit/v1": ID_X99},
        "properties": {
            "severity": "low",
            "status": "fail",
            "cluster": None,
            "host": "esx-09.corp",
            "evidence": {},
        },
    },
    {
        "ruleId": "GPU-02",
        "level": "error",
        "message": {"text": "dots"},
        "locations": [_location("vsphere/%2E%2E", "..", "..", "vm")],
        "partialFingerprints": {"gpuaudit/v1": ID_DOTDOT},
        "properties": {
            "severity": "high",
            "status": "waived",
            "cluster": None,
            "host": None,
            "evidence": {},
        },
        "ruleIndex": 1,
        "suppressions": [{"kind": "external", "status": "accepted"}],
    },
]


def test_the_whole_document() -> None:
    assert render_sarif(small_result()) == {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gpuaudit",
                        "version": "9.9.9",
                        "semanticVersion": gpuaudit.__version__,
                        "rules": [HA_01_DESCRIPTOR, GPU_02_DESCRIPTOR],
                        "properties": {"rules_version": "2026.12.3"},
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": False,
                        "toolExecutionNotifications": [
                            {
                                "level": "error",
                                "message": {"text": "rule DS-01 raised: KeyError: 'x'"},
                            }
                        ],
                        "endTimeUtc": "2026-12-01T10:30:00Z",
                    }
                ],
                "originalUriBaseIds": {
                    "VCENTER": {
                        "description": {"text": "the vSphere inventory of vc01.corp.example"},
                        "properties": {"vcenter": "vc01.corp.example"},
                    }
                },
                "results": EXPECTED_RESULTS,
                "properties": {
                    "source": "vc01.corp.example",
                    "vcenter": "vc01",
                    "licences": NO_LICENCES,
                },
            }
        ],
    }


def test_a_clean_run_without_a_time_or_tool_version() -> None:
    result = dataclasses.replace(
        small_result(), errors=[], checked_at="", tool_version="", first_seen={}
    )
    (run,) = render_sarif(result)["runs"]
    assert run["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]
    assert run["tool"]["driver"]["version"] == gpuaudit.__version__
    # No scan time: a known first-seen date still gives its age, as 0 days.
    aged = dataclasses.replace(result, first_seen={ID_HA_GPU_A: "2026-11-01"})
    first = render_sarif(aged)["runs"][0]["results"][0]["properties"]
    assert (first["firstSeen"], first["ageDays"]) == ("2026-11-01", 0)


def test_a_time_that_is_not_one_is_left_out() -> None:
    result = dataclasses.replace(small_result(), checked_at="yesterday")
    (invocation,) = render_sarif(result)["runs"][0]["invocations"]
    assert "endTimeUtc" not in invocation


def test_levels_and_security_severity_of_every_severity() -> None:
    # An unknown severity, as an old report may hold, is a warning of medium weight.
    expected = {
        "critical": ("error", "9.5"),
        "high": ("error", "8.0"),
        "medium": ("warning", "5.5"),
        "low": ("note", "3.0"),
        "info": ("note", "0.0"),
        "bogus": ("warning", "5.5"),
    }
    rules = [
        dataclasses.replace(HA_01, id=f"R-{s}", severity=s)  # type: ignore[arg-type]
        for s in expected
    ]
    findings = [
        Finding(f"R-{s}", "c", "cluster", "fail", s, "m")  # type: ignore[arg-type]
        for s in expected
    ]
    result = dataclasses.replace(small_result(), rules=rules, findings=findings)
    (run,) = render_sarif(result)["runs"]
    got = {
        d["properties"]["severity"]: (
            d["defaultConfiguration"]["level"],
            d["properties"]["security-severity"],
        )
        for d in run["tool"]["driver"]["rules"]
    }
    assert got == expected
    assert [r["level"] for r in run["results"]] == [v[0] for v in expected.values()]
    assert [r["ruleIndex"] for r in run["results"]] == [0, 1, 2, 3, 4, 5]


def test_a_gpu_rule_is_tagged_once_and_a_rule_without_references_has_no_help_uri() -> None:
    rule = Rule("GPU-09", "t", "gpu", "low", "r", "fix it", "gpu")
    result = dataclasses.replace(small_result(), rules=[rule], findings=[])
    (descriptor,) = render_sarif(result)["runs"][0]["tool"]["driver"]["rules"]
    assert descriptor["properties"]["tags"] == ["vsphere", "gpu"]
    assert descriptor["help"] == {"text": "fix it"}
    assert descriptor["fullDescription"] == {"text": "r"}
    assert "helpUri" not in descriptor


def test_artifact_uris_at_their_edges() -> None:
    def uri(obj: str, cluster: str | None = None, host: str | None = None, dc: str = "") -> str:
        return artifact_uri(Finding("R", obj, "vm", "fail", "low", "m", cluster, host), dc)

    assert uri(".") == "vsphere/%2E"
    assert uri("a.b") == "vsphere/a.b"
    assert uri("...") == "vsphere/..."
    # A lone surrogate cannot be UTF-8: it is written as its escape, not refused.
    assert uri("x\udcff") == "vsphere/x%5Cudcff"
    assert uri("v", "c", "h", "D") == "vsphere/D/c/h/v"
    # A host finding names its host once.
    assert uri("h", "c", "h") == "vsphere/c/h"
    assert uri("~-_") == "vsphere/~-_"


def test_a_clustered_host_finding_without_its_cluster_takes_no_datacenter() -> None:
    # Only standalone hosts are looked up by name: a clustered host's datacenter
    # comes through its cluster.
    f = Finding("X-1", "esx-01.corp", "host", "fail", "low", "m", None, "esx-01.corp")
    result = dataclasses.replace(small_result(), findings=[f])
    (res,) = render_sarif(result)["runs"][0]["results"]
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "vsphere/esx-01.corp"
    )


def test_an_inventory_finding_takes_no_datacenter_whatever_the_clusters_are_named() -> None:
    result = small_result()
    result.inventory.clusters.append(Cluster(name="XXXX", moref="domain-c9", datacenter="D"))
    f = Finding("DATA-01", "vc01", "vcenter", "fail", "low", "m")
    result = dataclasses.replace(result, findings=[f])
    (res,) = render_sarif(result)["runs"][0]["results"]
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "vsphere/vc01"


def test_licences_count_passthrough_vms_by_the_edition_lic_01_found() -> None:
    # passthrough_estate(): powered-on passthrough VMs pv1 and pv2 in cluster pt; the
    # policy declares pv1's guest as NVIDIA AI Enterprise, pv2's not at all.
    result = declared_passthrough_result()
    licences = render_sarif(result)["runs"][0]["properties"]["licences"]
    assert licences == {
        "rows": [
            {
                "edition": "NVIDIA AI Enterprise",
                "cluster": "pt",
                "powered_on": 1,
                "registered": 1,
                "passthrough": 1,
            }
        ],
        "totals": {"NVIDIA AI Enterprise": 1},
        "total": 1,
        "passthrough_vms": 2,
        "note": NO_LICENCES["note"]
        + " 1 passthrough GPU VM with no edition declared is assumed to need no NVIDIA licence.",
        "passthrough_assumed": 1,
    }
