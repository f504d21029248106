"""The Kubernetes scenarios (tests/k8s/*.yaml) against their lab scenarios: each node
finds its VM, and K8S-01, K8S-02, K8S-04 and DS-01 say what the scenario expects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuaudit.cli.main import main
from gpuaudit.kubernetes.read import read_cluster
from gpuaudit.results import AuditResult, Finding
from gpuaudit.verdict.check import run_checks
from tests.conftest import CASSETTES, SCENARIOS
from tests.k8s.generate import SCENARIOS as K8S_SCENARIOS
from tests.k8s.generate import load, write
from tests.lab.expected import expected_inventory
from tests.lab.scenario import load_scenario

NAMES = [p.stem for p in K8S_SCENARIOS]


def audit(name: str, tmp_path: Path) -> tuple[dict[str, Any], AuditResult]:
    scenario = load(Path(K8S_SCENARIOS[NAMES.index(name)]))
    inventory = expected_inventory(load_scenario(SCENARIOS / f"{scenario['lab_scenario']}.yaml"))
    cluster = read_cluster(write(K8S_SCENARIOS[NAMES.index(name)], tmp_path))
    return scenario, run_checks(inventory, kubernetes=[cluster])


def finding(result: AuditResult, rule: str, obj: str) -> Finding:
    [found] = [f for f in result.findings if f.rule == rule and f.object == obj]
    return found


@pytest.mark.parametrize("name", NAMES)
def test_k8s01_and_k8s02_give_the_scenarios_verdicts(name: str, tmp_path: Path) -> None:
    scenario, result = audit(name, tmp_path)
    expect = scenario["expect"]
    assert finding(result, "K8S-01", name).status == expect["k8s01"]
    assert finding(result, "K8S-02", name).status == expect["k8s02"]


@pytest.mark.parametrize(
    "name", [n for n in NAMES if "moves" in load(K8S_SCENARIOS[NAMES.index(n)])["expect"]]
)
def test_each_host_loss_moves_the_pods_where_the_scenario_says(name: str, tmp_path: Path) -> None:
    scenario, result = audit(name, tmp_path)
    [report] = result.kubernetes
    got = {loss.host: {m.pod: m.to_node for m in loss.moves} for loss in report.losses}
    assert got == scenario["expect"]["moves"]
    assert all(loss.proven for loss in report.losses)


def test_capacity_failure_says_no_gpu_is_free(tmp_path: Path) -> None:
    _, result = audit("a-capacity", tmp_path)
    message = finding(result, "K8S-02", "a-capacity").message
    assert (
        "the loss of gpu-node-01.edge.local leaves 1 GPU pod pending: inference/detector-0"
        in message
    )
    [report] = result.kubernetes
    assert report.losses[0].moves[0].reason == "no node it may use has 1 nvidia.com/gpu free"


def test_selector_failure_names_the_free_node_its_filters_keep_it_off(tmp_path: Path) -> None:
    _, result = audit("a-selector", tmp_path)
    [report] = result.kubernetes
    reasons = {m.pod: m.reason for loss in report.losses for m in loss.moves}
    assert reasons["inference/detector-0"] == (
        "no node it may use has 1 nvidia.com/gpu free; "
        "kept off cv-inference-03 (nodeSelector pool=inference)"
    )
    assert reasons["inference/detector-1"].endswith(
        "kept off cv-inference-03 (required node affinity)"
    )


def test_nodes_match_by_provider_id_by_system_uuid_and_by_its_byte_swapped_form(
    tmp_path: Path,
) -> None:
    scenario, result = audit("a-swapped", tmp_path)
    [report] = result.kubernetes
    got = {r.node: [r.vm, r.matched_by] for r in report.nodes}
    assert got == scenario["expect"]["matched"]
    assert report.unmatched_gpu_vms == scenario["expect"]["unmatched_gpu_vms"]


@pytest.mark.parametrize("name", ["a-swapped", "b-concentrated"])
def test_k8s04_fails_for_nodes_without_a_powered_on_vm(name: str, tmp_path: Path) -> None:
    scenario, result = audit(name, tmp_path)
    failed = sorted(
        f.object.split("/", 1)[1]
        for f in result.findings
        if f.rule == "K8S-04" and f.status == "fail"
    )
    assert failed == scenario["expect"]["k8s04_fail"]


def test_k8s01_names_the_host_that_carries_most_gpu_nodes(tmp_path: Path) -> None:
    scenario, result = audit("b-concentrated", tmp_path)
    message = finding(result, "K8S-01", "b-concentrated").message
    assert message.startswith(f"{scenario['expect']['concentrated']} carries 2 of the 3 GPU nodes")


@pytest.mark.parametrize("name", ["a-holds", "a-capacity"])
def test_ds01_says_whether_kubernetes_rescheduling_holds(name: str, tmp_path: Path) -> None:
    scenario, result = audit(name, tmp_path)
    ds01 = finding(result, "DS-01", "scen-a")
    assert ds01.evidence["scenario"] == scenario["expect"]["design"]
    holds = scenario["expect"]["k8s02"] == "pass"
    assert ds01.evidence["kubernetes"] == {"checked": True, "k8s_02_holds": {name: holds}}
    said = "K8S-02 holds" if holds else "K8S-02 fails (the loss of"
    assert f"Kubernetes cluster {name}: {said}" in ds01.message


def test_ds01_says_the_assumption_is_unchecked_without_kubernetes_input() -> None:
    inventory = expected_inventory(load_scenario(SCENARIOS / "scenario-a.yaml"))
    result = run_checks(inventory)
    ds01 = finding(result, "DS-01", "scen-a")
    assert "that Kubernetes reschedules the GPU pods of a lost host is unchecked" in ds01.message
    assert ds01.evidence["kubernetes"] == {"checked": False}
    assert not [f for f in result.findings if f.rule.startswith("K8S-")]


def test_scan_replays_a_cassette_with_a_kubernetes_file(tmp_path: Path) -> None:
    path = write(K8S_SCENARIOS[NAMES.index("a-capacity")], tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "scan",
            "--replay",
            str(CASSETTES / "scenario-a.yaml"),
            "--kubernetes",
            str(path),
            "-o",
            str(out),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 1, result.output  # K8S-02 fails at high
    [report] = out.glob("*.json")
    data = json.loads(report.read_text("utf-8"))
    k8s02 = [f for f in data["findings"] if f["rule"] == "K8S-02"]
    assert [f["status"] for f in k8s02] == ["fail"]
    assert data["kubernetes"][0]["cluster"] == "a-capacity"


@pytest.mark.parametrize(
    "name", [n for n in NAMES if "k8s03" in load(K8S_SCENARIOS[NAMES.index(n)])["expect"]]
)
def test_k8s03_passes_only_where_drs_keeps_each_pair_of_gpu_workers_apart(
    name: str, tmp_path: Path
) -> None:
    scenario, result = audit(name, tmp_path)
    found = finding(result, "K8S-03", name)
    assert found.status == scenario["expect"]["k8s03"]
    if "not_kept_apart" in scenario["expect"]:
        assert found.evidence["not_kept_apart"] == scenario["expect"]["not_kept_apart"]


def test_k8s03_says_drs_is_off(tmp_path: Path) -> None:
    _, result = audit("a-holds", tmp_path)
    message = finding(result, "K8S-03", "a-holds").message
    assert message == "scen-a: DRS is off, so no VM-VM rule keeps them apart"
