"""What the commands share: option types and decorators, the source of an inventory,
the history's location, and the notice of a job that ends in an error."""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, NoReturn

import click

from gpuaudit.cli.console import Console
from gpuaudit.common.terminal import printable
from gpuaudit.errors import InputError, MissingExtra
from gpuaudit.vsphere import connect, credentials, obtain

# -o - : the one report goes to standard output.
STDOUT = "-"


def fail(message: str, code: int) -> NoReturn:
    click.echo(f"gpuaudit: error: {printable(message)}", err=True)
    sys.exit(code)


GLOBALS = "gpuaudit.globals"  # ctx.meta key: the global options, wherever they were given


NOTICE = "gpuaudit.notice"  # ctx.meta key: where a scan that ends in an error is reported


@dataclass
class Notice:
    """The --notify targets of a scan that has started, and what it scans."""

    targets: list[Any]
    server: str
    deadline: float


def _notify_failure(ctx: click.Context, error: str, status: int) -> None:
    """Tell every --notify target of a scan that it ended in an error (after the error
    line: the notifications may take a while)."""
    notice = ctx.meta.pop(NOTICE, None)
    if notice is None or not notice.targets:
        return
    from gpuaudit.jobs import notify

    message = notify.failure_message(notice.server, error, status)
    for failure in notify.send_all(notice.targets, message, notice.deadline):
        click.echo(f"warning: {printable(failure)}", err=True)


def _done(ctx: click.Context) -> None:
    console = ctx.find_object(Console)
    if console is not None:
        console.done()


def _stopped(ctx: click.Context, what: str, code: int) -> NoReturn:
    _done(ctx)
    click.echo(f"gpuaudit: {what}", err=True)
    sys.exit(code)


