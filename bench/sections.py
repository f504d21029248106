"""Parts of the benchmark's page: report sizes, the earlier run beside this one, the profile."""

from __future__ import annotations

from typing import Any

FORMATS = ("html", "xlsx", "json", "junit", "sarif")
# Connect and logout take milliseconds: their profiles would only show pyVmomi's start-up.
PROFILED_PHASES = ("collect", "check", *FORMATS)


def figure(value: float | None, digits: int = 2) -> str:
    if value is None or value != value:  # NaN
        return "n/a"
    return f"{value:,.{digits}f}"


def sizes(scales: list[dict[str, Any]]) -> list[str]:
    """Output MB and MB per 1,000 VMs of every format at every scale."""
    head = "| format |" + "".join(f" {s['estate']['label']}: MB | MB / 1,000 VMs |" for s in scales)
    lines = [
        "## Report sizes",
        "",
        "Each format's file from the first run at each scale; VMs as gpuaudit collected them.",
        "",
        head,
        "|---|" + "---|---|" * len(scales),
    ]
    for fmt in FORMATS:
        cells = []
        for s in scales:
            size = s.get("sizes", {}).get(fmt)
            vms = s["estate_seen"].get("vms") or s["estate"]["vms"]
            if size is None:
                cells.append(" n/a | n/a |")
            else:
                cells.append(f" {figure(size / 1e6, 1)} | {figure(size / 1e6 / vms * 1000)} |")
        lines.append(f"| {fmt} |" + "".join(cells))
    return [*lines, ""]


def _row(name: str, before: str, after: str) -> str:
    return f"| {name} | {before} | {after} |"


def before_after(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The earlier summary's largest scale beside this run's (bench/summary.py)."""
    b, a = before["scales"][-1], after["scales"][-1]

    def runs(s: dict[str, Any]) -> str:
        return f"{s['runs']} run" + ("s" if s["runs"] != 1 else "")

    lines = [
        "## Before and after",
        "",
        f"The largest scale of the earlier run (commit {before['commit']}, {before['date']}; "
        f"{before['source']}) beside this run's.",
    ]
    if (b["label"], b["vms"]) != (a["label"], a["vms"]):
        lines.append(
            f"The estates differ (scale {b['label']} against scale {a['label']}): compare "
            "ratios and sizes per 1,000 VMs, not seconds."
        )
    lines += [
        "",
        f"| | before: {before['commit']}, {runs(before)} | now: {after['commit']}, {runs(after)} |",
        "|---|---|---|",
        _row(
            "estate",
            f"scale {b['label']}: {b['hosts']:,} hosts, {b['vms']:,} VMs",
            f"scale {a['label']}: {a['hosts']:,} hosts, {a['vms']:,} VMs",
        ),
    ]

    def both(name: str, key: str, digits: int = 2, unit: str = "") -> None:
        lines.append(
            _row(
                name,
                figure(b.get(key), digits) + (unit if b.get(key) is not None else ""),
                figure(a.get(key), digits) + (unit if a.get(key) is not None else ""),
            )
        )

    both("floor s", "floor_s")
    both("collect s", "collect_s")
    both("collect / floor", "collect_vs_floor", unit="x")
    both("full scan s", "scan_s")
    both("full scan / floor", "scan_vs_floor", unit="x")
    for phase in ("check", *FORMATS):
        lines.append(
            _row(
                f"{phase} s",
                figure(b.get("phases_s", {}).get(phase)),
                figure(a.get("phases_s", {}).get(phase)),
            )
        )
    both("peak RSS MiB", "peak_rss_mib", 0)
    lines.append(
        _row(
            "SOAP requests (pages)",
            f"{b['requests']} ({b['pages']})",
            f"{a['requests']} ({a['pages']})",
        )
    )
    both("MB received", "mb_received", 1)
    both("lab start s", "lab_start_s", 1)
    both("HTML opens in headless Chromium, s", "html_open_s")
    for fmt in FORMATS:
        lines.append(
            _row(
                f"{fmt} MB per 1,000 VMs",
                _per_thousand(b, fmt),
                _per_thousand(a, fmt),
            )
        )
    sb, sa = before.get("simulation") or {}, after.get("simulation") or {}
    lines.append(_row("simulation N+1 s", figure(sb.get("n1_s"), 3), figure(sa.get("n1_s"), 3)))
    lines.append(
        _row("simulation N+k, k up to 3, s", figure(sb.get("k3_s"), 3), figure(sa.get("k3_s"), 3))
    )
    notes = before.get("notes") or []
    return [*lines, "", *[f"- {note}" for note in notes], *([""] if notes else [])]


def _per_thousand(s: dict[str, Any], fmt: str) -> str:
    mb = s.get("sizes_mb", {}).get(fmt)
    return "n/a" if mb is None else figure(mb / s["vms"] * 1000)


def profile(scale: dict[str, Any]) -> list[str]:
    """Per phase, the functions with the most time in their own code, as shares."""
    prof = scale.get("profile") or {}
    if not prof:
        return []
    lines = [
        f"## Where the time goes at scale {scale['estate']['label']}",
        "",
        "One more gpuaudit run at this scale, after the measured ones, under cProfile: per",
        "phase, the functions that spent the most time in their own code (not in what they",
        "call), with their share of the phase's profiled time. cProfile slows what it",
        "watches, function calls more than loops inside one function, so these are shares,",
        "not seconds; the measured seconds of each phase are in the tables above.",
        "",
        "| phase | function (own time) | share | calls |",
        "|---|---|---|---|",
    ]
    for phase in PROFILED_PHASES:
        entry = prof.get(phase)
        if not entry:
            continue
        measured = scale["phases"].get(phase, {}).get("wall_s")
        for i, fn in enumerate(entry["top"]):
            name = f"{phase} ({figure(measured)} s measured)" if i == 0 else ""
            lines.append(
                f"| {name} | `{fn['function']}` | {fn['share'] * 100:.1f}% | {fn['calls']:,} |"
            )
    return [*lines, ""]
