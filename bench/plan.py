"""Planning on vSphere 8's largest cluster (bench/config_max.py): maintenance readiness of
every host (as built, and with the DRS option that lets DRS evacuate vGPU VMs), the
headroom under N+1 of every profile, the stranded capacity of every GPU, and a what-if
(one host retired), each timed on its own.

    python -m bench.plan [--runs N]

Each must stay under 10 s (docs/performance.md).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from collections.abc import Callable
from datetime import date

from bench.config_max import config_max_cluster
from gpuaudit.inventory import Inventory
from gpuaudit.model.facts import Facts
from gpuaudit.model.policy import Policy
from gpuaudit.plan.headroom import headroom_all
from gpuaudit.plan.maintenance import readiness_all
from gpuaudit.plan.stranded import stranded_all
from gpuaudit.results import ClusterHeadroom, ClusterMaintenance
from gpuaudit.rules.registry import Context
from gpuaudit.simulation.failures import simulate_all

TARGET_S = 10.0
TODAY = date(2026, 12, 1)
RETIRED = "esx000"  # the host the what-if retires


def context(inv: Inventory) -> Context:
    facts = Facts(inv)
    sims = {s.simulation.cluster: s for s in simulate_all(inv, facts)}
    return Context(facts=facts, policy=Policy.default(), simulations=sims, today=TODAY)


def with_drs_evacuation(inv: Inventory) -> Inventory:
    """A copy whose cluster lets DRS evacuate vGPU VMs (VgpuMMAutomationTimeoutSecs=-1,
    Broadcom KB 88271): readiness then places every vGPU VM, the costly case."""
    out = copy.deepcopy(inv)
    for c in out.clusters:
        c.drs_enabled, c.drs_automation = True, "fullyAutomated"
        c.drs_options = {**c.drs_options, "VgpuMMAutomationTimeoutSecs": "-1"}
    return out


def retire(inv: Inventory, host: str) -> Inventory:
    """A copy without ``host`` and the VMs it runs: a what-if that retires the host."""
    out = copy.deepcopy(inv)
    gone = {vm.name for vm in out.vms if vm.host == host}
    out.hosts = [h for h in out.hosts if h.name != host]
    out.vms = [vm for vm in out.vms if vm.name not in gone]
    for c in out.clusters:
        for r in c.vm_host_rules:
            r.vms = [v for v in r.vms if v not in gone]
            r.hosts = [h for h in r.hosts if h != host]
        for rule in c.vm_vm_rules:
            rule.vms = [v for v in rule.vms if v not in gone]
    return out


def what_if(inv: Inventory) -> tuple[list[ClusterMaintenance], list[ClusterHeadroom]]:
    """Retire one host and answer again what a plan shows after the change: the
    simulation's N+k, the readiness of every host and the headroom under N+1."""
    ctx = context(retire(inv, RETIRED))
    return readiness_all(ctx), headroom_all(ctx.facts)


def measure(runs: int = 3) -> dict[str, float]:
    """The median seconds of each step, NVIDIA's data and the cluster loaded first: wall
    clock (``_s``) and this process's CPU time (``_cpu_s``), which other processes on a
    shared machine slow far less."""
    inv = config_max_cluster()
    ctx = context(inv)  # loads NVIDIA's data once
    drs_ctx = context(with_drs_evacuation(inv))
    steps: dict[str, Callable[[], object]] = {
        "readiness_s": lambda: readiness_all(ctx),
        "readiness_drs_s": lambda: readiness_all(drs_ctx),
        "headroom_s": lambda: headroom_all(ctx.facts),
        "stranded_s": lambda: stranded_all(ctx.facts),
        "whatif_retire_host_s": lambda: what_if(inv),
    }
    times: dict[str, list[float]] = {}
    for _ in range(runs):
        for name, step in steps.items():
            start, cpu = time.perf_counter(), time.process_time()
            step()
            times.setdefault(name, []).append(time.perf_counter() - start)
            times.setdefault(name[:-2] + "_cpu_s", []).append(time.process_time() - cpu)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    for name, seconds in measure(parser.parse_args().runs).items():
        verdict = "met" if seconds < TARGET_S else "NOT met"
        print(f"{name}: {seconds:.2f} s (target under {TARGET_S:.0f} s: {verdict})")


if __name__ == "__main__":
    main()
