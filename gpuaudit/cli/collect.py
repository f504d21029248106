"""gpuaudit collect: the inventory alone, saved for a later scan --from."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

import click

from gpuaudit.cli.console import Console
from gpuaudit.cli.shared import (
    _live_source,
    connection_options,
    fail,
    record_options,
    telemetry_option,
)
from gpuaudit.common.terminal import printable
from gpuaudit.errors import ExitCode, during
from gpuaudit.vsphere import obtain

COLLECT_EXIT_STATUS_HELP = """\b
Exit status:
  0  the inventory was written
  2  usage error, an unreadable input file (password file, CA bundle), or
     an inventory that cannot be written
  3  server unreachable, TLS verification failed, login failed, or an
     answer that failed for good or could not be understood mid-collection
  70  a bug in gpuaudit (one line names the crash file)
  130  interrupted (Ctrl-C)
  143  stopped by SIGTERM (129: by SIGHUP), after cleaning up"""


@click.command(epilog=COLLECT_EXIT_STATUS_HELP)
@connection_options
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False),
    help="Inventory file to write, or - for standard output.  "
    "[default: reports/inventory-SERVER-TIME.json]",
)
@record_options
@telemetry_option
@click.pass_obj
def collect(
    console: Console,
    output: str | None,
    record: str | None,
    anonymize: bool,
    telemetry_window: dt.timedelta,
    **opts: Any,
) -> None:
    """Collect the inventory only, and save it as JSON for `scan --from`."""
    from gpuaudit.jobs import scan as pipeline

    source = _live_source(console, opts, record, anonymize, telemetry_window)
    inventory = pipeline.obtain(source, console.progress)
    console.done()
    with during("encoding the inventory"):
        data = inventory.to_json().encode("utf-8")
    if output == "-":  # a pipe: the inventory and nothing else on standard output
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        path = _save_inventory(data, output, obtain.server_name(source))
    except OSError as exc:
        fail(f"cannot write {output or 'reports/'}: {exc.strerror or exc}", ExitCode.INPUT)
    click.echo(printable(path))


def _save_inventory(data: bytes, output: str | None, server: str) -> Path:
    """Write to ``output``, or to reports/inventory-SERVER-TIME.json under a name no
    other run has claimed (two collects in the same second take -1, -2, ...)."""
    from gpuaudit.common.files import write_atomic, write_new
    from gpuaudit.report.naming import report_stem

    if output:
        write_atomic(Path(output), data)
        return Path(output)
    stem = report_stem(server, dt.datetime.now(dt.UTC)).replace("gpuaudit-", "inventory-", 1)
    (path,) = write_new(Path("reports"), stem, [(".json", data)])
    return path
