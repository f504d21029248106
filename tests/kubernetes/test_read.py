"""scan --kubernetes: the kubectl List is checked against the Kubernetes object model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuaudit.cli.main import main
from gpuaudit.kubernetes.read import (
    KubernetesInputError,
    parse_cluster,
    parse_quantity,
    read_cluster,
)
from tests.conftest import CASSETTES
from tests.k8s.generate import kubectl_json, load, node_object, pod_object

TESTS = Path(__file__).resolve().parent.parent
HOLDS = TESTS / "k8s" / "a-holds.yaml"


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
    assert problem({"apiVersion": "v1", "kind": "List", "items": [node]}) == (
        "node n: status.allocatable[nvidia.com/gpu]: not a quantity "
        "(not a Kubernetes quantity): 'lots'"
    )


@pytest.mark.parametrize(
    ("quantity", "value"),
    [
        ("1", 1),
        ("+3", 3),
        ("-2", -2),
        ("1.", 1),
        (".5", 0),
        ("1.9", 1),  # the fraction dropped, as before
        ("2k", 2000),
        ("3m", 0),
        ("1500m", 1),
        ("4000000u", 4),
        ("5000000000n", 5),
        ("1M", 1_000_000),
        ("1G", 10**9),
        ("1T", 10**12),
        ("1P", 10**15),
        ("1E", 10**18),
        ("1Ki", 1024),
        ("1Mi", 1024**2),
        ("1Gi", 1024**3),
        ("1Ti", 1024**4),
        ("1Pi", 1024**5),
        ("7Ei", 7 * 1024**6),
        ("5e2", 500),
        ("5E2", 500),
        ("5e+2", 500),
        ("5000e-3", 5),
        ("1e-999999999", 0),
        ("0e2147483647", 0),
        ("9223372036854775807", 2**63 - 1),
        ("9.223372036854775807e18", 2**63 - 1),
        ("0.99999999999999999999999999999999", 0),  # exact: never rounded up to 1
        ("1" + "0" * 18, 10**18),
    ],
)
def test_quantities_are_read_by_kubernetes_grammar(quantity: str, value: int) -> None:
    assert parse_quantity(quantity) == value


@pytest.mark.parametrize(
    ("quantity", "reason"),
    [
        ("1e999999999", "larger than 9223372036854775807"),
        ("9223372036854775808", "larger than 9223372036854775807"),
        ("1e19", "larger than 9223372036854775807"),
        ("10E", "larger than 9223372036854775807"),
        ("8Ei", "larger than 9223372036854775807"),
        ("1" * 20 + "Ki", "larger than 9223372036854775807"),
        ("1e2147483648", "its exponent is beyond 32 bits"),
        ("1e-2147483648", "its exponent is beyond 32 bits"),
        ("1" * 65, "longer than 64 characters"),
        ("0." + "0" * 62 + "1", "longer than 64 characters"),
        ("", "not a Kubernetes quantity"),
        (" 1", "not a Kubernetes quantity"),
        ("1 ", "not a Kubernetes quantity"),
        ("1_000", "not a Kubernetes quantity"),
        ("NaN", "not a Kubernetes quantity"),
        ("Infinity", "not a Kubernetes quantity"),
        ("1ki", "not a Kubernetes quantity"),
        ("1Ki5", "not a Kubernetes quantity"),
        ("1e", "not a Kubernetes quantity"),
        ("1e1.5", "not a Kubernetes quantity"),
        ("0x10", "not a Kubernetes quantity"),
        ("١", "not a Kubernetes quantity"),  # an Arabic-Indic one: Decimal takes it
        (".", "not a Kubernetes quantity"),
    ],
)
def test_quantities_beyond_the_grammar_or_its_bounds_are_refused(
    quantity: str, reason: str
) -> None:
    with pytest.raises(ValueError) as caught:
        parse_quantity(quantity)
    assert str(caught.value) == reason


def test_a_huge_exponent_is_refused_at_once_naming_the_field(tmp_path: Path) -> None:
    pod = pod_object({"name": "train-0", "node": "n"})
    pod["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "1e999999999"}}
    bad = written(tmp_path, {"apiVersion": "v1", "kind": "List", "items": [pod]})
    args = ["scan", "--replay", str(CASSETTES / "scenario-a.yaml"), "--no-history"]
    args += ["-o", str(tmp_path / "out"), "-f", "json", "--kubernetes", str(bad)]
    done = subprocess.run(
        [sys.executable, "-m", "gpuaudit", *args],
        capture_output=True,
        text=True,
        timeout=120,  # reading 10**999999999 as a whole number took minutes
        env={**os.environ, "PYTHONPATH": str(TESTS.parent)},
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"gpuaudit: error: {bad}: pod inference/train-0: container main resources.limits"
        "[nvidia.com/gpu]: not a quantity (larger than 9223372036854775807): '1e999999999'"
    )


def test_json_nested_too_deeply_is_an_input_error(tmp_path: Path) -> None:
    deep = '{"apiVersion": "v1", "kind": "List", "items": [' + "[" * 100_000 + "]}"
    result = scan(tmp_path, written(tmp_path, deep))
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1].endswith("not valid JSON: nested too deeply")
    with pytest.raises(KubernetesInputError) as caught:
        parse_cluster('{"items": ' + '{"a": ' * 50_000, name="k8s")
    assert str(caught.value) == "not valid JSON: nested too deeply"


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
    assert "line 1: not valid JSON: Expecting value" in result.output


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
