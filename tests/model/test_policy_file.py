"""Policy files (gpuaudit.model.policy_file): the documented example loads; every mistake is a
PolicyError with its line; what a policy file may say and what it becomes, pinned by hand."""

from __future__ import annotations

import math
import re
from datetime import date
from pathlib import Path

import pytest
from pydantic import ValidationError, create_model

from gpuaudit.common.yamlread import InputModel
from gpuaudit.model.policy import (
    Intent,
    LicensingPolicy,
    MonitoringPolicy,
    PassthroughLicence,
    Policy,
)
from gpuaudit.model.policy_file import PolicyError, _limit, load_policy, load_waivers, parse_policy
from gpuaudit.results import Waiver
from gpuaudit.rules import catalogue

RULE_IDS = [r.id for r in catalogue()]

DOCS = Path(__file__).resolve().parents[2] / "docs" / "policy.md"


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


@pytest.mark.parametrize("version", ["true", "1.0", "'1'", "0"])
def test_version_is_the_integer_one_and_nothing_equal_to_it(version: str) -> None:
    with pytest.raises(PolicyError, match=r"^<policy>:1: version: expected 1$"):
        parse_policy(f"version: {version}\n", rule_ids=RULE_IDS)


def test_version_one_is_accepted() -> None:
    assert parse_policy("version: 1\n", rule_ids=RULE_IDS).source == "<policy>"


def test_empty_file_keeps_its_source(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    assert load_policy(path, rule_ids=RULE_IDS).source == str(path)
    assert parse_policy("", "team.yaml", rule_ids=RULE_IDS).source == "team.yaml"


def test_a_severity_is_kept_as_written() -> None:
    text = "severity: {HA-01: critical, HA-02: high, HA-03: medium, HA-04: low, HA-05: info}\n"
    assert parse_policy(text, rule_ids=RULE_IDS).severity == {
        "HA-01": "critical",
        "HA-02": "high",
        "HA-03": "medium",
        "HA-04": "low",
        "HA-05": "info",
    }


def test_unknown_severity_lists_the_five_severities() -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy("severity: {HA-01: severe}\n", rule_ids=RULE_IDS)
    assert str(caught.value) == (
        "<policy>:1: severity.HA-01: expected one of critical, high, medium, low, info"
    )


def test_rule_ids_come_from_the_caller() -> None:
    assert parse_policy("severity: {X-1: low}\n", rule_ids=["X-1"]).severity == {"X-1": "low"}
    with pytest.raises(PolicyError, match="unknown rule id 'HA-01'"):
        parse_policy("severity: {HA-01: low}\n", rule_ids=["X-1"])


def test_monitoring_thresholds_accept_their_whole_range() -> None:
    low = parse_policy(
        "monitoring: {max_temperature_c: 0.5, idle_utilization_percent: 0.5,"
        " framebuffer_ratio: 0.5}\n",
        rule_ids=RULE_IDS,
    )
    assert low.monitoring == MonitoringPolicy(0.5, 0.5, 0.5)
    high = parse_policy(
        "monitoring: {max_temperature_c: 150, idle_utilization_percent: 100,"
        " framebuffer_ratio: 1000}\n",
        rule_ids=RULE_IDS,
    )
    assert high.monitoring == MonitoringPolicy(150, 100, 1000)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("monitoring: {max_temperature_c: 150.5}\n", "from 0 to 150"),
        ("monitoring: {idle_utilization_percent: 101}\n", "from 0 to 100"),
        ("monitoring: {framebuffer_ratio: 1001}\n", "from 0 to 1000"),
        ("monitoring: {max_temperature_c: 0}\n", "above 0"),
        ("monitoring: {idle_utilization_percent: .nan}\n", "expected a number"),
        ("monitoring: {framebuffer_ratio: .inf}\n", "expected a number"),
    ],
)
def test_monitoring_thresholds_outside_their_range_are_refused(text: str, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        parse_policy(text, rule_ids=RULE_IDS)


def test_monitoring_defaults_stay_for_the_keys_not_given() -> None:
    given = parse_policy("monitoring: {idle_utilization_percent: 10}\n", rule_ids=RULE_IDS)
    assert given.monitoring == MonitoringPolicy(85.0, 10.0, 2.0)


@pytest.mark.parametrize(
    ("name", "edition"),
    [
        ("vWS", "NVIDIA RTX Virtual Workstation"),
        ("VPC", "NVIDIA Virtual PC"),
        ("vapps", "NVIDIA Virtual Applications"),
        ("NVAIE", "NVIDIA AI Enterprise"),
        ("None", None),
    ],
)
def test_passthrough_edition_by_its_short_name_in_any_case(name: str, edition: str | None) -> None:
    text = f"licensing:\n  passthrough:\n    - {{match: 'render-*', edition: {name}}}\n"
    licensing = parse_policy(text, rule_ids=RULE_IDS).licensing
    assert licensing.passthrough == (PassthroughLicence("render-*", edition),)


def test_unknown_passthrough_edition_lists_the_short_names() -> None:
    text = "licensing:\n  passthrough:\n    - {match: c1, edition: grid}\n"
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, rule_ids=RULE_IDS)
    assert str(caught.value) == (
        "<policy>:3: licensing.passthrough[0].edition: expected one of vWS, vPC, vApps, NVAIE, none"
    )


