"""One measured run in a fresh process, so that its peak resident memory is its own.

    python -m bench.worker '{"kind": "gpuaudit", "url": ..., "user": ..., "password": ...}'

prints one JSON line: per phase, the wall time, the CPU time, the SOAP requests and
bytes received, and the process's peak resident set size at the end of the phase
(ru_maxrss: a high-water mark, so each figure includes the phases before it).

With ``"profile": true`` each phase also runs under cProfile, and the result
carries, per phase, the functions that spent the most time in their own code, with
their share of the phase. cProfile slows the code it watches, unevenly, so the
shares are the figures to read, not the seconds of such a run.
"""

from __future__ import annotations

import cProfile
import gc
import json
import pstats
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import counting

# The formats of a default scan first; the full-scan figure adds up these three.
SCAN_FORMATS = ("html", "xlsx", "json")
FORMATS = (*SCAN_FORMATS, "junit", "sarif")


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


PROFILE_TOP = 8  # functions kept per phase: enough to see where the time goes


def _where(filename: str, line: int, function: str) -> str:
    """A function's name without this machine's paths: package-relative file, line, name."""
    if filename == "~":  # a built-in: cProfile gives its name in the function field
        return function
    path = filename.replace("\\", "/")
    if "/site-packages/" in path:
        path = path.rsplit("/site-packages/", 1)[1]
    elif "/lib/python3" in path:  # the standard library, without lib/python3.N/
        path = path.rsplit("/lib/python3", 1)[1].split("/", 1)[-1]
    else:
        for package in ("/gpuaudit/", "/bench/", "/tests/"):
            if package in path:
                path = package[1:] + path.rsplit(package, 1)[1]
                break
        else:
            path = path.rsplit("/", 1)[-1]
    return f"{path}:{line}({function})"


def top_functions(profile: cProfile.Profile, top: int = PROFILE_TOP) -> dict[str, Any]:
    """The ``top`` functions by own time, each with its share of the profiled total."""
    entries = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = sum(tt for _, _, tt, _, _ in entries.values()) or 1.0
    ranked = sorted(entries.items(), key=lambda item: item[1][2], reverse=True)[:top]
    return {
        "profiled_s": total,
        "top": [
            {"function": _where(*key), "calls": calls, "share": tt / total}
            for key, (_, calls, tt, _, _) in ranked
        ],
    }


class Phases:
    def __init__(self, profile: bool = False) -> None:
        self.results: dict[str, dict[str, Any]] = {}
        self.profile = profile
        self.profiles: dict[str, dict[str, Any]] = {}

    def run(self, name: str, action: Callable[[], Any]) -> Any:
        gc.collect()
        before = counting.TRAFFIC.snapshot()
        profiler = cProfile.Profile() if self.profile else None
        cpu, start = time.process_time(), time.perf_counter()
        value = action() if profiler is None else profiler.runcall(action)
        wall = time.perf_counter() - start
        cpu = time.process_time() - cpu
        if profiler is not None:
            self.profiles[name] = top_functions(profiler)
        self.results[name] = {
            "wall_s": wall,
            "cpu_s": cpu,
            "peak_rss_mib": _peak_mib(),
            **counting.TRAFFIC.since(before),
        }
        return value


# The collector's steps, timed by wrapping the names collect() calls them by.
COLLECT_STEPS = {
    "retrieve": "property retrieval (inventory)",
    "_read_devices": "device lists of the VMs that may hold a GPU",
    "_hotmigrate": "advanced setting",
    "_assemble": "assembly into the inventory",
    "collect_operations": "telemetry and licences",
    "_version_gaps": "version gaps",
}


def _time_collect_steps() -> dict[str, dict[str, Any]]:
    """Wrap the steps of gpuaudit.vsphere.collect.collect; return where their figures will go."""
    module = sys.modules["gpuaudit.vsphere.collect"]
    steps: dict[str, dict[str, Any]] = {}
    for name in COLLECT_STEPS:
        original = getattr(module, name, None)
        if not callable(original):
            continue

        def timed(*args: Any, _name: str = name, _f: Any = original, **kwargs: Any) -> Any:
            before = counting.TRAFFIC.snapshot()
            start = time.perf_counter()
            try:
                return _f(*args, **kwargs)
            finally:
                step = steps.setdefault(_name, {"wall_s": 0.0, "bytes_received": 0})
                step["wall_s"] += time.perf_counter() - start
                traffic = counting.TRAFFIC.since(before)
                step["bytes_received"] += traffic["bytes_received"]
                step["operations"] = traffic["operations"]

        setattr(module, name, timed)
    return steps


