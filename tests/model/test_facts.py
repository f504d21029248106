"""facts.py: GPU lookups, frame buffers and vGPU shares, stated by hand.

Frame buffers are NVIDIA's published figures: L4 24 GB, T4 16 GB. A vGPU profile's
number is its frame buffer in GB (grid_l4-4q: 4 GB), so it takes 4/24 of an L4.
healthy() gives hosts h1..h3 in cluster c1, one L4 each (0000:3b:00.0), and the
grid_l4-8q VMs v1..v3, one per host.
"""

from __future__ import annotations

import pytest

from gpuaudit.inventory import Gpu, GpuAttachment, VgpuProfile
from gpuaudit.knowledge import catalog
from gpuaudit.model.facts import (
    Facts,
    gpu_memory,
    gpu_name,
    gpu_prefix,
    host_vm_memory_mb,
    profile_memory_mb,
    profiles,
    vm_reserved_mb,
)
from tests.support.builders import Estate, healthy

L4_MB = 24 * 1024


def _unknown_gpu(pci_id: str, memory_mb: int = 0) -> Gpu:
    """An NVIDIA device id no catalogue lists, reporting ``memory_mb`` of frame buffer."""
    return Gpu(pci_id=pci_id, vendor_id=catalog.NVIDIA, device_id=0x9999, memory_mb=memory_mb)


def test_gpu_name_takes_a_host_or_its_name() -> None:
    e = healthy()
    host, gpu = e.inv.hosts[0], e.inv.hosts[0].gpus[0]
    assert gpu_name(host, gpu) == "h1/0000:3b:00.0"
    assert gpu_name("h9", gpu) == "h9/0000:3b:00.0"


def test_gpu_memory_believes_the_host_and_falls_back_to_the_catalogue() -> None:
    e = healthy()
    l4 = e.inv.hosts[0].gpus[0]
    l4.memory_mb = 1  # any positive figure the host reports is taken as it is
    assert gpu_memory(l4) == 1
    l4.memory_mb = 0  # not reported: the L4's published 24 GB
    assert gpu_memory(l4) == L4_MB
    assert gpu_memory(_unknown_gpu("0000:5e:00.0")) == 0


def test_lookups_of_a_cluster_without_hosts_are_empty() -> None:
    f = Facts(healthy().inv)
    assert f.connected_host_names("nowhere") == frozenset()
    assert f.hosts_offering("nowhere", ("grid_l4-8q",)) == ()


def test_connected_host_names_and_hosts_offering_leave_out_what_cannot_run_vms() -> None:
    e = healthy()
    h1, h2, h3 = e.inv.hosts
    h2.connection_state = "disconnected"
    h3.in_maintenance = True
    h1.vgpu_profiles = h1.vgpu_profiles[:1]  # grid_l4-4q only
    f = Facts(e.inv)
    names = f.connected_host_names("c1")
    offering = f.hosts_offering("c1", ("grid_l4-4q",))
    assert names == frozenset({"h1", "h3"})
    assert offering == (h1,)
    assert f.hosts_offering("c1", ("grid_l4-8q",)) == ()
    # Per-VM rules ask these once per VM: each is built once per cluster and kept.
    assert f.connected_host_names("c1") is names
    assert f.hosts_offering("c1", ("grid_l4-4q",)) is offering


def test_clusters_with_gpus_counts_a_gpu_vm_on_a_host_without_gpus() -> None:
    e = healthy()
    e.cluster("vms-only")
    bare = e.host("b1", "vms-only", profiles=())
    vb = e.vm("vb", bare, [])
    vb.gpus.append(GpuAttachment("vgpu", profile="grid_l4-4q"))
    e.cluster("empty")
    e.host("x1", "empty", profiles=())
    assert [c.name for c in Facts(e.inv).clusters_with_gpus()] == ["c1", "vms-only"]


def _two_gpu_host() -> tuple[Estate, Gpu, Gpu]:
    """h1 with a second L4 (0000:af:00.0) beside the one v1 runs on."""
    e = healthy()
    h1 = e.inv.hosts[0]
    second = e.gpu(h1, pci_id="0000:af:00.0")
    return e, h1.gpus[0], second


