"""simulate.py: the reasons a displaced VM is not restarted, or restarts only by hand,
written out by hand from small clusters."""

from __future__ import annotations

from typing import Any

from gpuaudit.inventory import GpuAttachment, VmHostRule, VmVmRule
from gpuaudit.results import Placement
from gpuaudit.simulation.failures import Demand, _describe, simulate_cluster, simulate_cluster_notes
from tests.simulation.test_failures_search import _three_hosts
from tests.support.builders import Estate, healthy, passthrough_estate


def test_every_reason_a_surviving_host_cannot_take_the_vm() -> None:
    # v (grid_l4-8q, 61440 MB reserved: 61440 + 256 + 615 = 62311 MB) runs on h1; each
    # other host is kept out by one thing.
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in range(1, 8)]
    hosts[4].vgpu_profiles = hosts[4].vgpu_profiles[:1]  # h5 offers grid_l4-4q only
    for h in hosts[:5]:
        e.gpu(h)
    e.gpu(hosts[5], model="t4")  # h6: a T4, not an L4
    e.gpu(hosts[6], mode="passthrough")  # h7: its L4 is not in Shared Direct mode
    hosts[1].in_maintenance = True
    hosts[3].memory_mb = 32768  # 32768 - 2048 - 328 = 30392 MB for VMs
    e.datastore("san", [h for h in hosts if h.name != "h3"])
    vm = e.vm("v", hosts[0], ["san"], vgpu="grid_l4-8q")
    vm.memory_mb = vm.memory_reservation_mb = 61440
    sim = simulate_cluster(e.inv, "c")
    failure = sim.failures[0]
    assert (failure.host, failure.displaced, failure.placed) == ("h1", 1, [])
    (p,) = failure.unplaced
    assert (p.vm, p.from_host, p.to_host, p.restart_priority) == ("v", "h1", None, "medium")
    assert p.reason == (
        "no surviving host can take it (h2: not connected or in maintenance mode; "
        "h3: cannot access datastore san; "
        "h4: too little memory: the VM needs 62311 MB (reservation and overhead), "
        "the host has 30392 MB for VMs; "
        "h5: does not offer grid_l4-8q; "
        "h6, h7: no Shared Direct GPU of model NVIDIA L4)"
    )
    assert sim.tolerates == 0


def test_no_room_on_eligible_hosts_names_memory_gpu_and_sharing_rule() -> None:
    # v (grid_l4-8c, 16384 + 256 + 164 = 16804 MB) runs on h1. h2 (32768 MB: 30392 MB for
    # VMs) runs two 16804 MB VMs and is 3216 MB short; h3's L4 runs a grid_l4-8q and is on
    # ESXi 7.0 U3, where a GPU runs one profile only. The grid_t4-8q on h3's T4 is refused
    # too, but a T4 could never take v: it is not named.
    e = Estate()
    e.cluster("c")
    profiles = ("grid_l4-8q", "grid_l4-8c")
    hosts = [e.host(f"h{i}", "c", profiles=profiles) for i in (1, 2, 3)]
    for h in hosts:
        e.gpu(h)
    hosts[1].memory_mb = 32768
    hosts[2].version, hosts[2].build = "7.0.3", "21930508"
    # 52990 - 2048 - 530 = 50412 MB for VMs: w and t leave exactly the 16804 MB v needs
    hosts[2].memory_mb = 52990
    e.datastore("san", hosts)
    e.vm("v", hosts[0], ["san"], vgpu="grid_l4-8c")
    e.vm("other", hosts[1], ["san"])
    e.vm("another", hosts[1], ["san"])
    e.vm("w", hosts[2], ["san"], vgpu="grid_l4-8q")
    t4 = e.gpu(hosts[2], "0000:af:00.0", model="t4")
    e.vm("t", hosts[2], ["san"], vgpu="grid_t4-8q", gpu=t4)
    out = simulate_cluster_notes(e.inv, "c")
    assert out.notes == ["memory not checked on h1: the host's memory size is unknown"]
    (p,) = out.simulation.failures[0].unplaced
    assert p.reason == (
        "not enough memory for its 16804 MB (reservation and overhead) on the eligible "
        "hosts h2 (free h2: 0 MB); no GPU capacity left for grid_l4-8c on NVIDIA L4 "
        "on h3; h3 0000:3b:00.0: it runs grid_l4-8q, and before ESXi 8.0 U2 a GPU runs "
        "one profile (counting the VMs running there and restarts of equal or higher "
        "priority)"
    )


