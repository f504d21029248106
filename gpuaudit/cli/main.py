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
import sys
from dataclasses import dataclass
from typing import Any, NoReturn

import click

from gpuaudit import __version__
from gpuaudit.cli import collect, config_command, history, interrupts, logs, plan, reports, scan
from gpuaudit.cli.console import Console, colour_allowed
from gpuaudit.cli.defaults import ENV_PREFIX, config_option
from gpuaudit.cli.scan import EXIT_STATUS_HELP
from gpuaudit.cli.shared import GLOBALS, _done, _notify_failure, _stopped
from gpuaudit.common.terminal import printable
from gpuaudit.errors import AuditError, ExitCode, exit_code


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
# Each command group is a module of its own; the group adds the global options to each.
for command in (
    scan.scan_command,
    collect.collect,
    reports.rules,
    reports.diff,
    plan.plan_command,
    reports.baseline,
    reports.policy,
    history.fleet,
    history.history_command,
    config_command.config_group,
):
    main.add_command(command)
