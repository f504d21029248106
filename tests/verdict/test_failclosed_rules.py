"""tests/scenarios/failclosed-rules.yaml: each trap is refused or not proven, its twin passes.

The expectations are written out here by hand from VMware's words, and the scenario's
own `expect` must say the same:

- "You can use the advanced option das.heartbeatdsperhost to change the number of
  heartbeat datastores selected by vCenter Server for each host. The default is two and
  the maximum valid value is five." (vSphere Availability 7.0, Datastore Heartbeating)
- "In a vSAN environment, vSphere HA behavior is slightly different from the
  traditional mechanism. Datastore heartbeats are no longer relevant" (VMware vCAT,
  Architecting a vSphere Compute Platform, 8.1.8 Heartbeat Datastores)
- das.ignoreInsufficientHbDatastore: "Suppress the host config issue that the number of
  heartbeat datastores is less than das.heartbeatDsPerHost" (Yellow Bricks, HA
  Architecture Series - Advanced Settings): a silenced warning, not a fix.

VM-06 and GPU-08 need the hosts' vGPU manager version, which the collector reads only
with the Host.Config.Image privilege, and this scenario's role lacks it: their traps and
twins are in tests/scenarios/failclosed-manager.yaml (tests/verdict/test_failclosed_manager.py)
and unit tests in tests/rules/test_vmotion.py and tests/rules/test_vgpu_manager.py.
Here every vGPU host's VM-06 is not proven, for that reason.
"""

from __future__ import annotations

from datetime import date

import pytest

from gpuaudit.inventory import Inventory
from gpuaudit.results import Finding
from gpuaudit.verdict.check import run_checks
from gpuaudit.vsphere import obtain
from tests.conftest import CASSETTES, SCENARIOS
from tests.lab.expected import expected_inventory
from tests.lab.scenario import load_scenario

NAME = "failclosed-rules"
TODAY = date(2027, 1, 15)

# cluster -> (HA-12 status, the words its message must hold)
HA12 = {
    # one vSAN datastore is all the hosts share: heartbeats are not relevant
    "fc-vsan": ("pass", "the only shared datastores are vSAN (vsan-fc1)"),
    # the same plus one shared NFS datastore: one heartbeat datastore, two wanted
    "fc-vsan-nfs": ("fail", "fewer than 2 heartbeat datastores"),
    # two shared NFS datastores, the default of two
    "fc-default": ("pass", "every host has at least 2 heartbeat datastores"),
    # the same, das.heartbeatdsperhost = 3
    "fc-want3": ("fail", "fewer than 3 heartbeat datastores (das.heartbeatdsperhost = 3)"),
    # the same, das.heartbeatdsperhost = 9: above the maximum of five, effect unknown
    "fc-want9": ("unproven", "how many heartbeat datastores vCenter wants is not known"),
    # one shared NFS datastore, the warning silenced
    "fc-silenced": ("fail", "das.ignoreInsufficientHbDatastore is true"),
    # two shared NFS datastores, the same option
    "fc-silenced-ok": ("pass", "every host has at least 2 heartbeat datastores"),
}
TRAPS_AND_TWINS = {
    "fc-vsan-nfs": "fc-vsan",
    "fc-want3": "fc-default",
    "fc-want9": "fc-default",
    "fc-silenced": "fc-silenced-ok",
}
VGPU_HOSTS = [
    f"{prefix}-esx0{i}"
    for prefix in ("vsan", "vsnfs", "dflt", "want3", "want9", "quiet", "quietok")
    for i in (1, 2)
]


def _oracle() -> Inventory:
    return expected_inventory(load_scenario(SCENARIOS / f"{NAME}.yaml"))


def _recorded() -> Inventory:
    return obtain.obtain_inventory(obtain.Replay(CASSETTES / f"{NAME}.yaml"))


def _findings(inv: Inventory, rule: str) -> dict[str, Finding]:
    result = run_checks(inv, None, TODAY)
    assert result.errors == []
    return {f.object: f for f in result.findings if f.rule == rule}


@pytest.fixture(params=["oracle", "cassette"])
def inventory(request: pytest.FixtureRequest, no_network: None) -> Inventory:
    return _oracle() if request.param == "oracle" else _recorded()


def test_the_traps_are_refused_or_not_proven_and_their_twins_pass(inventory: Inventory) -> None:
    found = _findings(inventory, "HA-12")
    assert {name: f.status for name, f in found.items()} == {
        name: status for name, (status, _) in HA12.items()
    }
    for name, (_, words) in HA12.items():
        assert words in found[name].message, (name, found[name].message)
    for trap, twin in TRAPS_AND_TWINS.items():
        assert found[trap].status in ("fail", "unproven") and found[twin].status == "pass"
    assert found["fc-want9"].evidence["not_proven"] == (
        "das.heartbeatdsperhost = '9', outside the valid 2 to 5: how many heartbeat "
        "datastores vCenter wants is not known"
    )


def test_the_collector_reads_the_vsan_datastore_and_the_ha_options(no_network: None) -> None:
    inv = _recorded()
    vsan = next(d for d in inv.datastores if d.name == "vsan-fc1")
    assert vsan.type.lower() == "vsan"
    options = {c.name: c.ha_options for c in inv.clusters}
    assert options["fc-want3"] == {"das.heartbeatdsperhost": "3"}
    assert options["fc-silenced"] == {"das.ignoreInsufficientHbDatastore": "true"}
    assert options["fc-default"] == {}


def test_without_the_vgpu_manager_version_vm06_is_never_a_pass(inventory: Inventory) -> None:
    found = _findings(inventory, "VM-06")
    assert sorted(found) == sorted(VGPU_HOSTS)
    assert {f.status for f in found.values()} == {"unproven"}
    assert {f.evidence["not_proven"] for f in found.values()} == {
        "the vGPU manager version is not known (reading it needs Host.Config.Image): "
        "ESXi 8.0 U3 cannot be checked against its vGPU branch"
    }


def test_the_scenario_expects_what_this_test_writes_out() -> None:
    expect = {e["rule"]: e for e in load_scenario(SCENARIOS / f"{NAME}.yaml")["expect"]}
    ha12 = expect["HA-12"]
    for status in ("fail", "pass", "unproven"):
        assert sorted(ha12[status]) == sorted(n for n, (s, _) in HA12.items() if s == status)
    assert sorted(expect["VM-06"]["unproven"]) == sorted(VGPU_HOSTS)
    assert expect["VM-06"]["fail"] == expect["VM-06"]["pass"] == []
