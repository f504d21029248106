"""The vGPU manager version: a read beyond the Read-only role is a named gap, never a failure.

vSphere reports the NVIDIA vGPU manager's version only in a host's installed software,
which needs the Host.Config.Image privilege. The audit account holds the Read-only role,
so the collector records a gap naming that privilege on every vGPU host; DATA-01 lists
it and passes, the other findings on the host stay certain, and the report is complete.
"""

from __future__ import annotations

from gpuaudit.inventory import Gap, Inventory
from gpuaudit.report.summary import summarize
from gpuaudit.verdict import check
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES, SCENARIOS
from tests.lab.scenario import load_scenario
from tests.support.builders import context, healthy

PRIVILEGE = "Host.Config.Image"


def role_gap(host: str) -> Gap:
    return Gap(
        host, "HostSystem", "vGPU manager version", "needs Host.Config.Image", privilege=PRIVILEGE
    )


def data01(inv: Inventory) -> dict[str, tuple[bool, str]]:
    from gpuaudit.rules.data import gaps

    return {v.object: (v.passed, v.message) for v in gaps(context(inv))}


def test_a_privilege_gap_passes_data01_and_names_the_privilege() -> None:
    e = healthy()
    e.inv.gaps.append(role_gap("h1"))
    verdicts = data01(e.inv)
    passed, message = verdicts["h1"]
    assert passed
    assert "Host.Config.Image" in message and "Read-only" in message
    assert verdicts["h2"] == (True, "no gaps")


def test_an_uncertain_gap_beside_it_still_fails_data01() -> None:
    e = healthy()
    e.inv.gaps += [role_gap("h1"), Gap("h1", "HostSystem", "config.graphicsInfo", "NoPermission")]
    passed, message = data01(e.inv)["h1"]
    assert not passed
    assert "config.graphicsInfo: NoPermission" in message
    assert "vGPU manager" not in message


def test_the_report_stays_complete_and_counts_it_apart() -> None:
    e = healthy()
    e.inv.gaps += [role_gap("h1"), role_gap("h2")]
    result = check.run_checks(e.inv)
    summary = summarize(result)
    assert summary.incomplete is False
    assert (summary.gaps, summary.beyond_role) == (0, 2)
    on_h1 = [f for f in result.findings if f.host == "h1" and f.rule != "DATA-01"]
    assert on_h1 and all("uncertain" not in f.evidence for f in on_h1)


def test_an_uncertain_gap_makes_the_report_incomplete() -> None:
    e = healthy()
    e.inv.gaps.append(Gap("h1", "HostSystem", "config.graphicsInfo", "NoPermission"))
    summary = summarize(check.run_checks(e.inv))
    assert summary.incomplete is True
    assert (summary.gaps, summary.beyond_role) == (1, 0)


def test_the_demo_records_the_gap_on_each_vgpu_host_from_its_scenario() -> None:
    scenario = load_scenario(SCENARIOS / "demo.yaml")
    expected = set()
    for dc in scenario["datacenters"]:
        vgpu_vm_hosts = {
            vm["host"] for vm in dc.get("vms", []) if any("vgpu" in g for g in vm.get("gpus", []))
        }
        hosts = [h for c in dc.get("clusters", []) for h in c.get("hosts", [])]
        hosts += dc.get("standalone_hosts", [])
        for h in hosts:
            if h.get("connection", "connected") != "connected":
                continue
            if h.get("vgpu_profiles") or h["name"] in vgpu_vm_hosts:
                expected.add(h["name"])
    assert expected, "the demo has vGPU hosts"
    inv = obtain.obtain_inventory(obtain.Replay(CASSETTES / "demo.yaml"))
    got = {g.object for g in inv.gaps if g.privilege == PRIVILEGE}
    assert got == expected
    assert all(
        g.reason.startswith("needs the Host.Config.Image privilege")
        for g in inv.gaps
        if g.privilege
    )
