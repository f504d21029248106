"""The policy file: design intent per cluster, waivers and severity overrides.

docs/policy.md describes the format. Loading is strict: an unknown key, a wrong
type or an invalid date raises PolicyError naming the file and line, so that a
misspelt key is never silently ignored.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import date
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import yaml

from gpuaudit.results import SEVERITIES, Waiver

POLICY_VERSION = 1


@dataclass(frozen=True)
class Intent:
    """What the seed's decision flow asks about a workload. The defaults are its
    recommended default path: stateless inference, a 2-5 minute restart is
    acceptable, no VM-level HA mandate, no GPU sharing."""

    stateless: bool = True
    max_restart_minutes: float = 5.0  # the restart time the business accepts
    vm_ha_mandated: bool = False  # infrastructure policy requires VMware HA
    gpu_sharing_required: bool = False
    budget_constrained: bool = False
    active_active: bool = False  # the application runs active-active across hosts


INTENT_FIELDS = {f.name: f.type for f in dataclasses.fields(Intent)}


@dataclass
class ClusterPolicy:
    """Settings for the clusters whose name matches ``match`` (a name or fnmatch pattern)."""

    match: str
    intent: dict[str, Any] = field(default_factory=dict)  # overrides of the default intent
    severity: dict[str, str] = field(default_factory=dict)  # rule id -> severity


@dataclass
class Policy:
    source: str | None = None
    intent: Intent = field(default_factory=Intent)
    clusters: list[ClusterPolicy] = field(default_factory=list)
    severity: dict[str, str] = field(default_factory=dict)  # rule id -> severity
    waivers: list[Waiver] = field(default_factory=list)

    @classmethod
    def default(cls) -> Policy:
        """No policy file: the seed's recommended default path, no waivers, no overrides."""
        return cls()

    def cluster_policy(self, cluster: str | None) -> ClusterPolicy | None:
        """The entry for a cluster: an exact name first, else the first matching pattern."""
        if cluster is None:
            return None
        for entry in self.clusters:
            if entry.match == cluster:
                return entry
        return next((e for e in self.clusters if fnmatchcase(cluster, e.match)), None)

    def intent_for(self, cluster: str | None) -> Intent:
        entry = self.cluster_policy(cluster)
        if entry is None or not entry.intent:
            return self.intent
        return dataclasses.replace(self.intent, **entry.intent)

    def severity_for(self, rule: str, cluster: str | None) -> str | None:
        """The overriding severity for a rule's finding, or None to keep the default."""
        entry = self.cluster_policy(cluster)
        if entry is not None and rule in entry.severity:
            return entry.severity[rule]
        return self.severity.get(rule)

    def waiver_for(self, rule: str, obj: str, today: date) -> Waiver | None:
        """The first active waiver that covers a rule's verdict on an object."""
        return next(
            (w for w in self.waivers if _covers(w, rule, obj) and not expired(w, today)), None
        )

    def expired_waiver_for(self, rule: str, obj: str, today: date) -> Waiver | None:
        return next((w for w in self.waivers if _covers(w, rule, obj) and expired(w, today)), None)

    def expired(self, today: date) -> list[Waiver]:
        return [w for w in self.waivers if expired(w, today)]


def expired(waiver: Waiver, today: date) -> bool:
    """A waiver applies up to and including its expiry date."""
    return date.fromisoformat(waiver.expires) < today


def _covers(waiver: Waiver, rule: str, obj: str) -> bool:
    return waiver.rule == rule and (waiver.object == obj or fnmatchcase(obj, waiver.object))


class PolicyError(ValueError):
    """A policy file that cannot be used; the message names the file and line."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        self.source = source
        self.line = line
        self.detail = message
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")


def load_policy(path: str | Path) -> Policy:
    """Load a policy file; raises PolicyError, never a traceback from YAML."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(source, None, f"cannot read: {exc}") from None
    return parse_policy(text, source)


def parse_policy(text: str, source: str = "<policy>") -> Policy:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise PolicyError(source, line, f"not valid YAML: {problem}") from None
    policy = Policy(source=source)
    if root is None:
        return policy
    return _Reader(source).policy(root, policy)


