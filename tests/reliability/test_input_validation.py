"""Policy and targets files validated by pydantic models: each mistake told at its own line."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

from gpuaudit.jobs.fleet import TargetsError, load_targets
from gpuaudit.model.policy import Intent, LicensingPolicy, MonitoringPolicy
from gpuaudit.model.policy_file import (
    IntentSection,
    LicensingSection,
    MonitoringSection,
    PolicyError,
    parse_policy,
)
from gpuaudit.rules import catalogue

RULE_IDS = [r.id for r in catalogue()]


def policy_error(text: str) -> str:
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, "policy.yaml", rule_ids=RULE_IDS)
    return str(caught.value)


def targets_error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "targets.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TargetsError) as caught:
        load_targets(path)
    return str(caught.value).replace(str(path), "targets.yaml")


@pytest.mark.parametrize(
    ("section", "model"),
    [
        (IntentSection, Intent),
        (MonitoringSection, MonitoringPolicy),
        (LicensingSection, LicensingPolicy),
    ],
)
def test_each_section_reads_every_field_of_its_dataclass(section: type, model: type) -> None:
    assert set(section.model_fields) == {f.name for f in dataclasses.fields(model)}


def test_an_intent_section_keeps_the_defaults_of_what_it_does_not_set() -> None:
    policy = parse_policy("intent: {stateless: false}\n", rule_ids=RULE_IDS)
    assert policy.intent == Intent(stateless=False)
    assert policy.monitoring == MonitoringPolicy()


POLICIES = [
    # A value of the wrong shape is named by its key.
    ("intent:\n  stateless: [true]\n", "policy.yaml:2: intent.stateless: expected true or false"),
    (
        "waivers:\n  - rule: HA-01\n    object: [c1]\n",
        "policy.yaml:3: waivers[0].object: expected text (quote it if it looks like a number)",
    ),
    ("? [a]\n: 1\n", "policy.yaml:1: policy: keys must be text, not a list"),
    # A value YAML cannot make is named by its key.
    ("intent:\n  <<: {stateless: true}\n", "policy.yaml:2: intent: invalid value '<<'"),
    # The number's bounds are told, whatever is wrong with it.
    (
        "intent: {max_restart_minutes: soon}\n",
        "policy.yaml:1: intent.max_restart_minutes: expected a number from 0 to 10080",
    ),
    (
        "monitoring:\n  max_temperature_c: hot\n",
        "policy.yaml:2: monitoring.max_temperature_c: expected a number from 0 to 150",
    ),
    (
        "monitoring:\n  framebuffer_ratio: -3\n",
        "policy.yaml:2: monitoring.framebuffer_ratio: expected a number above 0, not -3",
    ),
    # Several mistakes: the first in the file, not the first the model declares.
    ("intent:\n  stateless: maybe\nversion: 2\n", "policy.yaml:2: intent.stateless: expected"),
    ("version: 2\nintent:\n  stateless: maybe\n", "policy.yaml:1: version: expected 1"),
    (
        "clusters:\n  c1:\n    severity: {HA-01: low, HA-98: low}\n",
        "policy.yaml:3: clusters.c1.severity: unknown rule id 'HA-98'",
    ),
    (
        "waivers:\n  - {rule: HA-01, object: c1, reason: r, owner: o,\n"
        "     expires: 2027-01-01 10:00:00}\n",
        "policy.yaml:3: waivers[0].expires: expected a date as YYYY-MM-DD",
    ),
]


@pytest.mark.parametrize(("text", "message"), POLICIES)
def test_policy_mistakes_are_told_at_their_line(text: str, message: str) -> None:
    assert policy_error(text).startswith(message)


TARGETS = [
    # A misspelt key is named before the key it leaves missing.
    (
        "targets:\n  - {servr: a, user: u}\n",
        "targets.yaml:2: targets[0]: unknown key 'servr' (known: ca_file, insecure, name, "
        "password_env, password_file, policy, server, timeout, user)",
    ),
    (
        "target:\n  - {server: a, user: u}\n",
        "targets.yaml:1: targets file: unknown key 'target' "
        "(known: concurrency, defaults, targets)",
    ),
    (
        "defaults: {server: a}\ntargets: [{server: a, user: u}]\n",
        "targets.yaml:1: defaults: unknown key 'server'",
    ),
    (
        "concurrency: 33\ntargets: [{server: a, user: u}]\n",
        "targets.yaml:1: concurrency: at most 32",
    ),
    (
        "targets:\n  - {server: a, user: u, timeout: 0}\n",
        "targets.yaml:2: targets[0].timeout: expected a number from 1 to 86400, not 0",
    ),
    (
        "targets:\n  - {server: a, user: u, insecure: 'true'}\n",
        "targets.yaml:2: targets[0].insecure: expected true or false",
    ),
    ("targets:\n  - {server: 5, user: u}\n", "targets.yaml:2: targets[0].server: expected text"),
    (
        "targets:\n  - {server: a, user: u,\n     password_env: A, password_file: f}\n",
        "targets.yaml:2: targets[0]: password_env and password_file are exclusive",
    ),
    ("targets: a\n", "targets.yaml:1: targets: expected a list"),
    ("targets: [a]\n", "targets.yaml:1: targets[0]: expected a mapping"),
]


@pytest.mark.parametrize(("text", "message"), TARGETS)
def test_targets_mistakes_are_told_at_their_line(tmp_path: Path, text: str, message: str) -> None:
    assert targets_error(tmp_path, text).startswith(message)


def test_targets_take_the_defaults_and_their_own_settings(tmp_path: Path) -> None:
    path = tmp_path / "targets.yaml"
    path.write_text(
        "defaults: {user: u, password_env: P, timeout: 30}\n"
        "targets:\n"
        "  - {server: 'me:secret@vc1'}\n"
        "  - {server: vc2, name: two, user: v, password_file: pw, policy: p.yaml}\n",
        encoding="utf-8",
    )
    first, second = load_targets(path).targets
    assert (first.name, first.user, first.password_env, first.timeout) == ("vc1", "u", "P", 30.0)
    assert (second.name, second.user, second.password_file) == ("two", "v", str(tmp_path / "pw"))
    assert second.policy == str(tmp_path / "p.yaml") and second.ca_file is None


def test_an_alias_bomb_costs_no_more_than_its_text() -> None:
    text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 9):  # 10**9 strings if every alias were copied
        text += f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n"
    started = time.monotonic()
    assert policy_error(text).startswith("policy.yaml:1: policy: unknown key 'a0'")
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("waivers: &w [*w]\n", "policy.yaml:1: waivers[0]: expected a mapping"),
        ("licensing: {vgpu_features: &f [*f]}\n", "policy.yaml:1: licensing.vgpu_features[0]:"),
        ("clusters: &c {c1: *c}\n", "policy.yaml:1: clusters.c1: unknown key 'c1'"),
    ],
)
def test_an_alias_that_holds_itself_is_a_mistake_not_a_hang(text: str, message: str) -> None:
    assert policy_error(text).startswith(message)
