"""gpuaudit.model.policy_file: what a policy file may say and what it becomes, pinned by hand."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from pydantic import ValidationError, create_model

from gpuaudit.common.yamlread import InputModel
from gpuaudit.model.policy import LicensingPolicy, MonitoringPolicy, PassthroughLicence
from gpuaudit.model.policy_file import PolicyError, _limit, load_policy, load_waivers, parse_policy
from gpuaudit.results import Waiver
from gpuaudit.rules import catalogue

RULE_IDS = [r.id for r in catalogue()]


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
