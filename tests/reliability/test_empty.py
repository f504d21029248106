"""A scan that examined nothing must not pass.

An account that can see no host, or a server whose inventory answer is empty,
leaves every rule with nothing to examine. DATA-02 then fails, critical, and the
exit status is non-zero whatever --fail-on, a baseline or a policy say; every
report says "nothing was examined" at its top. Real estates are unaffected.
"""

from __future__ import annotations

import copy
import io
import json
import xml.etree.ElementTree as ET
from datetime import date
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from click.testing import CliRunner, Result

from gpuaudit.cli.main import main
from gpuaudit.errors import ExitCode
from gpuaudit.inventory import Datastore, Inventory
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES, SCENARIOS
from tests.lab.scenario import load_scenario

ALL_FORMATS = ("-f", "html", "-f", "xlsx", "-f", "json", "-f", "junit", "-f", "sarif")
# Waives DATA-02 and grades it down to info: neither may make an empty audit pass.
FORGIVING_POLICY = """\
severity:
  DATA-02: info
waivers:
  - {rule: DATA-02, object: "*", reason: quiet the job, owner: ops, expires: 2099-12-31}
"""


def scan_cli(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(main, ["scan", *args], env=env)


def one(folder: Path, suffix: str) -> Path:
    (path,) = folder.glob(f"gpuaudit-*{suffix}")
    return path


def assert_reports_say_nothing_was_examined(out: Path, cause: str) -> dict[str, Any]:
    """Every format says so at its top; returns the JSON report."""
    report = json.loads(one(out, ".json").read_text())
    summary = report["summary"]
    assert summary["verdict"] == "fail" and summary["worst_severity"] == "critical"
    assert summary["nothing_examined"].startswith("nothing was examined: ")
    assert cause in summary["nothing_examined"]
    (data02,) = [f for f in report["findings"] if f["rule"] == "DATA-02"]
    assert (data02["status"], data02["severity"]) == ("fail", "critical")
    assert report["findings"][0] == data02, "listed first"

    html = one(out, ".html").read_text()
    overview = html[html.index('<section id="overview">') :]
    overview = overview[: overview.index("</section>")]
    assert '<div class="verdict-word">FAIL</div>' in overview
    assert '<div class="verdict-headline">Nothing was examined: ' in overview

    suites = ET.parse(one(out, ".junit.xml")).getroot()
    case = next(c for c in suites.iter("testcase") if c.get("classname") == "gpuaudit.data.DATA-02")
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "critical"
    assert "nothing was examined" in (failure.get("message") or "")

    sarif = json.loads(one(out, ".sarif").read_text())
    (result,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "DATA-02"]
    assert result["level"] == "error" and "nothing was examined" in result["message"]["text"]

    book = openpyxl.load_workbook(io.BytesIO(one(out, ".xlsx").read_bytes()))
    first = [c.value for c in next(book["Summary"].iter_rows(min_row=2, max_row=2))]
    assert first[:2] == ["Verdict", "FAIL: nothing was examined"]
    assert str(first[2]).startswith("Nothing was examined: ") and cause in str(first[2])
    return report


def saved(tmp_path: Path, inventory: Inventory) -> Path:
    path = tmp_path / "inventory.json"
    inventory.save(path)
    return path


def test_empty_inventory_fails_in_every_format(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = scan_cli("--from", str(saved(tmp_path, Inventory())), "-o", str(out), *ALL_FORMATS)
    assert result.exit_code == ExitCode.FINDINGS, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith("FAIL: Nothing was examined: the server's answer held no object")
    assert "FAIL: nothing was examined (DATA-02)" in result.stdout
    assert "PASS" not in result.stdout
    assert_reports_say_nothing_was_examined(out, "held no object at all")


def test_no_fail_on_baseline_or_policy_makes_it_pass(tmp_path: Path) -> None:
    inventory = Inventory(datacenters=["DC1"], datastores=[Datastore("ds-01", "datastore-1")])
    source = saved(tmp_path, inventory)
    first = tmp_path / "first"
    assert scan_cli("--from", str(source), "-o", str(first), "-f", "json").exit_code == 1
    baseline = one(first, ".json")
    assert any(f["rule"] == "DATA-02" for f in json.loads(baseline.read_text())["findings"])
    policy = tmp_path / "policy.yaml"
    policy.write_text(FORGIVING_POLICY)
    out = tmp_path / "out"
    result = scan_cli(
        *("--from", str(source), "-o", str(out), *ALL_FORMATS),
        *("--fail-on", "critical", "--baseline", str(baseline), "--policy", str(policy)),
    )
    assert result.exit_code == ExitCode.FINDINGS, result.output
    assert result.stdout.splitlines()[0].startswith("FAIL: Nothing was examined: no host was read")
    report = assert_reports_say_nothing_was_examined(out, "1 datacenter and 1 datastore")
    data02 = report["findings"][0]
    assert data02["waiver"] is None
    assert data02["evidence"]["policy_ignored"] == ["severity override", "waiver"]


def invisible_scenario(hide_datacenter: bool) -> dict[str, Any]:
    """scenario-b as an account sees it that has the Read-only role on the datacenter
    only, not propagated (or, hiding the datacenter too, on nothing at all)."""
    scenario = copy.deepcopy(load_scenario(SCENARIOS / "scenario-b.yaml"))
    (dc,) = scenario["datacenters"]
    names = [c["name"] for c in dc["clusters"]]
    names += [h["name"] for c in dc["clusters"] for h in c["hosts"]]
    names += [h["name"] for h in dc["standalone_hosts"]]
    names += [v["name"] for v in dc["vms"]] + [d["name"] for d in dc["datastores"]]
    names += [dc["name"]] if hide_datacenter else []
    scenario["faults"] = {"no_permission": [], "invisible": names}
    return scenario


@pytest.mark.live
@pytest.mark.parametrize(
    ("hide_datacenter", "cause"),
    [
        (False, "no host was read, though the server listed 1 datacenter: "),
        (True, "the server's answer held no object at all"),
    ],
    ids=["datacenter-only", "nothing"],
)
def test_a_live_account_that_sees_no_host_fails_the_scan(
    lab_factory: Any, tmp_path: Path, hide_datacenter: bool, cause: str
) -> None:
    lab = lab_factory(invisible_scenario(hide_datacenter))
    out = tmp_path / "out"
    result = scan_cli(
        *("--server", lab.url, "--user", lab.user, "-o", str(out), *ALL_FORMATS),
        *("--fail-on", "critical"),
        env={"GPUAUDIT_PASSWORD": lab.password, "GOVC_URL": None},
    )
    assert result.exit_code == ExitCode.FINDINGS, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith("FAIL: Nothing was examined: ") and cause in first
    report = assert_reports_say_nothing_was_examined(out, cause)
    assert report["inventory"]["hosts"] == [] and report["inventory"]["vms"] == []
    assert report["inventory"]["datacenters"] == ([] if hide_datacenter else ["dc-east"])


# The failed findings of the two replays before DATA-02 existed: they must not change.
# Since HA-12 and HA-13: scenario B's hosts share one datastore (one heartbeat
# datastore each), and its admission control is on while N+0 (HA-08).
SCENARIO_B_FAILED = {
    ("HA-05", "ml-notebook-01"),
    ("HA-05", "ml-notebook-02"),
    ("HA-05", "vdi-design-02"),
    ("HA-05", "vdi-design-04"),
    ("HA-06", "scen-b"),
    ("HA-08", "scen-b"),
    ("HA-12", "scen-b"),
    ("HA-13", "scen-b"),
    ("MON-01", "esx-b01.corp.local"),
    ("MON-01", "esx-b02.corp.local"),
    ("MON-01", "esx-b03.corp.local"),
    # DRS is on and no VgpuMMAutomationTimeoutSecs is set: maintenance mode leaves
    # the vGPU VMs in place, so no host can enter it without GPU VM downtime.
    ("VM-09", "scen-b"),
    ("VM-13", "scen-b"),
}

# The ESXi host's one failure: no policy declares its passthrough guest's NVIDIA
# edition, and LIC-01 says what it assumed (info).
ESXI_FAILED = {("LIC-01", "edge-inference-01")}


@pytest.mark.parametrize(
    ("name", "hosts", "failed"),
    [("esxi", 1, ESXI_FAILED), ("scenario-b", 3, SCENARIO_B_FAILED)],
)
def test_real_estates_pass_data02_and_are_otherwise_unchanged(
    name: str, hosts: int, failed: set[tuple[str, str]], no_network: None
) -> None:
    inventory = obtain.obtain_inventory(obtain.Replay(CASSETTES / f"{name}.yaml"))
    result = run_checks(inventory, None, date(2027, 1, 15))
    (data02,) = [f for f in result.findings if f.rule == "DATA-02"]
    assert data02.status == "pass" and data02.evidence["hosts"] == hosts
    assert {(f.rule, f.object) for f in result.findings if f.status == "fail"} == failed


def test_an_esxi_replay_still_exits_zero_with_no_nothing_examined(
    tmp_path: Path, no_network: None
) -> None:
    out = tmp_path / "out"
    result = scan_cli("--replay", str(CASSETTES / "esxi.yaml"), "-f", "json", "-o", str(out))
    assert result.exit_code == ExitCode.OK, result.output
    assert "nothing was examined" not in result.stdout.lower()
    report = json.loads(one(out, ".json").read_text())
    # Its only failure is LIC-01's stated assumption (info): a notice, never a failure.
    assert report["summary"]["worst_severity"] is None
    notices = [f["rule"] for f in report["findings"] if f["status"] == "fail"]
    assert notices == ["LIC-01"]
    assert report["summary"]["nothing_examined"] is None


def test_the_lab_checks_its_invisible_names(tmp_path: Path) -> None:
    from tests.lab.scenario import ScenarioError

    text = (SCENARIOS / "scenario-b.yaml").read_text()
    good = tmp_path / "good.yaml"
    good.write_text(text + "faults:\n  invisible: [esx-b01.corp.local, dc-east]\n")
    assert load_scenario(good)["faults"]["invisible"] == ["esx-b01.corp.local", "dc-east"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(text + "faults:\n  invisible:\n    - esx-b01.corp.local\n    - esx-b09\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(bad)
    line = len(text.splitlines()) + 4
    assert str(info.value) == (
        f"{bad}:{line}: invisible entry #2 ('esx-b09') is not a name in the scenario"
    )
