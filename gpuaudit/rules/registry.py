"""The rule registry: each rule is metadata plus one small function.

Most rules judge one object at a time: a host, a GPU, a VM, a cluster, a datastore,
the vCenter or the inventory. Such a rule names its :class:`Scope` (which objects it
is offered, in which order, and how a finding on one is located) and is a function
of the :class:`Context` and one object that returns an :class:`Outcome`, or None
when the rule does not apply to that object. :meth:`RuleSpec.verdicts`, which the
checker (gpuaudit.verdict.check) runs, loops over the scope and turns each outcome into a
:class:`Verdict` on the object.

A rule that compares several objects (HA-05, HA-08, DATA-01) receives the
:class:`Context` alone and yields one :class:`Verdict` per object it examines.

The checker turns verdicts into findings: it applies severity overrides and
waivers and records a rule that raises as an error instead of stopping the audit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

from gpuaudit.results import (
    CATEGORIES,
    OBJECT_KINDS,
    SEVERITIES,
    Category,
    ClusterMaintenance,
    ObjectKind,
    Reference,
    Rule,
    Severity,
)

if TYPE_CHECKING:
    from gpuaudit.kubernetes.model import KubernetesReport
    from gpuaudit.model.facts import Facts
    from gpuaudit.model.policy import Policy
    from gpuaudit.simulation.failures import Simulated

_ID = re.compile(r"^[A-Z][A-Z0-9]*-\d{2}$")  # HA-01, K8S-01
# A reference is given as a Reference or as a (title, url) pair.
Cited = Reference | tuple[str, str]
T = TypeVar("T")


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
    # Why a pass cannot be proven (an unknown board, type, geometry or branch); a
    # verdict that passes with a reason here is "not proven", never a pass.
    unproven: str = ""


@dataclass
class Context:
    """What a rule may read: the inventory's derived facts, the policy, the simulations."""

    facts: Facts
    policy: Policy
    simulations: dict[str, Simulated]  # cluster name -> its host-failure simulation
    today: date
    # The Kubernetes clusters given (scan --kubernetes), analysed; empty without one.
    kubernetes: list[KubernetesReport] = field(default_factory=list)
    # Cluster name -> its hosts' maintenance readiness (gpuaudit.plan.maintenance).
    maintenance: dict[str, ClusterMaintenance] = field(default_factory=dict)
    memo: dict[Hashable, Any] = field(default_factory=dict, init=False, repr=False)

    def once(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, worked out once per audit for ``key``: what the objects of a
        per-object rule share (their cluster's datastores) is not redone per object."""
        if key not in self.memo:
            self.memo[key] = compute()
        return cast(T, self.memo[key])


@dataclass(frozen=True)
class Outcome:
    """A per-object rule's verdict, before the checker names the object it is about."""

    passed: bool
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)
    severity: Severity | None = None  # as Verdict.severity
    unproven: str = ""  # as Verdict.unproven


def not_proven(message: str, reason: str, evidence: dict[str, Any] | None = None) -> Outcome:
    """A verdict that would pass but rests on a fact not known exactly: "not proven".

    ``reason`` names the unknown fact ("no NVIDIA figure for grid_x-2b4 on NVIDIA M60");
    the finding carries it as evidence "not_proven".
    """
    return Outcome(True, message, dict(evidence or {}), unproven=reason)


@dataclass(frozen=True)
class Where:
    """How a finding on an object is located: its name, its cluster and its host."""

    object: str
    cluster: str | None = None
    host: str | None = None


@dataclass(frozen=True)
class Scope(Generic[T]):
    """The objects of one kind that a per-object rule is offered, and where each one is."""

    kind: str  # the rule's object_kind
    select: Callable[[Context], Iterable[T]]
    locate: Callable[[Context, T], Where]

    def verdict(self, ctx: Context, item: T, outcome: Outcome) -> Verdict:
        where = self.locate(ctx, item)
        return Verdict(
            where.object,
            outcome.passed,
            outcome.message,
            outcome.evidence,
            cluster=where.cluster,
            host=where.host,
            severity=outcome.severity,
            unproven=outcome.unproven,
        )


RuleFunc = Callable[[Context], Iterable[Verdict]]
ObjectRule = Callable[[Context, T], Outcome | None]


@dataclass(frozen=True)
class RuleSpec:
    """A rule's metadata and check; ``scope`` is set for a per-object check."""

    rule: Rule
    check: Callable[..., Any]
    scope: Scope[Any] | None = None

    def verdicts(self, ctx: Context) -> Iterator[Verdict]:
        """Run the check: over the objects of its scope, or as a whole."""
        if self.scope is None:
            yield from self.check(ctx)
            return
        for item in self.scope.select(ctx):
            outcome = self.check(ctx, item)
            if outcome is not None:
                yield self.scope.verdict(ctx, item, outcome)


_REGISTRY: dict[str, RuleSpec] = {}


@overload
def rule(
    *,
    id: str,
    title: str,
    category: str,
    severity: str,
    scope: Scope[T],
    rationale: str,
    remediation: str,
    references: Iterable[Cited],
) -> Callable[[ObjectRule[T]], ObjectRule[T]]: ...


@overload
def rule(
    *,
    id: str,
    title: str,
    category: Category,
    severity: Severity,
    object_kind: ObjectKind,
    rationale: str,
    remediation: str,
    references: Iterable[Cited],
) -> Callable[[RuleFunc], RuleFunc]: ...


def rule(
    *,
    id: str,
    title: str,
    category: str,
    severity: str,
    rationale: str,
    remediation: str,
    references: Iterable[Cited] = (),
    scope: Scope[Any] | None = None,
    object_kind: str | None = None,
) -> Callable[[Any], Any]:
    """Register a function as the check of a catalogue rule: ``rule(...)(check)``.

    The rules modules call it after each check function rather than use it as a
    decorator: mutmut (scripts/mutation) leaves decorated functions unmutated, and
    the check functions are where verdicts are decided.

    With ``scope``, the function judges one object of the scope's kind; without,
    it examines the whole context and ``object_kind`` names what its verdicts are on.
    ``references`` name where the guidance is published: at least one, each an
    https URL, so that every finding can point to its source.
    """
    if not _ID.match(id):
        raise ValueError(f"rule id {id!r} is not like HA-01")
    if category not in CATEGORIES:
        raise ValueError(f"{id}: unknown category {category!r}")
    if severity not in SEVERITIES:
        raise ValueError(f"{id}: unknown severity {severity!r}")
    if scope is not None and object_kind is None:
        kind = scope.kind
    elif scope is None and object_kind is not None:
        kind = object_kind
    else:
        raise ValueError(f"{id}: give either a scope or an object_kind")
    if kind not in OBJECT_KINDS:
        raise ValueError(f"{id}: unknown object kind {kind!r}")
    cited = _references(id, references)
    meta = Rule(
        id=id,
        title=title,
        category=category,
        severity=severity,
        rationale=" ".join(rationale.split()),
        remediation=" ".join(remediation.split()),
        object_kind=kind,
        references=cited,
    )

    def register(func: Callable[..., Any]) -> Callable[..., Any]:
        if id in _REGISTRY and _REGISTRY[id].check is not func:
            raise ValueError(f"rule {id} is registered twice")
        _REGISTRY[id] = RuleSpec(meta, func, scope)
        return func

    return register


def _references(rule_id: str, given: Iterable[Cited]) -> tuple[Reference, ...]:
    cited = tuple(r if isinstance(r, Reference) else Reference(*r) for r in given)
    if not cited:
        raise ValueError(f"{rule_id}: a rule needs at least one reference")
    for ref in cited:
        if not ref.title.strip() or not ref.url.startswith("https://"):
            raise ValueError(f"{rule_id}: a reference needs a title and an https URL: {ref!r}")
    return cited


def id_key(rule_id: str) -> tuple[str, int]:
    prefix, _, number = rule_id.partition("-")
    return prefix, int(number) if number.isdigit() else 0


def registered() -> list[RuleSpec]:
    """Every registered rule, ordered by id."""
    return sorted(_REGISTRY.values(), key=lambda spec: id_key(spec.rule.id))


def name_few(names: list[str], limit: int = 3) -> str:
    """Names for a message: all of a few, else the first ``limit`` "and N more".

    In a cluster of 96 hosts a message listing every host is unreadable; the evidence
    carries the count, and the hosts that fail the rule where it matters.
    """
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])} and {len(names) - limit} more"
