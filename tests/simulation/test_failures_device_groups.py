"""The host-failure simulation with vendor device groups, on variants of the NVLink
scenario's oracle inventory (tests/scenarios/failclosed-nvlink.yaml), each changed in
one fact the proof rests on. Expectations are written out from the rule in
gpuaudit/simulation/device_groups.py's docstring: a restart is proven only where the other host
offers the group and its GPUs are linked (one NVSwitch board, or the group takes every
GPU of the host, all free); a host whose offer vCenter did not report, or a group that
also holds a NIC, is not proven."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

from gpuaudit.inventory import Inventory, Vm
from gpuaudit.model.facts import Facts
from gpuaudit.simulation.failures import ClusterModel, simulate_cluster_notes
from tests.support.checked_estates import scenario_inventory

LINK = "NVIDIA H100-80C 2-GPU NVLink"
SXM_LINK = "NVIDIA H100XM-80C 2-GPU NVLink"


@functools.cache
def _inventory() -> Inventory:
    return scenario_inventory("failclosed-nvlink", "oracle")


def inventory() -> Inventory:
    return _inventory()  # each test changes copies only (dataclasses.replace)


def with_host(inv: Inventory, name: str, **changes: Any) -> Inventory:
    hosts = [dataclasses.replace(h, **changes) if h.name == name else h for h in inv.hosts]
    return dataclasses.replace(inv, hosts=hosts)


def with_vm(inv: Inventory, name: str, change: Callable[[Vm], Vm]) -> Inventory:
    vms = [change(vm) if vm.name == name else vm for vm in inv.vms]
    return dataclasses.replace(inv, vms=vms)


def outcome(inv: Inventory, cluster: str, failed: str, vm: str) -> tuple[str, str]:
    """(placed, unplaced or unproven) of the VM when ``failed`` fails, with the reason."""
    sim = simulate_cluster_notes(inv, cluster).simulation
    failure = next(f for f in sim.failures if f.host == failed)
    for kind in ("placed", "unproven", "unplaced", "manual_only"):
        for p in getattr(failure, kind):
            if p.vm == vm:
                return kind, p.reason or ""
    raise AssertionError(vm)


def test_the_scenario_as_it_is() -> None:
    inv = inventory()
    assert outcome(inv, "nv-link-twin", "ltwin-esx01", "ltwin-llm") == ("placed", "")
    assert outcome(inv, "nv-offer-twin", "otwin-esx01", "otwin-llm") == ("placed", "")
    assert outcome(inv, "nv-link-trap", "ltrap-esx01", "ltrap-llm")[0] == "unproven"
    assert outcome(inv, "nv-offer-trap", "otrap-esx01", "otrap-llm")[0] == "unplaced"


def test_an_offer_vcenter_did_not_report_is_not_proven() -> None:
    inv = with_host(inventory(), "ltwin-esx02", device_groups=None)
    kind, reason = outcome(inv, "nv-link-twin", "ltwin-esx01", "ltwin-llm")
    assert kind == "unproven"
    assert reason == (
        f"restart not proven: vCenter did not report which hosts offer the device group '{LINK}'"
    )
    # Not even on an NVSwitch board: the host may not offer the group at all.
    inv = with_host(inventory(), "otwin-esx02", device_groups=None)
    assert outcome(inv, "nv-offer-twin", "otwin-esx01", "otwin-llm")[0] == "unproven"


def test_a_host_that_offers_no_group_at_all_is_refused() -> None:
    inv = with_host(inventory(), "ltwin-esx02", device_groups=[])
    kind, reason = outcome(inv, "nv-link-twin", "ltwin-esx01", "ltwin-llm")
    assert kind == "unplaced"
    assert f"ltwin-esx02: does not offer the device group '{LINK}'" in reason


def test_a_group_that_also_holds_a_nic_is_not_proven() -> None:
    def with_nic(vm: Vm) -> Vm:
        groups = [dataclasses.replace(g, devices=g.devices + 1) for g in vm.device_groups]
        return dataclasses.replace(vm, device_groups=groups)

    inv = with_vm(inventory(), "otwin-llm", with_nic)
    kind, reason = outcome(inv, "nv-offer-twin", "otwin-esx01", "otwin-llm")
    assert kind == "unproven"
    assert f"the device group '{SXM_LINK}' also holds devices other than GPUs" in reason


def test_a_vm_without_its_group_restarts_on_any_two_free_gpus() -> None:
    def ungrouped(vm: Vm) -> Vm:
        gpus = [dataclasses.replace(g, device_group=None) for g in vm.gpus]
        return dataclasses.replace(vm, gpus=gpus, device_groups=[])

    inv = with_vm(inventory(), "ltrap-llm", ungrouped)
    assert outcome(inv, "nv-link-trap", "ltrap-esx01", "ltrap-llm") == ("placed", "")
    inv = with_vm(inventory(), "otrap-llm", ungrouped)
    assert outcome(inv, "nv-offer-trap", "otrap-esx01", "otrap-llm") == ("placed", "")


def test_the_proof_of_a_failure_reads_an_unlinked_host_as_no_room_and_says_why() -> None:
    model = ClusterModel(Facts(inventory()), "nv-link-trap")
    done = model.fail(["ltrap-esx01"])
    (guest,) = model.by_host["ltrap-esx01"]
    assert guest.index not in done.assignment
    assert model.by_policy(["ltrap-esx01"]).assignment == {}
    why = (
        f"no API reports which GPUs of NVIDIA H100 PCIe 80GB the device group '{LINK}' "
        "links, and NVIDIA names no NVSwitch fabric for them: free GPUs may not be the "
        "linked ones"
    )
    assert f"ltrap-esx02: {why}" in model.reason(guest, {"ltrap-esx01"}, done)
    assert list(model.ledger.reasons) == [why]


def test_the_optimistic_reading_places_it() -> None:
    model = ClusterModel(Facts(inventory()), "nv-link-trap", optimistic=True)
    (guest,) = model.by_host["ltrap-esx01"]
    host, gpus = model.fail(["ltrap-esx01"]).assignment[guest.index]
    assert host == "ltrap-esx02" and len(set(gpus)) == 2
    assert model.by_policy(["ltrap-esx01"]).assignment[guest.index][0] == "ltrap-esx02"


def test_a_group_of_two_on_four_free_bridged_gpus_is_not_proven() -> None:
    # ltrap-esx02 with nothing running: four free GPUs, which two its bridges link is not
    # reported, and the group takes two of them.
    esx02 = next(h for h in inventory().hosts if h.name == "ltrap-esx02")
    free = [dataclasses.replace(g, vms=[]) for g in esx02.gpus]
    inv = with_host(inventory(), "ltrap-esx02", gpus=free)
    inv = dataclasses.replace(inv, vms=[v for v in inv.vms if v.host != "ltrap-esx02"])
    assert outcome(inv, "nv-link-trap", "ltrap-esx01", "ltrap-llm")[0] == "unproven"