def test_no_surviving_host_and_too_few_gpus() -> None:
    e = Estate()
    e.cluster("one")
    lone = e.host("lone", "one")
    e.gpu(lone)
    e.datastore("local", [lone], transport="local")
    e.vm("alone", lone, ["local"], vgpu="grid_l4-8q")
    (p,) = simulate_cluster(e.inv, "one").failures[0].unplaced
    assert p.reason == "no surviving host in the cluster"

    # "pair" has two vGPUs on the two L4s of a1; a2 has one L4.
    e.cluster("two")
    a1, a2 = e.host("a1", "two"), e.host("a2", "two")
    first, second = e.gpu(a1), e.gpu(a1, "0000:af:00.0")
    e.gpu(a2)
    e.datastore("san", [a1, a2])
    pair = e.vm("pair", a1, ["san"], vgpu="grid_l4-8q", gpu=first)
    pair.gpus.append(GpuAttachment("vgpu", profile="grid_l4-8q"))
    second.vms.append("pair")
    sim = simulate_cluster(e.inv, "two")
    (p,) = sim.failures[0].unplaced
    assert p.reason == (
        "no surviving host can take it (a2: fewer suitable GPUs than the VM has GPU devices)"
    )
    assert [g.vms for g in sim.capacity] == [["pair"], ["pair"], []]


def disconnected(others: int) -> str:
    """The reason v of h1 is not restarted when its cluster's ``others`` hosts are down."""
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in range(1, others + 2)]
    for h in hosts:
        e.gpu(h)
    for h in hosts[1:]:
        h.connection_state = "disconnected"
    e.datastore("san", hosts)
    e.vm("v", hosts[0], ["san"], vgpu="grid_l4-8q")
    (p,) = simulate_cluster(e.inv, "c").failures[0].unplaced
    return p.reason or ""


def test_four_hosts_with_one_reason_are_named_and_more_are_counted() -> None:
    assert disconnected(4) == (
        "no surviving host can take it (h2, h3, h4, h5: not connected or in maintenance mode)"
    )
    assert disconnected(5) == (
        "no surviving host can take it "
        "(h2, h3, h4, h5, 1 more: not connected or in maintenance mode)"
    )


def test_dynamic_directpath_without_a_free_gpu_names_its_label_and_ids() -> None:
    # x and y each hold the L4 (labelled "train") of their host; x allows the L4 with sub
    # device 1234 of any sub vendor, which d2's L4 has, and the A10 with sub ids 10de:0000.
    e = Estate()
    e.cluster("dyn")
    d1, d2 = e.host("d1", "dyn", profiles=()), e.host("d2", "dyn", profiles=())
    g1, g2 = e.gpu(d1, mode="passthrough"), e.gpu(d2, mode="passthrough")
    for g in (g1, g2):
        g.hardware_label = "train"
        g.sub_vendor_id, g.sub_device_id = 0x10DE, 0x1234
    e.datastore("san", [d1, d2])
    x = e.vm("x", d1, ["san"], dynamic=g1)
    x.gpus[0].allowed = [(0x10DE, 0x27B8), (0x10DE, 0x2236)]
    x.gpus[0].allowed_sub_ids = [(-1, 0x1234), (0x10DE, 0)]  # -1: any sub vendor
    x.gpus[0].custom_label = "train"
    e.vm("y", d2, ["san"], dynamic=g2)
    (p,) = simulate_cluster(e.inv, "dyn").failures[0].unplaced
    assert p.reason == (
        "no GPU capacity left for a free passthrough GPU labelled 'train' "
        "(10de:2236 10de:0000, 10de:27b8 *:1234) on d2 (counting the VMs running there and "
        "restarts of equal or higher priority)"
    )


