"""Commands on reports and the rule catalogue: rules, diff, baseline create and policy
waive."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from gpuaudit.cli.shared import STDOUT
from gpuaudit.common.terminal import printable
from gpuaudit.errors import InputError, during, exit_code
from gpuaudit.results import SEVERITIES

DIFF_EXIT_STATUS_HELP = """\b
Exit status:
  0  no new failed or not-proven finding at or above --fail-on (always 0
     without it)
  1  a new failed or not-proven finding at or above --fail-on
  2  usage error, or a file that is neither a JSON report nor an inventory
  70  a bug in gpuaudit (one line names the crash file)"""


@click.command()
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["text", "json", "markdown"], case_sensitive=False),
    default="text",
    show_default=True,
    help="How the catalogue is printed: aligned text, JSON, or Markdown for docs.",
)
def rules(fmt: str) -> None:
    """List the rule catalogue: id, severity, title, rationale, remediation and references."""
    from gpuaudit.report.catalogue import catalogue_data, catalogue_markdown, catalogue_text
    from gpuaudit.rules import catalogue

    items = catalogue()
    fmt = fmt.lower()
    if fmt == "json":
        click.echo(json.dumps(catalogue_data(items), indent=2))
    elif fmt == "markdown":
        click.echo(catalogue_markdown(items), nl=False)
    else:
        click.echo(catalogue_text(items))


@click.command(epilog=DIFF_EXIT_STATUS_HELP)
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["text", "json"], case_sensitive=False),
    default="text",
    show_default=True,
    help="How the differences are printed: one line per change, or JSON.",
)
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES),
    help="Exit 1 when a new failed finding is at or above this severity.",
)
def diff(old: str, new: str, fmt: str, fail_on: str | None) -> None:
    """Compare two scans: new, resolved and changed findings, and inventory changes.

    OLD and NEW are JSON reports (scan --format json) or saved inventories
    (gpuaudit collect); an inventory is checked with the default policy first.
    """
    from gpuaudit.jobs import scan as pipeline
    from gpuaudit.jobs.diff import format_json, format_text

    done = pipeline.compare(old, new, fail_on)
    with during("printing the differences"):
        click.echo(format_json(done.diff) if fmt == "json" else format_text(done.diff))
    sys.exit(exit_code(done))


@click.group()
def baseline() -> None:
    """Baselines for scheduled scans: the failures already known, which --baseline accepts."""


@baseline.command("create")
@click.argument("report", type=click.Path(dir_okay=False))
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(dir_okay=False),
    help="The baseline file to write (replaced if it exists).",
)
def baseline_create(report: str, output: str) -> None:
    """Make the JSON report REPORT (scan --format json) the baseline for --baseline."""
    from gpuaudit.jobs.lifecycle import LifecycleError, create_baseline

    try:
        failed = create_baseline(report, Path(output))
    except LifecycleError as exc:
        raise InputError(str(exc)) from exc
    except OSError as exc:
        raise InputError(f"cannot write {output}: {exc.strerror or exc}") from exc
    click.echo(f"baseline {printable(output)}: {failed} failed findings accepted")


@click.group()
def policy() -> None:
    """Policy files (docs/policy.md)."""


@policy.command("waive")
@click.argument("report", type=click.Path(dir_okay=False))
@click.option("--rule", "rules", multiple=True, help="Only this rule id; repeatable.")
@click.option("--object", "objects", help="Only objects matching this glob, e.g. 'gpu-*'.")
@click.option(
    "--output",
    "-o",
    default=STDOUT,
    show_default=True,
    type=click.Path(dir_okay=False),
    help="The waiver file to write; never one that exists. '-': standard output.",
)
def policy_waive(report: str, rules: tuple[str, ...], objects: str | None, output: str) -> None:
    """Write waivers for the failed findings of the JSON report REPORT.

    Each waiver's reason, owner and expiry say FILL IN: the policy loader refuses
    the file until every one is filled in, so nothing is waived by accident.
    """
    from gpuaudit.common.files import write_new
    from gpuaudit.jobs.lifecycle import LifecycleError, waiver_skeleton

    try:
        text, count = waiver_skeleton(report, rules, objects)
    except LifecycleError as exc:
        raise InputError(str(exc)) from exc
    if output == STDOUT:
        click.echo(text, nl=False)
        return
    path = Path(output)
    if path.exists():
        raise InputError(f"{output} exists already: waive into a new file and merge it")
    try:
        write_new(path.parent, path.stem, [(path.suffix, text.encode("utf-8"))])
    except OSError as exc:
        raise InputError(f"cannot write {output}: {exc.strerror or exc}") from exc
    click.echo(f"{count} waivers to fill in: {printable(output)}", err=True)
