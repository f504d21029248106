"""Reading a policy file (docs/policy.md) into a gpuaudit.model.policy.Policy.

Loading is strict: an unknown key, a wrong type or an invalid date raises
PolicyError naming the file and line, so that a misspelt key is never silently
ignored. The sections are pydantic models; the rule ids a policy may name are
given by the caller, who knows the rule catalogue.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from pathlib import Path
from typing import Annotated, Any, cast

from pydantic import AfterValidator, BeforeValidator, Field, ValidationInfo

from gpuaudit.common.yamlread import Day, InputFileError, InputModel, Text, YamlReader, problem
from gpuaudit.model.policy import (
    MAX_RESTART_MINUTES,
    MONITORING_LIMITS,
    PASSTHROUGH_EDITIONS,
    ClusterPolicy,
    Intent,
    LicensingPolicy,
    MonitoringPolicy,
    PassthroughLicence,
    Policy,
)
from gpuaudit.results import SEVERITIES, Severity, Waiver

POLICY_VERSION = 1
# What `gpuaudit policy waive` writes where a person must decide: never accepted.
PLACEHOLDER = "FILL IN"


class PolicyError(InputFileError):
    """A policy file that cannot be used; the message names the file and line."""


def _version(value: Any) -> Any:
    # type(), not ==: True == 1 and 1.0 == 1 in Python, and neither is a version.
    if type(value) is not int or value != POLICY_VERSION:
        raise problem(f"expected {POLICY_VERSION}")
    return value


def _known_rule(value: str, info: ValidationInfo) -> str:
    if value not in (info.context or {}).get("rule_ids", ()):
        raise problem(f"unknown rule id {value!r}")
    return value


def _severity(value: str) -> Severity:
    for severity in SEVERITIES:
        if value == severity:
            return severity
    raise problem(f"expected one of {', '.join(SEVERITIES)}")


def _severities(given: dict[str, str]) -> dict[str, Severity]:
    """Severity overrides, typed: ``_severity`` has let only known severities through."""
    return {rule: cast(Severity, severity) for rule, severity in given.items()}


RuleId = Annotated[Text, AfterValidator(_known_rule)]
SeverityName = Annotated[Text, AfterValidator(_severity)]
Version = Annotated[int, BeforeValidator(_version)]


def _limit(key: str) -> Any:
    default = getattr(MonitoringPolicy(), key)
    return Field(default=default, gt=0, le=MONITORING_LIMITS[key], allow_inf_nan=False)


class IntentSection(InputModel):
    """The fields of gpuaudit.model.policy.Intent; only those given override its defaults."""

    stateless: bool = Intent.stateless
    max_restart_minutes: float = Field(
        default=Intent.max_restart_minutes, ge=0, le=MAX_RESTART_MINUTES, allow_inf_nan=False
    )
    vm_ha_mandated: bool = Intent.vm_ha_mandated
    gpu_sharing_required: bool = Intent.gpu_sharing_required
    budget_constrained: bool = Intent.budget_constrained
    active_active: bool = Intent.active_active


class MonitoringSection(InputModel):
    max_temperature_c: float = _limit("max_temperature_c")
    idle_utilization_percent: float = _limit("idle_utilization_percent")
    framebuffer_ratio: float = _limit("framebuffer_ratio")


_EDITION_NAMES = ("vWS", "vPC", "vApps", "NVAIE", "none")


def _passthrough_edition(value: str) -> str:
    """A short edition name (vWS, vPC, vApps, NVAIE or none), in any case."""
    if value.lower() not in PASSTHROUGH_EDITIONS:
        raise problem(f"expected one of {', '.join(_EDITION_NAMES)}")
    return value.lower()


EditionName = Annotated[Text, AfterValidator(_passthrough_edition)]


class PassthroughEntry(InputModel):
    match: Text
    edition: EditionName


class LicensingSection(InputModel):
    vgpu_features: list[Text] = Field(default_factory=list)
    vgpu_editions: list[Text] = Field(default_factory=list)
    passthrough: list[PassthroughEntry] = Field(default_factory=list)
    evaluation_warning_days: int = Field(
        default=LicensingPolicy.evaluation_warning_days, ge=0, le=365
    )


class ClusterSection(InputModel):
    intent: IntentSection = Field(default_factory=IntentSection)
    severity: dict[RuleId, SeverityName] = Field(default_factory=dict)


def _filled(value: str) -> str:
    if value.strip().upper().startswith(PLACEHOLDER):
        raise problem(f"still the placeholder {value!r}: fill it in")
    return value


Filled = Annotated[Text, AfterValidator(_filled)]


class WaiverEntry(InputModel):
    rule: RuleId
    object: Text
    reason: Filled
    owner: Filled
    expires: Day


class PolicyFile(InputModel):
    version: Version = POLICY_VERSION
    description: Text = ""
    intent: IntentSection = Field(default_factory=IntentSection)
    severity: dict[RuleId, SeverityName] = Field(default_factory=dict)
    clusters: dict[str, ClusterSection] = Field(default_factory=dict)
    waivers: list[WaiverEntry] = Field(default_factory=list)
    monitoring: MonitoringSection = Field(default_factory=MonitoringSection)
    licensing: LicensingSection = Field(default_factory=LicensingSection)


class WaiversFile(InputModel):
    """A file of waivers alone (--waivers): the policy format's version and waivers."""

    version: Version = POLICY_VERSION
    description: Text = ""
    waivers: list[WaiverEntry] = Field(default_factory=list)