class _Reader:
    """Walks the YAML node tree, so that every error can name its line."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._loader = yaml.SafeLoader("")

    def fail(self, node: yaml.Node, message: str) -> PolicyError:
        return PolicyError(self.source, node.start_mark.line + 1, message)

    def mapping(self, node: yaml.Node, where: str, keys: set[str] | None) -> dict[str, yaml.Node]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{where}: expected a mapping")
        out: dict[str, yaml.Node] = {}
        for key_node, value in node.value:
            key = self.value(key_node)
            if not isinstance(key, str):
                raise self.fail(key_node, f"{where}: keys must be text, not {key!r} (quote it)")
            if key in out:
                raise self.fail(key_node, f"{where}: duplicate key {key!r}")
            if keys is not None and key not in keys:
                known = ", ".join(sorted(keys))
                raise self.fail(key_node, f"{where}: unknown key {key!r} (known: {known})")
            out[key] = value
        return out

    def value(self, node: yaml.Node) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, "expected a single value")
        try:
            return self._loader.construct_object(node, deep=True)
        except (ValueError, yaml.YAMLError) as exc:
            raise self.fail(node, f"invalid value {node.value!r}: {exc}") from None

    def text(self, node: yaml.Node, where: str) -> str:
        value = self.value(node)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(node, f"{where}: expected text (quote it if it looks like a number)")
        return value

    def boolean(self, node: yaml.Node, where: str) -> bool:
        value = self.value(node)
        if not isinstance(value, bool):
            raise self.fail(node, f"{where}: expected true or false")
        return value

    def number(self, node: yaml.Node, where: str) -> float:
        value = self.value(node)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise self.fail(node, f"{where}: expected a number of zero or more")
        return float(value)

    def day(self, node: yaml.Node, where: str) -> date:
        value = self.value(node)
        if isinstance(value, date) and not hasattr(value, "hour"):
            return value
        if isinstance(value, str):
            try:
                return date.fromisoformat(value)
            except ValueError:
                pass
        raise self.fail(node, f"{where}: expected a date as YYYY-MM-DD")

    def rule_id(self, node: yaml.Node, where: str) -> str:
        from gpuaudit.rules import catalogue

        value = self.text(node, where)
        if value not in {r.id for r in catalogue()}:
            raise self.fail(node, f"{where}: unknown rule id {value!r}")
        return value

    # The document
    def policy(self, root: yaml.Node, policy: Policy) -> Policy:
        keys = {"version", "description", "intent", "severity", "clusters", "waivers"}
        top = self.mapping(root, "policy", keys)
        if "version" in top:
            version = self.value(top["version"])
            if version != POLICY_VERSION:
                raise self.fail(top["version"], f"version: expected {POLICY_VERSION}")
        if "description" in top:
            self.text(top["description"], "description")
        if "intent" in top:
            policy.intent = dataclasses.replace(Intent(), **self.intent(top["intent"], "intent"))
        if "severity" in top:
            policy.severity = self.severities(top["severity"], "severity")
        if "clusters" in top:
            for name, node in self.mapping(top["clusters"], "clusters", None).items():
                policy.clusters.append(self.cluster(name, node))
        if "waivers" in top:
            node = top["waivers"]
            if not isinstance(node, yaml.SequenceNode):
                raise self.fail(node, "waivers: expected a list")
            policy.waivers = [
                self.waiver(item, f"waivers[{i}]") for i, item in enumerate(node.value)
            ]
        return policy

    def intent(self, node: yaml.Node, where: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in self.mapping(node, where, set(INTENT_FIELDS)).items():
            if key == "max_restart_minutes":
                out[key] = self.number(value, f"{where}.{key}")
            else:
                out[key] = self.boolean(value, f"{where}.{key}")
        return out

    def severities(self, node: yaml.Node, where: str) -> dict[str, str]:
        out = {}
        mapping = self.mapping(node, where, None)
        for key_node, value in zip((k for k, _ in node.value), mapping.values(), strict=True):
            rule = self.rule_id(key_node, where)
            severity = self.text(value, f"{where}.{rule}")
            if severity not in SEVERITIES:
                raise self.fail(value, f"{where}.{rule}: expected one of {', '.join(SEVERITIES)}")
            out[rule] = severity
        return out

    def cluster(self, name: str, node: yaml.Node) -> ClusterPolicy:
        where = f"clusters.{name}"
        entry = ClusterPolicy(match=name)
        for key, value in self.mapping(node, where, {"intent", "severity"}).items():
            if key == "intent":
                entry.intent = self.intent(value, f"{where}.intent")
            else:
                entry.severity = self.severities(value, f"{where}.severity")
        return entry

    def waiver(self, node: yaml.Node, where: str) -> Waiver:
        keys = {"rule", "object", "reason", "owner", "expires"}
        fields = self.mapping(node, where, keys)
        missing = sorted(keys - set(fields))
        if missing:
            raise self.fail(node, f"{where}: missing {', '.join(missing)}")
        return Waiver(
            rule=self.rule_id(fields["rule"], f"{where}.rule"),
            object=self.text(fields["object"], f"{where}.object"),
            reason=self.text(fields["reason"], f"{where}.reason"),
            owner=self.text(fields["owner"], f"{where}.owner"),
            expires=self.day(fields["expires"], f"{where}.expires").isoformat(),
        )
