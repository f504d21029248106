"""The NVLink traps of tests/scenarios/failclosed-nvlink.yaml, judged on the scenario's
oracle inventory and on the recorded lab session (cassettes/failclosed-nvlink.yaml): a
VM whose two vGPUs form a vendor device group restarts only on a host that offers a
group of that name, on GPUs the host links.

The verdicts are derived here from the scenario file (which host offers which group,
which GPUs it has, what runs on them) and from the published texts, written out:

- vSphere API reference, VirtualMachineVirtualDeviceGroupsVendorDeviceGroup: a VM's group
  is one of those "defined in the VirtualMachineVendorDeviceGroupInfo", which a host
  lists in its ConfigTarget: a host that does not list the name cannot take the group.
- NVIDIA AI Enterprise 8.0, "Device Groups": "Platforms can detect sets of physically
  connected devices (for example GPUs on NVLink or GPU-NIC pairs), then present them as
  one logical unit to the VM." Which GPUs of a host those are, no API reports.
- NVIDIA AI Enterprise 8.0, "NVIDIA NVSwitch": "a fabric that connects multiple GPUs in
  one system ... The switch behaves as a crossbar", on the "NVIDIA HGX H100 8-GPU
  baseboard": every GPU of such a host reaches every other.
- The PCI ID Repository (pci.ids at c1c12547): 10de:2330 "GH100 [H100 SXM5 80GB]", the
  HGX board's GPU; 10de:2331 "GH100 [H100 PCIe]", a PCIe card whose NVLink is a bridge
  between two cards, on no NVSwitch.

So a restart is refused where the other host does not offer the group, proven where its
GPUs are all on the NVSwitch fabric or where the group takes every GPU of it and all are
free, and not proven otherwise.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from gpuaudit.inventory import Inventory
from gpuaudit.results import AuditResult
from gpuaudit.simulation.failures import simulate_cluster
from tests.conftest import SCENARIOS
from tests.lab.scenario import load_scenario
from tests.support.checked_estates import checked, scenario_inventory

NAME = "failclosed-nvlink"
H100_SXM5, H100_PCIE = 0x2330, 0x2331
ON_NVSWITCH = {H100_SXM5}  # the HGX H100 8-GPU baseboard's GPU
TRAPS_AND_TWINS = {"nv-offer-trap": "nv-offer-twin", "nv-link-trap": "nv-link-twin"}


def scenario() -> dict[str, Any]:
    data: dict[str, Any] = load_scenario(SCENARIOS / f"{NAME}.yaml")
    return data


def clusters() -> dict[str, list[dict[str, Any]]]:
    return {c["name"]: c["hosts"] for c in scenario()["datacenters"][0]["clusters"]}


def vms() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = scenario()["datacenters"][0]["vms"]
    return found


def grouped() -> dict[str, tuple[str, str, int]]:
    """The VMs whose vGPUs form a device group: (their host, the group's name, its GPUs)."""
    return {
        vm["name"]: (vm["host"], group["name"], len(group["gpus"]))
        for vm in vms()
        for group in vm.get("device_groups", [])
    }


def cluster_of(host: str) -> str:
    return next(name for name, hosts in clusters().items() if host in [h["name"] for h in hosts])


def restart_verdict(vm: str) -> str:
    """HA-05 for a grouped VM when its host fails, from the scenario and the texts above."""
    host, group, gpus = grouped()[vm]
    (other,) = [h for h in clusters()[cluster_of(host)] if h["name"] != host]
    if group not in [g["name"] for g in other.get("device_groups", [])]:
        return "fail"
    if all(g["device_id"] in ON_NVSWITCH for g in other["gpus"]):
        return "pass"
    running = sum(len(v["gpus"]) for v in vms() if v["host"] == other["name"])
    if gpus == len(other["gpus"]) and running == 0:
        return "pass"
    return "unproven"


@pytest.fixture(scope="module", params=["oracle", "cassette"])
def inventory(request: pytest.FixtureRequest) -> Inventory:
    return scenario_inventory(NAME, request.param)


@pytest.fixture(scope="module")
def result(inventory: Inventory) -> AuditResult:
    return checked(inventory)


def findings(result: AuditResult, rule: str) -> dict[str, Any]:
    return {f.object: f for f in result.findings if f.rule == rule}


def test_each_trap_and_twin_has_the_verdict_the_texts_give() -> None:
    verdicts = {vm: restart_verdict(vm) for vm in grouped()}
    assert verdicts == {
        "otrap-llm": "fail",
        "otwin-llm": "pass",
        "ltrap-llm": "unproven",
        "ltwin-llm": "pass",
    }


def test_the_scenario_expects_what_the_texts_give() -> None:
    expect = {e["rule"]: e for e in scenario()["expect"]}
    for vm, host_group in grouped().items():
        assert vm in expect["HA-05"][restart_verdict(vm)]
        # HA-08 judges the cluster by its one grouped VM: the others restart (below).
        assert cluster_of(host_group[0]) in expect["HA-08"][restart_verdict(vm)]


def test_the_collector_reads_each_hosts_offer_and_each_vms_group(inventory: Inventory) -> None:
    offers = {
        h["name"]: [g["name"] for g in h.get("device_groups", [])]
        for hosts in clusters().values()
        for h in hosts
    }
    assert {h.name: [g.name for g in h.device_groups or []] for h in inventory.hosts} == offers
    used = {
        vm.name: (vm.host, [g.name for g in vm.device_groups], len(vm.gpus))
        for vm in inventory.vms
        if vm.device_groups
    }
    assert used == {vm: (host, [group], gpus) for vm, (host, group, gpus) in grouped().items()}
    for vm in (v for v in inventory.vms if v.device_groups):
        assert {g.device_group for g in vm.gpus} == {vm.device_groups[0].key}


def test_ha05_refuses_a_host_that_does_not_offer_the_group_and_doubts_unlinked_gpus(
    result: AuditResult,
) -> None:
    found = findings(result, "HA-05")
    for vm, (host, group, _) in grouped().items():
        verdict = restart_verdict(vm)
        assert found[vm].status == verdict, (vm, found[vm].message)
        if verdict == "fail":
            assert f"does not offer the device group '{group}'" in found[vm].message
        if verdict == "unproven":
            why = found[vm].evidence["not_proven"]
            assert group in why and "NVSwitch" in why, why
        assert found[vm].evidence["failed_host"] == host
    # Every VM without a group restarts on the host the grouped VM leaves.
    others = [v["name"] for v in vms() if v["name"] not in grouped()]
    assert {vm: found[vm].status for vm in others} == dict.fromkeys(others, "pass")


def test_a_twin_restarts_on_the_linked_gpus_of_its_other_host(inventory: Inventory) -> None:
    for vm in ("otwin-llm", "ltwin-llm"):
        host, _, gpus = grouped()[vm]
        sim = simulate_cluster(inventory, cluster_of(host))
        (placed,) = [p for f in sim.failures if f.host == host for p in f.placed if p.vm == vm]
        (other,) = [h for h in clusters()[cluster_of(host)] if h["name"] != host]
        assert placed.to_host == other["name"]
        assert len(set((placed.to_gpu or "").split(", "))) == gpus
    # ltwin-esx02's two GPUs are the group's two: it takes both.
    sim = simulate_cluster(inventory, "nv-link-twin")
    (placed,) = [p for f in sim.failures for p in f.placed if p.vm == "ltwin-llm"]
    esx02 = next(h for h in clusters()["nv-link-twin"] if h["name"] == "ltwin-esx02")
    assert placed.to_gpu == ", ".join(g["pci_id"] for g in esx02["gpus"])


@pytest.mark.parametrize("cluster", sorted(clusters()))
def test_ha08_judges_each_cluster_by_its_grouped_vm(result: AuditResult, cluster: str) -> None:
    (vm,) = [vm for vm, (host, _, _) in grouped().items() if cluster_of(host) == cluster]
    finding = findings(result, "HA-08")[cluster]
    assert finding.status == restart_verdict(vm), finding.message
    sim = next(s for s in result.simulations if s.cluster == cluster)
    assert sim.tolerates == (1 if restart_verdict(vm) == "pass" else 0)
    assert (sim.tolerates_unproven == 1) == (restart_verdict(vm) == "unproven")


def test_each_trap_restarts_when_device_groups_are_not_read(inventory: Inventory) -> None:
    """The traps are traps: without the groups, any two free GPUs take the VM."""
    blind = dataclasses.replace(
        inventory,
        vms=[
            dataclasses.replace(
                vm,
                device_groups=[],
                gpus=[dataclasses.replace(g, device_group=None) for g in vm.gpus],
            )
            for vm in inventory.vms
        ],
    )
    for trap in TRAPS_AND_TWINS:
        (vm,) = [vm for vm, (host, _, _) in grouped().items() if cluster_of(host) == trap]
        sim = simulate_cluster(blind, trap)
        assert vm in {p.vm for f in sim.failures for p in f.placed}
        assert sim.tolerates == 1


def test_each_twin_differs_from_its_trap_only_in_the_trap() -> None:
    def renamed(name: str) -> list[dict[str, Any]]:
        prefix = {"nv-offer-trap": "otrap", "nv-offer-twin": "otwin"}.get(name)
        prefix = prefix or {"nv-link-trap": "ltrap", "nv-link-twin": "ltwin"}[name]
        hosts = [dict(h, name=h["name"].replace(prefix, "X")) for h in clusters()[name]]
        for h in hosts:
            h.pop("vmotion")
        return hosts

    def without(host: dict[str, Any], key: str) -> dict[str, Any]:
        return {k: v for k, v in host.items() if k != key}

    offer_trap, offer_twin = renamed("nv-offer-trap"), renamed("nv-offer-twin")
    assert offer_trap[0] == offer_twin[0]
    # The trap's other host offers no device group; the twin's offers the VM's.
    assert without(offer_trap[1], "device_groups") == without(offer_twin[1], "device_groups")
    assert offer_trap[1]["device_groups"] == []
    assert offer_twin[1]["device_groups"] == offer_twin[0]["device_groups"]
    link_trap, link_twin = renamed("nv-link-trap"), renamed("nv-link-twin")
    assert link_trap[0] == link_twin[0]
    # The trap's other host has four GPUs, two in use; the twin's only the group's two.
    assert len(link_trap[1]["gpus"]) == 4 and len(link_twin[1]["gpus"]) == 2
    assert link_twin[1]["gpus"] == link_trap[1]["gpus"][:2]
    assert without(link_trap[1], "gpus") == without(link_twin[1], "gpus")