def test_manual_only_names_the_survivors_policies_and_the_manual_placement() -> None:
    # src runs a (allowed an L4 or a T4, on the T4 now) and b (the L4 only). dst gives a
    # its first free allowed GPU, the L4, and b finds none; a manual placement puts a on
    # the T4 and b on the L4. The survivors' policy is named (performance), not that of
    # src, which is down.
    e = Estate()
    e.cluster("x")
    src, dst = e.host("src", "x", profiles=()), e.host("dst", "x", profiles=())
    none = e.host("none", "x", profiles=())
    src.assignment_policy = "consolidation"
    l4 = e.gpu(src, "0000:01:00.0", mode="passthrough")
    t4 = e.gpu(src, "0000:02:00.0", model="t4", mode="passthrough")
    e.gpu(dst, "0000:01:00.0", mode="passthrough")
    e.gpu(dst, "0000:02:00.0", model="t4", mode="passthrough")
    e.datastore("nfs", [src, dst, none], transport="nfs")
    a = e.vm("a", src, ["nfs"], dynamic=t4, priority="high")
    a.gpus[0].allowed = [(0x10DE, 0x27B8), (0x10DE, 0x1EB8)]
    e.vm("b", src, ["nfs"], dynamic=l4, priority="high")
    sim = simulate_cluster(e.inv, "x")
    failure = sim.failures[0]
    assert (failure.host, failure.displaced, failure.unplaced) == ("src", 2, [])
    assert failure.placed == [Placement("a", "src", "dst", "0000:01:00.0", None, "high")]
    assert failure.manual_only == [
        Placement(
            "b",
            "src",
            "dst",
            "0000:01:00.0",
            "the hosts' own GPU choice (assignment policy performance) leaves no GPU for "
            "it; a manual placement fits on dst (0000:01:00.0)",
            "high",
        )
    ]
    assert (sim.tolerates, sim.manual_tolerates, sim.worst_host) == (0, 1, "src")


def test_a_device_of_unknown_backing_is_never_placed() -> None:
    e = healthy()
    v1 = e.inv.vms[0]
    v1.gpus = [GpuAttachment("sriov")]  # neither vGPU nor DirectPath
    e.inv.hosts[0].gpus[0].vms = []
    (p,) = simulate_cluster(e.inv, "c1").failures[0].unplaced
    assert (p.vm, p.reason) == ("v1", "no surviving host can take it (h2, h3: unknown GPU backing)")


def test_fixed_passthrough_names_its_device_and_host() -> None:
    sim = simulate_cluster(passthrough_estate(buffer=True).inv, "pt")
    (p,) = sim.failures[0].unplaced
    assert (p.vm, p.reason) == (
        "pv1",
        "fixed DirectPath I/O: bound to device 0000:3b:00.0 of p1; vSphere HA cannot "
        "restart it on another host",
    )


def test_a_vgpu_of_no_known_model_where_no_gpu_shares() -> None:
    # v's profile names no GPU the catalogue knows, and v is seen on no GPU; h2's L4 is in
    # passthrough mode.
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c", profiles=("custom",)), e.host("h2", "c", profiles=("custom",))
    e.gpu(h2, mode="passthrough")
    e.datastore("san", [h1, h2])
    vm = e.vm("v", h1, ["san"])
    vm.gpus.append(GpuAttachment("vgpu", profile="custom"))
    (p,) = simulate_cluster(e.inv, "c").failures[0].unplaced
    assert p.reason == "no surviving host can take it (h2: no Shared Direct GPU of model ?)"