def _server(args: dict[str, Any]) -> Any:
    from gpuaudit.vsphere import connect

    return connect.parse_server(args["url"])


def run_gpuaudit(args: dict[str, Any]) -> dict[str, Any]:
    """connect, collect, check (with the simulation) and every report format."""
    from gpuaudit.report import write_reports
    from gpuaudit.verdict.check import run_checks
    from gpuaudit.vsphere import connect
    from gpuaudit.vsphere.collect import collect

    phases = Phases(profile=bool(args.get("profile")))
    steps = _time_collect_steps()
    server = _server(args)
    si = phases.run("connect", lambda: connect.login(server, args["user"], args["password"]))
    inventory = phases.run("collect", lambda: collect(si, source=server.display))
    phases.run("logout", lambda: connect.logout(si))
    result = phases.run("check", lambda: run_checks(inventory))
    out = Path(args["out_dir"])
    files = {}
    server_name = f"bench-{args['label']}"
    for fmt in args.get("formats", FORMATS):

        def write(f: str = fmt) -> list[Path]:
            return write_reports(result, out, [f], server_name)

        (path,) = phases.run(fmt, write)
        files[fmt] = str(path)
    gpu_vms = sum(1 for vm in inventory.vms if vm.gpus)
    return {
        "phases": phases.results,
        "profile": phases.profiles,
        "collect_steps": steps,
        "files": files,
        "sizes": {fmt: Path(p).stat().st_size for fmt, p in files.items()},
        "estate": {
            "hosts": len(inventory.hosts),
            "gpus": sum(len(h.gpus) for h in inventory.hosts),
            "vms": len(inventory.vms),
            "gpu_vms": gpu_vms,
            "findings": len(result.findings),
            "simulations": len(result.simulations),
            "errors": len(result.errors),
        },
    }


def run_baseline(args: dict[str, Any]) -> dict[str, Any]:
    from bench import baselines
    from gpuaudit.vsphere import connect

    phases = Phases()
    server = _server(args)
    si = phases.run("connect", lambda: connect.login(server, args["user"], args["password"]))
    action = baselines.floor if args["kind"] == "floor" else baselines.naive
    found = phases.run("collect", lambda: action(si))
    phases.run("logout", lambda: connect.logout(si))
    return {"phases": phases.results, "found": found}


def run_simulation(args: dict[str, Any]) -> dict[str, Any]:
    """The failover simulation of the config-maximum cluster (no lab: the inventory is built).

    Each run times N+1 alone (every single-host failure) and N+k up to k = 3, each on
    fresh facts, so no run reuses another's work.
    """
    from bench.config_max import config_max_cluster
    from gpuaudit.model.facts import Facts
    from gpuaudit.simulation.failures import simulate_cluster_notes

    inventory = config_max_cluster(args["hosts"], args["gpus"])
    (cluster,) = inventory.clusters
    single: list[float] = []
    up_to_3: list[float] = []
    for _ in range(args.get("repeat", 3)):
        for k, times in ((1, single), (3, up_to_3)):
            facts = Facts(inventory)
            start = time.perf_counter()
            out = simulate_cluster_notes(inventory, cluster.name, facts, max_failures=k)
            times.append(time.perf_counter() - start)
    sim = out.simulation
    return {
        "times_s": single,
        "times_k3_s": up_to_3,
        "hosts": sim.hosts,
        "gpus": sum(len(h.gpus) for h in inventory.hosts),
        "gpu_vms": sim.gpu_vms,
        "rules": len(cluster.vm_host_rules) + len(cluster.vm_vm_rules),
        "tolerates": sim.tolerates,
        "unplaced": sum(len(f.unplaced) for f in sim.failures),
        "notes": out.notes,
    }


KINDS = {
    "gpuaudit": run_gpuaudit,
    "floor": run_baseline,
    "naive": run_baseline,
    "simulation": run_simulation,
}


def main(argv: list[str] | None = None) -> int:
    args = json.loads((argv if argv is not None else sys.argv[1:])[0])
    counting.install()
    result = KINDS[args["kind"]](args)
    result["kind"] = args["kind"]
    result["peak_rss_mib"] = _peak_mib()
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
