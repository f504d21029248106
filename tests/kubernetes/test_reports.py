"""The Kubernetes section of the reports: JSON (and its schema), workbook and HTML."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from gpuaudit.kubernetes.read import read_cluster
from gpuaudit.report import write_reports
from gpuaudit.report.json_report import render_json, report_schema
from gpuaudit.results import AuditResult
from gpuaudit.verdict.check import run_checks
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


def sheet(result: AuditResult, title: str) -> list[tuple[object, ...]]:
    import io

    from openpyxl import load_workbook

    from gpuaudit.report.xlsx import render_xlsx

    wb = load_workbook(io.BytesIO(render_xlsx(result)), read_only=True)
    return [tuple(row) for row in wb[title].iter_rows(values_only=True)]


def test_the_workbook_has_a_nodes_sheet_with_each_nodes_host(capacity: AuditResult) -> None:
    rows = sheet(capacity, "K8s Nodes")
    header = rows[0]
    node, host, vm = header.index("Node"), header.index("ESXi Host"), header.index("VM")
    got = {r[node]: (r[vm], r[host]) for r in rows[1:]}
    assert got["cv-inference-03"] == ("cv-inference-03", "gpu-node-03.edge.local")
    assert got["k8s-worker-cpu-01"] == ("k8s-worker-cpu-01", "cpu-buffer-01.edge.local")


def test_the_workbook_lists_each_displaced_pod_and_whether_it_stays_pending(
    capacity: AuditResult,
) -> None:
    rows = sheet(capacity, "K8s Displaced Pods")
    header = rows[0]
    pod, host, pending = header.index("Pod"), header.index("Failed Host"), header.index("Pending")
    got = [(r[host], r[pod], r[pending]) for r in rows[1:]]
    assert got == [
        ("gpu-node-01.edge.local", "inference/detector-0", True),
        ("gpu-node-02.edge.local", "inference/detector-1", True),
        ("gpu-node-03.edge.local", "inference/detector-2", True),
    ]


def test_a_workbook_without_kubernetes_input_has_no_kubernetes_sheets() -> None:
    import io

    from openpyxl import load_workbook

    from gpuaudit.report.xlsx import render_xlsx

    inventory = expected_inventory(load_scenario(SCENARIOS / "scenario-a.yaml"))
    wb = load_workbook(io.BytesIO(render_xlsx(run_checks(inventory))), read_only=True)
    assert not [s for s in wb.sheetnames if s.startswith("K8s")]


def test_the_html_report_shows_each_hosts_nodes_and_where_their_pods_go(
    capacity: AuditResult, tmp_path: Path
) -> None:
    from gpuaudit.report.html import render_html

    html = render_html(capacity)
    section = html[html.index('<section id="kubernetes">') :]
    section = section[: section.index("</section>")]
    assert "a-capacity" in section and "K8S-02 fails" in section
    row = section[section.index("<td>gpu-node-02.edge.local</td>") :]
    row = row[: row.index("</tr>")]
    assert "<td>cv-inference-02</td>" in row
    assert "inference/detector-1: <strong>stays pending</strong>" in row


def test_an_html_report_without_kubernetes_input_has_no_section() -> None:
    from gpuaudit.report.html import render_html

    inventory = expected_inventory(load_scenario(SCENARIOS / "scenario-a.yaml"))
    assert 'id="kubernetes"' not in render_html(run_checks(inventory))