def test_a_vm_bound_to_two_fixed_devices_names_both() -> None:
    e = Estate()
    e.cluster("pt", ha=False, admission=False)
    p1, p2 = e.host("p1", "pt", profiles=()), e.host("p2", "pt", profiles=())
    g1 = e.gpu(p1, mode="passthrough")
    g2 = e.gpu(p1, "0000:af:00.0", mode="passthrough")
    e.gpu(p2, mode="passthrough")
    e.datastore("san", [p1, p2])
    vm = e.vm("pv", p1, ["san"], passthrough=g1)
    vm.gpus.append(
        GpuAttachment(
            "passthrough", pci_id=g2.pci_id, vendor_id=g2.vendor_id, device_id=g2.device_id
        )
    )
    g2.vms.append("pv")
    (p,) = simulate_cluster(e.inv, "pt").failures[0].unplaced
    assert p.reason == (
        "fixed DirectPath I/O: bound to device 0000:3b:00.0, 0000:af:00.0 of p1; vSphere HA "
        "cannot restart it on another host"
    )


def test_a_mig_vgpu_never_goes_to_a_gpu_reported_time_sliced() -> None:
    # v (grid_a100d-1-10c, MIG-backed) runs on h1's A100 in MIG mode; h2's A100 reports
    # its vGPU mode, time-sliced: it cannot run a MIG-backed vGPU. Once it runs a
    # time-sliced 10c, its refusal is named: the mode refuses, not a mix of the two kinds.
    profiles = ("grid_a100d-1-10c",)
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c", profiles=profiles), e.host("h2", "c", profiles=profiles)
    e.gpu(h1, model="a100", vgpu_mode="multiInstanceGpu")
    e.gpu(h2, model="a100", vgpu_mode="sameSize")
    e.datastore("san", [h1, h2])
    e.vm("v", h1, ["san"], vgpu="grid_a100d-1-10c")
    failure = simulate_cluster(e.inv, "c").failures[0]
    assert failure.placed == []
    assert [(p.vm, p.reason) for p in failure.unplaced] == [
        (
            "v",
            "no GPU capacity left for grid_a100d-1-10c on NVIDIA A100 PCIe 80GB on h2 (counting "
            "the VMs running there and restarts of equal or higher priority)",
        )
    ]
    e.vm("w", h2, ["san"], vgpu="grid_a100d-10c")
    (failure,) = [f for f in simulate_cluster(e.inv, "c").failures if f.host == "h1"]
    assert [(p.vm, p.reason) for p in failure.unplaced] == [
        (
            "v",
            "no GPU capacity left for grid_a100d-1-10c on NVIDIA A100 PCIe 80GB on h2; "
            "h2 0000:3b:00.0: the GPU is not in MIG mode (counting the VMs running there "
            "and restarts of equal or higher priority)",
        )
    ]


def test_sub_ids_of_zero_are_named_and_any_is_a_star() -> None:
    # x allows the L4 with sub device 0000 of any sub vendor and the A10 with sub vendor
    # 0000 and any sub device; d2's only GPU is taken by y.
    e = Estate()
    e.cluster("dyn")
    d1, d2 = e.host("d1", "dyn", profiles=()), e.host("d2", "dyn", profiles=())
    g1, g2 = e.gpu(d1, mode="passthrough"), e.gpu(d2, mode="passthrough")
    e.datastore("san", [d1, d2])
    x = e.vm("x", d1, ["san"], dynamic=g1)
    x.gpus[0].allowed = [(0x10DE, 0x27B8), (0x10DE, 0x2236)]
    x.gpus[0].allowed_sub_ids = [(-1, 0), (0, -1)]
    e.vm("y", d2, ["san"], dynamic=g2)
    (p,) = simulate_cluster(e.inv, "dyn").failures[0].unplaced
    assert p.reason == (
        "no GPU capacity left for a free passthrough GPU (10de:2236 0000:*, 10de:27b8 *:0000) "
        "on d2 (counting the VMs running there and restarts of equal or higher priority)"
    )


