"""The Kubernetes section of the reports: JSON (and its schema), workbook and HTML."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from gpuaudit.check import run_checks
from gpuaudit.kube_read import read_cluster
from gpuaudit.report import write_reports
from gpuaudit.report.json_report import render_json, report_schema
from gpuaudit.results import AuditResult
from tests.conftest import SCENARIOS
from tests.k8s.generate import SCENARIOS as K8S_SCENARIOS
from tests.k8s.generate import write
from tests.lab.expected import expected_inventory
from tests.lab.scenario import load_scenario


@pytest.fixture(scope="module")
def capacity(tmp_path_factory: pytest.TempPathFactory) -> AuditResult:
    [path] = [p for p in K8S_SCENARIOS if p.stem == "a-capacity"]
    cluster = read_cluster(write(path, tmp_path_factory.mktemp("k8s")))
    inventory = expected_inventory(load_scenario(SCENARIOS / "scenario-a.yaml"))
    return run_checks(inventory, kubernetes=[cluster])


def test_the_json_report_carries_the_section_and_validates(capacity: AuditResult) -> None:
    doc = render_json(capacity)
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    [section] = doc["kubernetes"]
    assert section["cluster"] == "a-capacity"
    assert section["k8s_02_holds"] is False
    hosts = {n["node"]: n["host"] for n in section["nodes"]}
    assert hosts["cv-inference-02"] == "gpu-node-02.edge.local"
    first = section["losses"][0]
    assert first["host"] == "gpu-node-01.edge.local"
    assert first["moves"] == [
        {
            "pod": "inference/detector-0",
            "from_node": "cv-inference-01",
            "requests": {"nvidia.com/gpu": 1},
            "to_node": None,
            "reason": "no node it may use has 1 nvidia.com/gpu free",
        }
    ]


def test_a_report_without_kubernetes_input_has_no_section() -> None:
    inventory = expected_inventory(load_scenario(SCENARIOS / "scenario-a.yaml"))
    assert "kubernetes" not in render_json(run_checks(inventory))


def test_the_written_json_report_validates(capacity: AuditResult, tmp_path: Path) -> None:
    (path,) = write_reports(capacity, tmp_path, ["json"], "vc")
    doc = json.loads(path.read_text("utf-8"))
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
