"""tests/scenarios/failclosed-manager.yaml: the vGPU manager read with Host.Config.Image.

Each trap fails, its twin passes. The expectations are derived here from the scenario
file and from NVIDIA's published figures, written out below, never from gpuaudit's
tables; the scenario's own `expect` must say the same.

- Branches (NVIDIA Virtual GPU Software, https://docs.nvidia.com/vgpu/index.html,
  "Active vGPU Software Releases" and "Older vGPU Software Releases"): NVIDIA vGPU 17 is
  R550, a production branch supported until June 2025; vGPU 18 is R570, a production
  branch supported until March 2026; vGPU 19 is R580, a long-term support branch
  supported until July 2028.
- ESXi releases ("Hypervisor Software Releases" of each branch's release notes for
  VMware vSphere): vGPU 18 lists ESXi 8.0 and 9.0, and no 7.0 release.
- Guest drivers ("Virtual GPU Software R580 for VMware vSphere Release Notes", 1.2
  "Compatibility Requirements for the NVIDIA vGPU Manager and Guest VM Driver"): "NVIDIA
  vGPU Manager with guest VM drivers from the same release", "NVIDIA vGPU Manager from a
  later major release branch with guest VM drivers from the previous branch", "NVIDIA
  vGPU Manager from a later long-term support branch with guest VM drivers from the
  previous long-term support branch"; "If you install an incompatible guest VM driver
  release for the release of the vGPU Manager that you are using, the NVIDIA vGPU fails
  to load." A guest driver of a later branch than the manager is none of them.

NVIDIA names a month for the end of support; the checks run at 2027-01-15, well after
March 2026 and before July 2028.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from gpuaudit.inventory import Gap, Inventory
from gpuaudit.results import Finding
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES, SCENARIOS
from tests.lab.expected import expected_inventory
from tests.lab.scenario import load_scenario, normalise

NAME = "failclosed-manager"
TODAY = date(2027, 1, 15)

# NVIDIA's figures: driver branch -> (vGPU release, (year, month) support ends).
BRANCHES = {550: (17, (2025, 6)), 570: (18, (2026, 3)), 580: (19, (2028, 7))}
# The ESXi releases vGPU 18's release notes list, as (major, minor, update).
ESXI_LISTED = {18: {(8, 0, 0), (9, 0, 0)}}


def _scenario() -> dict[str, Any]:
    return load_scenario(SCENARIOS / f"{NAME}.yaml")


def _hosts(scenario: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Host name -> (its cluster, its spec)."""
    return {
        h["name"]: (c["name"], h)
        for dc in scenario["datacenters"]
        for c in dc["clusters"]
        for h in c["hosts"]
    }


def _vgpu_vm_hosts(scenario: dict[str, Any]) -> set[str]:
    return {
        vm["host"]
        for dc in scenario["datacenters"]
        for vm in dc["vms"]
        if any("vgpu" in g for g in vm["gpus"])
    }


def _branch(spec: dict[str, Any]) -> int:
    return BRANCHES[int(spec["vgpu_manager"]["version"].split(".")[0])][0]


def _gpu09(scenario: dict[str, Any]) -> dict[str, str]:
    out = {}
    for name, (_, spec) in _hosts(scenario).items():
        if spec["vgpu_manager"] is None:
            continue
        _, ends = BRANCHES[int(spec["vgpu_manager"]["version"].split(".")[0])]
        out[name] = "fail" if (TODAY.year, TODAY.month) > ends else "pass"
    return out


def _vm06(scenario: dict[str, Any]) -> dict[str, str]:
    out = {}
    for name in _vgpu_vm_hosts(scenario):
        spec = _hosts(scenario)[name][1]
        listed = ESXI_LISTED.get(_branch(spec))
        release = tuple(int(n) for n in spec["version"].split("."))
        if listed is None:
            out[name] = "unproven"  # no list written here for the branch
        elif release in listed:
            out[name] = "pass"
        elif release[:2] not in {r[:2] for r in listed} and release < min(listed):
            out[name] = "fail"
        else:
            out[name] = "unproven"  # a later update of a line listed
    return out


def _gpu08(scenario: dict[str, Any]) -> dict[str, str]:
    clusters: dict[str, list[dict[str, Any]]] = {}
    for _, (cluster, spec) in _hosts(scenario).items():
        clusters.setdefault(cluster, []).append(spec)
    running = _vgpu_vm_hosts(scenario)
    out = {}
    for cluster, specs in clusters.items():
        if len(specs) < 2 or any(s["vgpu_manager"] is None for s in specs):
            continue
        guests = {_branch(s) for s in specs if s["name"] in running} or {_branch(s) for s in specs}
        managers = {_branch(s) for s in specs}
        if any(g > m for g in guests for m in managers):
            out[cluster] = "fail"
        elif all(g == m or g == m - 1 for g in guests for m in managers):
            out[cluster] = "pass"
    return out


