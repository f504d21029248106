"""Write ``kubectl get nodes,pods --all-namespaces -o json`` for a Kubernetes scenario.

A scenario (tests/k8s/*.yaml) describes one Kubernetes cluster whose nodes are VMs of
a lab scenario (``lab_scenario``): each node's UUIDs are the VM's BIOS UUID as the
lab derives it (tests/lab/expected.py, ``uuid_from("vm-bios", name)``), so the
nodes match the VMs the lab serves.

    python -m tests.k8s.generate tests/k8s/a-holds.yaml > a-holds.json

A node's ``uuid`` says how it names its VM: ``both`` (providerID and systemUUID, the
default), ``provider`` (providerID only), ``system`` (systemUUID only) or
``swapped`` (systemUUID only, its first three groups byte-swapped). A node with
``vm: null`` has a UUID no lab VM has.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import yaml

from tests.lab.expected import uuid_from

HERE = Path(__file__).resolve().parent
SCENARIOS = sorted(HERE.glob("*.yaml"))


def load(path: str | Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(Path(path).read_text("utf-8"))
    return data


def swapped(text: str) -> str:
    """The UUID with its first three fields little-endian, as SMBIOS stores them."""
    return str(uuid.UUID(bytes_le=uuid.UUID(text).bytes))


def node_object(spec: dict[str, Any]) -> dict[str, Any]:
    name = spec["name"]
    vm = spec.get("vm", name)
    bios = uuid_from("vm-bios", vm) if vm else uuid_from("no-such-vm", name)
    how = spec.get("uuid", "both")
    system = {"both": bios, "system": bios, "swapped": swapped(bios)}.get(how, "")
    if how == "swapped":
        system = system.upper()  # as dmidecode prints it
    labels = {"kubernetes.io/hostname": name, **spec.get("labels", {})}
    if spec.get("product"):
        labels["nvidia.com/gpu.product"] = spec["product"]
    allocatable = {"cpu": "16", "memory": "64Gi", "pods": "110"}
    for resource, count in _resources(spec).items():
        allocatable[resource] = str(count)
    node_spec: dict[str, Any] = {}
    if how in ("both", "provider"):
        node_spec["providerID"] = f"vsphere://{bios}"
    if spec.get("taints"):
        node_spec["taints"] = spec["taints"]
    if spec.get("cordoned"):
        node_spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": node_spec,
        "status": {
            "allocatable": allocatable,
            "capacity": dict(allocatable),
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": uuid_from("boot", name),
                "containerRuntimeVersion": "containerd://1.7.22",
                "kernelVersion": "6.8.0-45-generic",
                "kubeProxyVersion": "v1.31.2",
                "kubeletVersion": "v1.31.2",
                "machineID": uuid_from("machine", name).replace("-", ""),
                "operatingSystem": "linux",
                "osImage": "Ubuntu 24.04.1 LTS",
                "systemUUID": system,
            },
        },
    }


def _resources(spec: dict[str, Any]) -> dict[str, int]:
    out = dict(spec.get("resources", {}))
    if spec.get("gpus"):
        out["nvidia.com/gpu"] = spec["gpus"]
    return out


def pod_object(spec: dict[str, Any]) -> dict[str, Any]:
    limits = {k: str(v) for k, v in _resources(spec).items()}
    container: dict[str, Any] = {"name": "main", "image": "registry.example/app:1"}
    if limits:
        container["resources"] = {"limits": limits}
    pod_spec: dict[str, Any] = {"containers": [container]}
    if spec.get("node"):
        pod_spec["nodeName"] = spec["node"]
    if spec.get("nodeSelector"):
        pod_spec["nodeSelector"] = spec["nodeSelector"]
    if spec.get("affinity"):
        pod_spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": t} for t in spec["affinity"]]
                }
            }
        }
    if spec.get("tolerations"):
        pod_spec["tolerations"] = spec["tolerations"]
    metadata: dict[str, Any] = {
        "name": spec["name"],
        "namespace": spec.get("namespace", "inference"),
    }
    if spec.get("daemonset"):
        metadata["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "name": spec["daemonset"],
                "uid": uuid_from("ds", spec["daemonset"]),
                "controller": True,
            }
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": pod_spec,
        "status": {"phase": spec.get("phase", "Running" if spec.get("node") else "Pending")},
    }


def kubectl_json(scenario: dict[str, Any]) -> dict[str, Any]:
    """The List that ``kubectl get nodes,pods --all-namespaces -o json`` writes."""
    items = [node_object(n) for n in scenario.get("nodes", [])]
    items += [pod_object(p) for p in scenario.get("pods", [])]
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


def write(scenario_path: str | Path, folder: Path) -> Path:
    """Write the scenario's kubectl JSON into ``folder``, named after the scenario."""
    out = folder / f"{Path(scenario_path).stem}.json"
    out.write_text(json.dumps(kubectl_json(load(scenario_path)), indent=2), "utf-8")
    return out


if __name__ == "__main__":
    json.dump(kubectl_json(load(sys.argv[1])), sys.stdout, indent=2)
    sys.stdout.write("\n")
