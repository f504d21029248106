"""Fleet summary input for the fleet report tests: one target's record as
`gpuaudit scan --targets` writes it (gpuaudit.jobs.fleet.fleet_json), written out by hand."""

from __future__ import annotations

from typing import Any

import yaml

from tests.lab.record import SCENARIOS


def fleet_target(name: str, verdict: str, **fields: Any) -> dict[str, Any]:
    """A target named ``name`` at vc-<name>.example that found, failed and wrote nothing,
    but for ``fields``."""
    return {
        "name": name,
        "server": f"vc-{name}.example",
        "verdict": verdict,
        "exit_code": 0,
        "error": None,
        "failed_by_severity": {},
        "passed": 0,
        "waived": 0,
        "hosts": 0,
        "gpus": 0,
        "gpu_vms": 0,
        "designs": {},
        "tolerates": {},
        "reports": [],
    } | fields


def scenario_size(scenario: str) -> tuple[int, int, int]:
    """(hosts, GPUs, VMs with a GPU) as the scenario file declares them."""
    data = yaml.safe_load((SCENARIOS / f"{scenario}.yaml").read_text())
    hosts: list[dict[str, Any]] = []
    vms: list[dict[str, Any]] = []
    for dc in data["datacenters"]:
        hosts += [h for c in dc.get("clusters", []) for h in c.get("hosts", [])]
        hosts += dc.get("standalone_hosts", [])
        vms += dc.get("vms", [])
    gpus = sum(len(h.get("gpus", [])) for h in hosts)
    return len(hosts), gpus, sum(1 for v in vms if v.get("gpus"))
