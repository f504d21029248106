"""When each finding was first seen, carried forward from a baseline JSON report.

A finding of the baseline keeps the ``first_seen`` date it already had; one
without (the baseline was its first report) was first seen when the baseline was
checked. A finding the baseline does not hold keeps no date: the next scan that
takes this report as its baseline gives it this scan's date.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any, cast

from gpuaudit.files import read_json
from gpuaudit.report.actions import finding_id
from gpuaudit.results import AuditResult, Finding, ObjectKind

# A passed finding is no issue: it has no first-seen date to carry.
_OPEN = ("fail", "waived")


def _day(text: Any) -> str | None:
    """The ISO date at the start of ``text``, or None when it holds none."""
    if not isinstance(text, str):
        return None
    try:
        return date.fromisoformat(text[:10]).isoformat()
    except ValueError:
        return None


def first_seen_dates(path: str | Path) -> dict[str, str]:
    """Finding id to the ISO date it was first seen, from the JSON report at ``path``."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise ValueError(f"{path}: not a gpuaudit JSON report (no findings list)")
    source = data.get("source")
    if not isinstance(source, dict):
        source = {}
    checked = _day(source.get("checked_at")) or _day(source.get("collected_at"))
    dates: dict[str, str] = {}
    for item in data["findings"]:
        if not isinstance(item, dict) or item.get("status") not in _OPEN:
            continue
        seen = _day(item.get("first_seen")) or checked
        if seen is None:
            continue
        # The id depends on the rule, the object's kind and its name only.
        kind = cast(ObjectKind, str(item.get("object_kind")))
        key = finding_id(
            Finding(str(item.get("rule")), str(item.get("object")), kind, "fail", "info", "")
        )
        dates[key] = min(seen, dates.get(key, seen))
    return dates


def carry_first_seen(result: AuditResult, dates: dict[str, str]) -> None:
    """Give each open finding of ``result`` its first-seen date from ``dates``."""
    for finding in result.findings:
        if finding.status in _OPEN:
            finding.first_seen = dates.get(finding_id(finding))
