"""SARIF 2.1.0 of a small result, every field written out by hand.

Levels follow SARIF's reportingConfiguration.level values (error, warning, note);
security-severity is GitHub code scanning's 0.0-10.0 scale (critical above 9.0,
high 7.0-8.9, medium 4.0-6.9, low 0.1-3.9). The result is tests/support/small_report.py's.
"""

from __future__ import annotations

import dataclasses

import gpuaudit
from gpuaudit.inventory import Cluster
from gpuaudit.report.sarif import artifact_uri, render_sarif
from gpuaudit.results import Finding, Rule
from tests.support.small_report import (
    HA_01,
    ID_DOTDOT,
    ID_HA_GPU_A,
    ID_VDI,
    ID_X99,
    declared_passthrough_result,
    small_result,
)

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
