"""gpuaudit.toml and GPUAUDIT_* variables on the command line.

click does the precedence: an option on the command line wins over its
environment variable (``auto_envvar_prefix``: GPUAUDIT_SCAN_OUTPUT_DIR for
``scan --output-dir``, GPUAUDIT_NO_COLOR for the global ``--no-color``), which
wins over the file (``default_map``), which wins over the default. This module
reads the file into the default map and tells where each option came from, for
``gpuaudit config show``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import click
from click.core import ParameterSource

from gpuaudit.cli import config_file as config
from gpuaudit.common import urls
from gpuaudit.common.terminal import printable

ENV_PREFIX = "GPUAUDIT"
LOADED = "gpuaudit.cli.config_file"  # ctx.meta key: the configuration file read, if any
# Options no file or environment may set: they act at once, or are refused anyway.
NEVER_CONFIGURED = {"help", "version", "config", "password"}
# What click (8.3 on) gives for an option that is not set, and older clicks give as None.
_UNSET = getattr(click.core, "UNSET", None)


class ConfigFileError(click.ClickException):
    """A configuration file that cannot be used: exit 2, one line naming FILE:LINE."""

    exit_code = 2

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"gpuaudit: error: {printable(self.message)}", err=True)


class OnceOption(click.Option):
    """An option given at most once: a repetition is a usage error, where click would
    silently let the last one win (a second --policy used to drop the first)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["multiple"] = True
        super().__init__(*args, **kwargs)

    def value_from_envvar(self, ctx: click.Context) -> Any:
        value = self.resolve_envvar_value(ctx)
        return None if value is None else (value,)  # one value, spaces and all

    def process_value(self, ctx: click.Context, value: Any) -> Any:
        values = super().process_value(ctx, value)
        if values and len(values) > 1:
            raise click.BadParameter(
                f"given {len(values)} times; it takes one file "
                "(more waivers: --waivers FILE, repeatable)",
                ctx,
                self,
            )
        return values[0] if values else None


def configurable(command: click.Command) -> list[click.Option]:
    """The options of ``command`` a file or the environment may set."""
    return [
        p
        for p in command.params
        if isinstance(p, click.Option) and p.name not in NEVER_CONFIGURED and not p.hidden
    ]


def long_name(option: click.Option) -> str:
    """The key of an option in the file: its longest name without the dashes."""
    return max(option.opts, key=len).lstrip("-")


def _converter(option: click.Option) -> Any:
    def convert(value: Any) -> Any:
        try:
            return option.type.convert(value, option, None)
        except click.BadParameter as exc:
            raise ValueError(exc.message) from None

    return convert


def keys_of(command: click.Command) -> dict[str, config.Key]:
    keys = {}
    for option in configurable(command):
        once = isinstance(option, OnceOption)
        kind: config.Kind = (
            "value"
            if once
            else "count"
            if option.count
            else "flag"
            if option.is_flag
            else "list"
            if option.multiple
            else "value"
        )
        keys[long_name(option)] = config.Key(
            str(option.name), kind, _converter(option), as_list=once
        )
    return keys


def read(ctx: click.Context, param: click.Parameter, given: str | None) -> None:
    """The --config callback (eager): find and read the file, and make it the group's
    default map, which click hands each command its own table of."""
    group = ctx.command
    assert isinstance(group, click.Group)
    tables = {
        name: keys_of(command)
        for name, command in group.commands.items()
        # A group that is a command of its own too (history) has its table.
        if not isinstance(command, click.Group) or command.invoke_without_command
    }
    try:
        path = config.locate(given, Path.cwd())
        if path is None:
            return
        loaded = config.load(path, keys_of(group), tables)
    except config.ConfigError as exc:
        raise ConfigFileError(str(exc)) from None
    ctx.default_map = loaded.values
    ctx.meta[LOADED] = loaded


def config_option() -> click.Option:
    return click.Option(
        ["--config"],
        metavar="FILE",
        is_eager=True,
        expose_value=False,
        callback=read,
        help=f"Read options from this TOML file (GPUAUDIT_CONFIG).  [default: ./"
        f"{config.FILE_NAME}, else {config.user_file()}]",
    )


def sources(root: click.Context, command: click.Command, args: Sequence[str]) -> list[list[str]]:
    """Each configurable option of ``command`` as ``args`` and the environment and the
    file set it: its name, its value (no password, no webhook path) and where it came from."""
    sub = click.Context(command, parent=root, info_name=command.name)
    opts, _, _ = command.make_parser(sub).parse_args(args=list(args))
    loaded: config.Loaded | None = root.meta.get(LOADED)
    rows = []
    for option in configurable(command):
        value, source = option.consume_value(sub, opts)
        at, table = sub, str(command.name)
        if (
            source == ParameterSource.DEFAULT
            and root.command.params
            and option.name in {p.name for p in root.command.params}
        ):  # a global option: given to the group, or at the file's top level
            at, table = root, ""
            group_option = next(p for p in root.command.params if p.name == option.name)
            value, source = group_option.consume_value(root, {})
        rows.append(
            [
                f"--{long_name(option)}",
                _shown(option, value),
                _origin(source, option, at, table, loaded),
            ]
        )
    return rows


def _origin(
    source: ParameterSource | None,
    option: click.Option,
    ctx: click.Context,
    table: str,
    loaded: config.Loaded | None,
) -> str:
    if source == ParameterSource.COMMANDLINE:
        return "command line"
    if source == ParameterSource.ENVIRONMENT:
        name = option.envvar or config.environment_name(
            str(ctx.auto_envvar_prefix), option.name or ""
        )
        return f"environment {name}"
    if source == ParameterSource.DEFAULT_MAP and loaded is not None:
        line = loaded.lines.get((table, str(option.name)), 1)
        return f"{loaded.path}:{line}"
    return "default"


def _shown(option: click.Option, value: Any) -> str:
    """A value fit to print: a URL without its password (nor a webhook's path, which
    often carries its token)."""
    if value is None or value is _UNSET or value == ():
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    items = value if isinstance(value, (list, tuple)) else [value]
    shown = []
    for item in items:
        text = ",".join(map(str, item)) if isinstance(item, (list, tuple)) else str(item)
        if urls.scheme_of(text):
            text = urls.shown(text, path=option.name != "notify", mark="***")
        shown.append(text)
    return printable(", ".join(shown))


def table(rows: list[list[str]]) -> str:
    """Aligned columns, one option a line."""
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    return "".join(
        f"{name:<{widths[0]}}  {value:<{widths[1]}}  {origin}\n" for name, value, origin in rows
    )
