"""scan --kubernetes: the kubectl List is checked against the Kubernetes object model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuaudit.cli import main
from gpuaudit.kube_read import KubernetesInputError, parse_cluster, read_cluster
from tests.conftest import CASSETTES
from tests.k8s.generate import kubectl_json, load, node_object, pod_object

HERE = Path(__file__).resolve().parent
HOLDS = HERE / "k8s" / "a-holds.yaml"


def scan(tmp_path: Path, *files: Path) -> Any:
    args = ["scan", "--replay", str(CASSETTES / "scenario-a.yaml"), "-o", str(tmp_path / "out")]
    for f in files:
        args += ["--kubernetes", str(f)]
    return CliRunner().invoke(main, [*args, "--format", "json"])


def written(tmp_path: Path, data: Any, name: str = "k8s.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), "utf-8")
    return path


def problem(data: Any) -> str:
    with pytest.raises(KubernetesInputError) as caught:
        parse_cluster(json.dumps(data), name="k8s")
    return str(caught.value)


def test_the_generated_list_is_read_with_its_gpu_resources_and_scheduling_fields(
    tmp_path: Path,
) -> None:
    cluster = read_cluster(written(tmp_path, kubectl_json(load(HOLDS)), "prod.json"))
    assert cluster.name == "prod"
    assert [n.name for n in cluster.nodes][:3] == [
        "cv-inference-01",
        "cv-inference-02",
        "cv-inference-03",
    ]
    assert cluster.nodes[0].allocatable == {"nvidia.com/gpu": 1}  # cpu and memory dropped
    assert cluster.nodes[3].taints[0].key == "node-role.kubernetes.io/control-plane"
    pods = {p.key: p for p in cluster.pods}
    assert pods["inference/detector-0"].requests == {"nvidia.com/gpu": 1}
    assert pods["gpu-operator/nvidia-device-plugin-a"].daemonset


def test_mig_resources_requests_and_init_containers_are_counted() -> None:
    pod = pod_object({"name": "p", "node": "n"})
    pod["spec"]["containers"] = [
        {"name": "a", "resources": {"limits": {"nvidia.com/mig-1g.10gb": "1", "cpu": "2"}}},
        {
            "name": "b",
            "resources": {
                "requests": {"nvidia.com/mig-1g.10gb": "2"},
                "limits": {"nvidia.com/mig-1g.10gb": "2"},
            },
        },
    ]
    pod["spec"]["initContainers"] = [
        {"name": "init", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    ]
    node = node_object({"name": "n", "resources": {"nvidia.com/mig-3g.40gb": 2}})
    listed = {"apiVersion": "v1", "kind": "List", "items": [node, pod]}
    cluster = parse_cluster(json.dumps(listed), name="c")
    assert cluster.pods[0].requests == {"nvidia.com/mig-1g.10gb": 3, "nvidia.com/gpu": 1}
    assert cluster.nodes[0].allocatable == {"nvidia.com/mig-3g.40gb": 2}


def test_a_node_list_and_a_pod_list_are_read_too() -> None:
    nodes = {"apiVersion": "v1", "kind": "NodeList", "items": [node_object({"name": "n1"})]}
    node = {k: v for k, v in nodes["items"][0].items() if k not in ("kind", "apiVersion")}
    cluster = parse_cluster(json.dumps({**nodes, "items": [node]}), name="c")
    assert [n.name for n in cluster.nodes] == ["n1"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"kind": "Pod", "apiVersion": "v1"}, 'not a Kubernetes List (kind "List"'),
        ([1, 2], "not a Kubernetes List"),
        ({"kind": "List", "apiVersion": "v2", "items": []}, "apiVersion is 'v2'"),
        ({"kind": "List", "apiVersion": "v1", "items": {}}, '"items" is not a list'),
        (
            {"kind": "List", "apiVersion": "v1", "items": [{"kind": "Service", "metadata": {}}]},
            "item 0: kind 'Service' is neither Node nor Pod",
        ),
        (
            {
                "kind": "List",
                "apiVersion": "v1",
                "items": [{"kind": "Pod", "metadata": {"name": 5}}],
            },
            "item 0 (Pod): V1ObjectMeta: name: Input should be a valid string",
        ),
        (
            {
                "kind": "List",
                "apiVersion": "v1",
                "items": [{"kind": "Pod", "metadata": {"name": "p"}, "spec": {}}],
            },
            "item 0 (Pod): V1PodSpec: containers:",
        ),
        (
            {
                "kind": "List",
                "apiVersion": "v1",
                "items": [{"kind": "Node", "spec": {"taints": [{"effect": "NoSchedule"}]}}],
            },
            "item 0 (Node): V1Taint: key:",
        ),
        (
            {"kind": "List", "apiVersion": "v1", "items": [{"kind": "Node", "metadata": {}}]},
            "item 0 (Node): no metadata.name",
        ),
    ],
)
def test_a_file_that_is_not_kubectls_list_is_refused_in_one_line(data: Any, expected: str) -> None:
    said = problem(data)
    assert expected in said
    assert "\n" not in said


def test_a_bad_quantity_is_refused() -> None:
    node = node_object({"name": "n", "gpus": 1})
    node["status"]["allocatable"]["nvidia.com/gpu"] = "lots"
    assert "nvidia.com/gpu: not a quantity: 'lots'" in problem(
        {"apiVersion": "v1", "kind": "List", "items": [node]}
    )


def test_scan_refuses_a_bad_file_with_exit_2_and_one_line_naming_it(tmp_path: Path) -> None:
    bad = written(tmp_path, {"kind": "List", "apiVersion": "v1", "items": [{"kind": "Secret"}]})
    result = scan(tmp_path, bad)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines[-1] == f"gpuaudit: error: {bad}: item 0: kind 'Secret' is neither Node nor Pod"
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_scan_refuses_a_file_that_is_not_json(tmp_path: Path) -> None:
    result = scan(tmp_path, written(tmp_path, "nodes:\n- a\n"))
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].startswith("gpuaudit: error: ")
    assert "not JSON" in result.output


def test_scan_refuses_a_missing_file(tmp_path: Path) -> None:
    result = scan(tmp_path, tmp_path / "absent.json")
    assert result.exit_code == 2
    assert "absent.json" in result.output


def test_a_fleet_scan_refuses_kubernetes_files(tmp_path: Path) -> None:
    targets = written(tmp_path, "targets: []\n", "targets.yaml")
    k8s = written(tmp_path, kubectl_json(load(HOLDS)))
    result = CliRunner().invoke(main, ["scan", "--targets", str(targets), "--kubernetes", str(k8s)])
    assert result.exit_code == 2
    assert "--targets cannot be combined with --kubernetes" in result.output
