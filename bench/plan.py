"""Planning on vSphere 8's largest cluster (bench/config_max.py): maintenance readiness of
every host and the headroom under N+1 of every profile, each timed on its own.

    python -m bench.plan [--runs N]

Each must stay under 10 s (docs/performance.md).
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import date

from bench.config_max import config_max_cluster
from gpuaudit.facts import Facts
from gpuaudit.plan.headroom import headroom_all
from gpuaudit.plan.maintenance import readiness_all
from gpuaudit.policy import Policy
from gpuaudit.rules.registry import Context
from gpuaudit.simulate import simulate_all

TARGET_S = 10.0


def measure(runs: int = 3) -> dict[str, float]:
    """The median seconds of each step, NVIDIA's data and the cluster loaded first."""
    inv = config_max_cluster()
    facts = Facts(inv)
    sims = {s.simulation.cluster: s for s in simulate_all(inv, facts)}  # loads the data once
    ctx = Context(facts=facts, policy=Policy.default(), simulations=sims, today=date(2026, 12, 1))
    times: dict[str, list[float]] = {"readiness_s": [], "headroom_s": []}
    for _ in range(runs):
        start = time.perf_counter()
        readiness_all(ctx)
        times["readiness_s"].append(time.perf_counter() - start)
        start = time.perf_counter()
        headroom_all(facts)
        times["headroom_s"].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    for name, seconds in measure(parser.parse_args().runs).items():
        verdict = "met" if seconds < TARGET_S else "NOT met"
        print(f"{name}: {seconds:.2f} s (target under {TARGET_S:.0f} s: {verdict})")


if __name__ == "__main__":
    main()
