"""gpuaudit config show: each option of scan, its value and where it came from."""

from __future__ import annotations

import click

from gpuaudit.cli.scan import scan_command
from gpuaudit.common.terminal import printable


@click.group("config")
def config_group() -> None:
    """The configuration file (gpuaudit.toml) and GPUAUDIT_* variables (docs/scheduling.md)."""


@config_group.command(
    "show", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
)
@click.argument("scan_args", nargs=-1, type=click.UNPROCESSED, metavar="[SCAN OPTIONS]...")
@click.pass_context
def config_show(ctx: click.Context, scan_args: tuple[str, ...]) -> None:
    """Show each option of scan, its value and where it came from: the command line
    (SCAN OPTIONS), the environment, the configuration file (FILE:LINE) or the default.
    No password, nor a webhook's path, is shown."""
    from gpuaudit.cli.defaults import LOADED, sources, table

    root = ctx.find_root()
    loaded = root.meta.get(LOADED)
    click.echo(f"configuration file: {printable(str(loaded.path)) if loaded else '(none)'}")
    try:
        rows = sources(root, scan_command, scan_args)
    except click.UsageError as exc:
        raise click.UsageError(f"scan: {exc.format_message()}") from None
    click.echo(table(rows), nl=False)
