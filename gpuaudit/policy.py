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

from gpuaudit.results import SEVERITIES, Severity, Waiver
from gpuaudit.yamlread import InputFileError, YamlReader

POLICY_VERSION = 1


@dataclass(frozen=True)
class Intent:
    """What the GPU HA decision flow (docs/policy.md) asks about a workload. The defaults
    are its recommended default path: stateless inference, a 2-5 minute restart is
    acceptable, no VM-level HA mandate, no GPU sharing."""

    stateless: bool = True
    max_restart_minutes: float = 5.0  # the restart time the business accepts
    vm_ha_mandated: bool = False  # infrastructure policy requires VMware HA
    gpu_sharing_required: bool = False
    budget_constrained: bool = False
    active_active: bool = False  # the application runs active-active across hosts


INTENT_FIELDS = {f.name: f.type for f in dataclasses.fields(Intent)}


@dataclass(frozen=True)
class MonitoringPolicy:
    """Thresholds of the monitoring rules (MON-02 to MON-04)."""

    max_temperature_c: float = 85.0  # MON-02: a higher peak fails
    idle_utilization_percent: float = 5.0  # MON-03: a lower peak fails
    # MON-04: fails when the frame buffer allocated to vGPUs is at least this many
    # times the memory used at peak.
    framebuffer_ratio: float = 2.0


# The largest value of each threshold that can be meant: a percentage is at most
# 100, no GPU runs at 150 °C, a frame buffer is not a thousand times its use.
MONITORING_LIMITS = {
    "max_temperature_c": 150.0,
    "idle_utilization_percent": 100.0,
    "framebuffer_ratio": 1000.0,
}
# A restart that may take longer than a week is no intent to design for.
MAX_RESTART_MINUTES = 7 * 24 * 60.0


# Feature keys that grant shared passthrough graphics (vGPU). vSphere's own key is
# not confirmed; "vgpu" is the lab's. A feature whose name says "shared
# passthrough graphics" (or "Shared Pass-Thru Graphics") counts too.
VGPU_FEATURES = ("vgpu", "sharedPassthruGraphics", "sharedPassthroughGraphics")
# Editions known to include vGPU, for a licence that lists no features.
VGPU_EDITIONS = ("esx.enterprisePlus.*",)


@dataclass(frozen=True)
class LicensingPolicy:
    """What LIC-02 accepts as a licence that allows vGPU."""

    vgpu_features: tuple[str, ...] = VGPU_FEATURES
    vgpu_editions: tuple[str, ...] = VGPU_EDITIONS  # fnmatch patterns of edition keys


@dataclass
class ClusterPolicy:
    """Settings for the clusters whose name matches ``match`` (a name or fnmatch pattern)."""

    match: str
    intent: dict[str, Any] = field(default_factory=dict)  # overrides of the default intent
    severity: dict[str, Severity] = field(default_factory=dict)  # rule id -> severity


@dataclass
class Policy:
    source: str | None = None
    intent: Intent = field(default_factory=Intent)
    clusters: list[ClusterPolicy] = field(default_factory=list)
    severity: dict[str, Severity] = field(default_factory=dict)  # rule id -> severity
    waivers: list[Waiver] = field(default_factory=list)
    monitoring: MonitoringPolicy = field(default_factory=MonitoringPolicy)
    licensing: LicensingPolicy = field(default_factory=LicensingPolicy)

    @classmethod
    def default(cls) -> Policy:
        """No policy file: the recommended default path, no waivers, no overrides."""
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

    def severity_for(self, rule: str, cluster: str | None) -> Severity | None:
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


class PolicyError(InputFileError):
    """A policy file that cannot be used; the message names the file and line."""


def load_policy(path: str | Path) -> Policy:
    """Load a policy file; raises PolicyError, never a traceback from YAML."""
    reader = _Reader(str(path))
    return reader.document(reader.read_file(path))


def parse_policy(text: str, source: str = "<policy>") -> Policy:
    reader = _Reader(source)
    return reader.document(reader.parse(text))


class _Reader(YamlReader):
    """Walks the YAML node tree, so that every error can name its line."""

    error = PolicyError

    def document(self, root: yaml.Node | None) -> Policy:
        policy = Policy(source=self.source)
        if root is None:
            return policy
        return self.policy(root, policy)

    def rule_id(self, node: yaml.Node, where: str) -> str:
        from gpuaudit.rules import catalogue

        value = self.text(node, where)
        if value not in {r.id for r in catalogue()}:
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

    def severities(self, node: yaml.Node, where: str) -> dict[str, Severity]:
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
