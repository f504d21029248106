"""gpuaudit plan: planned changes applied to a copy of the inventory, audited before
and after."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from gpuaudit.cli.console import Console
from gpuaudit.cli.defaults import OnceOption
from gpuaudit.cli.shared import (
    FormatList,
    _flatten,
    _pick_source,
    _report_formats,
    _to_stdout,
    connection_options,
    output_dir_option,
)
from gpuaudit.common.terminal import printable
from gpuaudit.errors import during, exit_code
from gpuaudit.jobs.outcome import FAIL_ON_CHOICES

PLAN_EXIT_STATUS_HELP = """\b
Exit status:
  0  the changes were applied and the comparison printed (and the reports
     of the after written, with --format), and, with --fail-on, no finding
     counts (as 1 says)
  1  only with --fail-on: a failed or not-proven, unwaived finding of the
     after at or above it that the changes introduce or make worse (not
     open before; failed, where it was not proven; or more severe), or no
     host was read (DATA-02); findings open before and no worse do not count
  2  usage error, or an input that cannot be used: a change file's mistake
     (file:line, names of clusters, hosts and VMs included), the policy,
     the inventory or the cassette
  3  server unreachable, TLS verification failed, or login failed
  70  a bug in gpuaudit (one line names the crash file)"""


@click.command("plan", epilog=PLAN_EXIT_STATUS_HELP)
@connection_options
@click.option(
    "--from",
    "from_file",
    type=click.Path(dir_okay=False),
    help="Plan on a saved inventory JSON (gpuaudit collect).",
)
@click.option("--replay", type=click.Path(dir_okay=False), help="Plan on a recorded cassette.")
@click.option("--demo", is_flag=True, help="Plan on the bundled demo estate.")
@click.option(
    "--change",
    "change_file",
    required=True,
    type=click.Path(dir_okay=False),
    help="The changes, as YAML (docs/plan.md, What-if).",
)
@click.option(
    "--policy",
    cls=OnceOption,
    type=click.Path(dir_okay=False),
    help="Policy YAML, as for scan: both audits are judged by it.",
)
@output_dir_option(
    "Where the reports of the after are written, with --format; '-' writes the one "
    "report to standard output (with exactly one of --format json or sarif; the "
    "comparison then goes to standard error)."
)
@click.option(
    "--format",
    "-f",
    "formats",
    multiple=True,
    type=FormatList(_report_formats),
    callback=_flatten,
    help="Also write these reports of the after, with the comparison (JSON: 'plan').",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON_CHOICES),
    is_flag=False,
    flag_value="high",  # scan's default, for --fail-on given alone
    help="Exit 1 when a finding the changes introduce or make worse is failed or not "
    "proven at or above this severity (alone: high, scan's default), as scan's "
    "--fail-on judges a scan against a baseline (never: report only; DATA-02 still "
    "exits 1). Without it: exit 0.",
)
@click.pass_obj
def plan_command(
    console: Console,
    from_file: str | None,
    replay: str | None,
    demo: bool,
    change_file: str,
    policy: str | None,
    output_dir: str,
    formats: tuple[str, ...],
    fail_on: str | None,
    **opts: Any,
) -> None:
    """What if: apply planned changes to a copy of the inventory; compare before and after.

    Prints, per cluster, its N+k, headroom, the hosts that cannot enter
    maintenance mode without GPU VM downtime and the rolling upgrade's downtime,
    before and after, and the findings that appear or go; with --fail-on, the
    verdict on the findings the changes introduce or make worse, for a
    change-review job to gate on.

    \b
    Examples:
      gpuaudit plan --demo --change add-host.yaml
      gpuaudit plan --from inventory.json --change retire.yaml -f json,html
      gpuaudit plan --from inventory.json --change retire.yaml --fail-on high
      gpuaudit plan --from inventory.json --change retire.yaml -o - -f json
    """
    from gpuaudit.jobs import scan as pipeline
    from gpuaudit.report.plan import plan_text, verdict_text

    to_stdout = _to_stdout(output_dir, formats)
    source = _pick_source(console, opts, from_file, replay, demo, None, False)
    done = pipeline.plan(
        source,
        change_file,
        sys.stdout.buffer if to_stdout else Path(output_dir),
        formats,
        policy,
        progress=console.progress,
        fail_on=fail_on,
    )
    console.done()
    with during("printing the comparison"):
        # With -o -, standard output holds the report and nothing else.
        click.echo(plan_text(done.comparison), nl=False, err=to_stdout)
        if fail_on is not None:
            click.echo("", err=to_stdout)
            click.echo(verdict_text(done.after), nl=False, err=to_stdout)
        for path in done.reports:
            click.echo(f"wrote {printable(str(path))}")
    sys.exit(exit_code(done))