def test_manual_only_names_every_survivors_policy() -> None:
    # As test_manual_only_names_the_survivors_policies_and_the_manual_placement, with the
    # GPU-less host "none" set to consolidation: both survivors' policies are named.
    e = Estate()
    e.cluster("x")
    src, dst = e.host("src", "x", profiles=()), e.host("dst", "x", profiles=())
    none = e.host("none", "x", profiles=())
    none.assignment_policy = "consolidation"
    l4 = e.gpu(src, "0000:01:00.0", mode="passthrough")
    t4 = e.gpu(src, "0000:02:00.0", model="t4", mode="passthrough")
    e.gpu(dst, "0000:01:00.0", mode="passthrough")
    e.gpu(dst, "0000:02:00.0", model="t4", mode="passthrough")
    e.datastore("nfs", [src, dst, none], transport="nfs")
    a = e.vm("a", src, ["nfs"], dynamic=t4, priority="high")
    a.gpus[0].allowed = [(0x10DE, 0x27B8), (0x10DE, 0x1EB8)]
    e.vm("b", src, ["nfs"], dynamic=l4, priority="high")
    (p,) = simulate_cluster(e.inv, "x").failures[0].manual_only
    assert p.reason == (
        "the hosts' own GPU choice (assignment policy consolidation, performance) leaves no "
        "GPU for it; a manual placement fits on dst (0000:01:00.0)"
    )


def test_sharing_refusals_skip_other_models_and_name_two_gpus() -> None:
    # v (grid_l4-8q) runs on h1. Every surviving L4 is in mixed-size mode and runs two 8q,
    # NVIDIA's mixed-size maximum for an 8 GB profile on a 24 GB L4 (three fit; the
    # largest power of two not above three is two), with 8 GB free. h2's first GPU is a
    # T4, which could never take v: it is passed over, not named, and not the end of
    # h2's list. Three L4s refuse v; the reason names the first two and counts the third.
    e = Estate()
    e.cluster("c")
    h1, h2, h3 = (e.host(f"h{i}", "c") for i in (1, 2, 3))
    e.datastore("san", [h1, h2, h3])
    e.gpu(h1)
    e.vm("v", h1, ["san"], vgpu="grid_l4-8q")
    t4 = e.gpu(h2, "0000:1a:00.0", model="t4")
    e.vm("t", h2, ["san"], vgpu="grid_t4-8q", gpu=t4)
    full = [e.gpu(h2, p, vgpu_mode="mixedSize") for p in ("0000:3b:00.0", "0000:5e:00.0")]
    full.append(e.gpu(h3, vgpu_mode="mixedSize"))
    for i, gpu in enumerate(full):
        host = h2 if i < 2 else h3
        for n in ("a", "b"):
            e.vm(f"{n}{i}", host, ["san"], vgpu="grid_l4-8q", gpu=gpu)
    sim = simulate_cluster(e.inv, "c")
    (failure,) = [f for f in sim.failures if f.host == "h1"]
    (p,) = failure.unplaced
    rule = "NVIDIA allows 2 of L4-8Q per GPU in mixed-size mode"
    assert p.reason == (
        "no GPU capacity left for grid_l4-8q on NVIDIA L4 on h2, h3; "
        f"h2 0000:3b:00.0: {rule}; h2 0000:5e:00.0: {rule}; 1 more "
        "(counting the VMs running there and restarts of equal or higher priority)"
    )


def test_devices_described_without_a_profile_a_model_or_ids() -> None:
    assert _describe(Demand(kind="vgpu", profile="grid_x-custom")) == (
        "grid_x-custom on its GPU model"
    )
    assert _describe(Demand(kind="vgpu", profile="", model="NVIDIA L4")) == (
        "a vGPU of unknown profile on NVIDIA L4"
    )
    assert _describe(Demand(kind="dynamic")) == "a free passthrough GPU (any device)"
    two = Demand(kind="dynamic", allowed=((0x10DE, 0x27B8), (0x10DE, 0x1EB8)))
    assert _describe(two) == "a free passthrough GPU (10de:27b8, 10de:1eb8)"


