"""The gpuaudit command line: a thin layer of click over the library.

Exit status, for people and for scheduled jobs:

\b
  0  no failed or not-proven, unwaived finding at or above --fail-on
  1  at least one failed (FAIL) or not-proven (NOT PROVEN), unwaived finding
     at or above --fail-on, or the audit examined nothing (DATA-02: no host
     was read)
  2  usage error, or an input file that cannot be read (policy, baseline,
     inventory, cassette)
  3  the server cannot be reached, TLS verification failed, login failed, or
     the server's answers failed for good or could not be understood mid-scan
  70  a bug: an unexpected exception; one line names what failed and the
      crash file that holds the traceback (-v: on standard error too)
  130  interrupted (Ctrl-C)
  143  stopped by SIGTERM (129: by SIGHUP), after cleaning up

A history store that cannot be opened or written changes none of these: the
reports are written and one warning line says what was not recorded.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, ClassVar, NoReturn

import click

from gpuaudit import __version__
from gpuaudit.cli import interrupts, logs
from gpuaudit.cli.console import Console, colour_allowed
from gpuaudit.cli.defaults import ENV_PREFIX, OnceOption, config_option
from gpuaudit.common.terminal import printable
from gpuaudit.errors import AuditError, ExitCode, InputError, MissingExtra, during, exit_code
from gpuaudit.jobs.outcome import FAIL_ON_CHOICES
from gpuaudit.results import SEVERITIES
from gpuaudit.vsphere import connect, credentials, obtain

# -o - : the one report goes to standard output.
STDOUT = "-"

EXIT_STATUS_HELP = """\b
Exit status:
  0  no failed or not-proven, unwaived finding at or above --fail-on
  1  a failed (FAIL) or not-proven (NOT PROVEN), unwaived finding at or above
     --fail-on, or no host was read (DATA-02), whatever --fail-on,
     --baseline or the policy say
  2  usage error, or an unreadable input file (policy, baseline, inventory,
     cassette, targets)
  3  server unreachable, TLS verification failed, login failed, or an
     answer that failed for good or could not be understood mid-scan
     (with --targets: the worst status of any target)
  70  a bug in gpuaudit: one line names what failed and the crash file
      with the traceback; reports and history written before it are kept
  130  interrupted (Ctrl-C)
  143  stopped by SIGTERM (129: by SIGHUP), after cleaning up
  A history store that cannot be opened or written changes none of these:
  the reports are written and one warning line says what was not recorded."""

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

DIFF_EXIT_STATUS_HELP = """\b
Exit status:
  0  no new failed or not-proven finding at or above --fail-on (always 0
     without it)
  1  a new failed or not-proven finding at or above --fail-on
  2  usage error, or a file that is neither a JSON report nor an inventory
  70  a bug in gpuaudit (one line names the crash file)"""


def fail(message: str, code: int) -> NoReturn:
    click.echo(f"gpuaudit: error: {printable(message)}", err=True)
    sys.exit(code)


GLOBALS = "gpuaudit.globals"  # ctx.meta key: the global options, wherever they were given


@dataclass
class GlobalOptions:
    verbose: int = 0
    quiet: bool = False
    no_color: bool = False
    log_format: str = "text"


def _global_option(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """Record a global option, given before the subcommand or after it; apply it if after."""
    given = ctx.meta.setdefault(GLOBALS, GlobalOptions())
    if not value:
        return
    if param.name == "verbose":
        given.verbose += value
    else:
        setattr(given, str(param.name), value)
    console = ctx.find_object(Console)
    if console is not None:  # the group has started: the subcommand changes its mind
        _apply(given, console)


def _global_options() -> list[click.Option]:
    """-v, -q, --no-color and --log-format: one new set for the group and each subcommand."""
    return [
        click.Option(
            ["-v", "--verbose"],
            count=True,
            expose_value=False,
            callback=_global_option,
            help="More log output (-vv: with SOAP debugging).",
        ),
        click.Option(
            ["-q", "--quiet"],
            is_flag=True,
            expose_value=False,
            callback=_global_option,
            help="Only warnings and errors.",
        ),
        click.Option(
            ["--no-color"],
            is_flag=True,
            expose_value=False,
            callback=_global_option,
            help="No colour (also when NO_COLOR is set).",
        ),
        click.Option(
            ["--log-format"],
            type=click.Choice(logs.FORMATS),
            expose_value=False,
            callback=_global_option,
            help="Log lines as text, or as one JSON object per line.  [default: text]",
        ),
    ]


def _apply(given: GlobalOptions, console: Console) -> None:
    # JSON log lines are for jobs that ship their logs: no live line, progress is logged.
    text = given.log_format == "text"
    console.configure(given.quiet, colour_allowed(given.no_color), live=text)
    logs.setup(given.verbose, given.quiet, given.log_format)


class Gpuaudit(click.Group):
    """The command group; an interruption or a stopping signal ends it with one line.

    Every subcommand takes the global options too: `gpuaudit scan -q --demo`.
    """

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        cmd.params.extend(_global_options())
        super().add_command(cmd, name)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # only without standalone mode: the caller's to handle
        except Exception as exc:  # before or after a subcommand ran: still a crash
            arguments = kwargs.get("args") or (args[0] if args else None) or sys.argv[1:]
            verbose = any(_is_verbose(str(a)) for a in arguments)
            _crashed(exc, verbose, " ".join(map(str, arguments)))

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with interrupts.stop_on_signals():
                return super().invoke(ctx)
        except AuditError as exc:  # the one place an error becomes an exit status
            _done(ctx)
            code = exit_code(exc)
            click.echo(f"gpuaudit: error: {printable(str(exc))}", err=True)
            _notify_failure(ctx, str(exc), code)
            sys.exit(code)
        except click.UsageError as exc:  # after --notify was read: the job is broken too
            _notify_failure(ctx, exc.format_message(), ExitCode.INPUT)
            raise
        except (KeyboardInterrupt, click.Abort):  # Abort: Ctrl-C at a prompt
            _stopped(ctx, "interrupted", ExitCode.INTERRUPTED)
        except interrupts.Stopped as exc:
            _stopped(ctx, f"stopped by {exc}", exc.exit_code)
        except (click.ClickException, click.exceptions.Exit):
            raise
        except Exception as exc:  # a bug: never the status of findings
            with contextlib.suppress(Exception):
                _done(ctx)
            given = ctx.meta.get(GLOBALS, GlobalOptions())
            _crashed(exc, given.verbose > 0, ctx.command_path, ctx)


def _is_verbose(argument: str) -> bool:
    return argument == "--verbose" or (
        argument.startswith("-") and not argument.startswith("--") and set(argument[1:]) == {"v"}
    )


def _crashed(
    exc: BaseException, verbose: bool, command: str, ctx: click.Context | None = None
) -> NoReturn:
    """An unexpected exception: one line naming what failed, exit status 70.

    The traceback goes to a crash file whose path the line gives, and with -v to
    standard error as well. Whatever was written before (reports, history) stays.
    A scan with --notify tells its targets too.
    """
    from gpuaudit.cli import crash

    path = crash.write_crash_file(exc, command)
    if verbose or path is None:
        with contextlib.suppress(Exception):
            click.echo(crash.traceback_text(exc), err=True, nl=False)
    line = crash.crash_line(exc, path)
    click.echo(f"gpuaudit: crash: {printable(line)}", err=True)
    if ctx is not None:
        with contextlib.suppress(Exception):  # a crash stays a crash, whatever the sending does
            _notify_failure(ctx, line, ExitCode.CRASH)
    sys.exit(ExitCode.CRASH)


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


@click.group(
    cls=Gpuaudit,
    # GPUAUDIT_SCAN_SERVER sets scan --server, GPUAUDIT_NO_COLOR --no-color (cli_config).
    context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": ENV_PREFIX},
    epilog=EXIT_STATUS_HELP,
)
@click.version_option(
    __version__, "-V", "--version", prog_name="gpuaudit", allow_from_autoenv=False
)
@click.pass_context
def main(ctx: click.Context) -> None:
    """Audit VMware vSphere estates that run GPU workloads.

    gpuaudit reads a vCenter's GPUs, vGPU profiles, HA settings, storage paths
    and vMotion network, checks them against GPU HA and vMotion rules, simulates
    the loss of each host, and writes HTML, Excel, JSON, JUnit and SARIF reports.
    """
    given = ctx.meta.setdefault(GLOBALS, GlobalOptions())
    ctx.obj = console = Console()
    _apply(given, console)
    ctx.call_on_close(logs.teardown)
    ctx.call_on_close(console.done)


main.params.extend([config_option(), *_global_options()])


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


@main.command(epilog=EXIT_STATUS_HELP)
@connection_options
@click.option(
    "--from",
    "from_file",
    type=click.Path(dir_okay=False),
    help="Analyse a saved inventory JSON offline.",
)
@click.option(
    "--replay", type=click.Path(dir_okay=False), help="Analyse a recorded cassette offline."
)
@click.option(
    "--demo",
    is_flag=True,
    help="Scan the bundled demo estate (no vCenter needed; kept in no history unless --history).",
)
@record_options
@telemetry_option
@output_dir_option(
    "Where reports are written; '-' writes the one report to standard output "
    "(with exactly one of --format json or sarif; the summary then goes to standard error)."
)
@click.option(
    "--format",
    "-f",
    "formats",
    multiple=True,
    type=FormatList(_report_formats),
    callback=_flatten,
    help="Report formats, comma-separated or repeated, in any case.  [default: html, xlsx, json]",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON_CHOICES),
    default="high",
    show_default=True,
    help="Exit 1 when a failed or not-proven finding is at or above this severity; never: "
    "report only (DATA-02, nothing examined, still exits 1).",
)
@click.option(
    "--policy",
    cls=OnceOption,
    type=click.Path(dir_okay=False),
    help="Policy YAML: intent, waivers, severity overrides; one file (more waivers: --waivers).",
)
@click.option(
    "--waivers",
    multiple=True,
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Waivers YAML (version and waivers, as `policy waive` writes them), added to "
    "the policy's; repeatable.",
)
@click.option(
    "--strict-waivers",
    is_flag=True,
    help="A waiver that matches no finding, or a cluster pattern no cluster, is an "
    "error (exit 2), not a warning: for CI.",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False),
    help="An earlier JSON report: count only new findings.",
)
@click.option(
    "--baseline-create",
    is_flag=True,
    help="With --baseline: if that file does not exist, create it from this scan "
    "(the first night of a scheduled job).",
)
@click.option(
    "--keep",
    type=click.IntRange(min=1),
    metavar="N",
    help="Keep only the newest N report sets of this server in --output-dir.",
)
@click.option(
    "--latest",
    is_flag=True,
    help="Also name this scan's reports gpuaudit-SERVER-latest.EXT (a symlink, or a copy).",
)
@click.option(
    "--notify",
    multiple=True,
    metavar="URL",
    help="Send the summary when the scan ends: smtp://, smtps:// (email with the HTML "
    "report) or https:// (webhook); repeatable. See docs/scheduling.md.",
)
@click.option(
    "--notify-format",
    type=click.Choice(["json", "slack", "teams"]),
    default="json",
    show_default=True,
    help="The webhooks' JSON shape, unless a URL says format=... in its query.",
)
@click.option(
    "--notify-timeout",
    type=Seconds(),
    default=60.0,
    show_default=True,
    help="Seconds each notification may take in all, however slowly its server answers.",
)
@click.option(
    "--kubernetes",
    "kubernetes",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="The JSON of 'kubectl get nodes,pods --all-namespaces -o json', one file per "
    "Kubernetes cluster (repeatable): checks that Kubernetes can reschedule the GPU pods "
    "of a lost host (docs/kubernetes.md). Needs the extra gpuaudit[kubernetes].",
)
@click.option(
    "--targets",
    type=click.Path(dir_okay=False),
    help="Scan every vCenter in this YAML file concurrently, and write a fleet summary.",
)
@click.option(
    "--target-index",
    type=click.IntRange(min=0),
    metavar="N",
    help="With --targets: scan only the target at this index (0 is the first), with the "
    "file's defaults, and write no fleet summary; one Kubernetes Indexed Job pod per target "
    "(docs/scale.md).",
)
@click.option(
    "--max-memory",
    type=MemorySize(),
    metavar="SIZE",
    help="With --targets: start targets, largest first, only while their expected peak "
    "memory stays within SIZE (1.5GiB, 800MiB); default half of the machine's memory "
    "(docs/scale.md).",
)
@history_options
@click.pass_obj
def scan_command(
    console: Console,
    from_file: str | None,
    replay: str | None,
    demo: bool,
    record: str | None,
    anonymize: bool,
    telemetry_window: dt.timedelta,
    output_dir: str,
    formats: tuple[str, ...],
    fail_on: str,
    policy: str | None,
    waivers: tuple[str, ...],
    strict_waivers: bool,
    baseline: str | None,
    baseline_create: bool,
    keep: int | None,
    latest: bool,
    notify: tuple[str, ...],
    notify_format: str,
    notify_timeout: float,
    targets: str | None,
    target_index: int | None,
    max_memory: int | None,
    history: str | None,
    no_history: bool,
    kubernetes: tuple[str, ...],
    **opts: Any,
) -> None:
    """Collect, check and report on one vCenter (or a saved inventory, or a fleet).

    \b
    Examples:
      gpuaudit scan --demo
      GPUAUDIT_PASSWORD=... gpuaudit scan --server vc01.example.com --user audit@vsphere.local
      gpuaudit scan --from inventory.json --format json --format sarif
      gpuaudit scan --from inventory.json --kubernetes prod-k8s.json
      gpuaudit scan --targets vcenters.yaml
    """
    from gpuaudit.jobs import scan as pipeline
    from gpuaudit.report.naming import DEFAULT_FORMATS

    formats = formats or DEFAULT_FORMATS
    notify_targets = _notify_targets(notify, notify_format)
    # From here, a scan that ends in an error tells the --notify targets (_notify_failure).
    named = opts["server"] or from_file or replay or ("demo" if demo else "(no --server)")
    notice = Notice(notify_targets, named, notify_timeout)
    click.get_current_context().meta[NOTICE] = notice
    to_stdout = _to_stdout(output_dir, formats)
    if targets:
        given = [
            o
            for o, on in (
                ("--server", opts["server"]),
                ("--from", from_file),
                ("--replay", replay),
                ("--demo", demo),
                ("--record", record),
                ("--anonymize", anonymize),
                ("--policy", policy),
                ("--waivers", waivers),
                ("--baseline", baseline),
                ("--baseline-create", baseline_create),
                ("--keep", keep),
                ("--latest", latest),
                ("--notify", notify),
                ("--kubernetes", kubernetes),
            )
            if on
        ]
        if to_stdout:
            given.insert(0, "-o -")
        if given:
            raise click.UsageError(f"--targets cannot be combined with {given[0]}")
        _scan_fleet(
            console,
            targets,
            Path(output_dir),
            formats,
            fail_on,
            history,
            no_history,
            target_index,
            max_memory,
        )
    if target_index is not None:
        raise click.UsageError("--target-index needs --targets FILE")
    if max_memory is not None:
        raise click.UsageError("--max-memory needs --targets FILE")
    if baseline_create and not baseline:
        raise click.UsageError("--baseline-create needs --baseline FILE: the file to create")
    if to_stdout and (keep or latest):
        raise click.UsageError(f"{'--keep' if keep else '--latest'} needs an --output-dir")
    store = _history_location(history, no_history)
    if demo and not history:  # the demo estate is no vCenter: it keeps a history only if asked
        store = None
    source = _pick_source(
        console, opts, from_file, replay, demo, record, anonymize, telemetry_window
    )
    notice.server = obtain.server_name(source)
    out: Path | BinaryIO = sys.stdout.buffer if to_stdout else Path(output_dir)
    done = pipeline.audit(
        source,
        out,
        formats,
        fail_on,
        policy,
        baseline,
        progress=console.progress,
        create_baseline=baseline_create,
        keep=keep,
        latest=latest,
        history=store,
        kubernetes=kubernetes,
        waivers=waivers,
        strict_waivers=strict_waivers,
    )
    console.done()
    for warning in done.warnings:
        console.warn(warning)
    # With -o -, standard output holds the report and nothing else.
    shown: contextlib.AbstractContextManager[Any] = (
        contextlib.redirect_stdout(sys.stderr) if to_stdout else contextlib.nullcontext()
    )
    with shown, during("printing the summary"):
        console.print_summary(done.summary, done.reports)
    click.get_current_context().meta.pop(NOTICE, None)  # the scan ended: its own summary is sent
    _send_notifications(console, notify_targets, done, notice.server, notify_timeout)
    sys.exit(exit_code(done))


scan_command.name = "scan"


def _notify_targets(urls: Sequence[str], fmt: str) -> list[Any]:
    """Every --notify URL, checked before the scan starts."""
    from gpuaudit.jobs import notify

    try:
        return [notify.parse_target(url, fmt) for url in urls]
    except notify.NotifyError as exc:
        raise click.UsageError(f"--notify {exc}") from exc


def _send_notifications(
    console: Console, targets: list[Any], done: Any, server: str, deadline: float = 60.0
) -> None:
    """Send the summary; a failure is one warning line, and the exit status stays the scan's."""
    if not targets:
        return
    from gpuaudit.cli.console import summary_text
    from gpuaudit.jobs import notify
    from gpuaudit.jobs.outcome import verdict

    with during("composing the notification"):
        summary = done.summary
        counts = summary.new if summary.new is not None else summary.failed
        label = "new failed findings" if summary.new is not None else "failed findings"
        data = {"server": server, **summary.to_dict(), "reports": [str(p) for p in done.reports]}
        subject = f"gpuaudit {server}: {verdict(summary)}, {sum(counts.values())} {label}"
        if summary.nothing_examined:  # DATA-02: the night failed, whatever the counts say
            why = summary.nothing_examined
            subject = f"gpuaudit {server}: FAIL, nothing examined (DATA-02): {why}"
        message = notify.Message(
            subject=subject,
            text=summary_text(summary, done.reports),
            data=data,
            html=next((p for p in done.reports if p.suffix == ".html"), None),
        )
    for failure in notify.send_all(targets, message, deadline):
        console.warn(failure)


