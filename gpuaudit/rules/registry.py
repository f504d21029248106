"""The rule registry: each rule is metadata plus one small function.

A rule function receives a :class:`Context` and yields one :class:`Verdict` per
object it examines, passed or failed. The checker (gpuaudit.check) turns verdicts
into findings: it applies severity overrides and waivers and records a rule that
raises as an error instead of stopping the audit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from gpuaudit.results import (
    CATEGORIES,
    OBJECT_KINDS,
    SEVERITIES,
    Category,
    ObjectKind,
    Rule,
    Severity,
)

if TYPE_CHECKING:
    from gpuaudit.facts import Facts
    from gpuaudit.policy import Policy
    from gpuaudit.simulate import Simulated

_ID = re.compile(r"^[A-Z]+-\d{2}$")


@dataclass(frozen=True)
class Verdict:
    """A rule's verdict on one object, before policy is applied."""

    object: str
    passed: bool
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)
    cluster: str | None = None
    host: str | None = None
    # A finding-specific default severity (DS-02 grades its departures);
    # None means the rule's default.
    severity: Severity | None = None
    object_kind: ObjectKind | None = None  # None means the rule's object_kind


@dataclass
class Context:
    """What a rule may read: the inventory's derived facts, the policy, the simulations."""

    facts: Facts
    policy: Policy
    simulations: dict[str, Simulated]  # cluster name -> its host-failure simulation
    today: date


RuleFunc = Callable[[Context], Iterable[Verdict]]


@dataclass(frozen=True)
class RuleSpec:
    rule: Rule
    check: RuleFunc


_REGISTRY: dict[str, RuleSpec] = {}


def rule(
    *,
    id: str,
    title: str,
    category: Category,
    severity: Severity,
    object_kind: ObjectKind,
    rationale: str,
    remediation: str,
) -> Callable[[RuleFunc], RuleFunc]:
    """Register the decorated function as the check of a catalogue rule."""
    if not _ID.match(id):
        raise ValueError(f"rule id {id!r} is not like HA-01")
    if category not in CATEGORIES:
        raise ValueError(f"{id}: unknown category {category!r}")
    if severity not in SEVERITIES:
        raise ValueError(f"{id}: unknown severity {severity!r}")
    if object_kind not in OBJECT_KINDS:
        raise ValueError(f"{id}: unknown object kind {object_kind!r}")
    meta = Rule(
        id=id,
        title=title,
        category=category,
        severity=severity,
        rationale=" ".join(rationale.split()),
        remediation=" ".join(remediation.split()),
        object_kind=object_kind,
    )

    def register(func: RuleFunc) -> RuleFunc:
        if id in _REGISTRY and _REGISTRY[id].check is not func:
            raise ValueError(f"rule {id} is registered twice")
        _REGISTRY[id] = RuleSpec(meta, func)
        return func

    return register


def id_key(rule_id: str) -> tuple[str, int]:
    prefix, _, number = rule_id.partition("-")
    return prefix, int(number) if number.isdigit() else 0


def registered() -> list[RuleSpec]:
    """Every registered rule, ordered by id."""
    return sorted(_REGISTRY.values(), key=lambda spec: id_key(spec.rule.id))
