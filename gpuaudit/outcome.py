"""What a scan concludes: checks run, reports written, the exit status and its summary."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import click

from gpuaudit.files import read_json
from gpuaudit.inventory import Inventory
from gpuaudit.results import SEVERITIES, AuditResult, at_or_above
from gpuaudit.rules.data import NOTHING_EXAMINED
from gpuaudit.terminal import printable

Fail = Callable[[str, int], NoReturn]


def load_policy_or_none(path: str | None, fail: Fail, code: int) -> Any:
    if not path:
        return None
    from gpuaudit.policy_file import PolicyError, load_policy
    from gpuaudit.rules import catalogue

    try:
        return load_policy(path, rule_ids=[r.id for r in catalogue()])
    except PolicyError as exc:
        fail(str(exc), code)


def baseline_keys(path: str | Path) -> set[tuple[str, str]]:
    """The (rule, object) pairs that had failed in an earlier JSON report."""
    data = read_json(path)
    findings = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(findings, list):
        raise ValueError(f"{path}: not a gpuaudit JSON report (no findings list)")
    keys = set()
    for item in findings:
        if isinstance(item, dict) and item.get("status") == "fail":
            keys.add((str(item.get("rule")), str(item.get("object"))))
    return keys


def load_baseline_or_none(path: str | None, fail: Fail, code: int) -> set[tuple[str, str]] | None:
    if not path:
        return None
    try:
        return baseline_keys(path)
    except ValueError as exc:
        fail(str(exc), code)


def check(inventory: Inventory, policy: Any, policy_path: str | None) -> AuditResult:
    from gpuaudit.check import run_checks

    result = run_checks(inventory, policy)
    result.policy_source = policy_path
    return result


def write(
    result: AuditResult, output_dir: Path, formats: Sequence[str], server: str, fail: Fail
) -> list[Path]:
    from gpuaudit.report import write_reports

    try:
        return write_reports(result, output_dir, list(formats), server)
    except OSError as exc:
        fail(f"cannot write reports to {output_dir}: {exc.strerror or exc}", 2)


@dataclass
class Summary:
    threshold: str
    failed: dict[str, int] = field(default_factory=dict)  # unwaived failures by severity
    new: dict[str, int] | None = None  # with a baseline: the new ones only
    waived: int = 0
    passed: int = 0
    blocking: bool = False
    designs: dict[str, str] = field(default_factory=dict)
    tolerates: dict[str, int] = field(default_factory=dict)
    # DATA-02's message when the audit read no host: the scan fails whatever
    # --fail-on, the baseline or the policy say.
    nothing_examined: str | None = None


def summarise(result: AuditResult, fail_on: str, known: set[tuple[str, str]] | None) -> Summary:
    summary = Summary(threshold=fail_on, designs=dict(result.designs))
    summary.failed = {s: 0 for s in SEVERITIES}
    if known is not None:
        summary.new = {s: 0 for s in SEVERITIES}
    for finding in result.findings:
        if finding.status == "waived":
            summary.waived += 1
        elif finding.status == "pass":
            summary.passed += 1
        else:
            summary.failed[finding.severity] += 1
            is_new = known is None or (finding.rule, finding.object) not in known
            if summary.new is not None and is_new:
                summary.new[finding.severity] += 1
            if is_new and at_or_above(finding.severity, fail_on):
                summary.blocking = True
            if finding.rule == NOTHING_EXAMINED:
                summary.nothing_examined = finding.message
                summary.blocking = True
    summary.tolerates = {s.cluster: s.tolerates for s in result.simulations}
    return summary


_COLOURS = {"critical": "magenta", "high": "red", "medium": "yellow", "low": "blue", "info": "cyan"}


def print_summary(summary: Summary, written: list[Path], color: bool, quiet: bool) -> None:
    if quiet:
        return
    if summary.nothing_examined:
        first = f"FAIL: {summary.nothing_examined[:1].upper()}{summary.nothing_examined[1:]}"
        click.echo(click.style(first, fg="red", bold=True), color=color)
    counts = summary.new if summary.new is not None else summary.failed
    label = "new failed findings" if summary.new is not None else "failed findings"
    parts = [
        click.style(f"{counts[s]} {s}", fg=_COLOURS[s] if counts[s] else None) for s in SEVERITIES
    ]
    click.echo(f"{label}: " + ", ".join(parts), color=color)
    click.echo(f"passed: {summary.passed}, waived: {summary.waived}", color=color)
    for cluster, design in sorted(summary.designs.items()):
        k = summary.tolerates.get(cluster)
        tolerance = f", tolerates N+{k}" if k is not None else ""
        # Cluster names come from the server: a \r or an ESC in one is shown, not obeyed.
        line = f"cluster {printable(cluster)}: design {printable(design)}{tolerance}"
        click.echo(line, color=color)
    verdict = (
        click.style("FAIL: nothing was examined (DATA-02)", fg="red", bold=True)
        if summary.nothing_examined
        else click.style(f"FAIL: findings at or above {summary.threshold}", fg="red", bold=True)
        if summary.blocking
        else click.style(f"PASS: nothing at or above {summary.threshold}", fg="green", bold=True)
    )
    click.echo(verdict, color=color)
    for path in written:
        click.echo(f"  {printable(path)}")