def test_gpu_of_vm_finds_the_gpu_that_lists_the_vm_or_its_passthrough_device() -> None:
    e, first, second = _two_gpu_host()
    first.vms.remove("v1")
    second.vms.append("v1")  # v1's vGPU runs on the second L4
    pt = e.vm("pt", e.inv.hosts[0], [], passthrough=second)
    pt.gpus[0].pci_id = second.pci_id
    second.vms.remove("pt")  # the host lists the device as idle; the VM names it
    f = Facts(e.inv)
    assert f.gpu_of_vm(e.inv.vms[0]) is second
    assert f.gpu_of_vm(pt) is second
    lost = e.vm("lost", e.inv.hosts[0], [])
    lost.gpus.append(GpuAttachment("vgpu", profile="grid_l4-4q"))
    assert f.gpu_of_vm(lost) is None  # no GPU lists it, no device is named
    lost.host = "gone"  # a host the inventory does not hold
    assert f.gpu_of_vm(lost) is None


def _fraction(e: Estate, vm_name: str, index: int = 0) -> float | None:
    vm = next(v for v in e.inv.vms if v.name == vm_name)
    return Facts(e.inv).attachment_fraction(vm, vm.gpus[index])


def test_attachment_fraction_of_passthrough_is_a_whole_gpu_of_unparsed_profiles_unknown() -> None:
    e = healthy()
    e.vm("pt", e.inv.hosts[0], [], passthrough=e.inv.hosts[0].gpus[0])
    assert _fraction(e, "pt") == 1.0
    v1 = e.inv.vms[0]
    v1.gpus[0] = GpuAttachment("vgpu", profile="not-a-profile")
    assert _fraction(e, "v1") is None
    v1.gpus[0] = GpuAttachment("vgpu", profile=None)
    assert _fraction(e, "v1") is None


def test_attachment_fraction_takes_vcenters_frame_buffer_first() -> None:
    e = healthy()
    h1 = e.inv.hosts[0]
    e.inv.vms[0].gpus[0] = GpuAttachment("vgpu", profile="Not-A-Profile")
    h1.vgpu_profiles.append(VgpuProfile("not-a-profile", frame_buffer_gib=6))
    assert _fraction(e, "v1") == pytest.approx(6 / 24)  # an L4's 24 GB
    e.inv.vms[0].gpus[0] = GpuAttachment("vgpu", profile="grid_l4-4q")
    h1.vgpu_profiles.append(VgpuProfile("GRID_L4-4Q", frame_buffer_gib=12))
    assert _fraction(e, "v1") == pytest.approx(12 / 24)  # vCenter's 12 GB, not the name's 4
    h1.vgpu_profiles[-1].frame_buffer_gib = None
    assert _fraction(e, "v1") == pytest.approx(4 / 24)
    assert profile_memory_mb(None, "grid_l4-4q") == 4096
    assert profile_memory_mb(None, "x") is None
    assert profile_memory_mb(h1, " not-a-profile ") == 6 * 1024


def test_attachment_fraction_is_the_profile_over_the_gpus_frame_buffer() -> None:
    e = healthy()
    e.inv.vms[0].gpus[0] = GpuAttachment("vgpu", profile="grid_l4-4q")
    assert _fraction(e, "v1") == pytest.approx(4 / 24)
    # A profile larger than the GPU (24 GB on a 16 GB T4) still takes one GPU, not 1.5.
    t4 = e.gpu(e.inv.hosts[1], pci_id="0000:d8:00.0", model="t4")
    e.inv.hosts[1].gpus[:] = [t4]
    t4.vms.append("v2")
    e.inv.vms[1].gpus[0] = GpuAttachment("vgpu", profile="grid_l4-24q")
    assert _fraction(e, "v2") == 1.0


def test_attachment_fraction_takes_the_profiles_gpu_when_the_hosts_gpu_says_nothing() -> None:
    e = healthy()
    h1 = e.inv.hosts[0]
    h1.gpus[:] = [_unknown_gpu("0000:3b:00.0")]
    h1.gpus[0].vms.append("v1")
    e.inv.vms[0].gpus[0] = GpuAttachment("vgpu", profile="grid_l4-4q")
    assert _fraction(e, "v1") == pytest.approx(4 / 24)  # an L4's 24 GB, from the profile
    h1.gpus[0].memory_mb = 1  # a reported figure, however small, is believed
    assert _fraction(e, "v1") == 1.0
    e.inv.vms[0].host = "gone"  # no host, no GPU: the profile's L4 again
    assert _fraction(e, "v1") == pytest.approx(4 / 24)


