"""gpuaudit.simulation.device_groups on its own: which hosts a VM's vendor device group may restart
on, and when its GPUs are proven linked there. Each answer is written out by hand from
the rule the module's docstring cites: a host must offer the group's name
(VirtualMachineVendorDeviceGroupInfo); GPUs are proven linked only on one NVSwitch board
(NVIDIA AI Enterprise 8.0, "NVIDIA NVSwitch": "The switch behaves as a crossbar") or
when the group takes every GPU of the host, all free."""

from __future__ import annotations

import pytest

from gpuaudit.inventory import GpuAttachment, Host, VendorDeviceGroup, Vm, VmDeviceGroup
from gpuaudit.simulation.device_groups import (
    GroupNeed,
    HostGpu,
    needs_of,
    offered,
    one_fabric,
    refusal,
    unproven,
)

NVLINK = "NVIDIA H100-80C 2-GPU NVLink"
SXM5, PCIE = "NVIDIA H100 SXM5 80GB", "NVIDIA H100 PCIe 80GB"
PAIR = GroupNeed(NVLINK, 7, gpus=2, devices=2)
OFFER = frozenset({NVLINK, "another group"})


def vgpu(group: int | None = None) -> GpuAttachment:
    return GpuAttachment(kind="vgpu", profile="grid_h100-80c", device_group=group)


def vm(gpus: list[GpuAttachment], groups: list[VmDeviceGroup]) -> Vm:
    return Vm(
        name="llm",
        moref="vm-1",
        host="esx01",
        cluster="c",
        datacenter="dc",
        power_state="poweredOn",
        memory_mb=16384,
        memory_reservation_mb=16384,
        memory_locked_to_max=True,
        datastores=[],
        gpus=gpus,
        device_groups=groups,
    )


def host(groups: list[VendorDeviceGroup] | None) -> Host:
    return Host(name="esx02", moref="host-2", cluster="c", datacenter="dc", device_groups=groups)


def gpus(board: str | None, nvswitch: bool, *free: bool) -> list[HostGpu]:
    return [HostGpu(board, nvswitch, f) for f in free]


# --- what the VM needs ----------------------------------------------------------------------


def test_a_vm_needs_each_group_its_gpus_name() -> None:
    found = needs_of(
        vm(
            [vgpu(7), vgpu(), vgpu(7), vgpu(9), vgpu(9), vgpu(9)],
            [VmDeviceGroup(NVLINK, 7, devices=2), VmDeviceGroup("four", 9, devices=4)],
        )
    )
    assert found == {7: GroupNeed(NVLINK, 7, 2, 2), 9: GroupNeed("four", 9, 3, 4)}


def test_a_vm_without_grouped_gpus_needs_nothing() -> None:
    assert needs_of(vm([vgpu(), vgpu()], [VmDeviceGroup("nic only", 3, devices=1)])) == {}


def test_a_group_its_config_does_not_list_has_no_name() -> None:
    assert needs_of(vm([vgpu(4), vgpu(4)], [])) == {4: GroupNeed("", 4, 2, 2)}


def test_a_group_counts_at_least_its_gpus_as_devices() -> None:
    # A saved inventory may give no device count (0): the GPUs are devices of the group.
    found = needs_of(vm([vgpu(5), vgpu(5)], [VmDeviceGroup("g", 5)]))
    assert found == {5: GroupNeed("g", 5, 2, 2)}


# --- what the host offers -------------------------------------------------------------------


def test_a_host_offers_the_names_vcenter_lists() -> None:
    groups = [VendorDeviceGroup(NVLINK), VendorDeviceGroup("another group")]
    assert offered(host(groups)) == OFFER
    assert offered(host([])) == frozenset()
    assert offered(host(None)) is None


def test_a_host_known_not_to_offer_the_name_is_refused() -> None:
    assert refusal(PAIR, frozenset({"another group"})) == (
        f"does not offer the device group '{NVLINK}'"
    )
    assert refusal(PAIR, frozenset()) == f"does not offer the device group '{NVLINK}'"


