"""Policy files: the documented example loads; every mistake is a PolicyError with its line."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from gpuaudit.model.policy import Intent, MonitoringPolicy, Policy
from gpuaudit.model.policy_file import PolicyError, load_policy, parse_policy
from gpuaudit.results import Waiver
from gpuaudit.rules import catalogue

RULE_IDS = [r.id for r in catalogue()]

DOCS = Path(__file__).resolve().parent.parent / "docs" / "policy.md"


def documented_example() -> str:
    match = re.search(r"```yaml\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    assert match, "docs/policy.md has a yaml example"
    return match.group(1)


def test_documented_example_loads(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(documented_example(), encoding="utf-8")
    policy = load_policy(path, rule_ids=RULE_IDS)
    assert policy.source == str(path)
    assert policy.intent == Intent(budget_constrained=True)
    assert policy.severity == {"VM-07": "info", "HA-06": "critical"}
    assert [c.match for c in policy.clusters] == ["gpu-train-01", "edge-*"]
    assert policy.intent_for("gpu-train-01") == Intent(
        stateless=False, vm_ha_mandated=True, budget_constrained=True
    )
    assert policy.intent_for("edge-07").max_restart_minutes == 2
    assert policy.intent_for("other") == policy.intent
    assert policy.severity_for("HA-01", "edge-07") == "low"
    assert policy.severity_for("HA-01", "gpu-train-01") is None
    assert policy.severity_for("HA-06", "edge-07") == "critical"
    assert policy.waivers[0] == Waiver(
        "HA-04",
        "infer-*",
        "Inference VMs use fixed passthrough; Kubernetes reschedules the pods.",
        "platform-team@example.com",
        "2027-06-30",
    )
    assert policy.monitoring == MonitoringPolicy(max_temperature_c=83, framebuffer_ratio=2)
    assert policy.licensing.vgpu_features == ("vgpu", "sharedPassthruGraphics")
    assert policy.licensing.vgpu_editions == ("esx.enterprisePlus.*", "esx.vcf.*")


def test_monitoring_and_licensing_sections_are_strict() -> None:
    with pytest.raises(
        PolicyError, match=r"line 1.*monitoring.max_temp: unknown|unknown.*max_temp"
    ):
        parse_policy("monitoring: {max_temp: 80}\n", rule_ids=RULE_IDS)
    with pytest.raises(PolicyError, match="above 0"):
        parse_policy("monitoring: {framebuffer_ratio: 0}\n", rule_ids=RULE_IDS)
    with pytest.raises(PolicyError, match="expected a list"):
        parse_policy("licensing: {vgpu_features: vgpu}\n", rule_ids=RULE_IDS)
    assert Policy.default().monitoring.max_temperature_c == 85


def test_default_policy_is_the_seed_default_path() -> None:
    policy = Policy.default()
    assert policy.source is None and policy.waivers == [] and policy.severity == {}
    intent = policy.intent_for("any")
    assert intent.stateless and intent.max_restart_minutes == 5
    assert not intent.vm_ha_mandated and not intent.gpu_sharing_required


def test_empty_file_is_the_default(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("# nothing yet\n", encoding="utf-8")
    assert load_policy(path, rule_ids=RULE_IDS).intent == Intent()


def test_exact_cluster_name_wins_over_an_earlier_pattern() -> None:
    policy = parse_policy(
        "clusters:\n"
        "  'gpu-*': {intent: {stateless: false}}\n"
        "  gpu-a: {intent: {gpu_sharing_required: true}}\n",
        rule_ids=RULE_IDS,
    )
    assert policy.intent_for("gpu-a") == Intent(gpu_sharing_required=True)
    assert policy.intent_for("gpu-b") == Intent(stateless=False)


def test_waiver_dates_quoted_or_not() -> None:
    text = (
        "waivers:\n"
        "  - {rule: HA-01, object: c1, reason: r, owner: o, expires: 2027-01-31}\n"
        "  - {rule: HA-01, object: c2, reason: r, owner: o, expires: '2027-02-28'}\n"
    )
    assert [w.expires for w in parse_policy(text, rule_ids=RULE_IDS).waivers] == [
        "2027-01-31",
        "2027-02-28",
    ]


def test_waiver_applies_through_its_expiry_day() -> None:
    policy = parse_policy(
        "waivers:\n  - {rule: HA-04, object: 'vm-*', reason: r, owner: o, expires: 2027-01-31}\n",
        rule_ids=RULE_IDS,
    )
    assert policy.waiver_for("HA-04", "vm-1", date(2027, 1, 31)) is not None
    assert policy.waiver_for("HA-04", "vm-1", date(2027, 2, 1)) is None
    assert policy.waiver_for("HA-03", "vm-1", date(2027, 1, 1)) is None
    assert policy.waiver_for("HA-04", "host-1", date(2027, 1, 1)) is None
    assert [w.object for w in policy.expired(date(2027, 2, 1))] == ["vm-*"]


BAD = [
    ("intnet:\n  stateless: true\n", 1, "unknown key 'intnet'"),
    ("intent:\n  stateless: true\n  statless: false\n", 3, "unknown key 'statless'"),
    ("intent:\n  stateless: 'no'\n", 2, "expected true or false"),
    ("intent:\n  max_restart_minutes: soon\n", 2, "expected a number"),
    ("intent:\n  max_restart_minutes: -1\n", 2, "expected a number"),
    ("intent: [stateless]\n", 1, "expected a mapping"),
    ("severity:\n  HA-99: high\n", 2, "unknown rule id 'HA-99'"),
    ("severity:\n  HA-01: severe\n", 2, "expected one of critical"),
    ("clusters:\n  c1:\n    intent: {}\n    waivers: []\n", 4, "unknown key 'waivers'"),
    ("clusters:\n  2024:\n    intent: {}\n", 2, "keys must be text"),
    ("intent: {}\nintent: {}\n", 2, "duplicate key 'intent'"),
    ("waivers: {rule: HA-01}\n", 1, "expected a list"),
    ("waivers:\n  - rule: HA-01\n    object: c1\n", 2, "missing expires, owner, reason"),
    (
        "waivers:\n  - {rule: HA-01, object: c1, reason: r, owner: o, expires: 2027-02-30}\n",
        2,
        "invalid value",
    ),
    (
        "waivers:\n  - {rule: HA-01, object: c1, reason: r, owner: o,\n     expires: 31/01/2027}\n",
        3,
        "expected a date as YYYY-MM-DD",
    ),
    (
        "waivers:\n  - {rule: HA-01, object: c1, reason: r, owner: o, expires: '2027-13-01'}\n",
        2,
        "expected a date as YYYY-MM-DD",
    ),
    (
        "waivers:\n  - {rule: XX-01, object: c1, reason: r, owner: o, expires: 2027-01-01}\n",
        2,
        "unknown rule id",
    ),
    (
        "waivers:\n  - {rule: HA-01, object: c1, reason: '', owner: o, expires: 2027-01-01}\n",
        2,
        "expected text",
    ),
    ("version: 2\n", 1, "version: expected 1"),
    ("intent:\n  stateless: [true\n", 3, "not valid YAML"),
    ("- just\n- a list\n", 1, "expected a mapping"),
]


@pytest.mark.parametrize(("text", "line", "message"), BAD)
def test_mistakes_name_the_file_and_line(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PolicyError) as info:
        load_policy(path, rule_ids=RULE_IDS)
    assert str(info.value).startswith(f"{path}:{line}: "), str(info.value)
    assert message in str(info.value)
    assert info.value.line == line and info.value.source == str(path)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read"):
        load_policy(tmp_path / "missing.yaml", rule_ids=RULE_IDS)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(PolicyError, match="cannot read"):
        load_policy(binary, rule_ids=RULE_IDS)