def test_sharing_refusals_of_a_vgpu_after_a_passthrough_device_are_named() -> None:
    # v has a Dynamic DirectPath L4 (on h1's passthrough L4) and then a grid_l4-8q. h2
    # has a free passthrough L4 for the first, but its vGPU L4 runs two 8q in mixed-size
    # mode, NVIDIA's maximum: the second device's refusal is named.
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c"), e.host("h2", "c")
    e.datastore("san", [h1, h2])
    pt1 = e.gpu(h1, "0000:1a:00.0", mode="passthrough")
    shared1 = e.gpu(h1, "0000:3b:00.0")
    e.gpu(h2, "0000:1a:00.0", mode="passthrough")
    shared2 = e.gpu(h2, "0000:3b:00.0", vgpu_mode="mixedSize")
    v = e.vm("v", h1, ["san"], dynamic=pt1)
    v.gpus[0].allowed = [(0x10DE, 0x27B8)]
    v.gpus.append(GpuAttachment("vgpu", profile="grid_l4-8q"))
    shared1.vms.append("v")
    for n in ("a", "b"):
        e.vm(n, h2, ["san"], vgpu="grid_l4-8q", gpu=shared2)
    (failure,) = [f for f in simulate_cluster(e.inv, "c").failures if f.host == "h1"]
    assert [(p.vm, p.reason) for p in failure.unplaced] == [
        (
            "v",
            "no GPU capacity left for a free passthrough GPU (10de:27b8), grid_l4-8q on "
            "NVIDIA L4 on h2; h2 0000:3b:00.0: NVIDIA allows 2 of L4-8Q per GPU in "
            "mixed-size mode (counting the VMs running there and restarts of equal or "
            "higher priority)",
        )
    ]


def _apart_estate(hosts: int) -> tuple[Estate, list[Any]]:
    """Cluster c, hosts h1.. with an L4 each on datastore ds; v1 (grid_l4-8q) on h1."""
    e = Estate()
    e.cluster("c")
    hs = [e.host(f"h{i}", "c") for i in range(1, hosts + 1)]
    for h in hs:
        e.gpu(h)
    e.datastore("ds", hs)
    e.vm("v1", hs[0], ["ds"], vgpu="grid_l4-8q")
    return e, hs


def test_an_anti_affinity_rule_blocking_on_two_hosts_names_both_partners_and_hosts() -> None:
    # v1, v2 and v3 are kept apart; v2 runs on h3 and v3 on h4, each with room left for
    # v1. h2 is in maintenance mode (the first surviving host, passed over).
    e, hs = _apart_estate(4)
    hs[1].in_maintenance = True
    e.vm("v2", hs[2], ["ds"], vgpu="grid_l4-8q")
    e.vm("v3", hs[3], ["ds"], vgpu="grid_l4-8q")
    e.inv.clusters[0].vm_vm_rules.append(VmVmRule("keep-apart", vms=["v1", "v2", "v3"]))
    (failure,) = [f for f in simulate_cluster(e.inv, "c").failures if f.host == "h1"]
    assert [(p.vm, p.reason) for p in failure.unplaced] == [
        (
            "v1",
            "blocked by VM-VM anti-affinity rule 'keep-apart' (apart from v2, v3), though "
            "h3, h4 have room",
        )
    ]


