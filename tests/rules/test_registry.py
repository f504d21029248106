"""rules/registry.py: what a rule declaration must hold, and how a scope's verdicts are made.

A declaration that is accepted is made only into an empty registry put in place for the
test: the catalogue the other tests see stays as it is.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuaudit.results import Reference, Rule
from gpuaudit.rules import registry, scopes
from gpuaudit.rules.registry import Outcome, RuleSpec, Scope, Verdict, Where
from tests.support.builders import context, healthy

REF = ("A source", "https://example.com/source")


def _declare(**changes: Any) -> None:
    fields: dict[str, Any] = {
        "id": "ZZ-01",
        "title": "t",
        "category": "gpu",
        "severity": "high",
        "rationale": "r",
        "remediation": "m",
        "references": (REF,),
        "scope": scopes.HOSTS,
    }
    fields.update(changes)
    registry.rule(**fields)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"id": "ZZ-1"}, "rule id 'ZZ-1' is not like HA-01"),
        ({"id": "zz-01"}, "rule id 'zz-01' is not like HA-01"),
        ({"id": "ZZ-011"}, "rule id 'ZZ-011' is not like HA-01"),
        ({"id": "ZZ-01 "}, "rule id 'ZZ-01 ' is not like HA-01"),
        ({"category": "colour"}, "ZZ-01: unknown category 'colour'"),
        ({"severity": "severe"}, "ZZ-01: unknown severity 'severe'"),
        ({"object_kind": "host"}, "ZZ-01: give either a scope or an object_kind"),
        ({"scope": None}, "ZZ-01: give either a scope or an object_kind"),
        ({"scope": None, "object_kind": "planet"}, "ZZ-01: unknown object kind 'planet'"),
        ({"scope": Scope("planet", list, Where)}, "ZZ-01: unknown object kind 'planet'"),
        ({"references": ()}, "ZZ-01: a rule needs at least one reference"),
        (
            {"references": (("A source", "http://example.com"),)},
            "ZZ-01: a reference needs a title and an https URL: "
            "Reference(title='A source', url='http://example.com')",
        ),
        (
            {"references": (Reference(" ", "https://example.com"),)},
            "ZZ-01: a reference needs a title and an https URL: "
            "Reference(title=' ', url='https://example.com')",
        ),
    ],
)
def test_a_declaration_that_is_refused(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        _declare(**changes)
    assert str(caught.value) == message


def test_a_rule_registered_twice_is_refused() -> None:
    spec = next(s for s in registry.registered() if s.rule.id == "GPU-01")
    register = registry.rule(
        id="GPU-01",
        title=spec.rule.title,
        category=spec.rule.category,
        severity=spec.rule.severity,
        rationale="r",
        remediation="m",
        references=(REF,),
        scope=scopes.HOSTS,
    )
    with pytest.raises(ValueError, match=r"^rule GPU-01 is registered twice$"):
        register(lambda ctx, host: None)


@pytest.mark.parametrize(
    ("rule_id", "key"),
    [("HA-01", ("HA", 1)), ("VM-10", ("VM", 10)), ("DATA-02", ("DATA", 2)), ("X-y", ("X", 0))],
)
def test_id_key_sorts_by_number(rule_id: str, key: tuple[str, int]) -> None:
    assert registry.id_key(rule_id) == key


def test_registered_rules_are_ordered_by_prefix_then_number() -> None:
    ids = [s.rule.id for s in registry.registered()]
    gpu = [i for i in ids if i.startswith("GPU-")]
    assert gpu == sorted(gpu, key=lambda i: int(i.split("-")[1]))
    assert ids.index("VM-09") < ids.index("VM-10")


def test_a_scope_turns_outcomes_into_located_verdicts() -> None:
    e = healthy()
    ctx = context(e.inv)

    def check(_ctx: Any, host: Any) -> Outcome | None:
        if host.name == "h2":
            return None
        return Outcome(host.name == "h1", f"judged {host.name}", {"n": 1}, severity="low")

    spec = RuleSpec(registry.registered()[0].rule, check, scopes.HOSTS)
    assert list(spec.verdicts(ctx)) == [
        Verdict("h1", True, "judged h1", {"n": 1}, cluster="c1", host="h1", severity="low"),
        Verdict("h3", False, "judged h3", {"n": 1}, cluster="c1", host="h3", severity="low"),
    ]
    whole = RuleSpec(registry.registered()[0].rule, lambda _ctx: iter([Verdict("x", True, "m")]))
    assert list(whole.verdicts(ctx)) == [Verdict("x", True, "m")]


def test_an_accepted_declaration_is_registered_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", {})

    def per_host(_ctx: Any, _host: Any) -> Outcome | None:
        return None

    def whole(_ctx: Any) -> list[Verdict]:
        return []

    declared = registry.rule(
        id="ZZ-02",
        title="A title",
        category="storage",
        severity="low",
        rationale="""Why it
            matters,   over two lines.""",
        remediation=" What to\tdo. ",
        references=(REF,),
        scope=scopes.HOSTS,
    )
    assert declared(per_host) is per_host
    registry.rule(
        id="ZZ-01",
        title="Another",
        category="ha",
        severity="info",
        rationale="r",
        remediation="m",
        references=(Reference("B source", "https://example.com/b"),),
        object_kind="cluster",
    )(whole)
    assert registry.registered() == [
        RuleSpec(
            Rule(
                id="ZZ-01",
                title="Another",
                category="ha",
                severity="info",
                rationale="r",
                remediation="m",
                object_kind="cluster",
                references=(Reference("B source", "https://example.com/b"),),
            ),
            whole,
            None,
        ),
        RuleSpec(
            Rule(
                id="ZZ-02",
                title="A title",
                category="storage",
                severity="low",
                rationale="Why it matters, over two lines.",
                remediation="What to do.",
                object_kind="host",
                references=(Reference("A source", "https://example.com/source"),),
            ),
            per_host,
            scopes.HOSTS,
        ),
    ]


def test_a_message_names_up_to_three_hosts_then_counts_the_rest() -> None:
    assert registry.name_few([]) == ""
    assert registry.name_few(["h1", "h2", "h3"]) == "h1, h2, h3"
    assert registry.name_few(["h1", "h2", "h3", "h4"]) == "h1, h2, h3 and 1 more"
    assert registry.name_few(["h1", "h2"], limit=1) == "h1 and 1 more"