def load_waivers(path: str | Path, *, rule_ids: Collection[str]) -> list[Waiver]:
    """The waivers of a waivers file; raises PolicyError naming the file and line (an
    intent or severity section there is an unknown key: those belong in --policy)."""
    reader = _Reader(str(path), rule_ids)
    root = reader.read_file(path)
    if root is None:
        return []
    file = reader.validate(WaiversFile, root, "waivers", {"rule_ids": reader.rule_ids})
    return _waivers(file.waivers)


def _waivers(entries: list[WaiverEntry]) -> list[Waiver]:
    return [Waiver(w.rule, w.object, w.reason, w.owner, w.expires.isoformat()) for w in entries]


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
    error = PolicyError

    def __init__(self, source: str, rule_ids: Collection[str]) -> None:
        super().__init__(source)
        self.rule_ids = frozenset(rule_ids)

    def document(self, root: Any) -> Policy:
        if root is None:
            return Policy(source=self.source)
        file = self.validate(PolicyFile, root, "policy", {"rule_ids": self.rule_ids})
        return Policy(
            source=self.source,
            intent=dataclasses.replace(Intent(), **_given(file.intent)),
            intent_declared=frozenset(_given(file.intent)),
            clusters=[
                ClusterPolicy(
                    match=name, intent=_given(entry.intent), severity=_severities(entry.severity)
                )
                for name, entry in file.clusters.items()
            ],
            severity=_severities(file.severity),
            waivers=_waivers(file.waivers),
            monitoring=MonitoringPolicy(**_given(file.monitoring)),
            licensing=_licensing(file.licensing),
        )


def _licensing(section: LicensingSection) -> LicensingPolicy:
    given = _given(section)
    patterns = {k: tuple(given[k]) for k in ("vgpu_features", "vgpu_editions") if k in given}
    return LicensingPolicy(
        **patterns,
        passthrough=tuple(
            PassthroughLicence(e.match, PASSTHROUGH_EDITIONS[e.edition])
            for e in section.passthrough
        ),
        evaluation_warning_days=section.evaluation_warning_days,
    )


def _given(section: InputModel) -> dict[str, Any]:
    """The keys a section set in the file, so that the dataclasses keep their defaults."""
    return section.model_dump(exclude_unset=True)