def test_two_rules_blocking_on_hosts_with_just_enough_memory_are_both_named() -> None:
    # v1 must run on h1 or h2 (VM-Host rule) and apart from v2 (VM-VM rule). h2 runs v2
    # and x (16804 MB each: 16384 reserved, 256 + 164 overhead) and has 52990 MB: 50412
    # for VMs, leaving exactly v1's 16804. h3 has room too, outside the host group.
    e, hs = _apart_estate(3)
    hs[1].memory_mb = 52990
    e.vm("v2", hs[1], ["ds"], vgpu="grid_l4-8q")
    e.vm("x", hs[1], ["ds"], vgpu="grid_l4-8q")
    cluster = e.inv.clusters[0]
    cluster.vm_vm_rules.append(VmVmRule("keep-apart", vms=["v1", "v2"]))
    cluster.vm_host_rules.append(
        VmHostRule(
            name="gpu-on-rack1",
            enabled=True,
            mandatory=True,
            affine=True,
            vm_group="gpu-vms",
            host_group="rack1",
            vms=["v1"],
            hosts=["h1", "h2"],
        )
    )
    (failure,) = [f for f in simulate_cluster(e.inv, "c").failures if f.host == "h1"]
    assert [(p.vm, p.reason) for p in failure.unplaced] == [
        (
            "v1",
            "blocked by VM-VM anti-affinity rule 'keep-apart' (apart from v2), though h2 "
            "has room; VM-Host rule 'gpu-on-rack1' (must run on host group 'rack1': h1, "
            "h2), though h3 has room",
        )
    ]


def test_hosts_missing_two_datastores_or_any_matching_passthrough_gpu_are_named() -> None:
    # v (Dynamic DirectPath, any L4, no label) runs on h1 with its disks on a and b. h2
    # sees neither datastore; h3 sees both but has only a vGPU L4.
    e = Estate()
    e.cluster("c")
    h1, h2, h3 = (e.host(f"h{i}", "c") for i in (1, 2, 3))
    pt = e.gpu(h1, mode="passthrough")
    e.gpu(h2, mode="passthrough")
    e.gpu(h3)
    e.datastore("a", [h1, h3])
    e.datastore("b", [h1, h3])
    v = e.vm("v", h1, ["a", "b"], dynamic=pt)
    v.gpus[0].allowed = [(0x10DE, 0x27B8)]
    (failure,) = [f for f in simulate_cluster(e.inv, "c").failures if f.host == "h1"]
    assert [(p.vm, p.reason) for p in failure.unplaced] == [
        (
            "v",
            "no surviving host can take it (h2: cannot access datastore a, b; "
            "h3: no passthrough-active GPU matching the allowed devices)",
        )
    ]


def test_a_powered_off_vm_of_an_anti_affinity_rule_keeps_nothing_off_its_host() -> None:
    # v1 (on h1) is kept apart from x, which is on h2 but powered off: losing h1, v1 restarts
    # on h2's L4, the only other one.
    e, hs = _apart_estate(2)
    e.vm("x", hs[1], ["ds"], power="poweredOff")
    e.inv.clusters[0].vm_vm_rules.append(VmVmRule("apart", vms=["v1", "x"]))
    failure = simulate_cluster(e.inv, "c").failures[0]
    assert [(p.vm, p.to_host) for p in failure.placed] == [("v1", "h2")]


def test_hosts_short_of_memory_are_each_named_with_what_they_have_free() -> None:
    # v (16384 + 256 + 164 = 16804 MB) runs on h1. h2 and h3 (32768 MB: 30392 MB for VMs)
    # run VMs without GPU of 16804 MB each: two on h2 (3216 MB short: 0 free), one on h3
    # (13588 MB free). Both have an idle L4.
    e, h1, h2, h3 = _three_hosts()
    for h in (h1, h2, h3):
        h.memory_mb = 32768
    e.vm("v", h1, ["san"], vgpu="grid_l4-8q")
    for name, h in (("a", h2), ("b", h2), ("c", h3)):
        e.vm(name, h, ["san"])
    (p,) = simulate_cluster(e.inv, "c").failures[0].unplaced
    assert p.reason == (
        "not enough memory for its 16804 MB (reservation and overhead) on the eligible "
        "hosts h2, h3 (free h2: 0 MB, h3: 13588 MB) (counting the VMs running there and "
        "restarts of equal or higher priority)"
    )
