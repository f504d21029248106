"""--waivers FILE apart from the policy, one --policy, and waivers or cluster
patterns that match nothing: a warning naming each, or an error with --strict-waivers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from gpuaudit.cli.main import main

# The demo estate's clusters (gpuaudit/cassettes' demo, tests/scenarios/demo*).
DEMO_CLUSTERS = ("edge-inference", "ml-iscsi", "vdi-vgpu")


def scan(out: Path, *args: str) -> Result:
    return CliRunner().invoke(
        main, ["--no-color", "scan", "--demo", "--no-history", "-f", "json", "-o", str(out), *args]
    )


def findings(out: Path) -> list[dict[str, Any]]:
    (report,) = out.glob("gpuaudit-demo-*.json")
    return list(json.loads(report.read_text(encoding="utf-8"))["findings"])


def waiver(rule: str, obj: str) -> str:
    return (
        f"  - rule: {rule}\n    object: {obj!r}\n    reason: accepted by design review\n"
        "    owner: gpu-ops\n    expires: 2099-12-31\n"
    )


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_waivers_file_adds_to_the_policy_and_both_apply(tmp_path: Path) -> None:
    assert scan(tmp_path / "first").exit_code == 1
    failed = [f for f in findings(tmp_path / "first") if f["status"] == "fail"]
    one, other = failed[0], next(f for f in failed if f["rule"] != failed[0]["rule"])
    policy = write(
        tmp_path / "policy.yaml",
        f"version: 1\nseverity:\n  {other['rule']}: low\n",
    )
    waivers = write(
        tmp_path / "waivers.yaml", "version: 1\nwaivers:\n" + waiver(one["rule"], one["object"])
    )
    done = scan(tmp_path / "second", "--policy", policy, "--waivers", waivers)
    assert done.exit_code in (0, 1), done.output
    second = {(f["rule"], f["object"]): f for f in findings(tmp_path / "second")}
    assert second[(one["rule"], one["object"])]["status"] == "waived"
    assert second[(other["rule"], other["object"])]["severity"] == "low"  # not lost
    assert "matched no" not in done.stderr


def test_a_second_policy_is_a_usage_error(tmp_path: Path) -> None:
    a = write(tmp_path / "a.yaml", "version: 1\n")
    b = write(tmp_path / "b.yaml", "version: 1\n")
    done = scan(tmp_path / "out", "--policy", a, "--policy", b)
    assert done.exit_code == 2
    assert "--policy" in done.stderr and "given 2 times" in done.stderr
    assert not (tmp_path / "out").exists()


def test_waivers_and_patterns_that_match_nothing_are_each_a_warning(tmp_path: Path) -> None:
    policy = write(
        tmp_path / "policy.yaml",
        "version: 1\nclusters:\n  'vdi-*':\n    intent:\n      stateless: true\n"
        "  'vid-vgpu':\n    intent:\n      stateless: true\n",
    )
    waivers = write(
        tmp_path / "waivers.yaml",
        "version: 1\nwaivers:\n" + waiver("GPU-03", "no-such-vm") + waiver("HA-01", "no-such-*"),
    )
    done = scan(tmp_path / "out", "--policy", policy, "--waivers", waivers)
    assert done.exit_code == 1, done.output
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        "warning: waiver GPU-03 'no-such-vm' (owner gpu-ops) matched no finding",
        "warning: waiver HA-01 'no-such-*' (owner gpu-ops) matched no finding",
        "warning: cluster pattern 'vid-vgpu' of the policy matched no cluster",
    ]
    assert "\x1b[" not in done.stderr
    assert len(list((tmp_path / "out").glob("*.json"))) == 1  # a warning costs no report
    assert any(c.startswith("vdi-") for c in DEMO_CLUSTERS)  # 'vdi-*' matched: no warning


def test_strict_waivers_makes_them_an_error_before_any_report(tmp_path: Path) -> None:
    waivers = write(
        tmp_path / "waivers.yaml", "version: 1\nwaivers:\n" + waiver("GPU-03", "typo-vm")
    )
    done = scan(tmp_path / "out", "--waivers", waivers, "--strict-waivers")
    assert done.exit_code == 2
    assert (
        "--strict-waivers: waiver GPU-03 'typo-vm' (owner gpu-ops) matched no finding"
        in done.stderr
    )
    assert not list(tmp_path.glob("out/*.json"))


def test_a_waivers_file_holds_waivers_only(tmp_path: Path) -> None:
    waivers = write(tmp_path / "waivers.yaml", "version: 1\nintent:\n  stateless: true\n")
    done = scan(tmp_path / "out", "--waivers", waivers)
    assert done.exit_code == 2
    assert f"{waivers}:2" in done.stderr and "intent" in done.stderr
