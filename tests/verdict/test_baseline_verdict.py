"""A baseline night: every output states the one verdict and each finding's state.

The baseline is the demo's own JSON report, edited: the expectations follow from
what was taken out of it or waived, never from gpuaudit's tables.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import openpyxl
import yaml
from click.testing import CliRunner, Result

from gpuaudit.cli.main import main
from tests.jobs import test_notify
from tests.jobs.test_notify import Received

FORMATS = "html,json,junit,sarif,xlsx"
webhook = test_notify.webhook  # the fixture: a loopback server that records each POST


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["--no-color", *args])


def demo_report(tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / "first"
    result = run("scan", "--demo", "-f", "json", "-o", str(out), "--no-history")
    assert result.exit_code == 1, result.output
    (path,) = out.glob("*.json")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def is_open(f: dict[str, Any]) -> bool:
    return f["status"] in ("fail", "unproven")


def night(tmp_path: Path, baseline: dict[str, Any], url: str, *extra: str) -> Result:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(baseline), encoding="utf-8")
    return run(
        "scan", "--demo", "-f", FORMATS, "-o", str(tmp_path / "r"), "--baseline", str(path),
        "--history", str(tmp_path / "h.sqlite"), "--notify", f"{url}/hook", *extra,
    )  # fmt: skip


def report(tmp_path: Path, suffix: str) -> Path:
    (path,) = (p for p in (tmp_path / "r").iterdir() if p.name.endswith(suffix))
    return path


def verdicts(tmp_path: Path, received: Received) -> dict[str, str]:
    """The verdict each output states, in one vocabulary."""
    doc = json.loads(report(tmp_path, ".json").read_text(encoding="utf-8"))
    html = report(tmp_path, ".html").read_text(encoding="utf-8")
    word = re.search(r'<div class="verdict-word">([^<]+)</div>', html)
    book = openpyxl.load_workbook(report(tmp_path, ".xlsx"), read_only=True)
    rows = [r for r in book["Summary"].iter_rows(values_only=True) if "Verdict" in r]
    history = run("history", "--history", str(tmp_path / "h.sqlite"), "--format", "json")
    ((_, _, body),) = received.posts
    return {
        "json": doc["summary"]["verdict"].upper(),
        "html": word.group(1).strip() if word else "",
        "xlsx": str(rows[0][-1]),
        "history": json.loads(history.output)["scans"][0]["verdict"].upper(),
        "webhook": json.loads(body)["summary"]["verdict"],
    }


def junit_counts(tmp_path: Path) -> dict[str, int]:
    root = ET.parse(report(tmp_path, ".xml")).getroot()
    return {
        what: sum(int(s.get(what, "0")) for s in root.iter("testsuite"))
        for what in ("failures", "errors", "skipped")
    }


def sarif_states(tmp_path: Path) -> dict[str, int]:
    (run_,) = json.loads(report(tmp_path, ".sarif").read_text(encoding="utf-8"))["runs"]
    states: dict[str, int] = {}
    for result in run_["results"]:
        states[result["baselineState"]] = states.get(result["baselineState"], 0) + 1
    return states


def test_a_night_with_nothing_new_passes_in_every_output(
    tmp_path: Path, webhook: tuple[Received, str]
) -> None:
    received, url = webhook
    baseline = demo_report(tmp_path)
    opened = [f for f in baseline["findings"] if is_open(f)]
    result = night(tmp_path, baseline, url)
    assert result.exit_code == 0, result.output
    assert "PASS: nothing new at or above high" in result.output
    assert set(verdicts(tmp_path, received).values()) == {"PASS"}
    doc = json.loads(report(tmp_path, ".json").read_text(encoding="utf-8"))
    assert doc["summary"]["baseline"] == {"new": 0, "unchanged": len(opened), "absent": 0}
    assert {f.get("baseline_state") for f in doc["findings"] if is_open(f)} == {"unchanged"}
    # Only new findings fail a CI run: the known ones are skipped with a note.
    assert junit_counts(tmp_path)["failures"] == 0 and junit_counts(tmp_path)["errors"] == 0
    waived = sum(f["status"] == "waived" for f in baseline["findings"])
    assert sarif_states(tmp_path) == {"unchanged": len(opened) + waived}


def test_one_new_high_failure_fails_every_output_and_only_it(
    tmp_path: Path, webhook: tuple[Received, str]
) -> None:
    received, url = webhook
    baseline = demo_report(tmp_path)
    new = next(f for f in baseline["findings"] if f["status"] == "fail" and f["severity"] == "high")
    baseline["findings"].remove(new)
    result = night(tmp_path, baseline, url)
    assert result.exit_code == 1, result.output
    assert set(verdicts(tmp_path, received).values()) == {"FAIL"}
    doc = json.loads(report(tmp_path, ".json").read_text(encoding="utf-8"))
    news = [(f["rule"], f["object"]) for f in doc["findings"] if f.get("baseline_state") == "new"]
    assert news == [(new["rule"], new["object"])]
    assert junit_counts(tmp_path)["failures"] == 1
    assert sarif_states(tmp_path)["new"] == 1
    html = report(tmp_path, ".html").read_text(encoding="utf-8")
    assert "against the baseline: 1 new, " in html
    assert "new findings: 1" in result.output


def test_a_waived_finding_is_counted_as_waived_not_resolved(
    tmp_path: Path, webhook: tuple[Received, str]
) -> None:
    received, url = webhook
    baseline = demo_report(tmp_path)
    target = next(f for f in baseline["findings"] if f["status"] == "fail")
    policy = tmp_path / "policy.yaml"
    waiver = {"rule": target["rule"], "object": target["object"], "reason": "accepted risk"}
    waiver |= {"owner": "ops", "expires": "2999-01-01"}
    policy.write_text(yaml.safe_dump({"waivers": [waiver]}), encoding="utf-8")
    result = night(tmp_path, baseline, url, "--policy", str(policy))
    assert result.exit_code == 0, result.output
    assert ", 0 resolved, 1 waived" in result.output
    ((_, _, body),) = received.posts
    summary = json.loads(body)["summary"]
    assert (summary["resolved"], summary["newly_waived"]) == (0, 1)


def test_a_finding_waived_in_the_baseline_and_open_now_is_a_waiver_expired(
    tmp_path: Path, webhook: tuple[Received, str]
) -> None:
    received, url = webhook
    baseline = demo_report(tmp_path)
    # The baseline had waived one finding that fails tonight (no waiver applies now).
    target = next(
        f for f in baseline["findings"] if f["status"] == "fail" and f["severity"] == "high"
    )
    target["status"] = "waived"
    result = night(tmp_path, baseline, url)
    assert result.exit_code == 1, result.output  # open again: new against the baseline
    assert "against the baseline: 1 new, " in result.output
    assert ", 1 waiver expired" in result.output
    ((_, _, body),) = received.posts
    summary = json.loads(body)["summary"]
    assert (summary["waiver_expired"], summary["resolved"], summary["newly_waived"]) == (1, 0, 0)


def test_info_findings_are_notices_never_failed(tmp_path: Path) -> None:
    baseline = demo_report(tmp_path)
    info = [f for f in baseline["findings"] if f["status"] == "fail" and f["severity"] == "info"]
    failed = [f for f in baseline["findings"] if f["status"] == "fail" and f not in info]
    assert info, "the demo has info findings"
    summary = baseline["summary"]
    assert summary["notices"] == len(info)
    assert summary["results"]["fail"] == len(failed)
    assert summary["failed_by_severity"]["info"] == 0
    out = tmp_path / "r"
    run("scan", "--demo", "-f", "junit,sarif", "-o", str(out), "--no-history")
    root = ET.parse(next(out.glob("*.xml"))).getroot()
    assert sum(int(s.get("failures", "0")) for s in root.iter("testsuite")) == len(failed)
    (sarif_run,) = json.loads(next(out.glob("*.sarif")).read_text(encoding="utf-8"))["runs"]
    info_rules = {f["rule"] for f in info}
    levels = {r["level"] for r in sarif_run["results"] if r["properties"]["severity"] == "info"}
    assert info_rules and levels == {"note"}