def test_an_offer_not_read_or_a_nameless_group_is_not_refused() -> None:
    assert refusal(PAIR, OFFER) == ""
    assert refusal(PAIR, None) == ""
    assert refusal(GroupNeed("", 1, 2, 2), frozenset()) == ""


# --- when the GPUs are proven linked --------------------------------------------------------


def test_one_nvswitch_board_links_every_gpu() -> None:
    assert one_fabric(gpus(SXM5, True, False, False, True, True))
    assert unproven(PAIR, OFFER, gpus(SXM5, True, False, False, False, True, True)) == ""


def test_two_boards_are_not_one_fabric() -> None:
    mixed = [HostGpu(SXM5, True, True), HostGpu("NVIDIA H200 SXM 141GB", True, True)]
    assert not one_fabric(mixed)


def test_a_board_without_nvswitch_is_not_one_fabric() -> None:
    assert not one_fabric(gpus(PCIE, False, True, True))
    assert not one_fabric([HostGpu(SXM5, True, True), HostGpu(SXM5, False, True)])


def test_no_gpu_is_no_fabric() -> None:
    assert not one_fabric([])


def test_a_group_taking_every_free_gpu_of_the_host_is_linked() -> None:
    assert unproven(PAIR, OFFER, gpus(PCIE, False, True, True)) == ""
    assert unproven(PAIR, OFFER, gpus(None, False, True, True)) == ""


def test_free_gpus_of_a_bridged_host_may_not_be_the_linked_ones() -> None:
    why = (
        f"no API reports which GPUs of {PCIE} the device group '{NVLINK}' links, and NVIDIA "
        "names no NVSwitch fabric for them: free GPUs may not be the linked ones"
    )
    # Four GPUs, two in use: the two left may be on different bridges.
    assert unproven(PAIR, OFFER, gpus(PCIE, False, False, False, True, True)) == why
    # Four free GPUs: the group takes two of four.
    assert unproven(PAIR, OFFER, gpus(PCIE, False, True, True, True, True)) == why
    # Two GPUs, one in use: the group's two are not both free.
    assert unproven(PAIR, OFFER, gpus(PCIE, False, True, False)) == why
    assert unproven(PAIR, OFFER, gpus(PCIE, False, False, True)) == why


def test_the_reason_names_every_board_of_the_host() -> None:
    mixed = [HostGpu(SXM5, True, False), HostGpu(PCIE, False, True), HostGpu(None, False, True)]
    why = unproven(PAIR, OFFER, mixed)
    assert why.startswith(
        f"no API reports which GPUs of {PCIE} and {SXM5} and a board gpuaudit has no data "
        f"for the device group '{NVLINK}' links"
    )


def test_an_offer_not_read_is_not_proven_even_on_nvswitch() -> None:
    assert unproven(PAIR, None, gpus(SXM5, True, True, True)) == (
        f"vCenter did not report which hosts offer the device group '{NVLINK}'"
    )


def test_a_nameless_group_is_not_proven_anywhere() -> None:
    assert unproven(GroupNeed("", 3, 2, 2), OFFER, gpus(SXM5, True, True, True)) == (
        "a device of the VM names a vendor device group its config.deviceGroups does not list"
    )


@pytest.mark.parametrize("devices", [3, 4])
def test_a_group_holding_more_than_gpus_is_not_proven(devices: int) -> None:
    need = GroupNeed(NVLINK, 7, gpus=2, devices=devices)
    assert unproven(need, OFFER, gpus(SXM5, True, True, True)) == (
        f"the device group '{NVLINK}' also holds devices other than GPUs, which the "
        "simulation does not place"
    )


def test_a_group_of_only_gpus_is_judged_on_its_links() -> None:
    need = GroupNeed(NVLINK, 7, gpus=2, devices=2)
    assert unproven(need, OFFER, gpus(SXM5, True, True, True)) == ""


def test_a_host_with_fewer_gpus_than_the_group_is_not_proven() -> None:
    # The simulation never asks (the host has too few GPUs for the VM), but one free GPU
    # is not every GPU a group of two takes.
    assert unproven(PAIR, OFFER, gpus(PCIE, False, True)) != ""
