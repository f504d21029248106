"""What a person sees: progress, warnings and the scan's summary.

On a terminal the long phases show one live line with their counts and elapsed
time; anywhere else (cron, CI) they become a few plain log lines, never one per
object. Colour only on a terminal, and never with NO_COLOR set
(https://no-color.org) or with --no-color. Every name a server or a file gave
passes ``printable`` first, and nothing is read as markup.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console as RichConsole
from rich.progress import Progress as LiveLine
from rich.progress import SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text

from gpuaudit.common.progress import Step
from gpuaudit.common.terminal import printable
from gpuaudit.jobs.outcome import Summary
from gpuaudit.results import ScanHistory, severity_rank
from gpuaudit.verdict.judgement import verdict_line

if TYPE_CHECKING:
    from gpuaudit.jobs.fleet import TargetOutcome

log = logging.getLogger("gpuaudit")

LOG_EVERY = 10.0  # seconds between two log lines of one phase's counts, off a terminal
RULE_LINES = 10  # failed rules named in the summary; the rest are counted
CLUSTER_LINES = 10  # clusters named in the summary; likewise
FINDING_LINES = 10  # new, and resolved, findings named since the last scan; likewise

_COLOURS = {"critical": "magenta", "high": "red", "medium": "yellow", "low": "blue", "info": "cyan"}
_VERDICTS = {"PASS": "green", "FAIL": "red"}


def colour_allowed(no_color: bool = False) -> bool:
    """False with --no-color, or with NO_COLOR set to anything but the empty string."""
    return not no_color and not os.environ.get("NO_COLOR")


def _rich(stderr: bool, color: bool, terminal: bool | None = None) -> RichConsole:
    """A rich console that reads no markup, guesses no highlighting and wraps nothing."""
    return RichConsole(
        stderr=stderr,
        color_system="standard" if color else None,
        no_color=not color,
        force_terminal=terminal,
        markup=False,
        emoji=False,
        highlight=False,
        soft_wrap=True,
    )


class Console:
    """Progress on a terminal; plain log lines anywhere else (cron, CI)."""

    def __init__(self, quiet: bool = False, color: bool = True, live: bool = True) -> None:
        self._lock = threading.RLock()
        self._line: LiveLine | None = None
        self._task: TaskID | None = None
        self._phase = ""
        self._logged: dict[str, float] = {}
        self.configure(quiet, color, live)

    def configure(self, quiet: bool, color: bool, live: bool) -> None:
        """``live``: a live line on a terminal (off: log lines, as with --log-format json)."""
        self.done()
        self.quiet, self.color, self.live = quiet, color, live
        self._err = _rich(stderr=True, color=color)

    @property
    def tty(self) -> bool:
        """Standard error is a terminal (FORCE_COLOR brings colour, not the live line)."""
        return _isatty(sys.stderr)

    def progress(self, report: str | Step) -> None:
        """A phase starts (a message) or goes on (a Step with its counts)."""
        if self.quiet:
            return
        if self.live and self.tty:
            self._show(report)
        elif isinstance(report, str) or self._due(report):
            log.info(printable(report))

    def _due(self, step: Step) -> bool:
        """A phase's counts are logged when it ends, and at most every LOG_EVERY seconds."""
        now = time.monotonic()
        with self._lock:
            last = self._logged.setdefault(step.phase, now)
            if step.finished or now - last >= LOG_EVERY:
                self._logged[step.phase] = now
                return True
        return False

    def _show(self, report: str | Step) -> None:
        phase = report if isinstance(report, str) else report.phase
        counts = "" if isinstance(report, str) else report.counts()
        with self._lock:
            if self._line is None:
                self._line = LiveLine(
                    SpinnerColumn(style="cyan"),
                    TextColumn("{task.description}", markup=False),
                    TextColumn("{task.fields[counts]}", markup=False),
                    TimeElapsedColumn(),
                    console=self._err,
                    transient=True,
                )
                self._line.start()
            if self._task is not None and phase == self._phase:
                self._line.update(self._task, counts=printable(counts))
                return
            if self._task is not None:  # one line: the phase now under way, timed from its start
                self._line.remove_task(self._task)
            self._phase = phase
            self._task = self._line.add_task(printable(phase), total=None, counts=counts)
            self._line.refresh()

    def done(self) -> None:
        """Take the live line away, before anything else is printed."""
        with self._lock:
            if self._line is not None:
                self._line.stop()
            self._line, self._task, self._phase = None, None, ""

    def warn(self, message: str) -> None:
        self.done()
        if not self.live:  # --log-format json: a job reads standard error as JSON lines
            log.warning(printable(message))
            return
        # Colour only on a terminal (or with FORCE_COLOR): a log file or a pipe gets plain text.
        style = "yellow" if self.color and self._err.is_terminal else ""
        self._err.print(Text(f"warning: {printable(message)}", style=style))

    def print_summary(self, summary: Summary, written: Sequence[Path]) -> None:
        self.done()
        print_summary(summary, written, color=self._colour_out(), quiet=self.quiet)

    def print_fleet(self, outcomes: Sequence[TargetOutcome], summary: Sequence[Path]) -> None:
        """One verdict line per target with its reports, then the fleet summary's files."""
        rows = [(o.target.name, o.verdict, o.error, [str(p) for p in o.reports]) for o in outcomes]
        self.print_fleet_rows(rows, summary)

    def print_fleet_rows(
        self, rows: Sequence[tuple[str, str, str | None, list[str]]], summary: Sequence[Path]
    ) -> None:
        """One line per vCenter (name, verdict, what to add in brackets, lines under it),
        then the fleet summary's files."""
        self.done()
        if self.quiet:
            return
        out = _rich(stderr=False, color=self._colour_out())
        for name, verdict, note, lines in rows:
            line = f"{printable(name)}: {verdict}"
            if note:
                line += f" ({printable(note)})"
            out.print(Text(line, style=_VERDICTS.get(verdict, "magenta")))
            for text in lines:
                out.print(Text(f"  {printable(text)}"))
        if summary:
            out.print(Text("fleet summary:"))
        for path in summary:
            out.print(Text(f"  {printable(path)}"))

    def _colour_out(self) -> bool:
        """Colour on standard output: allowed, and a terminal there (or FORCE_COLOR set)."""
        return self.color and _rich(stderr=False, color=True).is_terminal


