"""Reading a policy file (docs/policy.md) into a gpuaudit.policy.Policy.

Loading is strict: an unknown key, a wrong type or an invalid date raises
PolicyError naming the file and line, so that a misspelt key is never silently
ignored. The rule ids a policy may name are given by the caller.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from pathlib import Path
from typing import Any

import yaml

from gpuaudit.policy import (
    INTENT_FIELDS,
    MAX_RESTART_MINUTES,
    MONITORING_LIMITS,
    ClusterPolicy,
    Intent,
    LicensingPolicy,
    MonitoringPolicy,
    Policy,
)
from gpuaudit.results import SEVERITIES, Waiver
from gpuaudit.yamlread import InputFileError, YamlReader

POLICY_VERSION = 1


class PolicyError(InputFileError):
    """A policy file that cannot be used; the message names the file and line."""


def load_policy(path: str | Path, *, rule_ids: Collection[str]) -> Policy:
    """Load a policy file; raises PolicyError, never a traceback from YAML.

    ``rule_ids`` are the ids a waiver or a severity override may name: the caller
    knows the rule catalogue, the policy does not.
    """
    reader = _Reader(str(path), rule_ids)
    return reader.document(reader.read_file(path))


def parse_policy(text: str, source: str = "<policy>", *, rule_ids: Collection[str]) -> Policy:
    reader = _Reader(source, rule_ids)
    return reader.document(reader.parse(text))


class _Reader(YamlReader):
    """Walks the YAML node tree, so that every error can name its line."""

    error = PolicyError

    def __init__(self, source: str, rule_ids: Collection[str]) -> None:
        super().__init__(source)
        self.rule_ids = frozenset(rule_ids)

    def document(self, root: yaml.Node | None) -> Policy:
        policy = Policy(source=self.source)
        if root is None:
            return policy
        return self.policy(root, policy)

    def rule_id(self, node: yaml.Node, where: str) -> str:
        value = self.text(node, where)
        if value not in self.rule_ids:
            raise self.fail(node, f"{where}: unknown rule id {value!r}")
        return value

    # The document
    def policy(self, root: yaml.Node, policy: Policy) -> Policy:
        keys = {
            "version",
            "description",
            "intent",
            "severity",
            "clusters",
            "waivers",
            "monitoring",
            "licensing",
        }
        top = self.mapping(root, "policy", keys)
        if "version" in top:
            version = self.value(top["version"])
            # type(), not ==: True == 1 and 1.0 == 1 in Python, and neither is a version.
            if type(version) is not int or version != POLICY_VERSION:
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
        if "monitoring" in top:
            policy.monitoring = self.monitoring(top["monitoring"])
        if "licensing" in top:
            policy.licensing = self.licensing(top["licensing"])
        if "waivers" in top:
            node = top["waivers"]
            if not isinstance(node, yaml.SequenceNode):
                raise self.fail(node, "waivers: expected a list")
            policy.waivers = [
                self.waiver(item, f"waivers[{i}]") for i, item in enumerate(node.value)
            ]
        return policy

    def monitoring(self, node: yaml.Node) -> MonitoringPolicy:
        keys = {f.name for f in dataclasses.fields(MonitoringPolicy)}
        values = {}
        for key, value in self.mapping(node, "monitoring", keys).items():
            number = self.number(value, f"monitoring.{key}", high=MONITORING_LIMITS[key])
            if number <= 0:
                raise self.fail(value, f"monitoring.{key}: expected a number above 0")
            values[key] = number
        return MonitoringPolicy(**values)

    def licensing(self, node: yaml.Node) -> LicensingPolicy:
        values = {}
        for key, value in self.mapping(
            node, "licensing", {"vgpu_features", "vgpu_editions"}
        ).items():
            if not isinstance(value, yaml.SequenceNode):
                raise self.fail(value, f"licensing.{key}: expected a list")
            values[key] = tuple(
                self.text(item, f"licensing.{key}[{i}]") for i, item in enumerate(value.value)
            )
        return LicensingPolicy(**values)

    def intent(self, node: yaml.Node, where: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in self.mapping(node, where, set(INTENT_FIELDS)).items():
            if key == "max_restart_minutes":
                out[key] = self.number(value, f"{where}.{key}", high=MAX_RESTART_MINUTES)
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
