"""Commands on the scan history: history (its listing and prune) and fleet report."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from gpuaudit.cli.console import Console
from gpuaudit.cli.shared import _check_history, fail, output_dir_option
from gpuaudit.errors import ExitCode, InputError

HISTORY_EXIT_STATUS_HELP = """\b
Exit status:
  0  the scans were listed or exported
  2  usage error, a history store that cannot be read, or an output file
     that cannot be written
  70  a bug in gpuaudit (one line names the crash file)"""


HISTORY_STORE = "gpuaudit.history_store"  # history's --history (or [history]), for prune


HISTORY_PRUNE_EXIT_STATUS_HELP = """\b
Exit status:
  0  the old scans were deleted, or there were none
  2  usage error (DAYS not a whole number of at least 1), or a history store
     that cannot be opened or written
  70  a bug in gpuaudit (one line names the crash file)"""


FLEET_REPORT_EXIT_STATUS_HELP = """\b
Exit status:
  0  the summary was written, and no vCenter's latest scan exited 1
  1  the latest scan of at least one vCenter exited 1 (findings at or
     above its --fail-on, or nothing examined)
  2  usage error, a history store that cannot be read or holds no scan, or
     a summary that cannot be written
  70  a bug in gpuaudit (one line names the crash file)"""


@click.group()
def fleet() -> None:
    """Views of many vCenters at once."""


@fleet.command("report", epilog=FLEET_REPORT_EXIT_STATUS_HELP)
@click.option("--history", metavar="PATH|URL", help="The history store (default as for scan).")
@output_dir_option("Where the fleet summary (HTML, xlsx, JSON) is written.")
@click.pass_obj
def fleet_report(console: Console, history: str | None, output_dir: str) -> None:
    """The fleet summary from the latest scan of every vCenter in the history, with its age.

    \b
    Examples:
      gpuaudit fleet report --history postgresql://audit@db.example.com/gpuaudit
      gpuaudit fleet report -o /srv/gpuaudit/reports
    """
    import datetime as dt

    from gpuaudit.jobs import fleet as fleets
    from gpuaudit.jobs.history import HistoryError, default_location
    from gpuaudit.report.fleet import age_text

    _check_history(history)
    now = dt.datetime.now(dt.UTC)
    try:
        data = fleets.history_json(history or default_location(), now)
    except HistoryError as exc:
        raise InputError(str(exc)) from exc
    written = fleets.write_summary(data, [], Path(output_dir), now)
    rows: list[tuple[str, str, str | None, list[str]]] = [
        (t["name"], t["verdict"], f"scanned {age_text(t['age_seconds'])} ago", [])
        for t in data["targets"]
    ]
    console.print_fleet_rows(rows, written)
    sys.exit(int(data["exit_code"]))


@click.group("history", epilog=HISTORY_EXIT_STATUS_HELP, invoke_without_command=True)
@click.option("--history", metavar="PATH|URL", help="The history store (default as for scan).")
@click.option(
    "--server",
    "-s",
    help="Only the scans of this vCenter: any name it was scanned by, its own name, or its "
    "key (instance UUID); every scan of it, whatever it was named.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="The newest scans of each vCenter.",
)
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(["text", "csv", "json"], case_sensitive=False),
    default="text",
    show_default=True,
    help="A table per vCenter, or every scan as CSV or JSON.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False),
    help="Write to this file instead of standard output.",
)
@click.pass_context
def history_command(
    ctx: click.Context,
    history: str | None,
    server: str | None,
    limit: int,
    fmt: str,
    output: str | None,
) -> None:
    """List the recorded scans of each vCenter with their counts, newest first
    (or, with prune, delete the old ones)."""
    if ctx.invoked_subcommand is not None:  # prune: the store named here, or in [history]
        ctx.meta[HISTORY_STORE] = history
        return
    from gpuaudit.common.files import write_atomic
    from gpuaudit.jobs.history import HistoryError, default_location
    from gpuaudit.jobs.history.listing import export

    _check_history(history)
    try:
        text = export(history or default_location(), server, limit, fmt.lower())
    except HistoryError as exc:
        raise InputError(str(exc)) from exc
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        write_atomic(Path(output), text.encode("utf-8"))
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}", ExitCode.INPUT)


@history_command.command("prune", epilog=HISTORY_PRUNE_EXIT_STATUS_HELP)
@click.option(
    "--older-than",
    "days",
    type=click.IntRange(min=1),
    required=True,
    metavar="DAYS",
    help="Delete the scans checked more than DAYS days ago.",
)
@click.option("--history", metavar="PATH|URL", help="The history store (default as for scan).")
@click.option(
    "--server",
    "-s",
    help="Only the scans of this vCenter (any name it was scanned by, its own name, or its "
    "key), whatever it was named; else all.",
)
@click.pass_context
def history_prune(ctx: click.Context, days: int, history: str | None, server: str | None) -> None:
    """Delete the scans older than DAYS days, with their findings, clusters and
    capacity (and, for all vCenters, the fleet runs left without a scan); print
    what was removed."""
    import datetime as dt

    from gpuaudit.jobs.history import HistoryError, default_location
    from gpuaudit.jobs.history.listing import prune

    history = history or ctx.meta.get(HISTORY_STORE)
    _check_history(history)
    now = dt.datetime.now(dt.UTC)
    try:
        text = prune(history or default_location(), days, server, now)
    except HistoryError as exc:
        raise InputError(str(exc)) from exc
    click.echo(text, nl=False)
