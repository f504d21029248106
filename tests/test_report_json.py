"""The JSON report: valid against its published schema, complete, and loadable again."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import typing
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from gpuaudit import inventory, results
from gpuaudit.report import (
    REPORT_SCHEMA_VERSION,
    ReportError,
    load_json_report,
    render_json,
    render_sarif,
    report_schema,
    write_reports,
)
from tests.support.report_fixtures import ALL, large_result

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