def _isatty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty()) if callable(isatty) else False


def print_summary(summary: Summary, written: Sequence[Path], color: bool, quiet: bool) -> None:
    """The counts, the failed rules worst first, the clusters that fail, the verdict."""
    if quiet:
        return
    out = _rich(stderr=False, color=color, terminal=color or None)

    def say(*parts: str | tuple[str, str]) -> None:
        out.print(Text.assemble(*parts))

    if summary.nothing_examined:
        first = f"FAIL: {summary.nothing_examined[:1].upper()}{summary.nothing_examined[1:]}"
        say((printable(first), "bold red"))
    counts = summary.new if summary.new is not None else summary.failed
    label = "new failed findings" if summary.new is not None else "failed findings"
    parts: list[str | tuple[str, str]] = [f"{label}: "]
    for i, severity in enumerate(counts):
        parts += [", "] if i else []
        parts.append(
            (f"{counts[severity]} {severity}", _COLOURS[severity] if counts[severity] else "")
        )
    say(*parts)
    if summary.notices:
        say((f"notices (info): {summary.notices}", _COLOURS["info"]))
    for rule in summary.failed_rules[:RULE_LINES]:
        objects = f"{rule.objects} object" + ("" if rule.objects == 1 else "s")
        if summary.new is not None:
            objects += f", {rule.new} new"
        say(
            "  ",
            (f"{rule.severity:<8}", _COLOURS[rule.severity]),
            f" {rule.rule:<8} {printable(rule.title)} ({objects})",
        )
    if len(summary.failed_rules) > RULE_LINES:
        say(_more(len(summary.failed_rules) - RULE_LINES, "rule"))
    unproven = sum(summary.unproven.values())
    if unproven:
        say(
            (f"not proven: {unproven}", "bold yellow"),
            " (" + ", ".join(f"{n} {s}" for s, n in summary.unproven.items() if n) + ")",
        )
    say(f"passed: {summary.passed}, waived: {summary.waived}")
    if summary.history is not None:
        for line in since_last_scan(summary.history):
            say(line)
    failing = sorted(c for c in summary.designs if c in summary.failing_clusters)
    for cluster in failing[:CLUSTER_LINES]:
        k = summary.tolerates.get(cluster)
        tolerance = f", tolerates N+{k}" if k is not None else ""
        up_to = summary.tolerates_unproven.get(cluster)
        if k is not None and up_to is not None and up_to > k:
            tolerance += f" (up to N+{up_to} not proven)"
        # Cluster names come from the server: a \r or an ESC in one is shown, not obeyed.
        design = printable(summary.designs[cluster])
        say(f"cluster {printable(cluster)}: design {design}{tolerance}")
    if len(failing) > CLUSTER_LINES:
        say(_more(len(failing) - CLUSTER_LINES, "cluster"))
    for line in schedule_lines(summary):
        say(line)
    line = verdict_line(
        summary.judgement.verdict, summary.threshold, bool(summary.nothing_examined), _new(summary)
    )
    verdict = (line, VERDICT_STYLES[line.split(":", 1)[0]])
    say(verdict)
    for path in written:
        say(f"  {printable(path)}")