def _scan_fleet(
    console: Console,
    targets: str,
    output_dir: Path,
    formats: tuple[str, ...],
    fail_on: str,
    history: str | None = None,
    no_history: bool = False,
    index: int | None = None,
    max_memory: int | None = None,
) -> NoReturn:
    import datetime as dt
    import os

    from gpuaudit.jobs import fleet

    try:
        loaded = fleet.load_targets(targets)
    except fleet.TargetsError as exc:
        raise InputError(str(exc)) from exc
    if index is not None:
        if index >= len(loaded.targets):
            raise click.UsageError(
                f"--target-index {index}: {targets} has {len(loaded.targets)} targets "
                f"(0 to {len(loaded.targets) - 1})"
            )
        loaded.targets = [loaded.targets[index]]
    store = _history_location(history, no_history)
    now = dt.datetime.now(dt.UTC)
    outcomes = fleet.scan_fleet(
        loaded,
        output_dir,
        formats,
        fail_on,
        dict(os.environ),
        console.progress,
        now,
        store,
        max_memory,
    )
    console.done()
    # One target of many (a pod of an Indexed Job): the history is where they meet.
    alone = index is not None
    summary = [] if alone else fleet.write_fleet_summary(outcomes, output_dir, now)
    warnings = [f"{o.target.name}: {w}" for o in outcomes for w in o.warnings]
    if store is not None and not warnings and not alone:
        warnings = fleet.record_fleet_run(outcomes, store, now)
    for warning in warnings:
        console.warn(warning)
    console.print_fleet(outcomes, summary)
    sys.exit(fleet.fleet_exit_code(outcomes))


@main.command(epilog=COLLECT_EXIT_STATUS_HELP)
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


@main.command()
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


@main.command(epilog=DIFF_EXIT_STATUS_HELP)
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


@main.command("plan", epilog=PLAN_EXIT_STATUS_HELP)
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


@main.group()
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


@main.group()
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


@main.group()
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


@main.group("history", epilog=HISTORY_EXIT_STATUS_HELP, invoke_without_command=True)
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


@main.group("config")
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