def _refuse_password(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        raise click.UsageError(
            "a password on the command line ends up in shell history and in ps; "
            f"instead {credentials.SAFE_WAYS}"
        )


class Seconds(click.ParamType):
    """A timeout in seconds: a finite number from 1 s to a day (nan and inf are not)."""

    name = "seconds"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not connect.MIN_TIMEOUT <= seconds <= connect.MAX_TIMEOUT:  # False for nan
            self.fail(
                f"{value!r}: a timeout is from {connect.MIN_TIMEOUT:g} to "
                f"{connect.MAX_TIMEOUT:g} seconds (a day)",
                param,
                ctx,
            )
        return seconds


class MemorySize(click.ParamType):
    """A memory size: 1.5GiB, 800MiB, 2G, or bytes."""

    name = "size"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        from gpuaudit.jobs.fleet_schedule import SizeError, parse_size

        if isinstance(value, int):
            return value
        try:
            return parse_size(str(value))
        except SizeError as exc:
            self.fail(str(exc), param, ctx)


def connection_options(func: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--server", "-s", help="vCenter or ESXi: host, host:port or URL (GOVC_URL)."),
        click.option("--user", "-u", help="User name (GOVC_USERNAME)."),
        click.option(
            "--password-file",
            type=click.Path(dir_okay=False),
            help="Read the password from the first line of this file.",
        ),
        click.option(
            "--password-stdin", is_flag=True, help="Read the password from standard input."
        ),
        click.option(
            "--password",
            hidden=True,
            expose_value=False,
            allow_from_autoenv=False,  # GPUAUDIT_PASSWORD is read, and safely, elsewhere
            callback=_refuse_password,
            help="Refused: use GPUAUDIT_PASSWORD, --password-file or --password-stdin.",
        ),
        click.option(
            "--insecure", "-k", is_flag=True, help="Skip TLS verification (GOVC_INSECURE)."
        ),
        click.option(
            "--ca-file",
            type=click.Path(exists=True, dir_okay=False),
            help="Verify the server against this CA bundle (GOVC_TLS_CA_CERTS).",
        ),
        click.option(
            "--timeout",
            type=Seconds(),
            default=connect.DEFAULT_TIMEOUT,
            show_default=True,
            help="Seconds to wait for any one answer from the server.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _live_source(
    console: Console,
    opts: dict[str, Any],
    record: str | None,
    anonymize: bool = False,
    window: dt.timedelta | None = None,
) -> obtain.Live:
    try:
        creds = credentials.resolve(
            opts["server"],
            opts["user"],
            password_file=opts["password_file"],
            password_stdin=opts["password_stdin"],
            insecure=opts["insecure"],
            ca_file=opts["ca_file"],
            prompt=lambda text: click.prompt(text, hide_input=True, err=True),
            warn=console.warn,
        )
        connect.parse_server(creds.server)
    except (credentials.CredentialError, connect.ConnectError) as exc:
        raise InputError(str(exc)) from exc
    if anonymize and not record:
        raise click.UsageError("--anonymize applies to a recording: add --record FILE")
    return obtain.Live(
        credentials=creds,
        timeout=opts["timeout"],
        record=Path(record) if record else None,
        anonymize=anonymize,
        telemetry_window=window,
    )


def _pick_source(
    console: Console,
    opts: dict[str, Any],
    from_file: str | None,
    replay: str | None,
    demo: bool,
    record: str | None,
    anonymize: bool,
    window: dt.timedelta | None = None,
) -> obtain.Source:
    chosen = [
        name for name, on in (("--from", from_file), ("--replay", replay), ("--demo", demo)) if on
    ]
    if len(chosen) > 1:
        raise click.UsageError(f"{' and '.join(chosen)} cannot be combined")
    if chosen and (record or anonymize):
        flag = "--record" if record else "--anonymize"
        raise click.UsageError(f"{flag} needs a live server, not {chosen[0]}")
    if from_file:
        return obtain.Saved(Path(from_file))
    if replay:
        return obtain.Replay(Path(replay), telemetry_window=window)
    if demo:
        return obtain.demo_source()
    return _live_source(console, opts, record, anonymize, window)


class Duration(click.ParamType):
    """A telemetry window: 90m, 24h, 7d (a bare number is hours)."""

    name = "duration"
    _UNITS: ClassVar[dict[str, int]] = {"m": 60, "h": 3600, "d": 86400}

    def convert(self, value: Any, param: Any, ctx: Any) -> dt.timedelta:
        if isinstance(value, dt.timedelta):
            return value
        text = str(value).strip().lower()
        unit = text[-1] if text and text[-1] in self._UNITS else "h"
        number = text[:-1] if text and text[-1] in self._UNITS else text
        try:
            seconds = float(number) * self._UNITS[unit]
        except ValueError:
            self.fail(f"{value!r} is not a duration like 90m, 24h or 7d", param, ctx)
        if not 60 <= seconds <= 366 * 86400:
            self.fail(f"{value!r}: the window must be between 1 minute and a year", param, ctx)
        return dt.timedelta(seconds=seconds)


class FormatList(click.ParamType):
    """Report formats, in any case, comma-separated (``-f html,JSON``) or repeated."""

    name = "formats"

    def __init__(self, known: Callable[[], Sequence[str]]) -> None:
        # Known names are looked up when needed: the report package is slow to import.
        self.known = known

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        return "[" + "|".join(self.known()) + "]"

    def convert(self, value: Any, param: Any, ctx: Any) -> tuple[str, ...]:
        if isinstance(value, tuple):
            return value
        names = tuple(name.strip().lower() for name in str(value).split(","))
        for name in names:
            if name not in self.known():
                shown = repr(name) if name else "an empty name"
                known = ", ".join(self.known())
                self.fail(f"{shown} is not a report format; known: {known}", param, ctx)
        return names


def _report_formats() -> Sequence[str]:
    from gpuaudit.report.naming import FORMATS

    return FORMATS


def _flatten(ctx: click.Context, param: click.Parameter, value: Any) -> tuple[str, ...]:
    """-f html,json -f sarif: the formats once each, in the order given."""
    return tuple(dict.fromkeys(name for names in value for name in names))


telemetry_option = click.option(
    "--telemetry-window",
    type=Duration(),
    default="24h",
    show_default=True,
    help="GPU telemetry window ending now: 90m, 24h, 7d.",
)


def record_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--record and --anonymize, the same for scan and collect."""
    func = click.option(
        "--anonymize",
        is_flag=True,
        help="With --record: replace every name by a stable pseudonym, in the cassette "
        "and reports.",
    )(func)
    return click.option(
        "--record",
        type=click.Path(dir_okay=False),
        help="Also record the session to this cassette (secrets scrubbed).",
    )(func)


def output_dir_option(help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--output-dir (-o), a folder that defaults to reports/."""
    return click.option(
        "--output-dir",
        "-o",
        type=click.Path(file_okay=False),
        default="reports",
        show_default=True,
        help=help_text,
    )


def _to_stdout(output_dir: str, formats: Sequence[str]) -> bool:
    """True for -o -: the one report goes to standard output, which then holds nothing
    else. A usage error unless exactly one of the formats a stream takes is given."""
    from gpuaudit.jobs import scan as pipeline

    if output_dir != STDOUT:
        return False
    if len(formats) != 1 or formats[0] not in pipeline.STREAMABLE_FORMATS:
        given = f"not {', '.join(formats)}" if formats else "none given"
        raise click.UsageError(
            "-o - writes one report to standard output: give exactly one of "
            f"--format {' or '.join(pipeline.STREAMABLE_FORMATS)} ({given})"
        )
    return True


def history_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--history and --no-history, the same for scan and history."""
    func = click.option(
        "--no-history", is_flag=True, help="Keep no history: findings have no age."
    )(func)
    return click.option(
        "--history",
        metavar="PATH|URL",
        help="The history store: a SQLite file, or a URL such as postgresql://host/db "
        "(which needs the extra gpuaudit[postgres]).  "
        "[default: $XDG_STATE_HOME/gpuaudit/history.sqlite, else "
        "~/.local/state/gpuaudit/history.sqlite]",
    )(func)


def _history_location(given: str | None, off: bool) -> str | None:
    from gpuaudit.jobs.history import default_location

    if given and off:
        raise click.UsageError("--history and --no-history cannot be combined")
    if off:
        return None
    _check_history(given)
    return given or default_location()


def _check_history(given: str | None) -> None:
    """A --history URL that can never work is a usage error, before anything is scanned;
    one whose driver comes with an extra not installed, one line naming the extra."""
    if not given:
        return
    from gpuaudit.jobs.history import HistoryError, check_location

    try:
        check_location(given)
    except HistoryError as exc:
        raise click.UsageError(f"--history {exc}") from None
    except MissingExtra as exc:
        raise MissingExtra(f"--history {exc.feature}", exc.library, exc.extra) from None