def test_licensing_keeps_the_defaults_it_does_not_replace() -> None:
    only_editions = parse_policy(
        "licensing: {vgpu_editions: ['esx.custom.*']}\n", rule_ids=RULE_IDS
    ).licensing
    assert only_editions == LicensingPolicy(
        vgpu_features=("vgpu", "sharedPassthruGraphics", "sharedPassthroughGraphics"),
        vgpu_editions=("esx.custom.*",),
        passthrough=(),
        evaluation_warning_days=14,
    )
    only_features = parse_policy(
        "licensing: {vgpu_features: [gridFeature], evaluation_warning_days: 0}\n",
        rule_ids=RULE_IDS,
    ).licensing
    assert only_features.vgpu_features == ("gridFeature",)
    assert only_features.vgpu_editions == ("esx.enterprisePlus.*", "esx.vvf.*", "esx.vcf.*")
    assert only_features.evaluation_warning_days == 0


def test_cluster_severity_and_intent_are_read_per_cluster() -> None:
    policy = parse_policy(
        "clusters:\n  c1:\n    intent: {max_restart_minutes: 30}\n    severity: {HA-01: info}\n",
        rule_ids=RULE_IDS,
    )
    (entry,) = policy.clusters
    assert (entry.match, entry.intent, entry.severity) == (
        "c1",
        {"max_restart_minutes": 30},
        {"HA-01": "info"},
    )
    assert policy.intent_declared == frozenset()


def test_declared_intent_keys_are_the_ones_the_file_sets() -> None:
    policy = parse_policy("intent: {vm_ha_mandated: false, stateless: true}\n", rule_ids=RULE_IDS)
    assert policy.intent_declared == frozenset({"vm_ha_mandated", "stateless"})


@pytest.mark.parametrize(
    ("key", "default", "limit"),
    [
        # MonitoringPolicy's defaults and docs/policy.md's bounds, by hand.
        ("max_temperature_c", 85.0, 150.0),
        ("idle_utilization_percent", 5.0, 100.0),
        ("framebuffer_ratio", 2.0, 1000.0),
    ],
)
def test_a_threshold_field_defaults_to_the_policys_and_keeps_above_0_to_its_limit(
    key: str, default: float, limit: float
) -> None:
    # MonitoringSection's own fields are made once, when the module is imported: a
    # section made here shows what the field maker gives today.
    section = create_model("Section", __base__=InputModel, value=(float, _limit(key)))
    assert section().value == default  # type: ignore[attr-defined]
    assert section(value=limit).value == limit  # type: ignore[attr-defined]
    assert section(value=0.5).value == 0.5  # type: ignore[attr-defined]
    for refused in (0, -1, limit + 0.5, math.nan, math.inf):
        with pytest.raises(ValidationError):
            section(value=refused)


def test_a_file_that_is_no_mapping_is_refused_as_a_waivers_file_or_a_policy(
    tmp_path: Path,
) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- rule: HA-01\n", encoding="utf-8")
    with pytest.raises(PolicyError) as refused:
        load_waivers(path, rule_ids=RULE_IDS)
    assert str(refused.value) == f"{path}:1: waivers: expected a mapping"
    with pytest.raises(PolicyError) as refused:
        load_policy(path, rule_ids=RULE_IDS)
    assert str(refused.value) == f"{path}:1: policy: expected a mapping"


def test_a_waivers_file_gives_its_waivers_and_an_empty_one_none(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing waived yet\n", encoding="utf-8")
    assert load_waivers(empty, rule_ids=RULE_IDS) == []
    one = tmp_path / "one.yaml"
    one.write_text(
        "version: 1\nwaivers:\n  - {rule: HA-01, object: 'gpu-*', reason: design review,"
        " owner: gpu-ops, expires: 2027-03-31}\n",
        encoding="utf-8",
    )
    assert load_waivers(one, rule_ids=RULE_IDS) == [
        Waiver("HA-01", "gpu-*", "design review", "gpu-ops", "2027-03-31")
    ]


@pytest.mark.parametrize("owner", ["FILL IN", "  fill in: the team  ", "Fill In"])
def test_a_waiver_still_holding_the_placeholder_in_any_case_is_refused(owner: str) -> None:
    text = (
        "waivers:\n  - {rule: HA-01, object: gpu-1, reason: design review,"
        f" owner: '{owner}', expires: 2027-03-31}}\n"
    )
    with pytest.raises(PolicyError) as refused:
        parse_policy(text, "policy.yaml", rule_ids=RULE_IDS)
    assert str(refused.value) == (
        f"policy.yaml:2: waivers[0].owner: still the placeholder {owner!r}: fill it in"
    )