def _findings(inv: Inventory, rule: str) -> dict[str, Finding]:
    result = run_checks(inv, None, TODAY)
    assert result.errors == []
    return {f.object: f for f in result.findings if f.rule == rule}


def _oracle() -> Inventory:
    return expected_inventory(_scenario())


def _recorded() -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(CASSETTES / f"{NAME}.yaml"))


def _expect(rule: str) -> dict[str, str]:
    out = {}
    for e in _scenario()["expect"]:
        if e["rule"] == rule:
            out.update({o: "fail" for o in e["fail"]})
            out.update({o: "pass" for o in e["pass"]})
            out.update({o: "unproven" for o in e["unproven"]})
    return out


def test_the_scenario_states_the_published_verdicts() -> None:
    scenario = _scenario()
    assert _expect("GPU-09") == _gpu09(scenario)
    assert _expect("VM-06") == _vm06(scenario)
    assert _expect("GPU-08") == _gpu08(scenario)
    # Each trap has its twin.
    assert _gpu09(scenario)["eos-trap-esx01"] == "fail"
    assert _gpu09(scenario)["eos-twin-esx01"] == "pass"
    assert _vm06(scenario)["esxi-trap-esx01"] == "fail"
    assert _vm06(scenario)["esxi-twin-esx01"] == "pass"
    assert _gpu08(scenario) == {"mgr-esxi": "pass", "mgr-mix": "fail", "mgr-upgrade": "pass"}


@pytest.mark.parametrize("source", [_oracle, _recorded], ids=["oracle", "recorded"])
@pytest.mark.parametrize("rule", ["VM-06", "GPU-08", "GPU-09"])
def test_each_trap_fails_and_its_twin_passes(source: Any, rule: str) -> None:
    derived = {"VM-06": _vm06, "GPU-08": _gpu08, "GPU-09": _gpu09}[rule](_scenario())
    findings = _findings(source(), rule)
    assert {o: f.status for o, f in findings.items()} == derived


def test_the_messages_name_the_published_facts() -> None:
    inv = _recorded()
    vm06 = _findings(inv, "VM-06")
    assert "ESXi 7.0 U3 is not supported by vGPU 18" in vm06["esxi-trap-esx01"].message
    assert "ESXi 8.0 is listed for vGPU 18" in vm06["esxi-twin-esx01"].message
    gpu08 = _findings(inv, "GPU-08")
    assert "guest drivers of 580.82.07 on vGPU manager 570.133.10" in gpu08["mgr-mix"].message
    assert "guest drivers of 570.133.10 on vGPU manager 580.82.07" in gpu08["mgr-upgrade"].message
    gpu09 = _findings(inv, "GPU-09")
    assert "ended in June 2025" in gpu09["eos-trap-esx01"].message
    assert "until July 2028" in gpu09["eos-twin-esx01"].message


def test_the_recording_holds_each_hosts_version_from_its_vib() -> None:
    scenario = _scenario()
    hosts = {h.name: h for h in _recorded().hosts}
    for name, (_, spec) in _hosts(scenario).items():
        manager = spec["vgpu_manager"]
        assert hosts[name].vgpu_manager_version == (manager and manager["version"]), name


def test_a_host_without_the_vib_is_a_gap_not_a_guess() -> None:
    inv = _recorded()
    gaps = [g for g in inv.gaps if g.object == "none-esx01"]
    assert [(g.property, g.reason, g.privilege) for g in gaps] == [
        (
            "vGPU manager version (HostImageConfigManager.fetchSoftwarePackages)",
            "none of the host's 4 software packages is an NVIDIA vGPU manager VIB",
            "",
        )
    ]
    assert "none-esx01" not in _findings(inv, "GPU-09")
    assert _findings(inv, "DATA-01")["none-esx01"].status == "fail"


def test_without_the_grant_every_vgpu_host_has_the_privilege_gap() -> None:
    scenario = _scenario()
    scenario["role"] = {"privileges": []}
    inv = expected_inventory(normalise(scenario))
    assert all(h.vgpu_manager_version is None for h in inv.hosts)
    assert sorted(g.object for g in inv.gaps) == sorted(_hosts(scenario))
    assert {(g.reason, g.privilege) for g in inv.gaps} == {
        (
            "needs the Host.Config.Image privilege, which the Read-only role lacks",
            "Host.Config.Image",
        )
    }
    for rule in ("GPU-08", "GPU-09"):
        assert _findings(inv, rule) == {}
    assert {f.status for f in _findings(inv, "VM-06").values()} == {"unproven"}
    assert isinstance(inv.gaps[0], Gap)