VERDICT_STYLES = {"FAIL": "bold red", "NOT PROVEN": "bold yellow", "PASS": "bold green"}


def _new(summary: Summary) -> str:
    """'new ' with a baseline: only new findings count."""
    return "new " if summary.judgement.states is not None else ""


def schedule_lines(summary: Summary) -> list[str]:
    """What a cron log must keep: the baseline's news, expired waivers, the top actions."""
    lines = []
    if summary.baseline_created is not None:
        accepted = sum(summary.failed.values()) + summary.notices
        lines.append(
            f"baseline created: {printable(summary.baseline_created)} "
            f"({accepted} failed findings accepted)"
        )
    if summary.resolved is not None:
        lines.append(
            f"against the baseline: {len(summary.new_findings)} new, {summary.unchanged} "
            f"unchanged, {summary.resolved} resolved, {summary.newly_waived} waived"
            + (f", {summary.waiver_expired} waiver expired" if summary.waiver_expired else "")
        )
    if summary.new_findings:
        lines.append(f"new findings: {len(summary.new_findings)}")
        for finding in summary.new_findings[:RULE_LINES]:
            lines.append(f"  {finding.severity:<8} {finding.rule:<8} {printable(finding.object)}")
        if len(summary.new_findings) > RULE_LINES:
            lines.append(_more(len(summary.new_findings) - RULE_LINES, "finding"))
    if summary.expired_waivers:
        lines.append(f"expired waivers: {len(summary.expired_waivers)}")
        for waiver in summary.expired_waivers[:RULE_LINES]:
            lines.append(
                f"  {waiver.rule:<8} {printable(waiver.object)} "
                f"(owner {printable(waiver.owner)}, expired {waiver.expires})"
            )
        if len(summary.expired_waivers) > RULE_LINES:
            lines.append(_more(len(summary.expired_waivers) - RULE_LINES, "waiver"))
    if summary.top_actions:
        lines.append("top actions:")
        for action in summary.top_actions:
            remedy = " ".join(action.remediation.split())
            lines.append(f"  {action.rule:<8} {action.count:>4} x  {printable(remedy)}")
    return lines


def summary_text(summary: Summary, written: Sequence[Path]) -> str:
    """The summary as the console prints it without colour, for an email."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        print_summary(summary, written, color=False, quiet=False)
    return buffer.getvalue()


def since_last_scan(history: ScanHistory) -> list[str]:
    """The failed findings new, resolved, newly waived and whose waiver expired since the
    last scan of the same vCenter."""
    if history.previous_checked_at is None:
        return ["history: the first recorded scan of this vCenter"]
    # Waived is not resolved, and a waiver expired is not new: said apart when there are any.
    apart = [
        f", {len(refs)} {label}"
        for label, refs in (
            ("newly waived", history.newly_waived),
            ("waiver expired", history.waiver_expired),
        )
        if refs
    ]
    lines = [
        f"since the last scan ({history.previous_checked_at}): "
        f"{len(history.new)} new, {len(history.resolved)} resolved{''.join(apart)} failed findings"
    ]
    for label, refs in (
        ("new", history.new),
        ("resolved", history.resolved),
        ("waived", history.newly_waived),
        ("expired", history.waiver_expired),
    ):
        ordered = sorted(refs, key=lambda r: (severity_rank(r.severity), r.rule, r.object))
        for ref in ordered[:FINDING_LINES]:
            lines.append(f"  {label:<8} {ref.severity:<8} {ref.rule:<8} {printable(ref.object)}")
        if len(ordered) > FINDING_LINES:
            lines.append(_more(len(ordered) - FINDING_LINES, f"{label} finding"))
    return lines


def _more(hidden: int, noun: str) -> str:
    return f"  ... and {hidden} more {noun}{'' if hidden == 1 else 's'}"
