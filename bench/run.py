"""The scan benchmark: speed, memory and scaling of gpuaudit on a large lab estate.

    # docs/performance.md: the configuration maximum and its 1/4 and 1/2, 3 runs each
    PYTHONPATH=. .venv/bin/python -m bench.run --max --scale 0.25,0.5,1 --runs 3 \\
        --before bench/results/d144835.json
    PYTHONPATH=. .venv/bin/python -m bench.run --quick                   # a tiny estate, ~30 s
    PYTHONPATH=. .venv/bin/python -m bench.run --scale 0.25,0.5,1 -o /tmp/default.md

The estate comes from the lab's generator (tests/lab/generate.py): at scale 1,
64 clusters x 16 hosts (1,024 hosts), 4 GPUs per host and 10,240 VMs of which 40%
carry a GPU (vGPU, fixed and Dynamic DirectPath), on FC and iSCSI datastores.
Each scale gets one lab; each run measures, side by side against that lab and
each in a fresh process, the floor (a bare RetrievePropertiesEx loop) and
gpuaudit's phases (connect, collect, check with the failover simulation, every
report format), alternating which goes first. The naive attribute-walking
client is compared with both on the 1/16 estate. Figures are medians over runs.

``--max`` takes the scales as fractions of the vSphere 8 configuration maximums'
estate instead (``generate_max``: 2,500 hosts in clusters of 96, 10,000 GPUs,
45,000 VMs of which about 40,000 powered on, DRS rules); scale ``max`` is its
whole. The targets are judged at the largest scale measured. After the measured
runs at that scale, one more gpuaudit run under cProfile shows where the time goes.

With ``--max`` the Markdown goes to docs/performance.md, and a compact summary to
bench/results/<commit>.json, which a later run reads back with ``--before`` to set
the figures side by side. Otherwise the Markdown goes to standard output unless
``--output`` names a file. Text after an output's ``<!-- analysis -->`` line is
kept, so the hand-written analysis survives a rerun.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import sections, summary
from bench.sections import figure as _f
from bench.worker import COLLECT_STEPS

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = ROOT / "docs" / "performance.md"
RESULTS = ROOT / "bench" / "results"
ANALYSIS_MARK = "<!-- analysis -->"

REQUEST_BOUND = 25  # SOAP requests for a whole collection, pages not counted
LINEAR = 1.25  # growth of the cost per VM that still counts as linear
SCAN_PHASES = ("collect", "check", "html", "xlsx", "json")
REPORT_PHASES = ("html", "xlsx", "json", "junit", "sarif")

TARGETS = {
    "collect_vs_floor": 1.3,
    "scan_vs_floor": 2.0,
    "peak_rss_mib": 2048.0,
    "simulation_s": 1.0,
    "simulation_k3_s": 10.0,
    "naive_speedup": 20.0,
    "html_open_s": 3.0,
}


@dataclass(frozen=True)
class Estate:
    clusters: int
    hosts_per_cluster: int
    gpus_per_host: int
    vms: int
    label: str
    # A fraction of the configuration maximums' estate, instead of the plain shape.
    maximum: float | None = None
    total_hosts: int | None = None

    @property
    def hosts(self) -> int:
        return self.total_hosts or self.clusters * self.hosts_per_cluster

    def scenario(self) -> dict[str, Any]:
        from tests.lab.generate import generate, generate_max

        if self.maximum is not None:
            return generate_max(self.maximum)
        return generate(self.clusters, self.hosts_per_cluster, self.gpus_per_host, self.vms)


FULL = Estate(64, 16, 4, 10240, "1")
QUICK = Estate(3, 4, 4, 120, "quick")


def scaled(fraction: float, label: str | None = None) -> Estate:
    return Estate(
        max(1, round(FULL.clusters * fraction)),
        FULL.hosts_per_cluster,
        FULL.gpus_per_host,
        round(FULL.vms * fraction),
        label or f"{fraction:g}",
    )


def max_scaled(fraction: float) -> Estate:
    """``fraction`` of the configuration maximums' estate (tests/lab/generate.py)."""
    from tests.lab import generate as g

    hosts = max(1, round(g.MAX_HOSTS * fraction))
    return Estate(
        -(-hosts // g.MAX_HOSTS_PER_CLUSTER),
        g.MAX_HOSTS_PER_CLUSTER,
        g.MAX_GPUS_PER_HOST,
        round(g.MAX_REGISTERED_VMS * fraction),
        "max" if fraction == 1 else f"{fraction:g} max",
        maximum=fraction,
        total_hosts=hosts,
    )


# ---------------------------------------------------------------------------
# Running workers


def worker(args: dict[str, Any], timeout: float = 3600) -> dict[str, Any]:
    """Run bench.worker in a fresh interpreter; its last stdout line is JSON."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-m", "bench.worker", json.dumps(args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
        raise RuntimeError(f"bench.worker {args['kind']} failed:\n" + "\n".join(tail))
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


class Browser:
    """Headless Chromium (tests/support/report_tools.py), if installed."""

    def __init__(self) -> None:
        from tests.support.report_tools import CHROMIUM_NAMES, Chromium

        if not any(shutil.which(n) for n in CHROMIUM_NAMES):
            raise FileNotFoundError("Chromium is not installed")
        self.chromium = Chromium(width=1400, height=1000)

    def open_seconds(self, path: str) -> float:
        """From navigation until the report says it is drawn (window.gpuauditReady)."""
        c = self.chromium
        c.call("Page.navigate", {"url": "about:blank"})
        c.wait_event("Page.loadEventFired", 30)
        c.events.clear()
        start = time.monotonic()
        c.call("Page.navigate", {"url": Path(path).resolve().as_uri()})
        c.wait_event("Page.loadEventFired", 120)
        c.evaluate(
            "new Promise(r => { const t = () => window.gpuauditReady === true ? r(true)"
            " : setTimeout(t, 5); t(); })",
            timeout=120,
        )
        return time.monotonic() - start

    def close(self) -> None:
        self.chromium.close()


def measure_scale(
    estate: Estate,
    runs: int,
    browser: Browser | None,
    say: Any,
    naive: bool = False,
    reports: bool = True,
    profile: bool = False,
) -> dict[str, Any]:
    from tests.lab.lab import Lab

    say(f"[{estate.label}] generating {estate.hosts} hosts, {estate.vms} VMs; starting the lab")
    scenario = estate.scenario()
    start = time.perf_counter()
    samples: dict[str, list[dict[str, Any]]] = {"gpuaudit": [], "floor": [], "naive": []}
    opens: list[float] = []
    with Lab(scenario, timeout=600) as lab, tempfile.TemporaryDirectory() as tmp:
        lab_start = time.perf_counter() - start
        base = {"url": lab.url, "user": lab.user, "password": lab.password}
        kinds = ["floor", "gpuaudit"] + (["naive"] if naive else [])
        for run in range(runs):
            # Rotate the order so that no client always runs on a warmer lab.
            order = kinds[run % len(kinds) :] + kinds[: run % len(kinds)]
            for kind in order:
                out = Path(tmp) / f"run{run}"
                args: dict[str, Any] = {
                    **base,
                    "kind": kind,
                    "out_dir": str(out),
                    "label": estate.label,
                }
                if naive and not reports:
                    args["formats"] = []
                result = worker(args)
                samples[kind].append(result)
                say(f"[{estate.label}] run {run + 1}/{runs} {kind}: {_brief(result)}")
                if kind == "gpuaudit" and browser is not None and "html" in result["files"]:
                    opens.append(browser.open_seconds(result["files"]["html"]))
                    say(f"[{estate.label}] run {run + 1}/{runs} html opens in {opens[-1]:.2f} s")
                    shutil.rmtree(out, ignore_errors=True)
        profiled: dict[str, Any] = {}
        if profile:
            # Outside the measured runs: cProfile's overhead would distort their figures.
            out = Path(tmp) / "profile"
            args = {**base, "kind": "gpuaudit", "out_dir": str(out), "label": estate.label}
            profiled = worker({**args, "profile": True})["profile"]
            say(f"[{estate.label}] profiled one more run")
    return {
        "estate": estate.__dict__ | {"hosts": estate.hosts},
        "lab_start_s": lab_start,
        "samples": samples,
        "html_open_s": opens,
        "profile": profiled,
    }


def _brief(result: dict[str, Any]) -> str:
    phases = result["phases"]
    return ", ".join(f"{k} {v['wall_s']:.2f} s" for k, v in phases.items())


# ---------------------------------------------------------------------------
# Figures


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def phase_median(samples: list[dict[str, Any]], phase: str, key: str) -> float:
    return median([s["phases"][phase][key] for s in samples if phase in s["phases"]])


def summarise(scale: dict[str, Any]) -> dict[str, Any]:
    ours, floor = scale["samples"]["gpuaudit"], scale["samples"]["floor"]
    out: dict[str, Any] = {"estate": scale["estate"], "lab_start_s": scale["lab_start_s"]}
    phases = {}
    for phase in ("connect", "collect", "logout", "check", *REPORT_PHASES):
        if not any(phase in s["phases"] for s in ours):
            continue
        phases[phase] = {
            key: phase_median(ours, phase, key)
            for key in ("wall_s", "cpu_s", "peak_rss_mib", "soap_requests", "pages")
        } | {"mb_received": phase_median(ours, phase, "bytes_received") / 1e6}
    out["phases"] = phases
    scans = [
        sum(s["phases"][p]["wall_s"] for p in SCAN_PHASES) for s in ours if "json" in s["phases"]
    ]
    out["scan_s"] = median(scans)
    out["floor"] = {
        "wall_s": phase_median(floor, "collect", "wall_s"),
        "cpu_s": phase_median(floor, "collect", "cpu_s"),
        "peak_rss_mib": phase_median(floor, "collect", "peak_rss_mib"),
        "soap_requests": phase_median(floor, "collect", "soap_requests"),
        "pages": phase_median(floor, "collect", "pages"),
        "mb_received": phase_median(floor, "collect", "bytes_received") / 1e6,
    }
    # Ratios run by run (each run's floor and gpuaudit ran back to back), then the median.
    pairs = list(zip(ours, floor, strict=False))
    out["collect_vs_floor"] = median(
        [o["phases"]["collect"]["wall_s"] / f["phases"]["collect"]["wall_s"] for o, f in pairs]
    )
    out["scan_vs_floor"] = median(
        [
            sum(o["phases"][p]["wall_s"] for p in SCAN_PHASES) / f["phases"]["collect"]["wall_s"]
            for o, f in pairs
            if "json" in o["phases"]
        ]
    )
    # The bound covers a whole session: connect (with logout) and collect.
    session = ("connect", "collect", "logout")
    out["requests_less_pages"] = max(
        sum(s["phases"][p]["requests_less_pages"] for p in session) for s in ours
    )
    out["requests"] = max(sum(s["phases"][p]["soap_requests"] for p in session) for s in ours)
    out["query_perf"] = max(s["phases"]["collect"]["operations"].get("QueryPerf", 0) for s in ours)
    out["operations"] = ours[0]["phases"]["collect"]["operations"] if ours else {}
    steps: dict[str, dict[str, float]] = {}
    for name in ours[0].get("collect_steps", {}) if ours else {}:
        steps[name] = {
            "wall_s": median([s["collect_steps"][name]["wall_s"] for s in ours]),
            "mb_received": median([s["collect_steps"][name]["bytes_received"] for s in ours]) / 1e6,
        }
    out["collect_steps"] = steps
    out["peak_rss_mib"] = max(s["peak_rss_mib"] for s in ours)
    out["estate_seen"] = ours[0]["estate"] if ours else {}
    out["sizes"] = ours[0].get("sizes", {}) if ours else {}
    out["html_open_s"] = median(scale["html_open_s"]) if scale["html_open_s"] else None
    out["profile"] = scale.get("profile") or {}
    naive = scale["samples"].get("naive") or []
    if naive:
        out["naive"] = {
            "wall_s": phase_median(naive, "collect", "wall_s"),
            "cpu_s": phase_median(naive, "collect", "cpu_s"),
            "soap_requests": phase_median(naive, "collect", "soap_requests"),
            "mb_received": phase_median(naive, "collect", "bytes_received") / 1e6,
            "peak_rss_mib": phase_median(naive, "collect", "peak_rss_mib"),
            "runs": len(naive),
        }
        triples = list(zip(naive, ours, floor, strict=False))
        out["naive_vs_collect"] = median(
            [
                n["phases"]["collect"]["wall_s"] / o["phases"]["collect"]["wall_s"]
                for n, o, _ in triples
            ]
        )
        out["naive_vs_floor"] = median(
            [
                n["phases"]["collect"]["wall_s"] / f["phases"]["collect"]["wall_s"]
                for n, _, f in triples
            ]
        )
    out["runs"] = len(ours)
    return out


def machine() -> dict[str, Any]:
    model = ""
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem_kib = 0
    with open("/proc/meminfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    from importlib.metadata import version

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "memory_gib": mem_kib / 1024 / 1024,
        "python": platform.python_version(),
        "pyvmomi": version("pyvmomi"),
        # The kind of machine, not this one: a kernel release or host name in a
        # committed page would tie it to the machine that measured it.
        "platform": f"{platform.system()} {platform.machine()}",
        "commit": commit,
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


# ---------------------------------------------------------------------------
# Markdown


def _ok(passed: bool | None) -> str:
    return "n/a" if passed is None else ("met" if passed else "**missed**")


def markdown(report: dict[str, Any], command: str) -> str:
    m = report["machine"]
    scales = report["scales"]
    lines = [
        "# Performance",
        "",
        "Measured by the scan benchmark (`bench/`), against the lab (`tests/lab/`) serving an",
        "estate from its generator. Regenerate this page with:",
        "",
        "```sh",
        command,
        "```",
        "",
        "Every figure is the median of the runs; ratios are taken run by run between",
        "measurements made back to back against the same lab, then the median. Each client",
        "and each gpuaudit run is a fresh process, so its peak resident memory is its own.",
        "The machine is shared, so absolute seconds drift between runs; the ratios are the",
        "figures to compare.",
        "",
        "## Machine",
        "",
        f"- CPUs: {m['cpus']} ({m['cpu_model']})",
        f"- memory: {m['memory_gib']:.1f} GiB",
        f"- Python {m['python']}, pyVmomi {m['pyvmomi']}, {m['platform']}",
        f"- gpuaudit commit {m['commit']}, measured {m['date']}, {report['runs']} "
        + ("run" if report["runs"] == 1 else "runs"),
        "",
    ]
    if report.get("targets"):
        lines += ["## Targets", "", "| target | measured | |", "|---|---|---|"]
        for name, figure, passed in report["targets"]:
            lines.append(f"| {name} | {figure} | {_ok(passed)} |")
        lines.append("")

    lines += [
        "## Scaling",
        "",
        "| scale | hosts | GPUs | VMs (with a GPU) | floor s | collect s | collect / floor "
        "| full scan s | full scan / floor | SOAP requests (pages) | MB received | peak RSS MiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in scales:
        e = s["estate_seen"]
        c = s["phases"]["collect"]
        lines.append(
            f"| {s['estate']['label']} | {e.get('hosts', 0):,} | {e.get('gpus', 0):,} "
            f"| {e.get('vms', 0):,} ({e.get('gpu_vms', 0):,}) | {_f(s['floor']['wall_s'])} "
            f"| {_f(c['wall_s'])} | {_f(s['collect_vs_floor'])}x | {_f(s['scan_s'])} "
            f"| {_f(s['scan_vs_floor'])}x | {s['requests']} ({int(c['pages'])}) "
            f"| {_f(c['mb_received'], 1)} | {_f(s['peak_rss_mib'], 0)} |"
        )
    lines += [
        "",
        "*full scan* is collect + check + the html, xlsx and json reports (a default",
        "`gpuaudit scan`); SOAP requests count the whole session (version negotiation",
        "aside: it is a plain GET), login and logout included, with the pages in",
        "brackets: ContinueRetrievePropertiesEx, and every QueryPerf after the first (each",
        "carries as many hosts' GPU counters as the server's maxQueryMetrics allows).",
        "The bound leaves out QueryConfigTarget, one call per vGPU cluster, ESXi build",
        "and GPU model for vCenter's description of the vGPU profiles and its stun time",
        "estimates, and two calls per vGPU host: fetchSoftwarePackages for the NVIDIA vGPU",
        "manager's version, and on vSphere 9.0 QueryCapacity.",
        "",
    ]
    if len(scales) > 1:
        base = scales[0]
        lines += [
            "Cost per unit of estate, relative to the smallest scale (1.00 = linear):",
            "",
            "| scale | VMs | floor | collect | check | full scan | MB received |",
            "|---|---|---|---|---|---|---|",
        ]
        base_mb = base["phases"]["collect"]["mb_received"]
        for s in scales:
            k = s["estate"]["vms"] / base["estate"]["vms"]

            def rel(value: float, first: float, k: float = k) -> str:
                return _f(value / first / k)

            lines.append(
                f"| {s['estate']['label']} | {s['estate']['vms']:,} "
                f"| {rel(s['floor']['wall_s'], base['floor']['wall_s'])} "
                f"| {rel(s['phases']['collect']['wall_s'], base['phases']['collect']['wall_s'])} "
                f"| {rel(s['phases']['check']['wall_s'], base['phases']['check']['wall_s'])} "
                f"| {rel(s['scan_s'], base['scan_s'])} "
                f"| {rel(s['phases']['collect']['mb_received'], base_mb)} |"
            )
        lines.append("")
    lines += sections.sizes(scales)
    if report.get("before"):
        lines += sections.before_after(report["before"], summary.compact(report))
    lines += sections.profile(scales[-1])

    for s in scales:
        e = s["estate_seen"]
        lines += [
            f"## Phases at scale {s['estate']['label']}",
            "",
            f"{s['estate']['clusters']} clusters x {s['estate']['hosts_per_cluster']} hosts, "
            f"{e.get('gpus', 0):,} GPUs, {e.get('vms', 0):,} VMs of which {e.get('gpu_vms', 0):,} "
            f"carry a GPU; {e.get('findings', 0):,} findings, {e.get('simulations', 0)} cluster "
            f"simulations. The lab started in {_f(s['lab_start_s'], 1)} s.",
            "",
            "| phase | wall s | CPU s | SOAP requests | MB received | peak RSS MiB | output MB |",
            "|---|---|---|---|---|---|---|",
        ]
        f = s["floor"]
        lines.append(
            f"| floor (bare retrieval) | {_f(f['wall_s'])} | {_f(f['cpu_s'])} "
            f"| {int(f['soap_requests'])} | {_f(f['mb_received'], 1)} "
            f"| {_f(f['peak_rss_mib'], 0)} | |"
        )
        for name, p in s["phases"].items():
            size = s["sizes"].get(name)
            lines.append(
                f"| {name} | {_f(p['wall_s'])} | {_f(p['cpu_s'])} | {int(p['soap_requests'])} "
                f"| {_f(p['mb_received'], 1)} | {_f(p['peak_rss_mib'], 0)} "
                f"| {_f(size / 1e6, 1) if size else ''} |"
            )
        if s.get("html_open_s") is not None:
            lines.append(f"| html opened in headless Chromium | {_f(s['html_open_s'])} | | | | | |")
        lines += [
            "",
            "Peak RSS is the process's high-water mark at the end of the phase, so it",
            "includes the phases above it.",
            "",
        ]
        if s.get("collect_steps"):
            ops = ", ".join(f"{k} {v}" for k, v in sorted(s["operations"].items()))
            lines += [
                "Where the collect phase goes:",
                "",
                "| step | wall s | MB received |",
                "|---|---|---|",
            ]
            for name, step in s["collect_steps"].items():
                label = COLLECT_STEPS.get(name, name)
                lines.append(f"| {label} | {_f(step['wall_s'])} | {_f(step['mb_received'], 1)} |")
            lines += ["", f"Its SOAP requests: {ops}.", ""]

    naive = report.get("naive")
    if naive:
        e = naive["estate_seen"]
        n = naive["naive"]
        lines += [
            f"## Against the naive style, at scale {naive['estate']['label']}",
            "",
            f"{e.get('hosts', 0):,} hosts and {e.get('vms', 0):,} VMs; collect phase only, "
            f"median of {n['runs']} runs.",
            "",
            "| client | wall s | CPU s | SOAP requests | MB received | peak RSS MiB |",
            "|---|---|---|---|---|---|",
            f"| naive attribute walking | {_f(n['wall_s'])} | {_f(n['cpu_s'])} "
            f"| {int(n['soap_requests']):,} | {_f(n['mb_received'], 1)} "
            f"| {_f(n['peak_rss_mib'], 0)} |",
            f"| floor (bare retrieval) | {_f(naive['floor']['wall_s'])} "
            f"| {_f(naive['floor']['cpu_s'])} | {int(naive['floor']['soap_requests'])} "
            f"| {_f(naive['floor']['mb_received'], 1)} | {_f(naive['floor']['peak_rss_mib'], 0)} |",
            f"| gpuaudit collect | {_f(naive['phases']['collect']['wall_s'])} "
            f"| {_f(naive['phases']['collect']['cpu_s'])} "
            f"| {int(naive['phases']['collect']['soap_requests'])} "
            f"| {_f(naive['phases']['collect']['mb_received'], 1)} "
            f"| {_f(naive['phases']['collect']['peak_rss_mib'], 0)} |",
            "",
            f"The naive client takes {_f(naive['naive_vs_collect'], 1)}x gpuaudit's collect "
            f"time and {_f(naive['naive_vs_floor'], 1)}x the floor's.",
            "",
        ]
    sim = report.get("simulation")
    if sim:
        lines += [
            "## Failover simulation",
            "",
            f"One cluster of {sim['hosts']} hosts x {sim['gpus'] // max(sim['hosts'], 1)} GPUs "
            "(vSphere 8's maximum cluster size; bench/config_max.py): L4s in time-sliced vGPU "
            "mode beside A100 80GB in MIG mode, "
            f"{sim['gpu_vms']:,} powered-on GPU VMs and {sim['rules']} DRS rules (a required "
            "VM-Host rule and VM-VM anti-affinity). Every host failed in turn (N+1): median "
            f"{_f(median(sim['times_s']), 3)} s; N+k searched up to k = 3: median "
            f"{_f(median(sim['times_k3_s']), 3)} s, over {len(sim['times_s'])} runs each "
            f"(N+{sim['tolerates']}).",
            "",
            *[f"- {note}" for note in sim.get("notes", [])],
            "",
        ]
    return "\n".join(lines)


def targets(report: dict[str, Any]) -> list[tuple[str, str, bool | None]]:
    """Each target, its figure and whether it is met, judged at the largest scale measured."""
    largest = report["scales"][-1]
    at = f"at scale {largest['estate']['label']}, the largest measured"
    out: list[tuple[str, str, bool | None]] = [
        (
            f"collect within {TARGETS['collect_vs_floor']:.1f}x the floor ({at})",
            f"{_f(largest['collect_vs_floor'])}x",
            largest["collect_vs_floor"] <= TARGETS["collect_vs_floor"],
        ),
        (
            f"full scan within {TARGETS['scan_vs_floor']:.1f}x the floor ({at})",
            f"{_f(largest['scan_vs_floor'])}x",
            largest["scan_vs_floor"] <= TARGETS["scan_vs_floor"],
        ),
        (
            f"peak resident memory under {TARGETS['peak_rss_mib'] / 1024:g} GiB ({at})",
            f"{_f(largest['peak_rss_mib'], 0)} MiB",
            largest["peak_rss_mib"] < TARGETS["peak_rss_mib"],
        ),
    ]
    opened = largest.get("html_open_s")
    out.append(
        (
            f"HTML report interactive in headless Chromium within {TARGETS['html_open_s']:g} s "
            f"({at})",
            "not measured" if opened is None else f"{_f(opened)} s",
            None if opened is None else opened < TARGETS["html_open_s"],
        )
    )
    worst = max(report["scales"], key=lambda s: s["requests_less_pages"])
    n = worst["requests_less_pages"]
    out.append(
        (
            f"at most {REQUEST_BOUND} SOAP requests plus paging, at every size",
            f"at most {n} + pages",
            n <= REQUEST_BOUND,
        )
    )
    gpu_hosts = largest["estate"]["hosts"]
    out.append(
        (
            "GPU counters: at most one QueryPerf per 50 GPU hosts (vCenter's default limit)",
            f"{largest['query_perf']} for {gpu_hosts:,} hosts",
            largest["query_perf"] <= -(-gpu_hosts // 50),
        )
    )
    sim = report.get("simulation")
    if sim:
        size = f"{sim['hosts']}-host x {sim['gpus'] // max(sim['hosts'], 1)}-GPU cluster"
        t = median(sim["times_s"])
        out.append(
            (
                f"failover simulation of a {size} (MIG, vGPU, DRS rules): N+1 under 1 s",
                f"{_f(t, 3)} s",
                t < TARGETS["simulation_s"],
            )
        )
        t3 = median(sim["times_k3_s"])
        out.append(
            (
                "the same cluster's N+k for k up to 3 under 10 s",
                f"{_f(t3, 3)} s",
                t3 < TARGETS["simulation_k3_s"],
            )
        )
    naive = report.get("naive")
    if naive:
        out.append(
            (
                f"at least 20x faster than the naive style (scale {naive['estate']['label']})",
                f"{_f(naive['naive_vs_collect'], 1)}x",
                naive["naive_vs_collect"] >= TARGETS["naive_speedup"],
            )
        )
    if len(report["scales"]) > 1:
        first, last = report["scales"][0], report["scales"][-1]
        k = last["estate"]["vms"] / first["estate"]["vms"]

        def per_vm(get: Any) -> float:
            return float(get(last) / get(first) / k)

        growth = per_vm(lambda s: s["scan_s"])
        collect = per_vm(lambda s: s["phases"]["collect"]["wall_s"])
        check = per_vm(lambda s: s["phases"]["check"]["wall_s"])
        out.append(
            (
                "cost grows linearly with the estate: full scan time per VM at the largest "
                f"scale over the smallest ({last['estate']['label']} over "
                f"{first['estate']['label']}), at most {LINEAR}",
                f"{_f(growth)} (collect {_f(collect)}, check {_f(check)})",
                growth <= LINEAR,
            )
        )
    return out


# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--scale",
        default="1",
        help="comma-separated fractions of the full estate (default 1; e.g. 0.25,0.5,1)",
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per scale (default 3)")
    parser.add_argument(
        "--max",
        action="store_true",
        help="scales are fractions of the vSphere 8 configuration maximums' estate "
        "(2,500 hosts, 45,000 VMs); Markdown to docs/performance.md unless --output, "
        "summary to bench/results/<commit>.json unless --summary",
    )
    parser.add_argument(
        "--naive-scale",
        type=float,
        default=1 / 16,
        help="estate fraction for the naive baseline (default 1/16; 0 skips it)",
    )
    parser.add_argument(
        "--no-simulation", action="store_true", help="skip the 64-host simulation benchmark"
    )
    parser.add_argument("--no-browser", action="store_true", help="skip opening the HTML report")
    parser.add_argument(
        "--no-profile", action="store_true", help="skip the cProfile run at the largest scale"
    )
    parser.add_argument(
        "--before",
        type=Path,
        metavar="SUMMARY",
        help="an earlier run's summary (bench/results/), shown beside this run's figures",
    )
    parser.add_argument("--summary", type=Path, help="write this run's compact summary here (JSON)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a tiny estate, one run, naive on the same estate, no browser: a smoke test",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        help="Markdown to write (with --max, default docs/performance.md; otherwise stdout)",
    )
    parser.add_argument("--json", type=Path, help="also write the raw measurements here")
    parser.add_argument(
        "--render",
        type=Path,
        metavar="JSON",
        help="measure nothing: write the Markdown from a file that --json wrote",
    )
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args(argv)

    def say(message: str) -> None:
        if not args.quiet:
            print(message, file=sys.stderr, flush=True)

    before: dict[str, Any] | None = None
    if args.before:
        try:
            before = summary.load(args.before)
        except (OSError, ValueError) as exc:
            parser.error(f"--before: {exc}")

    if args.render:
        saved = json.loads(args.render.read_text(encoding="utf-8"))["report"]
        saved["targets"] = targets(saved)
        if before is not None:
            saved["before"] = before
        _write(markdown(saved, saved.get("command") or _command(args)), args.output, say)
        return 0

    if args.quick:
        estates = [QUICK]
        naive_estate: Estate | None = QUICK
        runs = 1
        output = args.output
        browser_wanted = False
    else:
        try:
            fractions = [
                1.0 if x.strip() == "max" else float(x) for x in args.scale.split(",") if x.strip()
            ]
        except ValueError:
            parser.error(f"--scale takes fractions (or max): {args.scale!r}")
        args.max = args.max or "max" in [x.strip() for x in args.scale.split(",")]
        if args.max:
            if not all(0 < f <= 1 for f in fractions):
                parser.error("--max takes fractions between 0 (excluded) and 1")
            estates = [max_scaled(f) for f in sorted(fractions)]
        else:
            estates = [scaled(f) for f in sorted(fractions)]
        naive_estate = scaled(args.naive_scale, "1/16" if args.naive_scale == 1 / 16 else None)
        naive_estate = naive_estate if args.naive_scale > 0 else None
        runs = args.runs
        output = args.output or (DEFAULT_OUTPUT if args.max else None)
        browser_wanted = not args.no_browser

    browser: Browser | None = None
    if browser_wanted:
        try:
            browser = Browser()
        except Exception as exc:  # no Chromium: the rest still runs
            say(f"not opening the HTML report: {exc}")
    started = time.perf_counter()
    report: dict[str, Any] = {
        "machine": machine(),
        "runs": runs,
        "scales": [],
        "command": _command(args),
    }
    if before is not None:
        report["before"] = before
    raw: dict[str, Any] = {"scales": []}
    profile = not args.no_profile
    try:
        if args.quick:
            measured = measure_scale(QUICK, runs, None, say, naive=True, profile=profile)
            raw["scales"].append(measured)
            quick = summarise(measured)
            report["scales"].append(quick)
            report["naive"] = quick
        else:
            for estate in estates:
                largest = estate is estates[-1]
                measured = measure_scale(estate, runs, browser, say, profile=profile and largest)
                raw["scales"].append(measured)
                report["scales"].append(summarise(measured))
            if naive_estate is not None:
                measured = measure_scale(naive_estate, runs, None, say, naive=True, reports=False)
                raw["naive"] = measured
                report["naive"] = summarise(measured)
    finally:
        if browser is not None:
            browser.close()
    if not args.no_simulation:
        # vSphere 8's maximum cluster: 96 hosts (bench/config_max.py).
        spec = {"kind": "simulation", "hosts": 96, "gpus": 8}
        if args.quick:
            spec.update(hosts=9)
        spec["repeat"] = max(runs, 3)
        report["simulation"] = worker(spec)
        say(f"simulation: {report['simulation']['times_s']}")
    report["targets"] = targets(report)
    report["elapsed_s"] = time.perf_counter() - started

    _write(markdown(report, report["command"]), output, say)
    summary_path = args.summary
    if summary_path is None and output == DEFAULT_OUTPUT:
        summary_path = RESULTS / f"{report['machine']['commit']}.json"
    if summary_path is not None:
        summary.write(summary.compact(report), summary_path)
        say(f"wrote {summary_path}")
    if args.json:
        args.json.write_text(json.dumps({"report": report, "raw": raw}, indent=1), encoding="utf-8")
    say(f"done in {report['elapsed_s']:.0f} s")
    return 0


def _command(args: argparse.Namespace) -> str:
    """The command that measures what ``args`` asks for (output files left out)."""
    words = ["PYTHONPATH=. .venv/bin/python -m bench.run"]
    if args.quick:
        words.append("--quick")
    else:
        words += ["--max"] if args.max else []
        words += [f"--scale {args.scale}", f"--runs {args.runs}"]
        if args.naive_scale != 1 / 16:
            words.append(f"--naive-scale {args.naive_scale:g}")
        if args.no_browser:
            words.append("--no-browser")
    if args.no_simulation:
        words.append("--no-simulation")
    if args.no_profile:
        words.append("--no-profile")
    if args.before:
        words.append(f"--before {args.before}")
    return " ".join(words)


def _write(text: str, output: Path | None, say: Any) -> None:
    """The Markdown to ``output`` (keeping its analysis after ANALYSIS_MARK), or stdout."""
    if output is None:
        sys.stdout.write(text + "\n")
        return
    kept = ""
    if output.is_file():
        old = output.read_text(encoding="utf-8")
        if ANALYSIS_MARK in old:
            kept = old[old.index(ANALYSIS_MARK) :]
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text + ("\n" + kept if kept else f"\n{ANALYSIS_MARK}\n"), encoding="utf-8")
    say(f"wrote {output}")


if __name__ == "__main__":
    sys.exit(main())
