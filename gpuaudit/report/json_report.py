"""The JSON report: versioned, described by gpuaudit/schemas/report.schema.json."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO

import gpuaudit
from gpuaudit.inventory import Inventory, InventoryError, _build
from gpuaudit.report.actions import finding_id
from gpuaudit.report.age import finding_age, since_last_scan
from gpuaudit.report.summary import summarize
from gpuaudit.results import (
    AuditResult,
    ClusterHeadroom,
    ClusterMaintenance,
    ClusterRolling,
    ClusterSimulation,
    ClusterStranded,
    Finding,
    Judgement,
    PlanComparison,
    Rule,
    RuleError,
    Waiver,
)
from gpuaudit.verdict.judgement import judgement_of

# Bumped when a field is removed or changes meaning, in the JSON report or in the
# workbook's columns; adding a field keeps it. 3: the workbook's Findings columns
# moved (Key first, ID last) and Top Actions lost Finding IDs (Action Findings).
REPORT_SCHEMA_VERSION = 3
SCHEMA_ID = "https://gpuaudit.invalid/schemas/report-3.schema.json"


class ReportError(ValueError):
    """A JSON report that cannot be loaded."""


class Made:
    """A list whose items are made as it is iterated: the report's findings, each made
    into its mapping as it is written, rather than all of them held at once (over
    200,000 at the configuration maximum). Encoded as the list it would be."""

    def __init__(self, items: Sequence[Any], make: Callable[[Any], Any]) -> None:
        self.items = items
        self.make = make

    def __iter__(self) -> Iterator[Any]:
        return map(self.make, self.items)

    def __len__(self) -> int:
        return len(self.items)


# A dataclass's field names, by class: dataclasses.fields() builds its tuple anew on
# every call, once per finding, host and VM (400,000 calls at the configuration maximum).
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _fields(value: Any) -> dict[str, Any]:
    """A dataclass instance's fields by name, one level only: the encoder comes back
    to ``_jsonable`` for nested dataclasses, which gives what dataclasses.asdict
    would, without its deep copies."""
    names = _FIELD_NAMES.get(type(value))
    if names is None:
        names = _FIELD_NAMES[type(value)] = tuple(f.name for f in dataclasses.fields(value))
    return {name: getattr(value, name) for name in names}


def _jsonable(value: Any) -> Any:
    if type(value) in _FIELD_NAMES or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    ):
        return _fields(value)
    if isinstance(value, Made):
        return list(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    return str(value)


def render_json(result: AuditResult) -> dict[str, Any]:
    """The report as plain JSON data (dicts, lists, strings, numbers, booleans, null)."""
    # A round trip turns dataclasses into objects, tuples into lists and anything
    # a rule put in its evidence that JSON cannot hold into a string. Compact, so
    # that the C encoder does it.
    text = json.dumps(
        report_document(result), ensure_ascii=False, allow_nan=False, default=_jsonable
    )
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def report_document(result: AuditResult) -> dict[str, Any]:
    """The report as ``render_json`` gives it, but holding the result's own objects.

    Encoded with ``_jsonable`` it is the same JSON; ``write_json`` writes it without
    the round trip, which at the configuration maximums holds a 250 MB text and
    the data read back from it at once.
    """
    inv = result.inventory
    judgement = judgement_of(result)
    doc: dict[str, Any] = {
        "$schema": SCHEMA_ID,
        "report_schema_version": REPORT_SCHEMA_VERSION,
        "generator": {"name": "gpuaudit", "version": result.tool_version or gpuaudit.__version__},
        "source": {
            "server": inv.source,
            "vcenter": inv.vcenter,
            "collected_at": inv.collected_at,
            "checked_at": result.checked_at,
        },
        "summary": summarize(result).to_dict(),
        "rules_version": result.rules_version,
        "rules": result.rules,
        # Each finding leads with its stable id, the one the workbook and SARIF show.
        "findings": Made(
            result.findings,
            lambda f: {
                "id": finding_id(f),
                **_jsonable(f),
                **_age(result, f),
                **_state(judgement, f),
            },
        ),
        "simulations": result.simulations,
        "designs": dict(result.designs),
        "policy": {
            "source": result.policy_source,
            "waivers": result.waivers,
            "expired_waivers": result.expired_waivers,
        },
        "errors": result.errors,
        # Its fields, each encoded as it is written: Inventory.to_dict (dataclasses.asdict)
        # would first deep-copy all of it, half of the report's time at the maximum.
        "inventory": _fields(inv),
    }
    if result.kubernetes:  # only with scan --kubernetes: other reports stay as they were
        doc["kubernetes"] = [
            {**dataclasses.asdict(k), "k8s_02_holds": k.holds} for k in result.kubernetes
        ]
    if result.maintenance:  # clusters with GPU VMs: each host's maintenance readiness
        doc["maintenance"] = result.maintenance
    if result.headroom:  # gpuaudit plan: how many more GPU VMs fit, now and under N+k
        doc["headroom"] = result.headroom
    if result.rolling:  # the rolling-upgrade order with the least GPU VM downtime
        doc["rolling"] = result.rolling
    if result.stranded:  # frame buffer free that no offered profile can use
        doc["stranded"] = result.stranded
    if result.plan is not None:  # gpuaudit plan --change: this is the after, compared
        doc["plan"] = result.plan
    changes = since_last_scan(result)
    if changes is not None:
        doc["summary"]["since_last_scan"] = changes
    if result.history is not None:
        # The series the HTML report's trends draw, oldest first, this scan last.
        doc["trend"] = [dataclasses.asdict(p) for p in result.history.trend]
    return doc


def _state(judgement: Judgement, finding: Finding) -> dict[str, str]:
    """baseline_state, for an open finding of a scan against a baseline."""
    state = judgement.state(finding)
    return {} if state is None else {"baseline_state": state}


def _age(result: AuditResult, finding: Finding) -> dict[str, Any]:
    """first_seen and age_days, for a finding whose age is known."""
    age = finding_age(result, finding)
    return {} if age is None else {"first_seen": age[0], "age_days": age[1]}


_ENCODE = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_jsonable
).encode
# How deep the document is taken apart: each finding and simulation, and each host
# and VM of the inventory, is one piece, encoded whole by the C encoder.
_STREAM_DEPTH = 3


def json_chunks(doc: Any, depth: int = 0) -> Iterator[str]:
    """The document as compact JSON, in pieces no larger than one finding or object.

    Joined, the pieces are exactly ``json.dumps(doc)`` with compact separators:
    the report has no indentation, which at 10,000 VMs is a fifth of its bytes.
    A mapping two levels down (a finding) is one piece: ``json.dumps`` of a mapping
    is its keys' and values' own encodings joined, so encoding it whole gives the
    same text with one call instead of one per field (20 million pieces at the
    configuration maximum, most of the report's time).
    """
    if depth < _STREAM_DEPTH - 1 and isinstance(doc, dict) and all(isinstance(k, str) for k in doc):
        yield "{"
        for n, (key, value) in enumerate(doc.items()):
            yield ("," if n else "") + _ENCODE(key) + ":"
            yield from json_chunks(value, depth + 1)
        yield "}"
    elif depth < _STREAM_DEPTH and isinstance(doc, (list, Made)):
        yield "["
        for n, item in enumerate(doc):
            if n:
                yield ","
            yield from json_chunks(item, depth + 1)
        yield "]"
    else:
        yield _ENCODE(doc)


def dump_json(doc: dict[str, Any]) -> str:
    return "".join(json_chunks(doc))


def write_json(doc: dict[str, Any], out: BinaryIO) -> None:
    """Write the report to ``out`` piece by piece, never holding its whole text.

    A lone surrogate in a name cannot be UTF-8: it is replaced rather than fail.
    """
    for chunk in json_chunks(doc):
        out.write(chunk.encode("utf-8", errors="replace"))
    out.write(b"\n")


def report_schema() -> dict[str, Any]:
    """The JSON Schema of the report, as shipped in the package."""
    text = resources.files("gpuaudit").joinpath("schemas/report.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def load_json_report(path: str | Path) -> AuditResult:
    """Read a JSON report back into an AuditResult (for comparing two scans)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: cannot read: {exc}") from None
    return from_json_data(data)


DERIVED = ("id", "first_seen", "age_days", "baseline_state")  # kept beside a finding, not in it


def _without_id(finding: Any) -> Any:
    """A finding's data less its id (derived from the rule and object) and its age."""
    if isinstance(finding, dict):
        return {k: v for k, v in finding.items() if k not in DERIVED}
    return finding


def _first_seen(findings: Any) -> dict[str, str]:
    """Finding id -> first-seen date, as a report with ages gives them."""
    found: dict[str, str] = {}
    for item in findings if isinstance(findings, list) else []:
        if isinstance(item, dict) and isinstance(item.get("first_seen"), str):
            found[finding_id(_build(Finding, _without_id(item), "findings[]"))] = item["first_seen"]
    return found


def from_json_data(data: Any) -> AuditResult:
    if not isinstance(data, dict):
        raise ReportError("a report is a JSON object")
    version = data.get("report_schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ReportError("report_schema_version is missing or not a whole number")
    if version > REPORT_SCHEMA_VERSION:
        raise ReportError(
            f"report_schema_version {version} is newer than this gpuaudit reads "
            f"({REPORT_SCHEMA_VERSION}); upgrade gpuaudit"
        )
    try:
        policy = data.get("policy") or {}
        return AuditResult(
            inventory=Inventory.from_dict(data["inventory"]),
            rules=[_build(Rule, r, "rules[]") for r in data["rules"]],
            findings=[_build(Finding, _without_id(f), "findings[]") for f in data["findings"]],
            simulations=[
                _build(ClusterSimulation, s, "simulations[]") for s in data["simulations"]
            ],
            checked_at=str(data["source"]["checked_at"]),
            tool_version=str(data["generator"]["version"]),
            rules_version=str(data["rules_version"]),
            policy_source=policy.get("source"),
            waivers=[_build(Waiver, w, "policy.waivers[]") for w in policy.get("waivers", [])],
            expired_waivers=[
                _build(Waiver, w, "policy.expired_waivers[]")
                for w in policy.get("expired_waivers", [])
            ],
            errors=[_build(RuleError, e, "errors[]") for e in data.get("errors", [])],
            designs={str(k): str(v) for k, v in data.get("designs", {}).items()},
            first_seen=_first_seen(data["findings"]),
            maintenance=[
                _build(ClusterMaintenance, m, "maintenance[]") for m in data.get("maintenance", [])
            ],
            headroom=[_build(ClusterHeadroom, h, "headroom[]") for h in data.get("headroom", [])],
            rolling=[_build(ClusterRolling, r, "rolling[]") for r in data.get("rolling", [])],
            stranded=[_build(ClusterStranded, c, "stranded[]") for c in data.get("stranded", [])],
            plan=_build(PlanComparison, data["plan"], "plan") if "plan" in data else None,
        )
    except InventoryError as exc:
        raise ReportError(str(exc)) from None
    except (KeyError, TypeError, AttributeError) as exc:
        raise ReportError(f"not a gpuaudit report: missing or malformed {exc}") from None
