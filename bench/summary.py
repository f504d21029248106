"""A run's compact summary, kept under bench/results/ for a later run to show beside its own.

The raw measurements (``bench.run --json``) run to megabytes; the summary keeps, per
scale, the figures the page compares: seconds, ratios, memory, requests, output sizes,
and the simulation's medians. A summary can also be written by hand from an earlier
page; its ``source`` says where its figures come from.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

SUMMARY_VERSION = 1
PHASES = ("check", "html", "xlsx", "json", "junit", "sarif")


def _scale(s: dict[str, Any]) -> dict[str, Any]:
    seen, collect = s["estate_seen"], s["phases"]["collect"]
    return {
        "label": s["estate"]["label"],
        "hosts": seen.get("hosts", s["estate"]["hosts"]),
        "vms": seen.get("vms", s["estate"]["vms"]),
        "floor_s": s["floor"]["wall_s"],
        "collect_s": collect["wall_s"],
        "collect_vs_floor": s["collect_vs_floor"],
        "scan_s": s["scan_s"],
        "scan_vs_floor": s["scan_vs_floor"],
        "peak_rss_mib": s["peak_rss_mib"],
        "requests": s["requests"],
        "pages": int(collect["pages"]),
        "mb_received": collect["mb_received"],
        "lab_start_s": s["lab_start_s"],
        "html_open_s": s.get("html_open_s"),
        "phases_s": {p: s["phases"][p]["wall_s"] for p in PHASES if p in s["phases"]},
        "sizes_mb": {fmt: size / 1e6 for fmt, size in s.get("sizes", {}).items()},
    }


def _rounded(value: Any) -> Any:
    # Milliseconds and kilobytes are below the noise of a shared machine.
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def compact(report: dict[str, Any]) -> dict[str, Any]:
    """The summary of a report that bench.run measured."""
    m = report["machine"]
    out: dict[str, Any] = {
        "summary_version": SUMMARY_VERSION,
        "source": "measured by bench.run",
        "commit": m["commit"],
        "date": m["date"],
        "command": report["command"],
        "runs": report["runs"],
        "scales": [_scale(s) for s in report["scales"]],
    }
    sim = report.get("simulation")
    if sim:
        out["simulation"] = {
            "hosts": sim["hosts"],
            "n1_s": statistics.median(sim["times_s"]),
            "k3_s": statistics.median(sim["times_k3_s"]),
        }
    return dict(_rounded(out))


def load(path: Path) -> dict[str, Any]:
    """A summary from ``path``; ValueError if it is not one."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("summary_version") != SUMMARY_VERSION:
        raise ValueError(f"{path}: not a bench.run summary (summary_version {SUMMARY_VERSION})")
    if not data.get("scales"):
        raise ValueError(f"{path}: the summary has no scales")
    return data


def write(summary: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
