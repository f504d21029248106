"""The generator's configuration-maximum estate has the vSphere 8 maximums' shape."""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.lab.generate import generate, generate_max, main
from tests.lab.scenario import normalise


@lru_cache(maxsize=2)
def _max(fraction: float) -> dict[str, Any]:
    return generate_max(fraction)


def _datacenter(fraction: float) -> dict[str, Any]:
    dc: dict[str, Any] = _max(fraction)["datacenters"][0]
    return dc


def _powered_on(vm: dict[str, Any]) -> bool:
    return vm.get("power", "poweredOn") == "poweredOn"


def test_hosts_and_clusters_are_the_maximums() -> None:
    clusters = _datacenter(1.0)["clusters"]
    sizes = [len(c["hosts"]) for c in clusters]
    assert sum(sizes) == 2500
    assert sizes[:-1] == [96] * 26  # 26 full clusters ...
    assert sizes[-1] == 4  # ... and the 4 hosts left over
    gpus = [g for c in clusters for h in c["hosts"] for g in h["gpus"]]
    assert len(gpus) == 10_000


def test_vms_are_the_maximums() -> None:
    vms = _datacenter(1.0)["vms"]
    assert len(vms) == 45_000
    on = sum(1 for vm in vms if _powered_on(vm))
    assert 39_000 <= on <= 40_000
    assert sum(1 for vm in vms if vm.get("gpus")) == 18_000  # 40 %


def test_every_gpu_kind_appears() -> None:
    dc = _datacenter(1.0)
    modes = Counter(
        g.get("vgpu_mode", "passthrough" if "passthrough" in g else "")
        for c in dc["clusters"]
        for h in c["hosts"]
        for g in h["gpus"]
    )
    assert set(modes) == {"sameSize", "multiInstanceGpu", "passthrough"}
    kinds = Counter(next(iter(vm["gpus"][0])) for vm in dc["vms"] if vm.get("gpus"))
    assert set(kinds) == {"vgpu", "passthrough", "dynamic"}
    profiles = {vm["gpus"][0]["vgpu"] for vm in dc["vms"] if "vgpu" in vm.get("gpus", [{}])[0]}
    mig = {p for p in profiles if p.startswith("grid_a100d-")}
    assert mig == {"grid_a100d-1-10c", "grid_a100d-2-20c", "grid_a100d-3-40c", "grid_a100d-7-80c"}


def test_each_cluster_has_a_required_vm_host_rule_and_an_anti_affinity_rule() -> None:
    for cluster in _datacenter(1.0)["clusters"]:
        if len(cluster["hosts"]) < 2:
            continue
        kinds = {(r["kind"], r.get("mandatory", False)) for r in cluster["rules"]}
        assert kinds == {("vm-host", True), ("anti-affinity", False)}, cluster["name"]


@pytest.mark.parametrize(("fraction", "hosts", "clusters", "vms"), [(0.25, 625, 7, 11_250)])
def test_a_fraction_keeps_the_shape(fraction: float, hosts: int, clusters: int, vms: int) -> None:
    dc = _datacenter(fraction)
    assert len(dc["clusters"]) == clusters
    assert sum(len(c["hosts"]) for c in dc["clusters"]) == hosts
    assert max(len(c["hosts"]) for c in dc["clusters"]) == 96
    assert len(dc["vms"]) == vms


def test_the_lab_loader_accepts_the_quarter() -> None:
    scenario = normalise(_max(0.25))
    assert len(scenario["datacenters"][0]["vms"]) == 11_250


def test_the_default_estate_is_unchanged_by_the_new_options() -> None:
    # Same arguments, same scenario: the benchmark's and the large estate's figures
    # stay comparable with those measured before.
    plain = generate(3, 4, 4, 120)
    assert plain == generate(3, 4, 4, 120, designs=("vgpu", "passthrough", "dynamic"))
    assert all("rules" not in c for c in plain["datacenters"][0]["clusters"])
    assert sum(1 for vm in plain["datacenters"][0]["vms"] if vm.get("gpus")) == 48


def test_the_command_line_writes_the_maximum(tmp_path: Path) -> None:
    out = tmp_path / "max.yaml"
    assert main(["--max", "0.25", "-o", str(out)]) == 0
    dc = yaml.safe_load(out.read_text(encoding="utf-8"))["datacenters"][0]
    assert sum(len(c["hosts"]) for c in dc["clusters"]) == 625
    assert len(dc["vms"]) == 11_250