def test_attachment_fraction_of_a_profile_for_an_unknown_gpu_is_a_whole_gpu() -> None:
    e = healthy()
    h1 = e.inv.hosts[0]
    h1.gpus[:] = [_unknown_gpu("0000:3b:00.0")]
    h1.gpus[0].vms.append("v1")
    e.inv.vms[0].gpus[0] = GpuAttachment("vgpu", profile="grid_zz-4q")
    assert _fraction(e, "v1") == 1.0


def test_profiles_leave_out_a_vgpu_without_a_profile_name() -> None:
    vm = healthy().inv.vms[0]
    vm.gpus.append(GpuAttachment("vgpu", profile=None))
    assert profiles(vm) == ["grid_l4-8q"]


def test_a_gpu_vm_or_a_vm_locked_to_its_memory_reserves_all_of_it() -> None:
    e = healthy()
    gpu_vm = e.inv.vms[0]
    gpu_vm.memory_reservation_mb = 0  # HA and ESXi still need all 16 GB to power it on
    assert vm_reserved_mb(gpu_vm) == 16384
    plain = e.vm("plain", e.inv.hosts[0], [])
    plain.memory_reservation_mb = 2048
    assert vm_reserved_mb(plain) == 2048
    plain.memory_locked_to_max = True
    assert vm_reserved_mb(plain) == 16384


def test_host_memory_for_vms_keeps_the_hypervisors_share() -> None:
    host = healthy().inv.hosts[0]
    host.memory_mb = 512 * 1024  # 2048 MB + 1% (5243 MB, rounded up) for ESXi itself
    assert host_vm_memory_mb(host) == 524288 - 2048 - 5243
    host.memory_mb = 1  # reported, if absurd: nothing left for VMs
    assert host_vm_memory_mb(host) == 0
    host.memory_mb = 0  # not reported
    assert host_vm_memory_mb(host) is None


def test_no_host_can_access_a_datastore_the_inventory_does_not_hold() -> None:
    f = Facts(healthy().inv)
    assert f.can_access("h1", "san1")
    assert not f.can_access("h1", "gone")


def _ga107(device_name: str, sub_device_id: int = 0) -> Gpu:
    """10de:25b6, which pci.ids names "GA107GL [A2 / A16]": subsystem 10de:157e is the
    A2, 10de:14a9 the A16."""
    return Gpu(
        pci_id="0000:3b:00.0",
        vendor_id=catalog.NVIDIA,
        device_id=0x25B6,
        device_name=device_name,
        sub_vendor_id=catalog.NVIDIA if sub_device_id else 0,
        sub_device_id=sub_device_id,
    )


def test_the_profile_prefix_of_a_device_id_shared_by_two_boards() -> None:
    assert gpu_prefix(_ga107("GA107GL [A2 / A16]", sub_device_id=0x157E)) == "a2"
    assert gpu_prefix(_ga107("GA107GL [A2 / A16]", sub_device_id=0x14A9)) == "a16"
    assert gpu_prefix(_ga107("NVIDIA A2")) == "a2"  # no subsystem id: the name decides
    assert gpu_prefix(_ga107("GA107GL [A2 / A16]")) == "a16"


def test_restart_priority_takes_the_vm_then_the_cluster_then_medium() -> None:
    e = healthy()
    c1 = e.inv.clusters[0]
    c1.default_restart_priority = "high"
    v1, v2, v3 = e.inv.vms
    v1.restart_priority = "clusterRestartPriority"  # vSphere's "use the cluster setting"
    v2.restart_priority = "lowest"
    v3.restart_priority = "urgent"  # not a priority vSphere knows
    f = Facts(e.inv)
    assert [f.restart_priority(v) for v in (v1, v2, v3)] == ["high", "lowest", "medium"]


def test_a_vms_cluster_is_its_hosts_and_its_own_field_only_without_a_known_host() -> None:
    e = healthy()
    v1 = e.inv.vms[0]
    v1.cluster = "old"  # the VM's own field disagrees with its host h1, in c1
    f = Facts(e.inv)
    assert f.vm_cluster(v1) == "c1"
    v1.host = "gone"
    assert f.vm_cluster(v1) == "old"
