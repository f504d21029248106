"""gpuaudit scan: one vCenter, or a fleet of them, from inventory to reports, history
and notifications."""

from __future__ import annotations

import contextlib
import datetime as dt
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

import click

from gpuaudit.cli.console import Console
from gpuaudit.cli.defaults import OnceOption
from gpuaudit.cli.shared import (
    NOTICE,
    FormatList,
    MemorySize,
    Notice,
    Seconds,
    _flatten,
    _history_location,
    _pick_source,
    _report_formats,
    _to_stdout,
    connection_options,
    history_options,
    output_dir_option,
    record_options,
    telemetry_option,
)
from gpuaudit.errors import InputError, during, exit_code
from gpuaudit.jobs.outcome import FAIL_ON_CHOICES
from gpuaudit.vsphere import obtain

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


@click.command(epilog=EXIT_STATUS_HELP)
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
