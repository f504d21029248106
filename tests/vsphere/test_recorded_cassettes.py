"""Replay tier: every committed cassette, offline, with outbound sockets refused.

Each cassette must yield the inventory its scenario file declares (derived by
tests/lab/expected.py from the scenario alone), within the request bound, and
must hold no secret.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuaudit.inventory import Inventory
from gpuaudit.vsphere import cassette, obtain
from tests.conftest import CASSETTES, RECORDED, SCENARIOS
from tests.lab.expected import comparable, expected_inventory
from tests.lab.lab import LAB_PASSWORD
from tests.lab.scenario import load_scenario

# A full collection, whatever the estate's size, makes at most this many SOAP
# requests plus pages: the ContinueRetrievePropertiesEx calls, and every QueryPerf
# after the first (the server's maxQueryMetrics sets how many hosts one carries),
# plus one QueryConfigTarget per (vGPU cluster, ESXi build, GPU model), or per GPU host
# of a cluster whose VMs use vendor device groups, one fetchSoftwarePackages per vGPU
# host and, on vSphere 9.0, one QueryCapacity per vGPU host.
REQUEST_BOUND = 25
# The telemetry's own bound: at most one QueryPerf call per 50 GPU hosts at the default limit.
HOSTS_PER_QUERY = 50


def test_every_recorded_scenario_has_a_cassette() -> None:
    missing = [name for name in RECORDED if not (CASSETTES / f"{name}.yaml").is_file()]
    assert not missing, f"record them with: python -m tests.lab.record {' '.join(missing)}"


@pytest.mark.parametrize("name", RECORDED)
def test_replay_matches_scenario(name: str, no_network: None) -> None:
    inventory = obtain.obtain_inventory(obtain.Replay(CASSETTES / f"{name}.yaml"))
    expected = expected_inventory(load_scenario(SCENARIOS / f"{name}.yaml"))
    assert comparable(inventory) == comparable(expected)


@pytest.mark.parametrize("name", RECORDED)
def test_request_count_is_bounded(name: str) -> None:
    calls = [cassette.soap_call(i["request"].get("body"))[0] for i in _interactions(name)]
    soap = [c for c in calls if c]  # the version negotiation GET has no SOAP body
    batches = soap.count("QueryPerf")
    pages = soap.count("ContinueRetrievePropertiesEx") + max(0, batches - 1)
    per_group = soap.count("QueryConfigTarget")  # bounded below, per cluster and build
    per_host = soap.count(CAPACITY_CALL)  # bounded below, per vGPU host
    software = soap.count("fetchSoftwarePackages")  # bounded below, per vGPU host
    assert len(soap) - pages - per_group - per_host - software <= REQUEST_BOUND, soap
    # QueryPerf grows by one call per 50 connected GPU hosts, never one per host.
    inventory = expected_inventory(load_scenario(SCENARIOS / f"{name}.yaml"))
    gpu_hosts = sum(1 for h in inventory.hosts if h.gpus and h.connected)
    assert batches <= -(-gpu_hosts // HOSTS_PER_QUERY)
    # One bulk retrieval of the inventory, one of the device lists of the VMs that
    # may hold a GPU, and one of the performance and licence managers, not one read
    # per object, and one of the vGPU hosts' image config managers when there are any;
    # one QueryAssignedLicenses for every host. A standalone ESXi host has no assignment
    # manager and no vCenter settings.
    vgpu_vm_hosts = {vm.host for vm in inventory.vms if any(g.kind == "vgpu" for g in vm.gpus)}
    software_hosts = [
        h for h in inventory.hosts if h.connected and (h.vgpu_profiles or h.name in vgpu_vm_hosts)
    ]
    assert soap.count("RetrievePropertiesEx") == 3 + bool(software_hosts)
    assert "RetrieveProperties" not in soap
    esxi = inventory.vcenter.standalone_esxi
    assert soap.count("QueryAssignedLicenses") == (0 if esxi else 1)
    # vgpu.hotmigrate.enabled, and the QueryPerf limit when there are GPU counters to read.
    limit_read = inventory.telemetry.metrics_per_query is not None
    assert soap.count("QueryOptions") == (0 if esxi else 1 + limit_read)
    # vCenter's description of the vGPU profiles: one QueryConfigTarget per (cluster,
    # ESXi build, GPU model) among the connected 7.0.3+ GPU hosts of the clusters running
    # a vGPU VM; one per such host where a VM uses a vendor device group.
    assert soap.count("QueryConfigTarget") == _config_target_groups(inventory)
    # vCenter's capacity (9.0): one QueryCapacity per connected GPU host with profiles.
    vgpu_hosts = sum(1 for h in inventory.hosts if h.connected and h.gpus and h.vgpu_profiles)
    capacity_asked = not esxi and _numbers(inventory.vcenter.api_version) >= (9, 0)
    assert per_host == (vgpu_hosts if capacity_asked else 0)
    # The vGPU manager's version: one fetchSoftwarePackages per connected host that offers
    # vGPU profiles or runs a vGPU VM.
    assert software == len(software_hosts)
    assert soap[-1] == "Logout"  # the session is always ended


# QueryCapacity on the wire (pyVmomi calls it QueryDirectPathProfileCapacity).
CAPACITY_CALL = "DirectPathProfileManagerQueryCapacity"


def _config_target_groups(inventory: Inventory) -> int:
    """One call per (cluster, ESXi build, GPU models) of the clusters running a vGPU VM,
    and one per host of the clusters running a VM that uses a vendor device group."""
    if inventory.vcenter.standalone_esxi or _numbers(inventory.vcenter.api_version) < (7, 0, 3):
        return 0
    on = [vm for vm in inventory.vms if vm.power_state == "poweredOn"]
    linked = {vm.cluster for vm in on if vm.device_groups}
    clusters = linked | {vm.cluster for vm in on if any(g.kind == "vgpu" for g in vm.gpus)}
    return len(
        {
            (h.cluster, h.build, frozenset(g.model for g in h.gpus))
            if h.cluster not in linked
            else (h.cluster, h.name)
            for h in inventory.hosts
            if h.cluster in clusters and h.connected and h.gpus and _numbers(h.version) >= (7, 0, 3)
        }
    )


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in version.split(".") if n.isdigit())


@pytest.mark.parametrize("name", RECORDED)
def test_device_lists_are_read_only_for_vms_that_may_hold_a_gpu(name: str) -> None:
    calls = [cassette.soap_call(i["request"].get("body")) for i in _interactions(name)]
    retrievals = [args for op, _, args in calls if op == "RetrievePropertiesEx"]
    inventory_read, device_read = retrievals[0], retrievals[1]
    assert "config.hardware.device" not in inventory_read
    assert "config.hardware.device" in device_read
    asked = set(re.findall(r'<ns0:obj type="VirtualMachine">([^<]+)</ns0:obj>', device_read))
    inventory = obtain.obtain_inventory(obtain.Replay(CASSETTES / f"{name}.yaml"))
    hosts = {h.name: h for h in inventory.hosts}
    for vm in inventory.vms:
        if vm.gpus or vm.power_state != "poweredOn":
            assert vm.moref in asked, vm.name  # never miss a GPU VM
        elif vm.memory_reservation_mb < vm.memory_mb and not vm.memory_locked_to_max:
            host = hosts.get(vm.host or "")
            # Only a host whose graphics devices went unread makes such a VM a doubt.
            assert vm.moref not in asked or host is None or not host.connected, vm.name


def _interactions(name: str) -> list[dict]:  # type: ignore[type-arg]
    return cassette.interactions(CASSETTES / f"{name}.yaml")


_COOKIE = re.compile(r'vmware_soap_session="?([^";\s]+)')


@pytest.mark.parametrize("path", sorted(CASSETTES.glob("*.yaml")), ids=lambda p: p.stem)
def test_cassette_holds_no_secret(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert LAB_PASSWORD not in text
    assert set(_COOKIE.findall(text)) <= {cassette.SCRUBBED}
    assert re.search(r"<password[^>]*>(?!\*+<)", text) is None
    assert "User-Agent" not in text and "127.0.0.1:" not in text


def test_replay_refuses_a_request_the_cassette_lacks(tmp_path: Path, no_network: None) -> None:
    # A cassette cut after the login: the collection asks for calls it does not hold.
    source = (CASSETTES / "scenario-b.yaml").read_text(encoding="utf-8")
    cut = source.index("CreateContainerView")
    truncated = tmp_path / "truncated.yaml"
    truncated.write_text(source[: source.rindex("- request:", 0, cut)], encoding="utf-8")
    with pytest.raises(cassette.CassetteError, match="does not hold"):
        obtain.obtain_inventory(obtain.Replay(truncated))


def test_inventory_round_trips_through_json(tmp_path: Path) -> None:
    inventory = obtain.obtain_inventory(obtain.Replay(CASSETTES / "demo.yaml"))
    path = tmp_path / "inventory.json"
    inventory.save(path)
    assert Inventory.load(path) == inventory
