"""A scheduled job's baseline and waivers: the first night, report-only jobs, waiver skeletons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from gpuaudit.cli.main import main
from gpuaudit.inventory import Inventory
from gpuaudit.model.policy_file import PolicyError, load_policy
from gpuaudit.rules import catalogue


def gpuaudit(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A JSON report of the demo estate, which fails high findings."""
    out = tmp_path_factory.mktemp("demo")
    result = gpuaudit("scan", "--demo", "-q", "-f", "json", "-o", str(out))
    assert result.exit_code == 1, result.output
    (report,) = out.glob("gpuaudit-demo-*.json")
    return report


def failed_pairs(report: Path) -> set[tuple[str, str]]:
    data = json.loads(report.read_text(encoding="utf-8"))
    return {(f["rule"], f["object"]) for f in data["findings"] if f["status"] == "fail"}


def open_pairs(report: Path) -> set[tuple[str, str]]:
    """The findings a waiver can accept: the failed ones and those not proven."""
    data = json.loads(report.read_text(encoding="utf-8"))
    statuses = ("fail", "unproven")
    return {(f["rule"], f["object"]) for f in data["findings"] if f["status"] in statuses}


def test_a_missing_baseline_says_how_to_create_one_and_writes_nothing(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    out = tmp_path / "reports"
    result = gpuaudit("scan", "--demo", "--baseline", str(baseline), "-o", str(out))
    assert result.exit_code == 2
    line = result.output.strip().splitlines()[-1]
    assert line.startswith("gpuaudit: error: baseline ")
    assert f"`gpuaudit baseline create REPORT.json -o {baseline}`" in line
    assert "--baseline-create" in line
    assert not out.exists() and not baseline.exists()


def test_baseline_create_makes_the_first_night_pass_and_the_second_compare(
    tmp_path: Path,
) -> None:
    baseline = tmp_path / "baseline.json"
    out = tmp_path / "reports"
    first = gpuaudit(
        "scan", "--demo", "-f", "json", "--baseline", str(baseline), "--baseline-create",
        "-o", str(out),
    )  # fmt: skip
    # Without a baseline the demo fails high findings (exit 1); its own baseline accepts them.
    assert first.exit_code == 0, first.output
    (report,) = out.glob("*.json")
    accepted = failed_pairs(report)
    assert accepted and failed_pairs(baseline) == accepted
    assert f"baseline created: {baseline} ({len(accepted)} failed findings accepted)" in (
        first.output
    )
    assert "new failed findings: 0 critical, 0 high, 0 medium, 0 low\n" in first.output
    # The second night finds the baseline and leaves it as it was.
    before = baseline.read_bytes()
    second = gpuaudit(
        "scan", "--demo", "-f", "json", "--baseline", str(baseline), "--baseline-create",
        "-o", str(out),
    )  # fmt: skip
    assert second.exit_code == 0, second.output
    assert "baseline created" not in second.output
    assert "against the baseline: 0 new, " in second.output
    assert ", 0 resolved, 0 waived\n" in second.output
    assert baseline.read_bytes() == before


def test_baseline_create_needs_a_baseline_file() -> None:
    result = gpuaudit("scan", "--demo", "--baseline-create")
    assert result.exit_code == 2
    assert "--baseline-create needs --baseline FILE" in result.output


def test_an_empty_scan_makes_no_baseline(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text(Inventory().to_json(), encoding="utf-8")
    baseline = tmp_path / "baseline.json"
    result = gpuaudit(
        "scan", "--from", str(empty), "-f", "json", "-o", str(tmp_path / "r"),
        "--baseline", str(baseline), "--baseline-create",
    )  # fmt: skip
    assert result.exit_code == 1
    assert not baseline.exists()


def test_baseline_create_command_copies_a_report(demo_report: Path, tmp_path: Path) -> None:
    target = tmp_path / "baseline.json"
    result = gpuaudit("baseline", "create", str(demo_report), "-o", str(target))
    assert result.exit_code == 0, result.output
    assert target.read_bytes() == demo_report.read_bytes()
    assert f"{len(failed_pairs(demo_report))} failed findings accepted" in result.output


def test_baseline_create_refuses_what_is_not_a_report(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}', encoding="utf-8")
    result = gpuaudit("baseline", "create", str(other), "-o", str(tmp_path / "b.json"))
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"gpuaudit: error: {other}: not a gpuaudit JSON report (no findings list)"
    )
    assert not (tmp_path / "b.json").exists()


def test_fail_on_never_exits_0_with_findings(tmp_path: Path) -> None:
    result = gpuaudit("scan", "--demo", "--fail-on", "never", "-f", "json", "-o", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "PASS: report only (--fail-on never)" in result.output
    assert "0 high" not in result.output  # the findings are still counted and shown


def test_fail_on_never_still_fails_when_nothing_was_examined(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text(Inventory().to_json(), encoding="utf-8")
    result = gpuaudit(
        "scan", "--from", str(empty), "--fail-on", "never", "-f", "json", "-o", str(tmp_path)
    )
    assert result.exit_code == 1
    assert "FAIL: nothing was examined (DATA-02)" in result.output


def rule_ids() -> list[str]:
    return [r.id for r in catalogue()]


def test_policy_waive_writes_a_skeleton_the_loader_refuses(
    demo_report: Path, tmp_path: Path
) -> None:
    target = tmp_path / "waivers.yaml"
    result = gpuaudit("policy", "waive", str(demo_report), "-o", str(target))
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(target.read_text(encoding="utf-8"))
    pairs = {(w["rule"], w["object"]) for w in data["waivers"]}
    assert pairs == open_pairs(demo_report) and pairs > failed_pairs(demo_report)
    assert all(w["owner"].startswith("FILL IN") for w in data["waivers"])
    with pytest.raises(PolicyError, match="FILL IN"):
        load_policy(target, rule_ids=rule_ids())


@pytest.mark.parametrize("left", ["reason", "owner", "expires"])
def test_each_placeholder_alone_is_refused(demo_report: Path, tmp_path: Path, left: str) -> None:
    text = gpuaudit("policy", "waive", str(demo_report), "--rule", "GPU-03").output
    data = yaml.safe_load(text)
    filled = {"reason": "accepted by the board", "owner": "ops", "expires": "2099-12-31"}
    for waiver in data["waivers"]:
        waiver.update({k: v for k, v in filled.items() if k != left})
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(PolicyError, match=left):
        load_policy(path, rule_ids=rule_ids())


def test_a_filled_skeleton_waives_its_findings(demo_report: Path, tmp_path: Path) -> None:
    text = gpuaudit("policy", "waive", str(demo_report), "--rule", "ha-05").output
    data = yaml.safe_load(text)
    assert {w["rule"] for w in data["waivers"]} == {"HA-05"}
    for waiver in data["waivers"]:
        waiver.update(reason="spare capacity is ordered", owner="ops", expires="2099-12-31")
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = gpuaudit(
        "scan", "--demo", "--policy", str(policy), "-f", "json", "-o", str(tmp_path / "r")
    )
    (report,) = (tmp_path / "r").glob("*.json")
    waived = {
        (f["rule"], f["object"])
        for f in json.loads(report.read_text(encoding="utf-8"))["findings"]
        if f["status"] == "waived"
    }
    assert waived == {p for p in failed_pairs(demo_report) if p[0] == "HA-05"}
    assert result.exit_code == 1  # the other high findings still fail


def test_policy_waive_filters_objects_by_glob(demo_report: Path) -> None:
    every = {p[1] for p in open_pairs(demo_report)}
    pattern = sorted(every)[0][:3] + "*"
    data = yaml.safe_load(gpuaudit("policy", "waive", str(demo_report), "--object", pattern).output)
    objects = {w["object"] for w in data["waivers"]}
    assert objects and objects == {o for o in every if o.startswith(pattern[:-1])}


def test_policy_waive_never_overwrites(demo_report: Path, tmp_path: Path) -> None:
    target = tmp_path / "waivers.yaml"
    target.write_text("precious", encoding="utf-8")
    result = gpuaudit("policy", "waive", str(demo_report), "-o", str(target))
    assert result.exit_code == 2
    assert target.read_text(encoding="utf-8") == "precious"


def expired_policy(tmp_path: Path, report: Path) -> Path:
    rule, name = sorted(failed_pairs(report))[0]
    policy: dict[str, Any] = {
        "waivers": [
            {"rule": rule, "object": name, "reason": "r", "owner": "alice", "expires": "2020-01-31"}
        ]
    }
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(policy), encoding="utf-8")
    return path


def test_the_console_lists_expired_waivers(demo_report: Path, tmp_path: Path) -> None:
    rule, name = sorted(failed_pairs(demo_report))[0]
    policy = expired_policy(tmp_path, demo_report)
    result = gpuaudit("scan", "--demo", "--policy", str(policy), "-f", "json", "-o", str(tmp_path))
    lines = result.output.splitlines()
    assert "expired waivers: 1" in lines
    following = lines[lines.index("expired waivers: 1") + 1]
    assert following.split() == [rule, name, "(owner", "alice,", "expired", "2020-01-31)"]


def test_the_console_lists_new_findings_and_top_actions(demo_report: Path, tmp_path: Path) -> None:
    # A baseline that held every failure but one: that one is the new finding.
    data = json.loads(demo_report.read_text(encoding="utf-8"))
    dropped = next(f for f in data["findings"] if f["status"] == "fail" and f["rule"] == "GPU-03")
    data["findings"].remove(dropped)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(data), encoding="utf-8")
    result = gpuaudit(
        "scan", "--demo", "--baseline", str(baseline), "-f", "json", "-o", str(tmp_path / "r")
    )
    lines = result.output.splitlines()
    assert "new findings: 1" in lines
    assert lines[lines.index("new findings: 1") + 1].split() == [
        dropped["severity"], "GPU-03", *dropped["object"].split()
    ]  # fmt: skip
    top = lines[lines.index("top actions:") + 1 : lines.index("top actions:") + 6]
    counts: dict[str, int] = {}
    for rule, _ in failed_pairs(demo_report):
        counts[rule] = counts.get(rule, 0) + 1
    assert [line.split()[0] for line in top][:1] == ["HA-05"]
    assert all(int(line.split()[1]) == counts[line.split()[0]] for line in top)
    assert len(top) == 5 and top[0].startswith("  HA-05")


# Names that are patterns when read back, beside names they would match.
GLOB_NAMES = ["*", "vm?", "gpu[0]", "[!a]", "a*b?c[d]e", "[[]"]
BYSTANDERS = ["vm1", "gpu0", "b", "plain", "axbycde", "[", "vm", "*x", "gpu[0"]


def test_waivers_from_names_with_pattern_characters_waive_only_those_objects(
    tmp_path: Path,
) -> None:
    from datetime import date

    from gpuaudit.jobs.lifecycle import literal_pattern

    findings = [
        {"rule": "HA-05", "object": name, "status": "fail"} for name in [*GLOB_NAMES, "plain"]
    ]
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"findings": findings}), encoding="utf-8")
    written = tmp_path / "waivers.yaml"
    result = gpuaudit("policy", "waive", str(report), "-o", str(written))
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(written.read_text(encoding="utf-8"))
    assert [w["object"] for w in data["waivers"]] == [
        "[*]",
        "vm[?]",
        "gpu[[]0]",
        "[[]!a]",
        "a[*]b[?]c[[]d]e",
        "[[][[]]",
        "plain",
    ]
    for waiver in data["waivers"]:
        waiver.update(reason="accepted", owner="ops", expires="2099-12-31")
    policy_path = tmp_path / "policy.yaml"
    policy_path.write_text(yaml.safe_dump(data), encoding="utf-8")
    policy = load_policy(policy_path, rule_ids=rule_ids())  # the round trip through the file
    today = date(2030, 1, 1)
    for name in [*GLOB_NAMES, "plain"]:
        waiver = policy.waiver_for("HA-05", name, today)
        assert waiver is not None and waiver.object == literal_pattern(name), name
    for name in BYSTANDERS:
        if name != "plain":
            assert policy.waiver_for("HA-05", name, today) is None, name
    assert literal_pattern("vm-01]") == "vm-01]"  # a lone ] is no pattern character
