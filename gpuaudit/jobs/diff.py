"""What changed between two scans: findings new, resolved, newly waived, whose waiver
expired, and changed; inventory added and removed.

Either side may be a JSON report (``gpuaudit scan --format json``) or a saved
inventory (``gpuaudit collect``); an inventory is checked first, with the default
policy, so that both sides have findings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuaudit.common.files import read_json
from gpuaudit.common.terminal import printable, printable_lines
from gpuaudit.results import OPEN_STATUSES, SEVERITIES
from gpuaudit.verdict.changes import WAIVED, change

Key = tuple[str, str]


class DiffInputError(ValueError):
    """A file that is neither a gpuaudit JSON report nor an inventory."""


@dataclass
class InventoryChange:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


@dataclass
class ReportDiff:
    # Open: failed, or not proven (unwaived either way); each finding classified as
    # every comparison classifies it (gpuaudit.verdict.changes).
    new: list[dict[str, Any]] = field(default_factory=list)  # open now, absent or passing before
    resolved: list[dict[str, Any]] = field(default_factory=list)  # open before, passing or gone
    newly_waived: list[dict[str, Any]] = field(default_factory=list)  # open before, waived now
    waiver_expired: list[dict[str, Any]] = field(default_factory=list)  # waived before, open now
    # Same rule and object, open on both sides, with another status, severity or message.
    changed: list[dict[str, Any]] = field(default_factory=list)
    inventory: dict[str, InventoryChange] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (
            self.new
            or self.resolved
            or self.newly_waived
            or self.waiver_expired
            or self.changed
            or any(c.added or c.removed for c in self.inventory.values())
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "new": self.new,
            "resolved": self.resolved,
            "newly_waived": self.newly_waived,
            "waiver_expired": self.waiver_expired,
            "changed": self.changed,
            "inventory": {
                kind: {"added": c.added, "removed": c.removed} for kind, c in self.inventory.items()
            },
        }


def load_side(path: str | Path) -> dict[str, Any]:
    """A JSON report as a dict; an inventory is checked and rendered as one."""
    data = read_json(path, DiffInputError)
    if isinstance(data, dict) and "findings" in data:
        problem = _report_problem(data)
        if problem:
            raise DiffInputError(f"{path}: not a usable gpuaudit JSON report: {problem}")
        return data
    if isinstance(data, dict) and "schema_version" in data:
        from gpuaudit.inventory import Inventory, InventoryError
        from gpuaudit.report import render_json
        from gpuaudit.verdict.check import run_checks

        try:
            inventory = Inventory.from_dict(data)
        except InventoryError as exc:
            raise DiffInputError(f"{path}: {exc}") from None
        return render_json(run_checks(inventory))  # the default policy
    raise DiffInputError(f"{path}: neither a gpuaudit JSON report nor an inventory")


# What diff reads of a report, and the types it needs: text, or null where optional.
_FINDING_TEXT = {"rule": True, "object": True, "status": True, "severity": False, "message": False}
_NAMED_LISTS = ("hosts", "vms", "datastores")
_HOST_LISTS = {"gpus": ("pci_id", "model"), "vgpu_profiles": ("name",)}


def _report_problem(report: dict[str, Any]) -> str | None:
    """What makes ``report`` unusable for a diff (a wrong type, a missing key), or None."""
    findings = report["findings"]
    if not isinstance(findings, list):
        return "findings: expected a list"
    for i, item in enumerate(findings):
        problem = _fields_problem(item, f"findings[{i}]", _FINDING_TEXT)
        if problem:
            return problem
        if item.get("status") in OPEN_STATUSES and item.get("severity") not in SEVERITIES:
            return f"findings[{i}].severity: expected one of {', '.join(SEVERITIES)}"
    inventory = report.get("inventory")
    if inventory is None:
        return None
    if not isinstance(inventory, dict):
        return "inventory: expected an object"
    for kind in _NAMED_LISTS:
        items = inventory.get(kind, [])
        if not isinstance(items, list):
            return f"inventory.{kind}: expected a list"
        for i, item in enumerate(items):
            problem = _fields_problem(item, f"inventory.{kind}[{i}]", {"name": True})
            if problem:
                return problem
            if kind != "hosts":
                continue
            for part, keys in _HOST_LISTS.items():
                where = f"inventory.hosts[{i}].{part}"
                children = item.get(part, [])
                if not isinstance(children, list):
                    return f"{where}: expected a list"
                for j, child in enumerate(children):
                    problem = _fields_problem(child, f"{where}[{j}]", dict.fromkeys(keys, False))
                    if problem:
                        return problem
    return None


def _fields_problem(item: Any, where: str, fields: dict[str, bool]) -> str | None:
    """Why ``item`` is not an object with these text fields (True: required), or None."""
    if not isinstance(item, dict):
        return f"{where}: expected an object"
    for key, required in fields.items():
        if key not in item:
            if required:
                return f"{where}: no {key!r}"
            continue
        value = item[key]
        if not isinstance(value, str) and (required or value is not None):
            return f"{where}.{key}: expected text, not {type(value).__name__}"
    return None


def _compared(report: dict[str, Any]) -> dict[Key, dict[str, Any]]:
    """The findings failed, not proven or waived, by (rule, object); passes are left
    out, as a finding absent is: neither is open. A finding now only not proven is not
    resolved."""
    return {
        (str(f.get("rule")), str(f.get("object"))): f
        for f in report.get("findings", [])
        if isinstance(f, dict) and f.get("status") in (*OPEN_STATUSES, WAIVED)
    }


_COMPARED = ("status", "severity", "message")


def _status(finding: dict[str, Any] | None) -> str | None:
    return None if finding is None else str(finding.get("status"))


def _inventory_keys(report: dict[str, Any]) -> dict[str, set[str]]:
    inv = report.get("inventory") or {}
    hosts = [h for h in inv.get("hosts", []) if isinstance(h, dict)]
    return {
        "hosts": {h.get("name", "") for h in hosts},
        "vms": {v.get("name", "") for v in inv.get("vms", []) if isinstance(v, dict)},
        "gpus": {
            f"{h.get('name')}/{g.get('pci_id')} ({g.get('model')})"
            for h in hosts
            for g in h.get("gpus", [])
        },
        "vgpu_profiles": {
            f"{h.get('name')}: {p.get('name')}" for h in hosts for p in h.get("vgpu_profiles", [])
        },
        "datastores": {d.get("name", "") for d in inv.get("datastores", [])},
    }


def diff_reports(old: dict[str, Any], new: dict[str, Any]) -> ReportDiff:
    before, after = _compared(old), _compared(new)
    result = ReportDiff()
    for key in sorted(before.keys() | after.keys()):
        was, now = before.get(key), after.get(key)
        how = change(_status(was), _status(now))
        if how in ("new", "waiver_expired", "newly_waived"):
            getattr(result, how).append(now)
        elif how == "resolved" and was is not None:
            result.resolved.append(was)
        if how != "unchanged" or was is None or now is None:
            continue
        if any(was.get(k) != now.get(k) for k in _COMPARED):
            result.changed.append(
                {
                    "rule": key[0],
                    "object": key[1],
                    "before": {k: was.get(k) for k in _COMPARED},
                    "after": {k: now.get(k) for k in _COMPARED},
                }
            )
    old_inv, new_inv = _inventory_keys(old), _inventory_keys(new)
    for kind in old_inv:
        result.inventory[kind] = InventoryChange(
            added=sorted(new_inv[kind] - old_inv[kind]),
            removed=sorted(old_inv[kind] - new_inv[kind]),
        )
    return result


def format_json(diff: ReportDiff) -> str:
    """The diff as JSON, with bidirectional controls and lone surrogates escaped
    (``\\u202e``): the same data, and a document any UTF-8 stream can write."""
    text = json.dumps(diff.to_dict(), indent=1, ensure_ascii=False, allow_nan=False)
    return printable_lines(text)


def format_text(diff: ReportDiff) -> str:
    """The diff for a terminal or a mail: one line per change."""
    lines: list[str] = []

    def finding(sign: str, item: dict[str, Any]) -> str:
        where = f"{item.get('rule')} [{_grade(item)}] {item.get('object')}"
        return f"  {sign} {where}: {item.get('message')}"

    for title, items, sign in (
        ("New findings", diff.new, "+"),
        ("Resolved", diff.resolved, "-"),
        ("Newly waived", diff.newly_waived, "w"),  # still failing: accepted, not resolved
        ("Waiver expired", diff.waiver_expired, "!"),
    ):
        lines.append(f"{title}: {len(items)}")
        lines.extend(finding(sign, i) for i in items)
    lines.append(f"Changed: {len(diff.changed)}")
    for c in diff.changed:
        lines.append(
            f"  ~ {c['rule']} {c['object']}: {_grade(c['before'])} -> {_grade(c['after'])}"
            f" ({c['after']['message']})"
        )
    for kind, moved in diff.inventory.items():
        if moved.added or moved.removed:
            title = kind.replace("_", " ").capitalize()
            lines.append(f"{title}: +{len(moved.added)} -{len(moved.removed)}")
            lines.extend(f"  + {name}" for name in moved.added)
            lines.extend(f"  - {name}" for name in moved.removed)
    if diff.empty:
        lines.append("No changes.")
    # Names and messages come from the servers: control characters are shown, not obeyed.
    return "\n".join(printable(line) for line in lines)


def _grade(item: dict[str, Any]) -> str:
    """'high', or 'high, not proven' for a finding not proven."""
    severity = str(item.get("severity"))
    return f"{severity}, not proven" if item.get("status") == "unproven" else severity
