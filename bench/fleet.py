"""The fleet benchmark: `scan --targets` within a memory budget, against one after another.

    PYTHONPATH=. .venv/bin/python -m bench.fleet --runs 2 -o /tmp/fleet.md

Ten labs (tests/lab/) serve ten vCenters of mixed sizes built by the configuration
maximums' generator (``generate_max``, as ``bench.run --max`` builds them): two at
the maximum (2,500 hosts, 45,000 VMs) and eight at a sixteenth of it. Each run
scans them twice with the real command, each time in a fresh process and with the
same history file:

- **fleet**: ``gpuaudit scan --targets FILE --max-memory 1.5GiB``, the file's
  concurrency at 10, so that the budget alone decides what runs at once;
- **one after another**: the same targets file with concurrency 1.

The first run's one-after-another scan goes first: it leaves every target's size
in the history, which the fleet reads to schedule (with no history every target
is expected at the maximum, and a 1.5 GiB budget would scan them one at a time).
Later runs alternate the order.

Peak memory is measured for the whole process tree: the scan's own high-water
mark (``ru_maxrss`` from ``wait4``, as bench.worker reads it for its process),
and the sum of the resident memory of the process and all its descendants,
sampled every 50 ms from /proc. Time is the command's wall time, end to end
(start-up, every target's reports and the fleet summary included).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from bench.run import ROOT, Estate, machine, max_scaled

BUDGET = "1.5GiB"
BUDGET_MIB = 1536.0
LARGE = 2  # targets at the configuration maximum
SMALL = 8  # targets at a sixteenth of it
SMALL_FRACTION = 1 / 16
SAMPLE_S = 0.05


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_mib(pid: int) -> float:
    """The resident memory of ``pid`` and all its descendants, now."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += _rss_kib(p)
        todo.extend(_children(p))
    return total / 1024


