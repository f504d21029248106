"""How long each finding has been there, from the first-seen dates history gives."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gpuaudit.report.actions import finding_id
from gpuaudit.results import AuditResult, Finding, FindingRef


def _parse(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def finding_age(result: AuditResult, finding: Finding) -> tuple[str, int] | None:
    """(first seen, whole days since) for a finding of known age, else None."""
    if not result.first_seen:
        return None  # no history: no need to hash every finding's id to find that out
    first = result.first_seen.get(finding_id(finding))
    if first is None:
        return None
    seen, now = _parse(first), _parse(result.checked_at)
    if seen is None or now is None:
        return first, 0
    if seen.tzinfo is None or now.tzinfo is None:
        seen, now = seen.replace(tzinfo=None), now.replace(tzinfo=None)
    return first, max(0, (now - seen).days)


def has_ages(result: AuditResult) -> bool:
    """Whether any finding carries an age: renderers add their column only then."""
    return bool(result.first_seen)


def since_last_scan(result: AuditResult) -> dict[str, Any] | None:
    """The JSON summary's findings new, resolved, newly waived and whose waiver expired
    since the last scan, or None without history."""
    history = result.history
    if history is None:
        return None

    def refs(items: list[FindingRef]) -> list[dict[str, str]]:
        ordered = sorted(items, key=lambda r: (r.rule, r.object))
        return [
            {"id": r.id, "rule": r.rule, "object": r.object, "severity": r.severity}
            for r in ordered
        ]

    return {
        "previous_checked_at": history.previous_checked_at,
        "new": refs(history.new),
        "resolved": refs(history.resolved),
        "newly_waived": refs(history.newly_waived),
        "waiver_expired": refs(history.waiver_expired),
    }
