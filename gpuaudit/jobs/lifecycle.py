"""A baseline and waivers made from a JSON report.

``create_baseline`` checks that a file is a gpuaudit JSON report and writes it as
the baseline a scheduled scan compares with. ``waiver_skeleton`` turns the failed
findings of a report into waivers in the policy file format (docs/policy.md)
whose reason, owner and expiry are placeholders: the policy loader refuses them
until someone fills them in, so a skeleton never waives anything by itself.

A waiver's object is read back as an fnmatch pattern (docs/policy.md), so each
object name is written with its pattern characters escaped (:func:`literal_pattern`):
a VM named ``*`` gets a waiver for ``[*]``, which covers that VM and no other.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from gpuaudit.common.files import read_json, write_atomic
from gpuaudit.model.policy_file import PLACEHOLDER, POLICY_VERSION
from gpuaudit.results import OPEN_STATUSES
from gpuaudit.rules.data import NOTHING_EXAMINED

# fnmatch has no escape function: a one-character class holds the character itself.
_PATTERN_ESCAPES = str.maketrans({"*": "[*]", "?": "[?]", "[": "[[]"})


def literal_pattern(name: str) -> str:
    """The fnmatch pattern that matches ``name`` alone (``vm[1]*`` gives ``vm[[]1][*]``)."""
    return name.translate(_PATTERN_ESCAPES)


class LifecycleError(ValueError):
    """A report that cannot be used; the message is one line and names the file."""


def _findings(path: str | Path) -> list[dict[str, Any]]:
    try:
        data = read_json(path)
    except ValueError as exc:
        raise LifecycleError(str(exc)) from exc
    findings = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(findings, list):
        raise LifecycleError(f"{path}: not a gpuaudit JSON report (no findings list)")
    return [f for f in findings if isinstance(f, dict)]


def create_baseline(report: str | Path, output: Path) -> int:
    """Copy the JSON report ``report`` to ``output``; return how many findings it fails."""
    failed = sum(f.get("status") == "fail" for f in _findings(report))
    write_atomic(output, Path(report).read_bytes())
    return failed


def waiver_skeleton(
    report: str | Path, rules: Sequence[str] = (), objects: str | None = None
) -> tuple[str, int]:
    """The policy file text waiving the failed and not-proven findings of ``report``, and how many.

    ``rules`` keeps only those rule ids; ``objects``, only objects matching that
    glob. Each (rule, object) appears once.
    """
    wanted = {r.upper() for r in rules}
    seen: dict[tuple[str, str], None] = {}
    for item in _findings(report):
        rule, name = str(item.get("rule")), str(item.get("object"))
        if item.get("status") not in OPEN_STATUSES or rule == NOTHING_EXAMINED:  # never waived
            continue
        if wanted and rule.upper() not in wanted:
            continue
        if objects is not None and not fnmatch.fnmatchcase(name, objects):
            continue
        seen[(rule, name)] = None
    waivers = [
        {
            "rule": rule,
            "object": literal_pattern(name),
            "reason": f"{PLACEHOLDER}: why this is accepted",
            "owner": f"{PLACEHOLDER}: who answers for it",
            "expires": f"{PLACEHOLDER}: YYYY-MM-DD",
        }
        for rule, name in seen
    ]
    header = (
        f"# Waivers for the failed findings of {Path(report).name}.\n"
        f"# Fill in every {PLACEHOLDER}: the policy loader refuses this file until then.\n"
    )
    body = yaml.safe_dump(
        {"version": POLICY_VERSION, "waivers": waivers},
        sort_keys=False,
        allow_unicode=True,
        width=1000,
    )
    return header + body, len(waivers)