def measure(command: list[str], env: dict[str, str]) -> dict[str, float]:
    """Run ``command``; its wall time, own peak (ru_maxrss) and sampled tree peak, MiB."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    peak = [0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss_mib(proc.pid))
            done.wait(SAMPLE_S)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    # wait4 instead of wait: it also gives the child's own high-water mark.
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    # 0 or 1 (failed findings): anything else is a broken scan, not a figure.
    if proc.returncode not in (0, 1):
        tail = stderr.decode(errors="replace").strip().splitlines()[-15:]
        raise RuntimeError(f"{' '.join(command)} exited {proc.returncode}:\n" + "\n".join(tail))
    return {
        "wall_s": wall,
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "tree_peak_mib": peak[0],
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "target_peaks_mib": target_peaks(stderr.decode(errors="replace")),
    }


# gpuaudit.jobs.fleet's debug line for each target scanned in a process of its own.
_TARGET_PEAK = re.compile(r"(\S+): peak (\d+) MiB$", re.MULTILINE)


def target_peaks(log: str) -> dict[str, float]:
    """Each target's peak, MiB, as its scan's process measured it (from ``-v``'s log)."""
    return {name: float(mib) for name, mib in _TARGET_PEAK.findall(log)}


def check_scanned(out: Path, targets: int) -> None:
    """Raise unless the run wrote a fleet summary in which every target was scanned: a
    run that exits 0 or 1 without scanning them gives no figure worth keeping."""
    summaries = sorted(out.glob("gpuaudit-fleet-*.json"))
    if not summaries:
        raise RuntimeError(f"no fleet summary in {out}")
    data = json.loads(summaries[-1].read_text(encoding="utf-8"))
    broken = [f"{t['name']}: {t['error']}" for t in data["targets"] if t.get("error")]
    if len(data["targets"]) != targets or broken:
        raise RuntimeError(f"{len(data['targets'])} of {targets} targets, not scanned: {broken}")


def targets_file(path: Path, labs: list[tuple[str, Any]], concurrency: int) -> None:
    user = labs[0][1].user
    data = {
        "concurrency": concurrency,
        "defaults": {"user": user, "password_env": "GPUAUDIT_PASSWORD"},
        "targets": [{"name": name, "server": lab.url} for name, lab in labs],
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def fleet_estates(large: float = 1.0) -> list[tuple[str, Estate]]:
    """The fleet's vCenters: LARGE at ``large`` of the maximum, SMALL at a sixteenth of that."""
    small = max_scaled(large * SMALL_FRACTION)
    return [("max", max_scaled(large))] * LARGE + [("sixteenth", small)] * SMALL


def run(runs: int, say: Any, large: float = 1.0, partial: Path | None = None) -> dict[str, Any]:
    """``runs`` of each; ``large`` shrinks the whole fleet for a smoke test (1: as specified).

    Each measurement is also written to ``partial`` as it is made: a run stopped
    half way keeps what it measured.
    """
    from tests.lab.lab import Lab

    estates = fleet_estates(large)
    labs: list[tuple[str, Any]] = []
    samples: dict[str, list[dict[str, float]]] = {"fleet": [], "sequential": []}
    sizes = [(label, e.hosts, e.vms) for label, e in estates]
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for i, (label, estate) in enumerate(estates):
                say(f"starting lab {i + 1}/{len(estates)} ({label}: {estate.hosts} hosts)")
                # Each its own vCenter: the history keys a vCenter by its instance UUID,
                # and the schedule takes each target's size from its own latest scan.
                uuid = f"00000000-0000-4000-8000-{i + 1:012d}"
                lab = Lab(estate.scenario(), timeout=600, instance_uuid=uuid).start()
                labs.append((f"{label}-{i + 1:02d}", lab))
            password = labs[0][1].password
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
            env["GPUAUDIT_PASSWORD"] = password
            history = Path(tmp) / "history.sqlite"
            files = {"fleet": Path(tmp) / "fleet.yaml", "sequential": Path(tmp) / "one.yaml"}
            targets_file(files["fleet"], labs, len(labs))
            targets_file(files["sequential"], labs, 1)
            for r in range(runs):
                order = ["sequential", "fleet"] if r % 2 == 0 else ["fleet", "sequential"]
                for kind in order:
                    out = Path(tmp) / f"out-{r}-{kind}"
                    command = [sys.executable, "-m", "gpuaudit", "-v", "scan"]
                    command += ["--targets", str(files[kind]), "-o", str(out)]
                    command += ["--history", str(history)]
                    if kind == "fleet":
                        command += ["--max-memory", BUDGET]
                    figures = measure(command, env)
                    check_scanned(out, len(labs))
                    samples[kind].append(figures)
                    if partial is not None:
                        partial.write_text(
                            json.dumps({"samples": samples, "sizes": sizes}, indent=1),
                            encoding="utf-8",
                        )
                    say(
                        f"run {r + 1}/{runs} {kind}: {figures['wall_s']:.1f} s, "
                        f"peak {figures['peak_rss_mib']:.0f} MiB "
                        f"(tree sampled {figures['tree_peak_mib']:.0f} MiB), "
                        f"CPU {figures['cpu_s']:.1f} s; targets' peaks MiB: "
                        + ", ".join(f"{n} {v:.0f}" for n, v in figures["target_peaks_mib"].items())
                    )
                    shutil.rmtree(out, ignore_errors=True)
        finally:
            for _, lab in labs:
                lab.stop()
    return {"samples": samples, "sizes": sizes}


def summarise(measured: dict[str, Any]) -> dict[str, Any]:
    fleet, one = measured["samples"]["fleet"], measured["samples"]["sequential"]
    ratios = [f["wall_s"] / s["wall_s"] for f, s in zip(fleet, one, strict=True)]
    return {
        "ratio": statistics.median(ratios),
        "ratios": ratios,
        "fleet_s": statistics.median(f["wall_s"] for f in fleet),
        "sequential_s": statistics.median(s["wall_s"] for s in one),
        "fleet_peak_mib": max(max(f["peak_rss_mib"], f["tree_peak_mib"]) for f in fleet),
        "sequential_peak_mib": max(max(s["peak_rss_mib"], s["tree_peak_mib"]) for s in one),
    }


def markdown(measured: dict[str, Any], figures: dict[str, Any], m: dict[str, Any]) -> str:
    runs = len(measured["samples"]["fleet"])
    lines = [
        f"Commit {m['commit']}, measured {m['date']}, {runs} runs, on {m['cpus']} CPUs "
        f"({m['cpu_model']}) shared with other work.",
        "",
        "| | fleet, --max-memory 1.5GiB | one after another |",
        "|---|---|---|",
    ]
    fleet, one = measured["samples"]["fleet"], measured["samples"]["sequential"]
    for i, (f, s) in enumerate(zip(fleet, one, strict=True)):
        lines.append(f"| run {i + 1}: wall s | {f['wall_s']:.1f} | {s['wall_s']:.1f} |")
        lines.append(
            f"| run {i + 1}: peak RSS MiB, own (tree sampled) | {f['peak_rss_mib']:.0f} "
            f"({f['tree_peak_mib']:.0f}) | {s['peak_rss_mib']:.0f} ({s['tree_peak_mib']:.0f}) |"
        )
    for kind, samples in (("fleet", fleet), ("one after another", one)):
        for i, sample in enumerate(samples):
            peaks = sample.get("target_peaks_mib") or {}
            listed = ", ".join(f"{name} {mib:.0f}" for name, mib in sorted(peaks.items()))
            lines.append(f"\n{kind}, run {i + 1}: each target's process peaked at (MiB) {listed}.")
    met_memory = figures["fleet_peak_mib"] < BUDGET_MIB
    met_time = figures["ratio"] <= 1.0
    lines += [
        "",
        "| target | measured | |",
        "|---|---|---|",
        f"| peak resident memory of the fleet's process tree under {BUDGET} | "
        f"{figures['fleet_peak_mib']:.0f} MiB | {'met' if met_memory else '**missed**'} |",
        "| the fleet's wall time no longer than one after another (median of the run-by-run "
        f"ratios) | {figures['ratio']:.2f}x | {'met' if met_time else '**missed**'} |",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.fleet", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--runs", type=int, default=2, help="runs of each (default 2)")
    parser.add_argument(
        "--large",
        type=float,
        default=1.0,
        help="the large targets' fraction of the maximum, the small ones' a sixteenth of it "
        "(default 1; smaller for a smoke test)",
    )
    parser.add_argument("-o", "--output", type=Path, help="Markdown here (default stdout)")
    parser.add_argument(
        "--json", type=Path, help="also the raw measurements here (written as they are made)"
    )
    args = parser.parse_args(argv)

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    m = machine()
    measured = run(args.runs, say, args.large, args.json)
    figures = summarise(measured)
    text = markdown(measured, figures, m)
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")
    else:
        sys.stdout.write(text + "\n")
    if args.json:
        args.json.write_text(
            json.dumps({"machine": m, "measured": measured, "figures": figures}, indent=1),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
