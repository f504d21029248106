"""The JSON report: valid against its published schema, complete, and loadable again.

Also the JSON report of a small result written out by hand, and its way back in:
the parts docs/report-formats.md describes, for tests/support/small_report.py's
result with a history (one new finding, one resolved, a trend point) and a
Kubernetes cluster. The summary and the inventory are other modules' output
(summary.py, inventory.py) and are pinned by their own tests; there they are only
placed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import typing
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import gpuaudit
from gpuaudit import inventory, results
from gpuaudit.kubernetes.model import HostLoss, KubernetesReport, PodMove
from gpuaudit.report import (
    REPORT_SCHEMA_VERSION,
    ReportError,
    load_json_report,
    render_json,
    render_sarif,
    report_schema,
    write_reports,
)
from gpuaudit.report.json_report import (
    dump_json,
    from_json_data,
    json_chunks,
    report_document,
    write_json,
)
from gpuaudit.report.summary import summarize
from gpuaudit.results import (
    AuditResult,
    ClusterSimulation,
    Finding,
    FindingRef,
    Reference,
    ScanHistory,
    TrendPoint,
    Waiver,
)
from tests.support.report_fixtures import ALL, large_result
from tests.support.small_report import (
    ID_DOTDOT,
    ID_HA_GPU_A,
    ID_VDI,
    ID_X99,
    small_inventory,
    small_result,
)

VALIDATOR = jsonschema.Draft202012Validator


def validate(doc: dict[str, Any]) -> None:
    VALIDATOR(report_schema()).validate(doc)


def test_schema_is_a_valid_json_schema() -> None:
    schema = report_schema()
    VALIDATOR.check_schema(schema)
    assert schema["properties"]["report_schema_version"] == {"const": REPORT_SCHEMA_VERSION}


def test_schema_ships_in_the_package() -> None:
    path = Path(results.__file__).parent / "schemas" / "report.schema.json"
    assert json.loads(path.read_text(encoding="utf-8")) == report_schema()


@pytest.mark.parametrize("name", sorted(ALL))
def test_report_validates(name: str) -> None:
    validate(render_json(ALL[name]()))


def test_large_report_validates() -> None:
    validate(render_json(large_result(2_000)))


def test_written_file_validates(tmp_path: Path) -> None:
    for name, build in ALL.items():
        (path,) = write_reports(build(), tmp_path / name, ["json"], "vc")
        validate(json.loads(path.read_text(encoding="utf-8")))


def test_report_holds_source_inventory_results_simulation_and_summary() -> None:
    result = ALL["realistic"]()
    doc = render_json(result)
    assert doc["source"]["server"] == "vcsa01.corp.example"
    assert doc["source"]["vcenter"]["version"] == "8.0.3"
    assert doc["source"]["collected_at"] == "2026-11-30T08:49:12Z"
    assert len(doc["findings"]) == len(result.findings)
    assert doc["findings"][1]["evidence"] == {"ha_enabled": False, "gpu_vms": 3}
    assert doc["findings"][1]["waiver"]["owner"] == "ops-gpu@corp.example"
    assert [s["cluster"] for s in doc["simulations"]] == [s.cluster for s in result.simulations]
    assert doc["simulations"][0]["capacity"][0]["capacity"] == 6
    assert len(doc["inventory"]["vms"]) == len(result.inventory.vms)
    assert doc["rules"][0]["remediation"]
    summary = doc["summary"]
    assert summary["verdict"] == "fail"
    assert summary["worst_severity"] == "critical"
    assert summary["results"] == {"fail": 10, "unproven": 0, "waived": 2, "pass": 20, "notice": 1}
    # The eleven failing checks of tests/support/report_fixtures.py, counted by hand: HA-02 (c3,
    # high), HA-03 (c2 and c3, critical), VM-01 and VM-02 (medium), GPU-01 (high), GPU-02
    # (medium), ST-02 (fc-gold-01 medium, nfs-vdi-01 low), DATA-01 (low), and DS-01
    # (info): a notice, never a failure.
    assert summary["failed_by_severity"] == {
        "critical": 2,
        "high": 2,
        "medium": 4,
        "low": 2,
        "info": 0,
    }
    assert summary["failed_by_category"] == {
        "ha": 3,
        "vmotion": 2,
        "gpu": 2,
        "storage": 2,
        "design": 0,  # DS-01 is info: a notice
        "data": 1,
        "monitoring": 0,
        "licensing": 0,
    }
    assert summary["incomplete"] is True
    tolerates = {c["name"]: c["tolerates"] for c in summary["clusters"]}
    assert tolerates == {"gpu-vgpu-prod": 1, "gpu-pt-edge": 0, "vdi-a16": 0}
    assert {c["name"]: c["design"] for c in summary["clusters"]} == result.designs


def test_passing_estate_verdict() -> None:
    summary = render_json(ALL["passing"]())["summary"]
    assert summary["verdict"] == "pass"
    assert summary["worst_severity"] is None
    assert summary["incomplete"] is False


def test_hostile_names_survive_unchanged() -> None:
    result = ALL["hostile"]()
    doc = render_json(result)
    names = [v["name"] for v in doc["inventory"]["vms"]]
    assert names == [v.name for v in result.inventory.vms]
    assert "bell\x07and\x00nul" in names and "\rcr" in names


def test_evidence_that_json_cannot_hold_becomes_text() -> None:
    result = ALL["realistic"]()
    result.findings[0].evidence = {"hosts": {"b", "a"}, "pair": (1, 2), "when": object}
    doc = render_json(result)
    validate(doc)
    assert doc["findings"][0]["evidence"]["hosts"] == ["a", "b"]
    assert doc["findings"][0]["evidence"]["pair"] == [1, 2]
    assert isinstance(doc["findings"][0]["evidence"]["when"], str)


@pytest.mark.parametrize("name", sorted(ALL))
def test_round_trip(name: str, tmp_path: Path) -> None:
    result = ALL[name]()
    (path,) = write_reports(result, tmp_path, ["json"], "vc")
    loaded = load_json_report(path)
    assert loaded.to_dict() == json.loads(json.dumps(result.to_dict()))
    assert render_json(loaded) == render_json(result)


def test_newer_report_is_refused(tmp_path: Path) -> None:
    doc = render_json(ALL["realistic"]())
    doc["report_schema_version"] = REPORT_SCHEMA_VERSION + 1
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ReportError, match="newer"):
        load_json_report(path)


@pytest.mark.parametrize("text", ["", "[]", "{}", '{"report_schema_version": 1}', "not json"])
def test_broken_report_is_refused(text: str, tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ReportError):
        load_json_report(path)


def test_schema_rejects_a_wrong_document() -> None:
    doc = render_json(ALL["realistic"]())
    doc["findings"][0]["status"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        validate(doc)
    doc = render_json(ALL["realistic"]())
    del doc["summary"]["verdict"]
    with pytest.raises(jsonschema.ValidationError):
        validate(doc)


def _schema_properties(schema: dict[str, Any], name: str) -> set[str]:
    return set(schema["$defs"][name]["properties"])


SCHEMA_DEFS = {
    "vcenter": inventory.VCenter,
    "admission_control": inventory.AdmissionControl,
    "cluster": inventory.Cluster,
    "gpu": inventory.Gpu,
    "vgpu_profile": inventory.VgpuProfile,
    "storage_adapter": inventory.StorageAdapter,
    "vmotion_nic": inventory.VmotionNic,
    "host": inventory.Host,
    "lun_path": inventory.LunPath,
    "datastore_mount": inventory.DatastoreMount,
    "datastore": inventory.Datastore,
    "gpu_attachment": inventory.GpuAttachment,
    "vm": inventory.Vm,
    "gap": inventory.Gap,
    "inventory": inventory.Inventory,
    "rule": results.Rule,
    "waiver": results.Waiver,
    "finding": results.Finding,
    "gpu_slots": results.GpuSlots,
    "placement": results.Placement,
    "host_failure": results.HostFailure,
    "simulation": results.ClusterSimulation,
    "rule_error": results.RuleError,
}


@pytest.mark.parametrize("name", sorted(SCHEMA_DEFS))
def test_schema_requires_only_fields_that_exist(name: str) -> None:
    """A field the schema requires must exist: removing or renaming one needs a new version."""
    fields = {f.name for f in dataclasses.fields(SCHEMA_DEFS[name])}
    required = set(report_schema()["$defs"][name]["required"])
    assert required <= fields, f"schema requires {sorted(required - fields)} on {name}"
    assert typing.get_type_hints(SCHEMA_DEFS[name])


def test_each_finding_leads_with_its_stable_id() -> None:
    result = ALL["realistic"]()
    doc = render_json(result)
    validate(doc)
    for data in doc["findings"]:
        assert next(iter(data)) == "id"
        # The id is documented as the SHA-256 of rule, kind and object, NUL-separated.
        key = "\0".join((data["rule"], data["object_kind"], data["object"]))
        assert data["id"] == hashlib.sha256(key.encode("utf-8")).hexdigest()
    edge = next(f for f in doc["findings"] if (f["rule"], f["object"]) == ("HA-03", "gpu-pt-edge"))
    expected = "HA-03\0cluster\0gpu-pt-edge"
    assert edge["id"] == hashlib.sha256(expected.encode()).hexdigest()
    assert len({f["id"] for f in doc["findings"]}) == len(doc["findings"])


def test_finding_ids_are_the_sarif_fingerprints() -> None:
    result = ALL["realistic"]()
    ids = {
        (f["rule"], f["object"]): f["id"]
        for f in render_json(result)["findings"]
        if f["status"] != "pass"
    }
    sarif = render_sarif(result)["runs"][0]["results"]
    fingerprints = {
        (r["ruleId"], r["locations"][0]["logicalLocations"][0]["name"]): r["partialFingerprints"][
            "gpuaudit/v1"
        ]
        for r in sarif
    }
    assert ids == fingerprints


def test_finding_id_stays_when_the_message_changes() -> None:
    result = ALL["realistic"]()
    before = render_json(result)["findings"][0]["id"]
    result.findings[0].message = "something else"
    result.findings[0].status = "pass"
    assert render_json(result)["findings"][0]["id"] == before


def test_a_report_without_ids_still_loads(tmp_path: Path) -> None:
    doc = render_json(ALL["realistic"]())
    for finding in doc["findings"]:
        del finding["id"]
    validate(doc)  # an earlier report, written before findings carried their id
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert render_json(load_json_report(path)) == render_json(ALL["realistic"]())


def test_schema_rejects_a_malformed_id() -> None:
    doc = render_json(ALL["realistic"]())
    doc["findings"][0]["id"] = "HA-03"
    with pytest.raises(jsonschema.ValidationError):
        validate(doc)


ID_GPU_B = "7c7704f6a9cb0f0e36bfbbfe95f427091b1b409a21d858ad463f5da8f7b5ab99"  # sha256, by hand


WAIVER = {
    "rule": "GPU-02",
    "object": "vdi*",
    "reason": "CAB-7",
    "owner": "ops",
    "expires": "2027-01-31",
}


RULES = [
    {
        "id": "HA-01",
        "title": "HA is on",
        "category": "ha",
        "severity": "critical",
        "rationale": "HA restarts GPU VMs.",
        "remediation": "Turn HA on.",
        "object_kind": "cluster",
        "references": [
            {"title": "vSphere HA", "url": "https://docs.example/ha"},
            {"title": "KB 2", "url": "https://kb.example/2"},
        ],
    },
    {
        "id": "GPU-02",
        "title": "Profiles fit",
        "category": "gpu",
        "severity": "medium",
        "rationale": "",
        "remediation": "",
        "object_kind": "vm",
        "references": [],
    },
]


def _finding(id_: str, rule: str, obj: str, kind: str, status: str, severity: str, **rest):
    return {
        "id": id_,
        "rule": rule,
        "object": obj,
        "object_kind": kind,
        "status": status,
        "severity": severity,
        "message": rest.get("message", ""),
        "cluster": rest.get("cluster"),
        "host": rest.get("host"),
        "evidence": rest.get("evidence", {}),
        "waiver": rest.get("waiver"),
        **(
            {"first_seen": rest["first_seen"], "age_days": rest["age_days"]}
            if "age_days" in rest
            else {}
        ),
    }


FINDINGS = [
    _finding(
        ID_HA_GPU_A,
        "HA-01",
        "gpu-a",
        "cluster",
        "fail",
        "critical",
        message="HA is off",
        cluster="gpu-a",
        evidence={"ha_enabled": False},
        first_seen="2026-11-01T00:00:00+00:00",
        age_days=30,
    ),
    _finding(
        ID_VDI,
        "GPU-02",
        "vdi 1/a%",
        "vm",
        "waived",
        "medium",
        cluster="gpu-a",
        host="esx-01.corp",
        waiver=WAIVER,
    ),
    _finding(
        ID_GPU_B,
        "HA-01",
        "gpu-b",
        "cluster",
        "pass",
        "critical",
        message="HA is on",
        cluster="gpu-b",
    ),
    _finding(
        ID_X99, "X-99", "esx-09.corp", "host", "fail", "low", message="odd", host="esx-09.corp"
    ),
    _finding(ID_DOTDOT, "GPU-02", "..", "vm", "waived", "high", message="dots"),
]


OLDER = "2026-11-30T10:00:00+00:00"


def _history() -> ScanHistory:
    return ScanHistory(
        previous_checked_at=OLDER,
        new=[
            FindingRef(ID_X99, "X-99", "esx-09.corp", "low", "fail"),
            FindingRef(ID_HA_GPU_A, "HA-01", "gpu-a", "critical", "fail"),
        ],
        resolved=[FindingRef("r1", "HA-01", "gpu-c", "high", "fail")],
        trend=[
            TrendPoint(OLDER, {"critical": 2}, {"gpu-a": 0}, {"gpu-a": {"L4": 2}}, unproven=3),
            TrendPoint("2026-12-01T10:30:00+00:00", {"critical": 1}, {"gpu-a": 1}, {}),
        ],
    )


def _kubernetes() -> KubernetesReport:
    return KubernetesReport(cluster="k1", source="kubeconfig", not_counted=["n2"])


def _full() -> AuditResult:
    return dataclasses.replace(
        small_result(),
        designs={"gpu-a": "B"},
        # Not the catalogue's own version, which a report left without one would take.
        rules_version="2025.01.1",
        policy_source="policy.yaml",
        waivers=[Waiver("GPU-02", "vdi*", "CAB-7", "ops", "2027-01-31")],
        expired_waivers=[Waiver("HA-01", "old", "gone", "me", "2026-01-01")],
        history=_history(),
        kubernetes=[_kubernetes()],
    )


def test_the_whole_document() -> None:
    result = _full()
    doc = render_json(result)
    summary = {
        **summarize(result).to_dict(),
        "since_last_scan": {
            "previous_checked_at": OLDER,
            # Sorted by rule, then object.
            "new": [
                {"id": ID_HA_GPU_A, "rule": "HA-01", "object": "gpu-a", "severity": "critical"},
                {"id": ID_X99, "rule": "X-99", "object": "esx-09.corp", "severity": "low"},
            ],
            "resolved": [{"id": "r1", "rule": "HA-01", "object": "gpu-c", "severity": "high"}],
            "newly_waived": [],
            "waiver_expired": [],
        },
    }
    assert doc == {
        "$schema": "https://gpuaudit.invalid/schemas/report-3.schema.json",
        "report_schema_version": 3,
        "generator": {"name": "gpuaudit", "version": "9.9.9"},
        "source": {
            "server": "vc01.corp.example",
            "vcenter": {
                "name": "vc01",
                "product": "",
                "version": "",
                "build": "",
                "api_version": "",
                "api_type": "",
                "instance_uuid": "",
                "vgpu_hotmigrate_enabled": None,
            },
            "collected_at": "2026-12-01T10:00:00Z",
            "checked_at": "2026-12-01T11:30:00+01:00",
        },
        "summary": summary,
        "rules_version": "2025.01.1",
        "rules": RULES,
        "findings": FINDINGS,
        "simulations": [],
        "designs": {"gpu-a": "B"},
        "policy": {
            "source": "policy.yaml",
            "waivers": [WAIVER],
            "expired_waivers": [
                {
                    "rule": "HA-01",
                    "object": "old",
                    "reason": "gone",
                    "owner": "me",
                    "expires": "2026-01-01",
                }
            ],
        },
        "errors": [{"rule": "DS-01", "error": "KeyError: 'x'"}],
        "inventory": small_inventory().to_dict(),
        "kubernetes": [
            {
                "cluster": "k1",
                "source": "kubeconfig",
                "nodes": [],
                "losses": [],
                "unmatched_gpu_vms": [],
                "not_counted": ["n2"],
                "k8s_02_holds": True,
            }
        ],
        "trend": [
            {
                "checked_at": OLDER,
                "failed": {"critical": 2},
                "tolerates": {"gpu-a": 0},
                "free_slots": {"gpu-a": {"L4": 2}},
                "unproven": 3,
                "notices": 0,
                "waived": 0,
            },
            {
                "checked_at": "2026-12-01T10:30:00+00:00",
                "failed": {"critical": 1},
                "tolerates": {"gpu-a": 1},
                "free_slots": {},
                "unproven": 0,
                "notices": 0,
                "waived": 0,
            },
        ],
    }
    # Each finding leads with its id.
    assert list(doc["findings"][0])[:2] == ["id", "rule"]


def test_without_history_kubernetes_or_tool_version_those_parts_are_absent() -> None:
    result = dataclasses.replace(small_result(), tool_version="")
    doc = render_json(result)
    assert "trend" not in doc and "kubernetes" not in doc
    assert "since_last_scan" not in doc["summary"]
    assert doc["generator"] == {"name": "gpuaudit", "version": gpuaudit.__version__}
    # An empty history still says there was none before.
    result.history = ScanHistory()
    doc = render_json(result)
    assert doc["trend"] == []
    assert doc["summary"]["since_last_scan"] == {
        "previous_checked_at": None,
        "new": [],
        "resolved": [],
        "newly_waived": [],
        "waiver_expired": [],
    }


def test_a_kubernetes_cluster_with_a_pending_pod_does_not_hold() -> None:
    k = KubernetesReport(
        cluster="k1",
        source="kc",
        losses=[HostLoss("esx-01.corp", ["n1"], [PodMove("ns/p", "n1", {"nvidia.com/gpu": 1})])],
    )
    (section,) = render_json(dataclasses.replace(small_result(), kubernetes=[k]))["kubernetes"]
    assert section["k8s_02_holds"] is False


def test_evidence_json_cannot_hold_is_made_plain() -> None:
    evidence = {
        "set": {10, 9},
        "frozen": frozenset({"b", "a"}),
        "tuple": (1, 2),
        "ref": Reference("t", "u"),
        "class": Reference,
        "path": Path("a") / "b",
    }
    f = Finding("R", "o", "vm", "fail", "low", "m", evidence=evidence)
    result = dataclasses.replace(small_result(), findings=[f], first_seen={})
    (finding,) = render_json(result)["findings"]
    assert finding["evidence"] == {
        "set": [10, 9],  # sorted as text: "10" before "9"
        "frozen": ["a", "b"],
        "tuple": [1, 2],
        "ref": {"title": "t", "url": "u"},
        "class": "<class 'gpuaudit.results.Reference'>",
        "path": "a/b",
    }


def test_nan_is_refused_not_written() -> None:
    f = Finding("R", "o", "vm", "fail", "low", "m", evidence={"x": float("nan")})
    result = dataclasses.replace(small_result(), findings=[f])
    with pytest.raises(ValueError):
        render_json(result)
    with pytest.raises(ValueError):
        dump_json(report_document(result))


def test_json_chunks_split_findings_and_inventory_objects_into_pieces() -> None:
    doc = {"a": [1, {"b": {"c": [2]}}], "d": "é", 1: 2}
    # A dict with a key that is not text is encoded whole, as JSON writes it.
    assert list(json_chunks(doc)) == ['{"a":[1,{"b":{"c":[2]}}],"d":"é","1":2}']
    doc = {"a": [1, {"b": {"c": [2]}}], "d": "é"}
    # A mapping two levels down (a finding in the findings list) is one piece.
    assert list(json_chunks(doc)) == [
        "{",
        '"a":',
        "[",
        "1",
        ",",
        '{"b":{"c":[2]}}',
        "]",
        ',"d":',
        '"é"',
        "}",
    ]
    assert dump_json(doc) == '{"a":[1,{"b":{"c":[2]}}],"d":"é"}'
    # A list two levels down (the inventory's VMs) is taken apart: one piece per VM.
    inventory = {"inventory": {"vms": [{"name": "a"}, {"name": "b"}]}}
    assert list(json_chunks(inventory)) == [
        "{",
        '"inventory":',
        "{",
        '"vms":',
        "[",
        '{"name":"a"}',
        ",",
        '{"name":"b"}',
        "]",
        "}",
        "}",
    ]
    assert list(json_chunks([], 0)) == ["[", "]"]
    assert list(json_chunks({}, 0)) == ["{", "}"]
    assert list(json_chunks([1], 3)) == ["[1]"]


def test_write_json_replaces_what_utf_8_cannot_hold() -> None:
    out = io.BytesIO()
    write_json({"name": "a\udcffé", "n": [1, 2]}, out)
    assert out.getvalue() == '{"name":"a?é","n":[1,2]}\n'.encode()


def test_the_report_is_written_as_render_json_gives_it() -> None:
    result = _full()
    out = io.BytesIO()
    write_json(report_document(result), out)
    assert json.loads(out.getvalue()) == render_json(result)


def test_the_shipped_schema() -> None:
    schema = report_schema()
    assert schema["$id"] == "https://gpuaudit.invalid/schemas/report-3.schema.json"
    assert schema["title"] == "gpuaudit report"


def test_a_report_reads_back_as_the_result_it_was(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(render_json(_full())), encoding="utf-8")
    expected = dataclasses.replace(_full(), history=None, kubernetes=[])
    assert load_json_report(path) == expected


def test_a_report_with_only_what_is_required_reads_back(tmp_path: Path) -> None:
    data = render_json(small_result())
    for key in ("policy", "errors", "designs"):
        del data[key]
    got = from_json_data(data)
    assert (got.policy_source, got.waivers, got.expired_waivers) == (None, [], [])
    assert (got.errors, got.designs) == ([], {})
    data["policy"] = {}
    got = from_json_data(data)
    assert (got.policy_source, got.waivers, got.expired_waivers) == (None, [], [])


def test_first_seen_dates_come_only_from_findings_that_carry_one() -> None:
    data = render_json(small_result())
    data["findings"][1]["first_seen"] = 5  # not a date: ignored
    data["findings"][3]["first_seen"] = "2026-10-01"
    assert from_json_data(data).first_seen == {
        ID_HA_GPU_A: "2026-11-01T00:00:00+00:00",
        ID_X99: "2026-10-01",
    }


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "a report is a JSON object"),
        ({}, "report_schema_version is missing or not a whole number"),
        ({"report_schema_version": True}, "report_schema_version is missing or not a whole number"),
        ({"report_schema_version": "1"}, "report_schema_version is missing or not a whole number"),
        (
            {"report_schema_version": 4},
            "report_schema_version 4 is newer than this gpuaudit reads (3); upgrade gpuaudit",
        ),
        ({"report_schema_version": 3}, "not a gpuaudit report: missing or malformed 'inventory'"),
        ({"report_schema_version": 2}, "not a gpuaudit report: missing or malformed 'inventory'"),
    ],
)
def test_what_is_not_a_report(data: object, message: str) -> None:
    with pytest.raises(ReportError) as caught:
        from_json_data(data)
    assert str(caught.value) == message


def test_a_broken_part_is_named() -> None:
    data = render_json(small_result())
    data["inventory"]["schema_version"] = "x"
    with pytest.raises(ReportError) as caught:
        from_json_data(data)
    assert str(caught.value) == "schema_version is missing or not a whole number"
    for key, part in [
        ("rules", "rules[]"),
        ("findings", "findings[]"),
        ("simulations", "simulations[]"),
        ("errors", "errors[]"),
    ]:
        data = render_json(small_result())
        data[key] = [{"bogus": 1}]
        with pytest.raises(ReportError) as caught:
            from_json_data(data)
        assert str(caught.value) == f"{part}: unknown field 'bogus'"
    for key, part in [
        ("waivers", "policy.waivers[]"),
        ("expired_waivers", "policy.expired_waivers[]"),
    ]:
        data = render_json(small_result())
        data["policy"][key] = [{"bogus": 1}]
        with pytest.raises(ReportError) as caught:
            from_json_data(data)
        assert str(caught.value) == f"{part}: unknown field 'bogus'"
    data = render_json(small_result())
    data["source"] = None
    with pytest.raises(ReportError) as caught:
        from_json_data(data)
    assert str(caught.value) == (
        "not a gpuaudit report: missing or malformed 'NoneType' object is not subscriptable"
    )
    data = render_json(small_result())
    data["designs"] = []
    with pytest.raises(ReportError) as caught:
        from_json_data(data)
    assert str(caught.value) == (
        "not a gpuaudit report: missing or malformed 'list' object has no attribute 'items'"
    )


def test_a_simulation_reads_back() -> None:
    data = render_json(small_result())
    data["simulations"] = [{"cluster": "gpu-a", "hosts": 1}]
    assert from_json_data(data).simulations == [ClusterSimulation(cluster="gpu-a", hosts=1)]


def test_what_cannot_be_read(tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    with pytest.raises(ReportError) as caught:
        load_json_report(missing)
    assert str(caught.value) == (
        f"{missing}: cannot read: [Errno 2] No such file or directory: '{missing}'"
    )
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(ReportError) as caught:
        load_json_report(broken)
    assert str(caught.value) == (
        f"{broken}: cannot read: Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)"
    )
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'"\xe9"')
    with pytest.raises(ReportError) as caught:
        load_json_report(str(latin))
    assert str(caught.value).startswith(f"{latin}: cannot read: 'utf-8' codec can't decode")


def test_a_finding_of_unknown_age_has_no_first_seen_field() -> None:
    # The schema and docs/report-formats.md: absent when unknown, never null.
    aged, waived, *_ = render_json(small_result())["findings"]
    assert (aged["first_seen"], aged["age_days"]) == ("2026-11-01T00:00:00+00:00", 30)
    assert "first_seen" not in waived and "age_days" not in waived
