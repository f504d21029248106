"""simulate.py: the reasons a displaced VM is not restarted, the notes on a simulation's
limits and the spare capacity rows, written out by hand from small clusters."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

from gpuaudit.inventory import GpuAttachment, VmHostRule, VmVmRule
from gpuaudit.model.facts import Facts
from gpuaudit.results import GpuSlots, Placement, SpareCapacity
from gpuaudit.simulation import sharing
from gpuaudit.simulation.failures import (
    ClusterModel,
    Demand,
    Outcome,
    Slot,
    State,
    _assignments,
    _demand,
    _describe,
    _dynamic_wants,
    simulate,
    simulate_all,
    simulate_cluster,
    simulate_cluster_notes,
)
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


def test_ha_off_passthrough_spare_and_notes() -> None:
    # HA off: nothing restarts (N+0); x could be moved by hand to d2 or d3 (N+2).
    e = Estate()
    e.cluster("dyn", ha=False)
    hosts = [e.host(f"d{i}", "dyn", profiles=()) for i in (1, 2, 3)]
    gpus = [e.gpu(h, mode="passthrough") for h in hosts]
    e.gpu(hosts[2], "0000:af:00.0", model="t4", mode="passthrough")
    for h in hosts:
        h.memory_mb = 65536  # memory sizes known: no note on them
    e.datastore("san", hosts)
    e.vm("x", hosts[0], ["san"], dynamic=gpus[0])
    out = simulate_cluster_notes(e.inv, "dyn")
    sim = out.simulation
    assert out.notes == [
        "vSphere HA is off or host monitoring is disabled: no VM is restarted after a host "
        "failure; the placements show where a manual restart would fit"
    ]
    assert (sim.ha_restarts, sim.tolerates, sim.manual_tolerates) == (False, 0, 2)
    assert [(p.vm, p.to_host, p.to_gpu) for p in sim.failures[0].placed] == [
        ("x", "d2", "0000:3b:00.0")
    ]
    assert (sim.worst_host, [f.displaced for f in sim.failures]) == ("d1", [1, 0, 0])
    assert sim.spare == [
        SpareCapacity("NVIDIA L4", None, 3, 2, 1, 2, 0),
        SpareCapacity("NVIDIA L4", "passthrough", 3, 2, 1, 2, 0),
        SpareCapacity("NVIDIA T4", None, 1, 1, 0, 1, 3),
    ]


def test_exact_memory_fit_is_a_fit() -> None:
    # 19043 MB: 19043 - 2048 - 191 = 16804 MB for VMs, what a 16384 MB reserved VM needs
    # (16384 + 256 + 164).
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in (1, 2)]
    for h in hosts:
        e.gpu(h)
    hosts[1].memory_mb = 19043
    e.datastore("san", hosts)
    e.vm("v", hosts[0], ["san"], vgpu="grid_l4-8q")
    sim = simulate_cluster(e.inv, "c")
    assert [(p.vm, p.to_host) for p in sim.failures[0].placed] == [("v", "h2")]
    assert sim.tolerates == 1


def test_spare_per_model_takes_the_lowest_family_n_plus_k() -> None:
    # h1's L4s run a (grid_l4-8q) and b (grid_l4-24c); h2 has an idle L4 and an idle T4.
    # Losing h1, a goes first (by name) to h2's L4, which then has no room for a 24 GB
    # vGPU: the c family is N+0. Losing both hosts leaves a out: the q family is N+1.
    e = Estate()
    e.cluster("c")
    profiles = ("grid_l4-8q", "grid_l4-24c")
    h1, h2 = e.host("h1", "c", profiles=profiles), e.host("h2", "c", profiles=profiles)
    first, second = e.gpu(h1), e.gpu(h1, "0000:af:00.0")
    e.gpu(h2)
    e.gpu(h2, "0000:af:00.0", model="t4")
    e.datastore("san", [h1, h2])
    e.vm("a", h1, ["san"], vgpu="grid_l4-8q", gpu=first)
    e.vm("b", h1, ["san"], vgpu="grid_l4-24c", gpu=second)
    sim = simulate_cluster(e.inv, "c")
    assert sim.tolerates == 0
    assert sim.spare == [
        SpareCapacity("NVIDIA L4", None, 3, 1, 2, 1, 0),
        # one more 24 GB vGPU fits: on h2's idle L4
        SpareCapacity("NVIDIA L4", "l4 c", 3, 1, 1, 1, 0),
        # 8 GB vGPUs: two more next to a, three on h2's L4
        SpareCapacity("NVIDIA L4", "l4 q", 3, 1, 1, 5, 1),
        # no VM: N+k is every combination a two-host cluster has
        SpareCapacity("NVIDIA T4", None, 1, 1, 0, 1, 2),
    ]


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


def test_search_limit_reason_and_note() -> None:
    # With no greedy answer, no GPU choice by policy and no search work allowed, nothing
    # is proven: each VM may still fit on the two other hosts.
    with (
        patch.object(ClusterModel, "_greedy", lambda self, guests, state, down: {}),
        patch("gpuaudit.simulation.failures.SEARCH_WORK", 0),
        patch("gpuaudit.simulation.failures._policy_choice", lambda slots, demands, policy: None),
    ):
        out = simulate_cluster_notes(healthy().inv, "c1")
    (p,) = out.simulation.failures[0].unplaced
    assert p.reason == (
        "not placed within the search limit; eligible hosts h2, h3 may still have room for "
        "grid_l4-8q on NVIDIA L4 and 16804 MB of memory"
    )
    assert out.notes == [
        "memory not checked on h1, h2, h3: the host's memory size is unknown",
        "the exact search hit its limit for some host failures: VMs reported as not placed "
        "there may still have a valid placement",
    ]
    assert (out.simulation.tolerates, out.simulation.manual_tolerates) == (0, 0)


def test_sampled_combinations_are_noted() -> None:
    # Three hosts of different memory are three classes: three pairs, more than a limit of
    # one. The two most loaded hosts (equal loads: the first two) are lost together and
    # h3's L4 takes both their 8q VMs, but N+2 is not claimed.
    e = healthy()
    for h, gb in zip(e.inv.hosts, (128, 96, 64), strict=True):
        h.memory_mb = gb * 1024
    with patch("gpuaudit.simulation.failures.COMBINATION_LIMIT", 1):
        out = simulate_cluster_notes(e.inv, "c1")
    assert out.notes == [
        "N+2 not proven: 1 combinations of the 2 most loaded hosts all placed every GPU VM, "
        "but the cluster has more than 1 distinct combinations"
    ]
    assert (out.simulation.tolerates, out.simulation.manual_tolerates) == (1, 1)


def loaded(vms: tuple[int, ...], gpus: tuple[int, ...], limit: int) -> tuple[Any, ...]:
    """N+k (any placement, by policy, and of the spare row of the 8q VMs) and the notes of a
    cluster whose hosts h1.. run ``vms`` grid_l4-8q VMs each (three fit on an L4) on
    ``gpus`` L4s, with room for ``limit`` combinations."""
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in range(1, len(vms) + 1)]
    for i, h in enumerate(hosts):
        h.memory_mb = (128 - 16 * i) * 1024  # sizes known, and each host a class of its own
        for j in range(gpus[i]):
            e.gpu(h, f"0000:{0x3B + j:02x}:00.0")
    e.datastore("san", hosts)
    for i, h in enumerate(hosts):
        for j in range(vms[i]):
            e.vm(f"v{i + 1}{j}", h, ["san"], vgpu="grid_l4-8q")
    with patch("gpuaudit.simulation.failures.COMBINATION_LIMIT", limit):
        out = simulate_cluster_notes(e.inv, "c")
    sim = out.simulation
    (family,) = [r for r in sim.spare if r.family == "l4 q"]
    return sim.manual_tolerates, sim.tolerates, family.tolerates, out.notes


def test_sampled_pairs_are_those_of_the_most_loaded_hosts() -> None:
    # Free 8q slots h1 2, h2 1, h3 2, h4 3. Six pairs: with room for all six each is
    # tried and places every VM; losing h1, h2 and h3 leaves four VMs for h4's three slots.
    assert loaded((1, 2, 1, 0), (1, 1, 1, 1), 6) == (2, 2, 2, [])
    # With room for three, the three pairs of the three most loaded hosts (h2, then h1
    # and h3 in the cluster's order) are tried, and place every VM; the three single
    # failures of a loaded host are tried in full, the pairs of the spare row not at all.
    assert loaded((1, 2, 1, 0), (1, 1, 1, 1), 3) == (
        1,
        1,
        1,
        [
            "N+2 not proven: 3 combinations of the 3 most loaded hosts all placed every GPU "
            "VM, but the cluster has more than 3 distinct combinations"
        ],
    )
    # h4 has no GPU. With room for two, the one pair of the two most loaded hosts, h1 and
    # h2, is tried: their four VMs find two slots on h3. The least loaded pair (h4, h3)
    # would have fitted.
    assert loaded((2, 2, 1, 0), (1, 1, 1, 0), 2)[0::3] == (1, [])
    # The most loaded are not the first by name: h3 and h4 run three VMs each, h1 one and
    # h2 none (nor a GPU). Their pair is tried, and h1's two free slots take two of their
    # six VMs: N+1, proven; the pair h1, h2 would have placed its one VM and left N+2
    # unproven.
    assert loaded((1, 0, 3, 3), (1, 0, 2, 2), 2) == (1, 1, 0, [])


def test_a_device_of_unknown_backing_is_never_placed() -> None:
    e = healthy()
    v1 = e.inv.vms[0]
    v1.gpus = [GpuAttachment("sriov")]  # neither vGPU nor DirectPath
    e.inv.hosts[0].gpus[0].vms = []
    (p,) = simulate_cluster(e.inv, "c1").failures[0].unplaced
    assert (p.vm, p.reason) == ("v1", "no surviving host can take it (h2, h3: unknown GPU backing)")


def test_a_vgpu_not_seen_on_a_gpu_goes_by_its_profile_name() -> None:
    # v's host reports no GPU, so v's GPU model is unknown: the profile's "l4" picks h2's
    # L4; h3's T4 is never a match.
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in (1, 2, 3)]
    e.gpu(hosts[1])
    e.gpu(hosts[2], model="t4")
    e.datastore("san", hosts)
    e.vm("v", hosts[0], ["san"], vgpu="grid_l4-8q", gpu=hosts[1].gpus[0])
    hosts[1].gpus[0].vms.remove("v")
    sim = simulate_cluster(e.inv, "c")
    assert [(p.vm, p.to_host) for p in sim.failures[0].placed] == [("v", "h2")]
    # With h2's GPU a T4 too, nothing matches "l4".
    hosts[1].gpus[0].model = hosts[1].gpus[0].device_name = "NVIDIA T4"
    hosts[1].gpus[0].device_id = 0x1EB8
    (p,) = simulate_cluster(e.inv, "c").failures[0].unplaced
    assert p.reason == "no surviving host can take it (h2, h3: no Shared Direct GPU of model l4)"


def test_dynamic_directpath_sub_ids_and_label_only_when_given() -> None:
    # x allows the L4 and the T4 but gives sub ids for one entry of two: they cannot be
    # paired with the entries, so the ids alone decide. Its custom label is empty: no
    # label is asked for, and d2's labelled L4 takes it.
    e = Estate()
    e.cluster("dyn")
    d1, d2 = e.host("d1", "dyn", profiles=()), e.host("d2", "dyn", profiles=())
    g1, g2 = e.gpu(d1, mode="passthrough"), e.gpu(d2, mode="passthrough")
    g2.hardware_label = "fast"
    e.datastore("san", [d1, d2])
    x = e.vm("x", d1, ["san"], dynamic=g1)
    x.gpus[0].allowed = [(0x10DE, 0x27B8), (0x10DE, 0x1EB8)]
    x.gpus[0].allowed_sub_ids = [(0x10DE, 0x9999)]
    x.gpus[0].custom_label = ""
    failure = simulate_cluster(e.inv, "dyn").failures[0]
    assert [(p.vm, p.to_host, p.to_gpu) for p in failure.placed] == [("x", "d2", "0000:3b:00.0")]


def test_gpu_views_of_passthrough_and_mixed_size_gpus() -> None:
    sim = simulate_cluster(passthrough_estate().inv, "pt")
    assert sim.capacity[0] == GpuSlots(
        "p1", "0000:3b:00.0", "NVIDIA L4", 24576, "passthrough", None, 1, 1, 0, ["pv1"]
    )
    # An L4 in mixed-size mode runs big (12q) and small (4q). NVIDIA's placements for 24 GB
    # GPUs (vGPU 17 user guide, A.3): a 12q takes 12 slots at 0 or 12, a 4q 4 slots at 0,
    # 8, 12 or 20. Whatever the layout, one more 4q fits (with the 12q at 0 and the 4q at
    # 12 or 20, the other of 12 and 20 is free; with the 12q at 12, 0 or 8), and a second
    # one never does: 8 GB free, but not at a 4q's placement. Capacity: 3 vGPUs.
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c"), e.host("h2", "c")
    g = e.gpu(h1, vgpu_mode="mixedSize")
    e.gpu(h2, vgpu_mode="mixedSize")
    e.datastore("san", [h1, h2])
    e.vm("big", h1, ["san"], vgpu="grid_l4-12q", gpu=g)
    e.vm("small", h1, ["san"], vgpu="grid_l4-4q", gpu=g)
    sim = simulate_cluster(e.inv, "c")
    assert sim.capacity[0] == GpuSlots(
        "h1",
        "0000:3b:00.0",
        "NVIDIA L4",
        24576,
        "vgpu",
        "grid_l4-12q",
        3,
        2,
        16384,
        ["big", "small"],
    )


def _custom_cluster(*running: str) -> Estate:
    """Hosts h1 and h2 of cluster c, each with one GPU of a board no data describes
    (10de:9999, no size), offering only "custom"; each host named runs a custom vGPU."""
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c", profiles=("custom",)) for i in (1, 2)]
    for h in hosts:
        g = e.gpu(h)
        g.device_id, g.device_name, g.model, g.known_model, g.memory_mb = 0x9999, "", "", False, 0
    e.datastore("san", hosts)
    for i, name in enumerate(running):
        e.vm("vw"[i], next(h for h in hosts if h.name == name), ["san"], vgpu="custom")
    return e


def test_a_vgpu_nothing_describes_restarts_alone_on_an_empty_gpu_its_host_offers() -> None:
    # Neither NVIDIA's data nor the host gives a size for "custom" on this board: one
    # fits an empty GPU of its model whose host offers it, as ESXi creates it there; h1's
    # GPU shows only what it runs.
    sim = simulate_cluster(_custom_cluster("h1").inv, "c")
    assert sim.capacity[0] == GpuSlots(
        "h1", "0000:3b:00.0", "10de:9999", 0, "vgpu", "custom", 1, 1, 0, ["v"]
    )
    (p,) = sim.failures[0].placed
    assert (p.vm, p.to_host, p.to_gpu) == ("v", "h2", "0000:3b:00.0")
    assert sim.not_proven == []  # nothing was left undecided


def test_a_second_vgpu_nothing_describes_is_not_proven_beside_the_first() -> None:
    # As above, with h2 running a "custom" vGPU already: whether a second fits beside it
    # rests on a size nothing gives. Not lost: not proven, with that reason.
    sim = simulate_cluster(_custom_cluster("h1", "h2").inv, "c")
    reason = "gpuaudit has no NVIDIA vGPU type data for the board of custom"
    assert sim.not_proven == [reason]
    first = sim.failures[0]
    assert (first.placed, first.unplaced) == ([], [])
    assert [(p.vm, p.to_host, p.reason) for p in first.unproven] == [
        ("v", None, f"restart not proven: {reason}")
    ]
    assert (sim.tolerates, sim.tolerates_unproven) == (0, 1)


def test_greedy_best_fit_joins_the_fullest_gpu_that_takes_the_vgpu() -> None:
    # L40S GPUs in equal-size mode (ESXi 8.0 U3, sameSize): NVIDIA allows 3 L40S-16Q and 1
    # L40S-48Q per GPU (vGPU 17 user guide, A.1). On dst, d1 runs one 16q, d2 two, d3
    # nothing. a (16q, high) goes first: best fit joins the fullest GPU that takes it, d2,
    # leaving the empty d3 to b (48q). ESXi's own choice (performance: the GPU with the
    # fewest VMs) puts a on the empty d3, so b restarts only by hand. With the exact search
    # skipped, the greedy pass alone must find the placement of both.
    e = Estate()
    e.cluster("c")
    profiles = ("grid_l40s-16q", "grid_l40s-48q")
    src, dst = e.host("src", "c", profiles=profiles), e.host("dst", "c", profiles=profiles)
    pcis = ("0000:3b:00.0", "0000:af:00.0", "0000:d8:00.0")
    s1, s2 = (e.gpu(src, p, model="l40s") for p in pcis[:2])
    d1, d2, _ = (e.gpu(dst, p, model="l40s") for p in pcis)
    src.memory_mb = dst.memory_mb = 512 * 1024
    e.datastore("san", [src, dst])
    e.vm("a", src, ["san"], vgpu="grid_l40s-16q", gpu=s1, priority="high")
    e.vm("b", src, ["san"], vgpu="grid_l40s-48q", gpu=s2)
    e.vm("one", dst, ["san"], vgpu="grid_l40s-16q", gpu=d1)
    for name in ("two-a", "two-b"):
        e.vm(name, dst, ["san"], vgpu="grid_l40s-16q", gpu=d2)
    with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", 0):
        failure = simulate_cluster(e.inv, "c").failures[0]
    assert failure.placed == [Placement("a", "src", "dst", "0000:d8:00.0", None, "high")]
    assert [(p.vm, p.to_host, p.to_gpu) for p in failure.manual_only] == [
        ("b", "dst", "0000:d8:00.0")
    ]
    assert (failure.unplaced, failure.unproven) == ([], [])


def test_greedy_prefers_joining_gpus_in_use_to_less_room_left() -> None:
    # L40S GPUs in equal-size mode (NVIDIA: 6 L40S-8Q or 1 L40S-48Q per GPU). m (high) has
    # two 8q devices, n a 48q; both run on src. x's two GPUs run an 8q each; y's run one
    # 8q and nothing. On x, m joins two GPUs in use; on y it would leave less room but take
    # y's empty GPU, the only one n fits on. The greedy pass puts m on x and n on y. ESXi's
    # own choice starts from y, the host with the most free memory, where performance gives
    # m's first device the GPU with the fewest VMs (the empty one): n restarts only by hand.
    e = Estate()
    e.cluster("c")
    profiles = ("grid_l40s-8q", "grid_l40s-48q")
    src, x, y = (e.host(n, "c", profiles=profiles) for n in ("src", "x", "y"))
    pcis = ("0000:3b:00.0", "0000:af:00.0", "0000:d8:00.0")
    s1, s2, s3 = (e.gpu(src, p, model="l40s") for p in pcis)
    x1, x2 = (e.gpu(x, p, model="l40s") for p in pcis[:2])
    y1, _ = (e.gpu(y, p, model="l40s") for p in pcis[:2])
    src.memory_mb = x.memory_mb = 128 * 1024
    y.memory_mb = 256 * 1024
    e.datastore("san", [src, x, y])
    m = e.vm("m", src, ["san"], vgpu="grid_l40s-8q", gpu=s1, priority="high")
    m.gpus.append(GpuAttachment("vgpu", profile="grid_l40s-8q"))
    s2.vms.append("m")
    e.vm("n", src, ["san"], vgpu="grid_l40s-48q", gpu=s3)
    e.vm("on-x1", x, ["san"], vgpu="grid_l40s-8q", gpu=x1)
    e.vm("on-x2", x, ["san"], vgpu="grid_l40s-8q", gpu=x2)
    e.vm("on-y1", y, ["san"], vgpu="grid_l40s-8q", gpu=y1)
    with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", 0):
        sim = simulate_cluster(e.inv, "c")
    # Losing src, one VM of two restarts only by hand; losing x or y, every VM restarts.
    assert sim.worst_host == "src"
    failure = sim.failures[0]
    assert failure.placed == [
        Placement("m", "src", "y", "0000:af:00.0, 0000:3b:00.0", None, "high")
    ]
    assert [(p.vm, p.to_host, p.to_gpu) for p in failure.manual_only] == [
        ("n", "y", "0000:af:00.0")
    ]
    assert failure.unplaced == []


def test_hosts_a_vm_may_go_to_depend_on_its_datastores_memory_and_rules() -> None:
    # a, b, c and d run grid_l4-8q on h1. h2's L4 is full. h3 (32768 MB: 30392 MB for VMs)
    # takes a; b's datastore is not on h3, c needs 62311 MB and a rule keeps d on h1 and
    # h2. So h2 alone is eligible for b, c and d, though they ask for the same vGPU as a.
    e = Estate()
    e.cluster("c")
    h1, h2, h3 = (e.host(f"h{i}", "c") for i in (1, 2, 3))
    for h in (h1, h2, h3):
        e.gpu(h)
    h3.memory_mb = 32768
    e.datastore("san", [h1, h2, h3])
    e.datastore("part", [h1, h2])
    e.vm("full", h2, ["san"], vgpu="grid_l4-24q")
    e.vm("a", h1, ["san"], vgpu="grid_l4-8q")
    e.vm("b", h1, ["part"], vgpu="grid_l4-8q")
    c = e.vm("c", h1, ["san"], vgpu="grid_l4-8q")
    c.memory_mb = c.memory_reservation_mb = 61440
    e.vm("d", h1, ["san"], vgpu="grid_l4-8q")
    e.inv.clusters[0].vm_host_rules.append(
        VmHostRule("d-rack1", True, True, True, "d-group", "rack1", ["d"], ["h1", "h2"])
    )
    failure = simulate_cluster(e.inv, "c").failures[0]
    assert [(p.vm, p.to_host) for p in failure.placed] == [("a", "h3")]
    no_room = (
        "no GPU capacity left for grid_l4-8q on NVIDIA L4 on h2 (counting the VMs running "
        "there and restarts of equal or higher priority)"
    )
    assert [(p.vm, p.reason) for p in failure.unplaced] == [
        ("b", no_room),
        ("c", no_room),
        ("d", no_room),
    ]


def test_hosts_of_equal_make_but_different_free_memory_are_failed_apart() -> None:
    # Three 64 GB hosts (62832 MB for VMs), each with one grid_l4-8q VM (16804 MB); h1 also
    # runs a 32 GB VM without GPU (33352 MB), so it has 12676 MB left: too little for any
    # VM. Losing h1 and h2 puts two VMs on h3; losing h2 and h3 leaves two for h1: N+1.
    e = healthy()
    for h in e.inv.hosts:
        h.memory_mb = 65536
    big = e.vm("big", e.inv.hosts[0], ["san1"])
    big.memory_mb = big.memory_reservation_mb = 32768
    sim = simulate_cluster(e.inv, "c1")
    assert (sim.manual_tolerates, sim.tolerates) == (1, 1)


def test_a_failure_lists_vms_by_restart_priority_then_name() -> None:
    # src runs b and d (high), a (medium), c (low) and z (HA restart disabled); dst has an
    # idle L4. b (8q) and a (8q) restart there; d and c (24q) then find no GPU.
    e = Estate()
    e.cluster("c")
    src, dst = e.host("src", "c"), e.host("dst", "c")
    pcis = ("0000:3b:00.0", "0000:5e:00.0", "0000:af:00.0", "0000:d8:00.0")
    gpus = [e.gpu(src, p) for p in pcis]
    e.gpu(dst)
    e.datastore("san", [src, dst])
    e.vm("a", src, ["san"], vgpu="grid_l4-8q", gpu=gpus[0], priority="medium")
    e.vm("b", src, ["san"], vgpu="grid_l4-8q", gpu=gpus[0], priority="high")
    e.vm("c", src, ["san"], vgpu="grid_l4-24q", gpu=gpus[1], priority="low")
    e.vm("d", src, ["san"], vgpu="grid_l4-24q", gpu=gpus[2], priority="high")
    e.vm("z", src, ["san"], vgpu="grid_l4-24q", gpu=gpus[3], priority="disabled")
    failure = simulate_cluster(e.inv, "c").failures[0]
    assert failure.displaced == 5
    assert failure.placed == [
        Placement("b", "src", "dst", "0000:3b:00.0", None, "high"),
        Placement("a", "src", "dst", "0000:3b:00.0", None, "medium"),
    ]
    assert [(p.vm, p.restart_priority) for p in failure.unplaced] == [("d", "high"), ("c", "low")]
    assert failure.not_restarted == [
        Placement("z", "src", None, None, "HA restart disabled", "disabled")
    ]


def test_a_vm_the_search_could_not_place_is_not_counted_as_placed() -> None:
    # The hosts' own choice restarts each VM, but the exact search, given no work, proves
    # no placement: N+k is not claimed.
    with (
        patch.object(ClusterModel, "_greedy", lambda self, guests, state, down: {}),
        patch("gpuaudit.simulation.failures.SEARCH_WORK", 0),
    ):
        sim = simulate_cluster(healthy().inv, "c1")
    assert [[p.vm for p in f.placed] for f in sim.failures] == [["v1"], ["v2"], ["v3"]]
    assert sim.manual_tolerates == 0


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


def test_vgpus_no_gpu_lists_are_seated_on_the_first_gpu_that_takes_them() -> None:
    # a and b (grid_l4-24q: a whole L4 each) run on h1, but no GPU of h1 lists them: a takes
    # h1's first L4 and b the second. Losing h1, a restarts on h2's L4 and b finds no L4
    # left; h3's T4 could never take an L4 profile.
    e = Estate()
    e.cluster("c")
    h1, h2, h3 = (e.host(f"h{i}", "c") for i in (1, 2, 3))
    first = e.gpu(h1)
    e.gpu(h1, "0000:af:00.0")
    e.gpu(h2)
    e.gpu(h3, model="t4")
    e.datastore("san", [h1, h2, h3])
    e.vm("a", h1, ["san"], vgpu="grid_l4-24q")
    e.vm("b", h1, ["san"], vgpu="grid_l4-24q")
    first.vms.clear()
    sim = simulate_cluster(e.inv, "c")
    assert sim.capacity == [
        GpuSlots(
            "h1", "0000:3b:00.0", "NVIDIA L4", 24576, "vgpu", "grid_l4-24q", 1, 1, 24576, ["a"]
        ),
        GpuSlots(
            "h1", "0000:af:00.0", "NVIDIA L4", 24576, "vgpu", "grid_l4-24q", 1, 1, 24576, ["b"]
        ),
        GpuSlots("h2", "0000:3b:00.0", "NVIDIA L4", 24576, "idle"),
        GpuSlots("h3", "0000:3b:00.0", "NVIDIA T4", 16384, "idle"),
    ]
    failure = sim.failures[0]
    assert failure.placed == [Placement("a", "h1", "h2", "0000:3b:00.0", None, "medium")]
    assert failure.unplaced == [
        Placement(
            "b",
            "h1",
            reason="no GPU capacity left for grid_l4-24q on NVIDIA L4 on h2; h2 0000:3b:00.0: "
            "NVIDIA allows 1 of L4-24Q per GPU (counting the VMs running there and restarts "
            "of equal or higher priority)",
            restart_priority="medium",
        )
    ]
    assert (sim.tolerates, sim.worst_host) == (0, "h1")


def test_given_facts_are_used_and_none_are_built_again() -> None:
    # The audit builds the facts of an inventory once; the simulation reads those. In the
    # healthy cluster two hosts may fail: the third L4 takes all three 8q VMs.
    inv = healthy().inv
    facts = Facts(inv)
    with patch(
        "gpuaudit.simulation.failures.Facts", side_effect=AssertionError("facts built again")
    ):
        assert simulate_cluster(inv, "c1", facts).tolerates == 2
        assert [s.tolerates for s in simulate(inv, facts)] == [2]
        assert [s.simulation.tolerates for s in simulate_all(inv, facts)] == [2]


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


def test_exact_search_takes_an_exact_memory_fit() -> None:
    # As test_exact_memory_fit_is_a_fit, with the greedy pass left out: the exact search
    # must find that h2's 16804 MB for VMs hold v's 16804 MB.
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in (1, 2)]
    for h in hosts:
        e.gpu(h)
    hosts[1].memory_mb = 19043
    e.datastore("san", hosts)
    e.vm("v", hosts[0], ["san"], vgpu="grid_l4-8q")
    with patch.object(ClusterModel, "_greedy", lambda self, guests, state, down: {}):
        sim = simulate_cluster(e.inv, "c")
    assert [(p.vm, p.to_host) for p in sim.failures[0].placed] == [("v", "h2")]
    assert (sim.tolerates, sim.manual_tolerates) == (1, 1)


def test_exact_search_looks_past_two_alike_hosts_without_room() -> None:
    # h2 and h3 alike: each L4 runs a grid_l4-24q VM and has no room. v (8q) of h1 can
    # only go to h4's idle L4, which the search, with no greedy answer, must reach. Losing
    # h1 and h2 leaves v and b2 for h4's one L4: N+1.
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in (1, 2, 3, 4)]
    for h in hosts:
        e.gpu(h)
    e.datastore("san", hosts)
    e.vm("v", hosts[0], ["san"], vgpu="grid_l4-8q")
    e.vm("b2", hosts[1], ["san"], vgpu="grid_l4-24q")
    e.vm("b3", hosts[2], ["san"], vgpu="grid_l4-24q")
    with patch.object(ClusterModel, "_greedy", lambda self, guests, state, down: {}):
        sim = simulate_cluster(e.inv, "c")
    assert [f.unplaced for f in sim.failures] == [[], [], [], []]
    assert [[(p.vm, p.to_host) for p in f.placed] for f in sim.failures] == [
        [("v", "h4")],
        [("b2", "h4")],
        [("b3", "h4")],
        [],
    ]
    assert (sim.tolerates, sim.manual_tolerates) == (1, 1)


def test_exact_search_tries_every_host_an_anti_affinity_rule_leaves() -> None:
    # h1 runs y (highest), x (high), w (medium) and z (low), each a grid_l4-24q (a whole L4).
    # h2 and h3 have two idle L4s each. Rules: x apart from y, z apart from x. Losing h1,
    # y goes to h2 and x to h3; w must then go to h3, next to x, so that z can go to h2.
    # ESXi's own choice puts w on h2 (the first of two hosts alike), and z finds no host:
    # it restarts only by hand, on h2. p (lowest) is on a datastore only h1 has: not every
    # VM can be placed, but the greedy answer is not the best there is.
    e = Estate()
    e.cluster("c")
    h1, h2, h3 = (e.host(f"h{i}", "c") for i in (1, 2, 3))
    pcis = ("0000:3b:00.0", "0000:5e:00.0", "0000:af:00.0", "0000:d8:00.0", "0000:e1:00.0")
    gpus = [e.gpu(h1, p) for p in pcis]
    for h in (h2, h3):
        e.gpu(h, pcis[0])
        e.gpu(h, pcis[2])
    e.datastore("san", [h1, h2, h3])
    e.datastore("local", [h1], transport="local")
    # p comes first in the inventory: the bound still counts the VMs after it.
    e.vm("p", h1, ["local"], vgpu="grid_l4-24q", gpu=gpus[4], priority="lowest")
    priorities = ("highest", "high", "medium", "low")
    for name, gpu, priority in zip("yxwz", gpus, priorities, strict=False):
        e.vm(name, h1, ["san"], vgpu="grid_l4-24q", gpu=gpu, priority=priority)
    rules = e.inv.clusters[0].vm_vm_rules
    rules.append(VmVmRule(name="x-y", affinity=False, vms=["x", "y"]))
    rules.append(VmVmRule(name="x-z", affinity=False, vms=["x", "z"]))
    failure = simulate_cluster(e.inv, "c").failures[0]
    assert failure.placed == [
        Placement("y", "h1", "h2", "0000:3b:00.0", None, "highest"),
        Placement("x", "h1", "h3", "0000:3b:00.0", None, "high"),
        Placement("w", "h1", "h2", "0000:af:00.0", None, "medium"),
    ]
    assert failure.manual_only == [
        Placement(
            "z",
            "h1",
            "h2",
            "0000:af:00.0",
            "the hosts' own GPU choice (assignment policy performance) leaves no GPU for "
            "it; a manual placement fits on h2 (0000:af:00.0)",
            "low",
        )
    ]
    assert failure.unplaced == [
        Placement(
            "p",
            "h1",
            reason="no surviving host can take it (h2, h3: cannot access datastore local)",
            restart_priority="lowest",
        )
    ]


def test_policy_pass_fails_each_host_while_the_combinations_fit_the_limit() -> None:
    # x and y are alike: L4 #1 runs an 8q VM (high), #2 a 24q VM (medium), #3 is idle, and
    # 29224 MB are free (65536 MB: 62832 for VMs, less two VMs of 16804 MB): room for one
    # more VM. c has one L4 running an 8q VM and, with a VM without GPU, as much free memory.
    # The cluster's order is x, c, y; on equal free memory ESXi's choice goes by it.
    # Losing x: x1 goes to c's L4 and x2 to y's idle L4. Losing y: y1 goes to x's idle L4
    # (performance: the GPU with the fewest VMs), x has no memory left, and c's L4 cannot
    # take a 24q: y2 is lost. With room for exactly the three single failures (and three
    # pairs), each is tried by policy, y's too: the q family is N+0.
    e = Estate()
    e.cluster("c")
    x, c, y = (e.host(n, "c") for n in ("x", "c", "y"))
    for h in (x, c, y):
        h.memory_mb = 65536
    e.gpu(c)
    e.datastore("san", [x, c, y])
    for h in (x, y):
        small, big = e.gpu(h), e.gpu(h, "0000:af:00.0")
        e.gpu(h, "0000:d8:00.0")
        e.vm(f"{h.name}1", h, ["san"], vgpu="grid_l4-8q", gpu=small, priority="high")
        e.vm(f"{h.name}2", h, ["san"], vgpu="grid_l4-24q", gpu=big)
    e.vm("c1", c, ["san"], vgpu="grid_l4-8q")
    e.vm("filler", c, ["san"])
    with patch("gpuaudit.simulation.failures.COMBINATION_LIMIT", 3):
        sim = simulate_cluster(e.inv, "c")
    assert [[(p.vm, p.to_host, p.to_gpu) for p in f.placed] for f in sim.failures] == [
        [("x1", "c", "0000:3b:00.0"), ("x2", "y", "0000:d8:00.0")],
        [("c1", "x", "0000:d8:00.0")],
        [("y1", "x", "0000:d8:00.0")],
    ]
    assert [[(p.vm, p.to_host, p.to_gpu) for p in f.manual_only] for f in sim.failures] == [
        [],
        [],
        [("y2", "x", "0000:d8:00.0")],
    ]
    assert (sim.tolerates, sim.manual_tolerates) == (0, 1)
    assert sim.spare == [
        SpareCapacity("NVIDIA L4", None, 7, 2, 5, 2, 0),
        SpareCapacity("NVIDIA L4", "l4 q", 7, 2, 5, 2, 0),
    ]


def test_exact_search_order_of_equal_options_is_the_clusters() -> None:
    # src runs a (high; allowed an L4 or a T4) and b and c (medium; an L4 only). zeta (256 GB)
    # and alpha (128 GB), in that order in the cluster, have an L4 and a T4 each. ESXi's
    # own choice puts a on zeta's L4 (its first free allowed GPU) and b on alpha's L4: c is
    # left. The exact search, with every option scored alike, tries them in the cluster's
    # order: a on zeta's L4 leaves one L4, a on zeta's T4 then b on zeta's L4 lets c have
    # alpha's L4.
    e = Estate()
    e.cluster("x")
    src = e.host("src", "x", profiles=())
    zeta, alpha = e.host("zeta", "x", profiles=()), e.host("alpha", "x", profiles=())
    zeta.memory_mb, alpha.memory_mb = 256 * 1024, 128 * 1024
    pcis = ("0000:3b:00.0", "0000:5e:00.0", "0000:af:00.0")
    t4 = e.gpu(src, pcis[0], model="t4", mode="passthrough")
    l4s = [e.gpu(src, p, mode="passthrough") for p in pcis[1:]]
    for h in (zeta, alpha):
        e.gpu(h, "0000:3b:00.0", mode="passthrough")
        e.gpu(h, "0000:af:00.0", model="t4", mode="passthrough")
    e.datastore("nfs", [src, zeta, alpha], transport="nfs")
    a = e.vm("a", src, ["nfs"], dynamic=t4, priority="high")
    a.gpus[0].allowed = [(0x10DE, 0x27B8), (0x10DE, 0x1EB8)]
    e.vm("b", src, ["nfs"], dynamic=l4s[0])
    e.vm("c", src, ["nfs"], dynamic=l4s[1])
    # The search runs for as many VMs as the limit allows: three.
    for limit in (400, 3):
        with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", limit):
            out = simulate_cluster_notes(e.inv, "x")
        assert out.notes == ["memory not checked on src: the host's memory size is unknown"]
        failure = out.simulation.failures[0]
        assert failure.placed == [
            Placement("a", "src", "zeta", "0000:3b:00.0", None, "high"),
            Placement("b", "src", "alpha", "0000:3b:00.0", None, "medium"),
        ]
        assert failure.manual_only == [
            Placement(
                "c",
                "src",
                "alpha",
                "0000:3b:00.0",
                "the hosts' own GPU choice (assignment policy performance) leaves no GPU for "
                "it; a manual placement fits on alpha (0000:3b:00.0)",
                "medium",
            )
        ]
        assert failure.unplaced == []


def test_exact_search_counts_each_hosts_gpus_against_its_work_limit() -> None:
    # Losing h1, the search (no greedy answer) checks v1 fits on h2 (one GPU), then lists
    # v1's options on h2 and h3 (two more): three checks, over a limit of one, so it stops
    # before placing v1. The hosts' own choice still restarts each VM.
    with (
        patch.object(ClusterModel, "_greedy", lambda self, guests, state, down: {}),
        patch("gpuaudit.simulation.failures.SEARCH_WORK", 1),
    ):
        out = simulate_cluster_notes(healthy().inv, "c1")
    sim = out.simulation
    assert [[p.vm for p in f.placed] for f in sim.failures] == [["v1"], ["v2"], ["v3"]]
    assert out.notes == [
        "memory not checked on h1, h2, h3: the host's memory size is unknown",
        "the exact search hit its limit for some host failures: VMs reported as not placed "
        "there may still have a valid placement",
    ]
    assert (sim.tolerates, sim.manual_tolerates) == (2, 0)


def test_greedy_pass_alone_takes_an_exact_memory_fit() -> None:
    # As test_exact_memory_fit_is_a_fit, with no exact search: the greedy pass must place v
    # in h2's 16804 MB for VMs.
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in (1, 2)]
    for h in hosts:
        e.gpu(h)
    hosts[1].memory_mb = 19043
    e.datastore("san", hosts)
    e.vm("v", hosts[0], ["san"], vgpu="grid_l4-8q")
    with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", 0):
        out = simulate_cluster_notes(e.inv, "c")
    assert out.notes == ["memory not checked on h1: the host's memory size is unknown"]
    assert (out.simulation.tolerates, out.simulation.manual_tolerates) == (1, 1)


def test_greedy_pass_alone_passes_the_host_an_anti_affinity_rule_blocks() -> None:
    # v (h1) and u (h2) are kept apart; h3's L4 is idle. With no exact search, the greedy
    # pass puts v on h3 when h1 fails, and u on h3 when h2 fails. Losing h1 and h2 leaves
    # both for h3, where only one may run: the greedy answer is not proven wrong, and
    # N+2 is not claimed.
    e = healthy()
    e.inv.vms[2].power_state = "poweredOff"
    e.inv.vms[1].name = e.inv.hosts[1].gpus[0].vms[0] = "u"
    e.inv.clusters[0].vm_vm_rules.append(VmVmRule(name="v-u", affinity=False, vms=["v1", "u"]))
    with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", 0):
        out = simulate_cluster_notes(e.inv, "c1")
    sim = out.simulation
    assert [[(p.vm, p.to_host) for p in f.placed] for f in sim.failures] == [
        [("v1", "h3")],
        [("u", "h3")],
        [],
    ]
    assert out.notes == [
        "memory not checked on h1, h2, h3: the host's memory size is unknown",
        "N+2 not proven: the search hit its limit for the loss of h1, h2",
    ]
    assert (sim.tolerates, sim.manual_tolerates) == (1, 1)


def test_greedy_pass_takes_the_first_of_equal_hosts() -> None:
    # a (high) and b (medium) run grid_l4-24q on h1's two L4s; b's datastore is on h1 and
    # h3 only. h2 and h3 have an idle L4 each. With no exact search, the greedy pass gives a
    # the first of the two equal fits, h2, which leaves h3 for b.
    e = Estate()
    e.cluster("c")
    h1, h2, h3 = (e.host(f"h{i}", "c") for i in (1, 2, 3))
    first, second = e.gpu(h1), e.gpu(h1, "0000:af:00.0")
    e.gpu(h2)
    e.gpu(h3)
    e.datastore("san", [h1, h2, h3])
    e.datastore("part", [h1, h3])
    e.vm("a", h1, ["san"], vgpu="grid_l4-24q", gpu=first, priority="high")
    e.vm("b", h1, ["part"], vgpu="grid_l4-24q", gpu=second)
    with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", 0):
        out = simulate_cluster_notes(e.inv, "c")
    sim = out.simulation
    assert [(p.vm, p.to_host) for p in sim.failures[0].placed] == [("a", "h2"), ("b", "h3")]
    assert out.notes == [
        "memory not checked on h1, h2, h3: the host's memory size is unknown",
        "N+2 not proven: the search hit its limit for the loss of h1, h2",
    ]
    assert (sim.tolerates, sim.manual_tolerates) == (1, 1)


def test_greedy_pass_takes_the_best_fit_of_all_hosts() -> None:
    # h1 runs a (grid_l4-8q, high) and b (grid_l4-24q). h2's L4 is idle; h3's runs an 8q.
    # The greedy pass, alone, puts a next to the 8q on h3 (the best fit, on the last host),
    # which leaves h2's L4 for b. ESXi's own choice puts a on h2, the first host: b restarts
    # only by hand.
    e = Estate()
    e.cluster("c")
    h1, h2, h3 = (e.host(f"h{i}", "c") for i in (1, 2, 3))
    first, second = e.gpu(h1), e.gpu(h1, "0000:af:00.0")
    e.gpu(h2)
    e.gpu(h3)
    e.datastore("san", [h1, h2, h3])
    e.vm("a", h1, ["san"], vgpu="grid_l4-8q", gpu=first, priority="high")
    e.vm("b", h1, ["san"], vgpu="grid_l4-24q", gpu=second)
    e.vm("c", h3, ["san"], vgpu="grid_l4-8q")
    with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", 0):
        failure = simulate_cluster(e.inv, "c").failures[0]
    assert failure.placed == [Placement("a", "h1", "h2", "0000:3b:00.0", None, "high")]
    assert [(p.vm, p.to_host, p.to_gpu) for p in failure.manual_only] == [
        ("b", "h2", "0000:3b:00.0")
    ]
    assert failure.unplaced == []


def test_greedy_pass_looks_past_a_good_fit_for_an_exact_one() -> None:
    # L40S GPUs in equal-size mode: NVIDIA allows 2 L40S-24Q or 1 L40S-48Q per GPU. v (24q,
    # high) and w (48q; its datastore is not on h3) run on h1. h3's GPU runs a 24q: v fills
    # it exactly, the best fit. h2's GPU is idle: v would take an empty GPU, a worse fit,
    # and w needs it. ESXi's own choice puts v on h2, the first host: w restarts only by
    # hand.
    e = Estate()
    e.cluster("c")
    profiles = ("grid_l40s-24q", "grid_l40s-48q")
    h1, h2, h3 = (e.host(f"h{i}", "c", profiles=profiles) for i in (1, 2, 3))
    pcis = ("0000:3b:00.0", "0000:af:00.0")
    for h, pci in ((h1, pcis[0]), (h1, pcis[1]), (h2, pcis[0]), (h3, pcis[0])):
        e.gpu(h, pci, model="l40s")
    e.datastore("san", [h1, h2, h3])
    e.datastore("part", [h1, h2])
    e.vm("v", h1, ["san"], vgpu="grid_l40s-24q", gpu=h1.gpus[0], priority="high")
    e.vm("w", h1, ["part"], vgpu="grid_l40s-48q", gpu=h1.gpus[1])
    e.vm("on-h3", h3, ["san"], vgpu="grid_l40s-24q")
    with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", 0):
        failure = simulate_cluster(e.inv, "c").failures[0]
    assert failure.placed == [Placement("v", "h1", "h2", "0000:3b:00.0", None, "high")]
    assert [(p.vm, p.to_host, p.to_gpu) for p in failure.manual_only] == [
        ("w", "h2", "0000:3b:00.0")
    ]
    assert (failure.unplaced, failure.unproven) == ([], [])


def test_hosts_running_a_vm_of_two_gpus_are_classes_of_their_own() -> None:
    # Three alike hosts with three L4s each; each runs a VM with two grid_l4-8q devices, on
    # its first two L4s. Such hosts are not grouped: three classes, three pairs, more than
    # a limit of two. The pair of the two most loaded hosts (equal loads: h1 and h2) is
    # lost and h3 takes both VMs, but N+2 is not claimed; for the spare rows even the three
    # single failures are more than the limit: N+0 is all they claim.
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in (1, 2, 3)]
    e.datastore("san", hosts)
    for i, h in enumerate(hosts, 1):
        first, second, _ = (e.gpu(h, p) for p in ("0000:3b:00.0", "0000:5e:00.0", "0000:af:00.0"))
        vm = e.vm(f"m{i}", h, ["san"], vgpu="grid_l4-8q", gpu=first)
        vm.gpus.append(GpuAttachment("vgpu", profile="grid_l4-8q"))
        second.vms.append(vm.name)
    with patch("gpuaudit.simulation.failures.COMBINATION_LIMIT", 2):
        out = simulate_cluster_notes(e.inv, "c")
    sim = out.simulation
    assert out.notes == [
        "memory not checked on h1, h2, h3: the host's memory size is unknown",
        "N+2 not proven: 1 combinations of the 2 most loaded hosts all placed every GPU VM, "
        "but the cluster has more than 2 distinct combinations",
    ]
    assert (sim.tolerates, sim.manual_tolerates) == (1, 1)
    # 8 GB vGPUs: two more on each L4 running one, three on each idle one
    assert sim.spare == [
        SpareCapacity("NVIDIA L4", None, 9, 3, 3, 3, 0),
        SpareCapacity("NVIDIA L4", "l4 q", 9, 3, 3, 21, 0),
    ]


def test_greedy_pass_stops_at_a_gpu_filled_exactly() -> None:
    # A100 40GB GPUs in MIG mode. NVIDIA's MIG user guide (nvidia-smi mig -lgipp): 3g.20gb
    # spans memory slices 0-3 or 4-7, 2g.10gb spans two from 0, 2 or 4. h1 runs v (3g.20gb,
    # high) and w (3g.20gb; its datastore is not on h2). h2's GPU runs a 3g.20gb: v fills
    # it exactly. h3's runs a 2g.10gb: wherever it sits, one half of the slices stays free
    # for a 3g.20gb. With no exact search, the greedy pass puts v on h2, the exact fit, not
    # on h3, which w needs.
    profiles = ("grid_a100-2-10c", "grid_a100-3-20c")
    e = Estate()
    e.cluster("c")
    h1, h2, h3 = (e.host(f"h{i}", "c", profiles=profiles) for i in (1, 2, 3))
    for h, pci in (
        (h1, "0000:3b:00.0"),
        (h1, "0000:af:00.0"),
        (h2, "0000:3b:00.0"),
        (h3, "0000:3b:00.0"),
    ):
        g = e.gpu(h, pci, vgpu_mode="multiInstanceGpu")
        g.device_id, g.device_name, g.model, g.memory_mb = (
            0x20F1,
            "",
            "NVIDIA A100 PCIe 40GB",
            40960,
        )
    e.datastore("san", [h1, h2, h3])
    e.datastore("part", [h1, h3])
    e.vm("v", h1, ["san"], vgpu="grid_a100-3-20c", gpu=h1.gpus[0], priority="high")
    e.vm("w", h1, ["part"], vgpu="grid_a100-3-20c", gpu=h1.gpus[1])
    e.vm("r", h2, ["san"], vgpu="grid_a100-3-20c")
    e.vm("s", h3, ["san"], vgpu="grid_a100-2-10c")
    with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", 0):
        out = simulate_cluster_notes(e.inv, "c")
    sim = out.simulation
    assert [(p.vm, p.to_host) for p in sim.failures[0].placed] == [("v", "h2"), ("w", "h3")]
    assert out.notes == ["memory not checked on h1, h2, h3: the host's memory size is unknown"]
    # Losing h1 and h2 leaves three 3g.20gb VMs for h3's one GPU, which holds one: N+1.
    assert (sim.tolerates, sim.manual_tolerates) == (1, 1)


def test_a_greedy_answer_the_bound_proves_best_needs_no_search() -> None:
    # h2's L4 runs a grid_l4-24q: v (8q) of h1 fits nowhere, as the bound shows, so the
    # greedy answer (nothing placed) is proven best even with no search allowed.
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c"), e.host("h2", "c")
    e.gpu(h1)
    e.gpu(h2)
    e.datastore("san", [h1, h2])
    e.vm("v", h1, ["san"], vgpu="grid_l4-8q")
    e.vm("full", h2, ["san"], vgpu="grid_l4-24q")
    with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", 0):
        out = simulate_cluster_notes(e.inv, "c")
    assert out.notes == ["memory not checked on h1, h2: the host's memory size is unknown"]
    (p,) = out.simulation.failures[0].unplaced
    assert p.reason == (
        "no GPU capacity left for grid_l4-8q on NVIDIA L4 on h2 (counting the VMs running "
        "there and restarts of equal or higher priority)"
    )


def test_hosts_own_choice_counts_a_host_of_unknown_size_as_the_most_free() -> None:
    # v of h1 may go to s1 (64 GB) or s2 (128 GB), or to u1 and u2, whose memory sizes are
    # unknown: those count as having the most free memory, the first of them (u1, though it
    # runs another VM) on the tie.
    e = Estate()
    e.cluster("c")
    hosts = [e.host(n, "c") for n in ("h1", "s1", "s2", "u1", "u2")]
    for h in hosts:
        e.gpu(h)
    hosts[1].memory_mb, hosts[2].memory_mb = 64 * 1024, 128 * 1024
    e.datastore("san", hosts)
    e.vm("v", hosts[0], ["san"], vgpu="grid_l4-8q")
    e.vm("other", hosts[3], ["san"])
    failure = simulate_cluster(e.inv, "c").failures[0]
    assert failure.placed == [Placement("v", "h1", "u1", "0000:3b:00.0", None, "medium")]


def test_greedy_pass_takes_the_first_of_equal_gpus() -> None:
    # src runs a (8q, high), b and c (24q). dst's L4s: 3b and 5e idle, af runs an 8q.
    # ESXi's own choice (performance) gives a the first GPU with the fewest VMs, 3b, and b
    # the 5e: c is left. The greedy pass puts a next to the 8q on af (the best fit), then
    # b on the first of the two idle L4s and c on the second: c restarts only by hand, on
    # 5e.
    e = Estate()
    e.cluster("c")
    src, dst = e.host("src", "c"), e.host("dst", "c")
    pcis = ("0000:3b:00.0", "0000:5e:00.0", "0000:af:00.0")
    on_src = [e.gpu(src, p) for p in pcis]
    on_dst = [e.gpu(dst, p) for p in pcis]
    e.datastore("san", [src, dst])
    e.vm("a", src, ["san"], vgpu="grid_l4-8q", gpu=on_src[0], priority="high")
    e.vm("b", src, ["san"], vgpu="grid_l4-24q", gpu=on_src[1])
    e.vm("c", src, ["san"], vgpu="grid_l4-24q", gpu=on_src[2])
    e.vm("resident", dst, ["san"], vgpu="grid_l4-8q", gpu=on_dst[2])
    failure = simulate_cluster(e.inv, "c").failures[0]
    assert failure.placed == [
        Placement("a", "src", "dst", "0000:3b:00.0", None, "high"),
        Placement("b", "src", "dst", "0000:5e:00.0", None, "medium"),
    ]
    assert [(p.vm, p.to_host, p.to_gpu) for p in failure.manual_only] == [
        ("c", "dst", "0000:5e:00.0")
    ]
    # The exact search alone finds the same: of the two idle L4s it tries one, and it goes
    # on to the L4 running the 8q.
    with patch.object(ClusterModel, "_greedy", lambda self, guests, state, down: {}):
        failure = simulate_cluster(e.inv, "c").failures[0]
    assert [(p.vm, p.to_host, p.to_gpu) for p in failure.manual_only] == [
        ("c", "dst", "0000:5e:00.0")
    ]


def test_search_for_every_vm_stops_at_the_first_vm_with_no_place() -> None:
    # v1 (h1) and u (h2) are kept apart; h3's L4 is idle. Losing h1 and h2, the bound
    # (which ignores the rule) lets both fit on h3, so the search runs: u goes to h3 and v1
    # then has no host. A search for a placement of every VM stops there: three fit checks
    # (u fits on h3, u's options on h3, v1 fits on h3), each step begun within a limit of
    # two. N+1 is proven; nothing is left unproven.
    e = healthy()
    e.inv.vms[2].power_state = "poweredOff"
    e.inv.vms[1].name = e.inv.hosts[1].gpus[0].vms[0] = "u"
    e.inv.clusters[0].vm_vm_rules.append(VmVmRule(name="v-u", affinity=False, vms=["v1", "u"]))
    with patch("gpuaudit.simulation.failures.SEARCH_WORK", 2):
        out = simulate_cluster_notes(e.inv, "c1")
    assert out.notes == ["memory not checked on h1, h2, h3: the host's memory size is unknown"]
    assert (out.simulation.tolerates, out.simulation.manual_tolerates) == (1, 1)


def test_exact_search_tries_one_of_two_alike_hosts() -> None:
    # h1 runs a (24q) and c (8q), h2 runs b (24q); h3 and h4 are alike, one idle L4 each.
    # Losing h1 and h2, the bound lets all three fit (two 24q on two L4s, an 8q on either),
    # so the search runs: a goes to h3 (h4 alike is not tried), b to h4, and c has no L4
    # left. Fit checks, one per host's GPU: the bound 2 (a and c fit on h3), a's options 2,
    # the bound 4 (b and c each on h3, then h4), b's options 2, then the bound 2 (c on
    # neither): each step is begun within a limit of ten checks, so N+1 is proven.
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in (1, 2, 3, 4)]
    big, small = e.gpu(hosts[0]), e.gpu(hosts[0], "0000:af:00.0")
    for h in hosts[1:]:
        e.gpu(h)
    e.datastore("san", hosts)
    e.vm("a", hosts[0], ["san"], vgpu="grid_l4-24q", gpu=big)
    e.vm("c", hosts[0], ["san"], vgpu="grid_l4-8q", gpu=small)
    e.vm("b", hosts[1], ["san"], vgpu="grid_l4-24q")
    memory = "memory not checked on h1, h2, h3, h4: the host's memory size is unknown"
    with patch("gpuaudit.simulation.failures.SEARCH_WORK", 10):
        out = simulate_cluster_notes(e.inv, "c")
    assert out.notes == [memory]
    assert (out.simulation.tolerates, out.simulation.manual_tolerates) == (1, 1)
    # With a limit of nine, the last step is not begun: N+1 all the same, not proven beyond.
    with patch("gpuaudit.simulation.failures.SEARCH_WORK", 9):
        out = simulate_cluster_notes(e.inv, "c")
    assert out.notes == [memory, "N+2 not proven: the search hit its limit for the loss of h1, h2"]
    assert (out.simulation.tolerates, out.simulation.manual_tolerates) == (1, 1)


def test_bound_counts_single_devices_by_pool_and_vms_of_several_devices_once() -> None:
    # src runs m (two 8q devices) and a (8q), both high, and b and c (24q, medium). dst's
    # L4s: 3b runs r (8q), 5e runs s (8q), af is idle. The greedy pass puts m next to r and
    # s, a next to r, b on af; c finds no L4. The bound: a's 8q pool has room for seven but
    # a is one VM; m fits somewhere and counts once; b and c share one L4 that takes a 24q.
    # So two high and one medium is the best there is: proven with no search allowed.
    e = Estate()
    e.cluster("c")
    src, dst = e.host("src", "c"), e.host("dst", "c")
    pcis = ("0000:3b:00.0", "0000:5e:00.0", "0000:af:00.0", "0000:d8:00.0")
    on_src = [e.gpu(src, p) for p in pcis]
    on_dst = [e.gpu(dst, p) for p in pcis[:3]]
    e.datastore("san", [src, dst])
    m = e.vm("m", src, ["san"], vgpu="grid_l4-8q", gpu=on_src[0], priority="high")
    m.gpus.append(GpuAttachment("vgpu", profile="grid_l4-8q"))
    on_src[1].vms.append("m")
    e.vm("a", src, ["san"], vgpu="grid_l4-8q", gpu=on_src[1], priority="high")
    e.vm("b", src, ["san"], vgpu="grid_l4-24q", gpu=on_src[2])
    e.vm("c", src, ["san"], vgpu="grid_l4-24q", gpu=on_src[3])
    e.vm("r", dst, ["san"], vgpu="grid_l4-8q", gpu=on_dst[0])
    e.vm("s", dst, ["san"], vgpu="grid_l4-8q", gpu=on_dst[1])
    with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", 0):
        out = simulate_cluster_notes(e.inv, "c")
    assert out.notes == ["memory not checked on src, dst: the host's memory size is unknown"]
    (p,) = out.simulation.failures[0].unplaced
    assert p.vm == "c"
    assert p.reason is not None
    assert p.reason.startswith("no GPU capacity left for grid_l4-24q on NVIDIA L4 on dst")


def test_search_alone_restarts_vms_of_two_gpus() -> None:
    # Three alike hosts with three L4s; each runs a VM with two 8q devices on two of them.
    # With no greedy answer the search alone must place them: losing any one host or two,
    # the survivors take their VMs (an L4 running one 8q has room for two more); N+2.
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in (1, 2, 3)]
    e.datastore("san", hosts)
    for i, h in enumerate(hosts, 1):
        first, second, _ = (e.gpu(h, p) for p in ("0000:3b:00.0", "0000:5e:00.0", "0000:af:00.0"))
        vm = e.vm(f"m{i}", h, ["san"], vgpu="grid_l4-8q", gpu=first)
        vm.gpus.append(GpuAttachment("vgpu", profile="grid_l4-8q"))
        second.vms.append(vm.name)
    with patch.object(ClusterModel, "_greedy", lambda self, guests, state, down: {}):
        sim = simulate_cluster(e.inv, "c")
    assert (sim.tolerates, sim.manual_tolerates) == (2, 2)


def test_bound_leaves_out_a_vm_no_host_has_the_memory_for() -> None:
    # h2's L4 is idle, but of its 30392 MB for VMs (32768 MB) another VM takes 16804: 13588
    # are left, too little for v's 16804. The bound knows v fits nowhere, so nothing placed
    # is proven best with no search allowed.
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c"), e.host("h2", "c")
    e.gpu(h1)
    e.gpu(h2)
    h2.memory_mb = 32768
    e.datastore("san", [h1, h2])
    e.vm("v", h1, ["san"], vgpu="grid_l4-8q")
    e.vm("other", h2, ["san"])
    with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", 0):
        out = simulate_cluster_notes(e.inv, "c")
    assert out.notes == ["memory not checked on h1: the host's memory size is unknown"]
    (p,) = out.simulation.failures[0].unplaced
    assert p.reason == (
        "not enough memory for its 16804 MB (reservation and overhead) on the eligible hosts "
        "h2 (free h2: 13588 MB) (counting the VMs running there and restarts of equal or "
        "higher priority)"
    )


def test_bound_counts_room_past_a_host_in_maintenance_and_a_full_gpu() -> None:
    # v (8q) of h1 can go only to h3's second L4, which runs y (8q; HA restart disabled, as
    # is z on h3's full first L4). h3 is on ESXi 7.0 U3: one profile per GPU, the same as
    # v's. h2 is in maintenance. With no greedy answer, the bound must count that L4's room
    # (past h2 and past the full L4) for the search to run and place v. Losing h1 and h3
    # leaves v nowhere: N+1.
    e = Estate()
    e.cluster("c")
    h1, h2, h3 = (e.host(f"h{i}", "c") for i in (1, 2, 3))
    e.gpu(h1)
    e.gpu(h2)
    full, shared = e.gpu(h3), e.gpu(h3, "0000:af:00.0")
    h2.in_maintenance = True
    h3.version, h3.build = "7.0.3", "21930508"
    e.datastore("san", [h1, h2, h3])
    e.vm("v", h1, ["san"], vgpu="grid_l4-8q")
    e.vm("z", h3, ["san"], vgpu="grid_l4-24q", gpu=full, priority="disabled")
    e.vm("y", h3, ["san"], vgpu="grid_l4-8q", gpu=shared, priority="disabled")
    with patch.object(ClusterModel, "_greedy", lambda self, guests, state, down: {}):
        sim = simulate_cluster(e.inv, "c")
    assert [(p.vm, p.to_host, p.to_gpu) for p in sim.failures[0].placed] == [
        ("v", "h3", "0000:af:00.0")
    ]
    assert (sim.tolerates, sim.manual_tolerates) == (1, 1)


def test_bound_counts_only_gpus_of_the_label_and_sub_ids_asked_for() -> None:
    # y1 and y2 (high) ask for an L4 labelled "train" with sub device 1234. d2 has one such
    # L4 free; its others are labelled "other" or have sub device 9999. The greedy pass
    # places y1 only, and the bound (one GPU for two VMs) proves that best with no search.
    e = Estate()
    e.cluster("dyn")
    d1, d2 = e.host("d1", "dyn", profiles=()), e.host("d2", "dyn", profiles=())
    pcis = ("0000:3b:00.0", "0000:5e:00.0", "0000:af:00.0")
    on_d1 = [e.gpu(d1, p, mode="passthrough") for p in pcis[:2]]
    on_d2 = [e.gpu(d2, p, mode="passthrough") for p in pcis]
    for g, label, sub in zip(
        on_d1 + on_d2,
        ("train", "train", "train", "other", "train"),
        (0x1234, 0x1234, 0x1234, 0x1234, 0x9999),
        strict=True,
    ):
        g.hardware_label, g.sub_vendor_id, g.sub_device_id = label, 0x10DE, sub
    e.datastore("san", [d1, d2])
    for name, g in zip(("y1", "y2"), on_d1, strict=True):
        vm = e.vm(name, d1, ["san"], dynamic=g, priority="high")
        vm.gpus[0].allowed_sub_ids = [(-1, 0x1234)]
        vm.gpus[0].custom_label = "train"
    with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", 0):
        out = simulate_cluster_notes(e.inv, "dyn")
    assert out.notes == ["memory not checked on d1, d2: the host's memory size is unknown"]
    failure = out.simulation.failures[0]
    assert [(p.vm, p.to_gpu) for p in failure.placed] == [("y1", "0000:3b:00.0")]
    assert [(p.vm, p.reason) for p in failure.unplaced] == [
        (
            "y2",
            "no GPU capacity left for a free passthrough GPU labelled 'train' (10de:27b8 *:1234) "
            "on d2 (counting the VMs running there and restarts of equal or higher priority)",
        )
    ]


def test_bound_counts_only_gpus_of_the_model_or_ids_asked_for() -> None:
    # "vg": v and w (grid_l4-8q) run on h1, which has no GPU; h2's L4 has room for one more
    # 8q, h3 has an idle T4. "dyn": x and y (Dynamic DirectPath, an L4 only) run on d1; d2
    # has one free L4 and one free T4. Each time the greedy pass places one VM of two, and
    # the bound (one GPU of the model or ids asked for) proves that best with no search.
    e = Estate()
    e.cluster("vg")
    h1, h2, h3 = (e.host(f"h{i}", "vg") for i in (1, 2, 3))
    e.gpu(h2)
    e.gpu(h3, model="t4")
    e.datastore("san", [h1, h2, h3])
    for name in ("v", "w"):
        vm = e.vm(name, h1, ["san"])
        vm.gpus.append(GpuAttachment("vgpu", profile="grid_l4-8q"))
    e.vm("r1", h2, ["san"], vgpu="grid_l4-8q")
    e.vm("r2", h2, ["san"], vgpu="grid_l4-8q")
    e.cluster("dyn")
    d1, d2 = e.host("d1", "dyn", profiles=()), e.host("d2", "dyn", profiles=())
    on_d1 = [e.gpu(d1, p, mode="passthrough") for p in ("0000:3b:00.0", "0000:af:00.0")]
    e.gpu(d2, mode="passthrough")
    e.gpu(d2, "0000:af:00.0", model="t4", mode="passthrough")
    e.datastore("dsan", [d1, d2])
    for name, g in zip(("x", "y"), on_d1, strict=True):
        e.vm(name, d1, ["dsan"], dynamic=g)
    with patch("gpuaudit.simulation.failures.MAX_SEARCH_GUESTS", 0):
        for cluster, first, second in (("vg", "h1", "h2, h3"), ("dyn", "d1", "d2")):
            out = simulate_cluster_notes(e.inv, cluster)
            assert out.notes == [
                f"memory not checked on {first}, {second}: the host's memory size is unknown"
            ]
            failure = out.simulation.failures[0]
            assert (len(failure.placed), len(failure.unplaced)) == (1, 1)
            assert (failure.unplaced[0].reason or "").startswith("no GPU capacity left for ")


def test_bound_counts_every_free_passthrough_gpu_of_a_host() -> None:
    # x (d1) and y (d2) use Dynamic DirectPath L4s; d1 and d2 have a second L4 free, d3 has
    # two. With no greedy answer, losing d1 and d2 the bound must count both of d3's L4s
    # for the search to run: it places both VMs there. Losing d3 and one other, the VM left
    # takes the other's free L4. N+2.
    e = Estate()
    e.cluster("dyn")
    hosts = [e.host(f"d{i}", "dyn", profiles=()) for i in (1, 2, 3)]
    gpus = [e.gpu(h, mode="passthrough") for h in hosts]
    for h in hosts:
        e.gpu(h, "0000:af:00.0", mode="passthrough")
    e.datastore("san", hosts)
    e.vm("x", hosts[0], ["san"], dynamic=gpus[0])
    e.vm("y", hosts[1], ["san"], dynamic=gpus[1])
    with patch.object(ClusterModel, "_greedy", lambda self, guests, state, down: {}):
        sim = simulate_cluster(e.inv, "dyn")
    assert (sim.tolerates, sim.manual_tolerates) == (2, 2)


def test_dynamic_directpath_takes_a_free_gpu_of_unknown_memory() -> None:
    # x may use the 10de:9999 device, a GPU the catalogue does not know and whose memory
    # the host does not report; d2 has one free. A passthrough device needs no frame buffer.
    e = Estate()
    e.cluster("dyn")
    d1, d2 = e.host("d1", "dyn", profiles=()), e.host("d2", "dyn", profiles=())
    gpus = [e.gpu(h, mode="passthrough") for h in (d1, d2)]
    for g in gpus:
        g.device_id, g.device_name, g.model, g.known_model, g.memory_mb = 0x9999, "", "", False, 0
    e.datastore("san", [d1, d2])
    e.vm("x", d1, ["san"], dynamic=gpus[0])
    failure = simulate_cluster(e.inv, "dyn").failures[0]
    assert [(p.vm, p.to_host, p.to_gpu) for p in failure.placed] == [("x", "d2", "0000:3b:00.0")]


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


def test_exact_search_tries_every_gpu_for_a_vms_first_device() -> None:
    # m has an 8q and a 24q device. dst's 3b is idle and its af runs r (8q): m fits only
    # with its 8q next to r and its 24q on 3b. ESXi's own choice gives the 8q the GPU with
    # the fewest VMs, 3b, and the 24q then finds none: m restarts only by hand. With no
    # greedy answer, the search must try the 8q on af after 3b.
    e = Estate()
    e.cluster("c")
    src, dst = e.host("src", "c"), e.host("dst", "c")
    s1, s2 = e.gpu(src), e.gpu(src, "0000:af:00.0")
    e.gpu(dst)
    shared = e.gpu(dst, "0000:af:00.0")
    e.datastore("san", [src, dst])
    m = e.vm("m", src, ["san"], vgpu="grid_l4-8q", gpu=s1)
    m.gpus.append(GpuAttachment("vgpu", profile="grid_l4-24q"))
    s2.vms.append("m")
    e.vm("r", dst, ["san"], vgpu="grid_l4-8q", gpu=shared)
    with patch.object(ClusterModel, "_greedy", lambda self, guests, state, down: {}):
        sim = simulate_cluster(e.inv, "c")
    assert [(p.vm, p.to_host, p.to_gpu) for p in sim.failures[0].manual_only] == [
        ("m", "dst", "0000:af:00.0, 0000:3b:00.0")
    ]
    assert (sim.tolerates, sim.manual_tolerates) == (0, 1)


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


def test_no_combination_beyond_the_failures_asked_for_is_tried() -> None:
    # The three classes of test_sampled_combinations_are_noted, searched up to one failure:
    # no pair is tried, so their number cannot pass the limit and nothing is noted.
    e = healthy()
    for h, gb in zip(e.inv.hosts, (128, 96, 64), strict=True):
        h.memory_mb = gb * 1024
    with patch("gpuaudit.simulation.failures.COMBINATION_LIMIT", 1):
        out = simulate_cluster_notes(e.inv, "c1", max_failures=1)
    assert out.notes == []
    assert (out.simulation.tolerates, out.simulation.manual_tolerates) == (1, 1)


def test_policy_pairs_of_alike_hosts_are_each_tried() -> None:
    # x, c and y as in test_policy_pass_fails_each_host_while_the_combinations_fit_the_limit;
    # z (256 GB, four idle L4s) has the most free memory and takes every VM of a single
    # failure. x and y are alike, yet losing y with z is not losing x with z: x1 goes to c
    # and x2 to y's idle L4, while y1 takes x's idle L4 and y2 finds neither memory on x nor
    # a 24q on c. With every pair in the limit each is tried by policy: N+1. Any placement
    # restarts the pair too (y1 on c, y2 on x); losing x, y and z leaves x2 and y2 no L4.
    e = Estate()
    e.cluster("c")
    x, c, y, z = (e.host(n, "c") for n in ("x", "c", "y", "z"))
    for h in (x, c, y):
        h.memory_mb = 65536
    z.memory_mb = 262144
    e.gpu(c)
    for i in range(4):
        e.gpu(z, f"0000:{0x3B + i:02x}:00.0")
    e.datastore("san", [x, c, y, z])
    for h in (x, y):
        small, big = e.gpu(h), e.gpu(h, "0000:af:00.0")
        e.gpu(h, "0000:d8:00.0")
        e.vm(f"{h.name}1", h, ["san"], vgpu="grid_l4-8q", gpu=small, priority="high")
        e.vm(f"{h.name}2", h, ["san"], vgpu="grid_l4-24q", gpu=big)
    e.vm("c1", c, ["san"], vgpu="grid_l4-8q")
    e.vm("filler", c, ["san"])
    sim = simulate_cluster(e.inv, "c")
    assert [[(p.vm, p.to_host) for p in f.placed] for f in sim.failures] == [
        [("x1", "z"), ("x2", "z")],
        [("c1", "z")],
        [("y1", "z"), ("y2", "z")],
        [],
    ]
    assert (sim.tolerates, sim.manual_tolerates) == (1, 2)


def test_any_placement_tries_one_pair_per_class_the_first_members() -> None:
    # h1 and h3 (128 GB) are alike, h2 (96 GB) is not: the classes are [h1, h3] and [h2].
    # A search that hits its limit for every pair shows which pair is tried first: two of
    # the first class, h1 and h3, not h1 and h2, the first pair in the cluster's order.
    e = healthy()
    for h, gb in zip(e.inv.hosts, (128, 96, 128), strict=True):
        h.memory_mb = gb * 1024
    fail = ClusterModel.fail

    def no_pair_proven(self: ClusterModel, failed: Any, require_all: bool = False) -> Any:
        outcome = fail(self, failed, require_all)
        if len(list(failed)) < 2:
            return outcome
        return Outcome({}, outcome.state, exact=False)

    with patch.object(ClusterModel, "fail", no_pair_proven):
        out = simulate_cluster_notes(e.inv, "c1")
    assert out.notes == ["N+2 not proven: the search hit its limit for the loss of h1, h3"]
    assert out.simulation.manual_tolerates == 1


def test_a_family_no_failure_breaks_is_n_plus_the_failures_asked_for() -> None:
    # Three hosts, an 8q VM on each L4 (three fit): losing any two leaves one L4 for all
    # three. Searched up to two failures, the family and the model are N+2; each L4 takes
    # two more 8q VMs.
    out = simulate_cluster_notes(healthy().inv, "c1", max_failures=2)
    assert out.simulation.spare == [
        SpareCapacity("NVIDIA L4", None, 3, 0, 3, 0, 2),
        SpareCapacity("NVIDIA L4", "l4 q", 3, 0, 3, 6, 2),
    ]
    assert (out.simulation.tolerates, out.simulation.manual_tolerates) == (2, 2)


def test_spare_on_a_mixed_size_gpu_counts_only_room_its_placements_prove() -> None:
    # h1's mixed-size L4 runs two 2q and an 8q: 12 GB left, and NVIDIA allows two 8q. But
    # an 8q starts at slot 0 or 16 (8 slots), and a 2q may sit at 16, 18 or 22 (vGPU 17
    # user guide, A.3, 24 GB GPUs): wherever the running 8q is, a 2q may block the other
    # 8q start, and no API says where they sit. No room is proven there. h2's L4 (one size
    # per GPU) takes three: 3 in all.
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c"), e.host("h2", "c")
    g = e.gpu(h1, vgpu_mode="mixedSize")
    e.gpu(h2)
    e.datastore("san", [h1, h2])
    for name, profile in (("a", "grid_l4-2q"), ("b", "grid_l4-2q"), ("c", "grid_l4-8q")):
        e.vm(name, h1, ["san"], vgpu=profile, gpu=g)
    sim = simulate_cluster(e.inv, "c")
    (family,) = [r for r in sim.spare if r.family == "l4 q"]
    assert family == SpareCapacity("NVIDIA L4", "l4 q", 2, 1, 3, 3, 0)


def test_family_spare_sizes_only_the_familys_own_vgpus() -> None:
    # m runs a grid_l4-8q on h1's L4 and a grid_t4-16q on h1's T4. The l4 q row asks for
    # 8 GB vGPUs only: two more next to m's and three on h2's idle L4. m's 16 GB T4 vGPU
    # is the t4 q row's: one more fits, on h2's idle T4. h2 offers no T4 profile: m never
    # restarts (N+0).
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c"), e.host("h2", "c")
    l4 = e.gpu(h1)
    t4 = e.gpu(h1, "0000:af:00.0", model="t4")
    e.gpu(h2)
    e.gpu(h2, "0000:af:00.0", model="t4")
    e.datastore("san", [h1, h2])
    m = e.vm("m", h1, ["san"], vgpu="grid_l4-8q", gpu=l4)
    m.gpus.append(GpuAttachment("vgpu", profile="grid_t4-16q"))
    t4.vms.append("m")
    assert simulate_cluster(e.inv, "c").spare == [
        SpareCapacity("NVIDIA L4", None, 2, 1, 1, 1, 0),
        SpareCapacity("NVIDIA L4", "l4 q", 2, 1, 1, 5, 0),
        SpareCapacity("NVIDIA T4", None, 2, 1, 1, 1, 0),
        SpareCapacity("NVIDIA T4", "t4 q", 2, 1, 1, 1, 0),
    ]


def test_family_spare_sizes_only_devices_on_the_rows_gpu_model() -> None:
    # The data puts m's grid_l4-24q on h1's T4, its grid_l4-8q on h1's L4. The L4's l4 q
    # row asks for 8 GB vGPUs (two more next to m's, three on h2's idle L4), not 24 GB
    # ones (none next to m's, one on h2).
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c"), e.host("h2", "c")
    l4 = e.gpu(h1)
    t4 = e.gpu(h1, "0000:af:00.0", model="t4")
    e.gpu(h2)
    e.datastore("san", [h1, h2])
    m = e.vm("m", h1, ["san"], vgpu="grid_l4-8q", gpu=l4)
    m.gpus.append(GpuAttachment("vgpu", profile="grid_l4-24q"))
    t4.vms.append("m")
    (row,) = [
        r for r in simulate_cluster(e.inv, "c").spare if r.family == "l4 q" and "L4" in r.model
    ]
    assert row == SpareCapacity("NVIDIA L4", "l4 q", 2, 1, 1, 5, 0)


def test_a_profile_of_no_known_family_is_its_own_row_of_whole_gpus() -> None:
    # "custom" is no NVIDIA profile name: its row is named by the profile, and with no
    # size known each vGPU takes a whole L4. h2's idle L4 is the one more that fits.
    e = Estate()
    e.cluster("c")
    h1, h2 = (e.host(n, "c", profiles=("custom",)) for n in ("h1", "h2"))
    e.gpu(h1)
    e.gpu(h2)
    e.datastore("san", [h1, h2])
    e.vm("u", h1, ["san"], vgpu="custom")
    sim = simulate_cluster(e.inv, "c")
    assert sim.spare == [
        SpareCapacity("NVIDIA L4", None, 2, 1, 1, 1, 1),
        SpareCapacity("NVIDIA L4", "custom", 2, 1, 1, 1, 1),
    ]
    assert [(p.vm, p.to_host, p.to_gpu) for p in sim.failures[0].placed] == [
        ("u", "h2", "0000:3b:00.0")
    ]


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


def test_vms_whose_restart_is_disabled_are_counted_and_listed() -> None:
    # v1's restart priority is disabled: HA leaves it down when h1 fails; it still counts
    # among the cluster's GPU VMs.
    e = healthy()
    e.inv.vms[0].restart_priority = "disabled"
    sim = simulate_cluster(e.inv, "c1")
    assert (sim.gpu_vms, sim.restart_disabled) == (3, ["v1"])
    assert sim.failures[0].not_restarted == [
        Placement("v1", "h1", reason="HA restart disabled", restart_priority="disabled")
    ]
    assert (sim.failures[0].displaced, sim.failures[0].placed) == (1, [])


def test_greedy_pass_seats_the_vm_with_fewest_hosts_first() -> None:
    # a and b (grid_l4-24q, a whole L4 each) run on src. b's datastore is on src and x
    # only; a may go to x or y. Taking b first (one host left to it, against a's two),
    # the greedy pass alone puts b on x and a on y; with no search work allowed nothing
    # else would be proven. ESXi's own choice (equal free memory: the cluster's order)
    # puts a on x: b restarts only by hand.
    e = Estate()
    e.cluster("c")
    src, x, y = (e.host(n, "c") for n in ("src", "x", "y"))
    s1, s2 = e.gpu(src), e.gpu(src, "0000:af:00.0")
    e.gpu(x)
    e.gpu(y)
    e.datastore("san", [src, x, y])
    e.datastore("local", [src, x])
    e.vm("a", src, ["san"], vgpu="grid_l4-24q", gpu=s1)
    e.vm("b", src, ["local"], vgpu="grid_l4-24q", gpu=s2)
    with patch("gpuaudit.simulation.failures.SEARCH_WORK", 0):
        sim = simulate_cluster(e.inv, "c")
    failure = sim.failures[0]
    assert [(p.vm, p.to_host) for p in failure.placed] == [("a", "x")]
    assert [(p.vm, p.to_host) for p in failure.manual_only] == [("b", "x")]
    assert failure.unplaced == []


def _no_greedy() -> Any:
    """The exact search alone, as when the greedy pass finds no answer."""
    return patch.object(ClusterModel, "_greedy", lambda self, guests, state, down: {})


def _searched(e: Estate) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Where the exact search alone restarts h1's VMs when h1 of cluster c fails: per VM,
    the host and the indices of its GPUs there."""
    model = ClusterModel(Facts(e.inv), "c")
    names = {g.index: g.name for g in model.by_host["h1"]}
    with _no_greedy():
        outcome = model.fail({"h1"})
    return {names[i]: where for i, where in outcome.assignment.items()}


def test_exact_search_joins_the_fullest_gpu_first() -> None:
    # Losing h1, v (grid_l4-8q, 8192 MB) could join h2's L4 (two 8q running: none of its
    # 24576 MB left after v), h3's L4 (one 8q: 8192 MB left) or start h4's idle L4. The
    # search tries joining a GPU before starting one, and the least room left first: h2.
    # (The failure's report shows where the hosts' own GPU choice restarts it instead.)
    e = Estate()
    e.cluster("c")
    h1, h2, h3, h4 = (e.host(f"h{i}", "c") for i in (1, 2, 3, 4))
    e.datastore("san", [h1, h2, h3, h4])
    for h in (h1, h2, h3, h4):
        e.gpu(h)
    e.vm("v", h1, ["san"], vgpu="grid_l4-8q")
    for name, h in (("a", h2), ("b", h2), ("c", h3)):
        e.vm(name, h, ["san"], vgpu="grid_l4-8q")
    assert _searched(e) == {"v": ("h2", (0,))}


def test_assignments_of_two_devices_score_new_gpus_then_room_left() -> None:
    # h2 has four L4s (24576 MB each): C runs one 8q, A two, B and B2 none. m's two 8q
    # devices go to two distinct GPUs. Each assignment is scored (GPUs started, MB left on
    # the GPUs it uses after each device): C then A leaves 8192 on C and 0 on A, starts
    # none. B2 is B's twin: it is tried only when B has been taken by the first device.
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c"), e.host("h2", "c")
    e.datastore("san", [h1, h2])
    first, second = e.gpu(h1, "0000:3b:00.0"), e.gpu(h1, "0000:5e:00.0")
    m = e.vm("m", h1, ["san"], vgpu="grid_l4-8q", gpu=first)
    m.gpus.append(GpuAttachment("vgpu", profile="grid_l4-8q"))
    second.vms.append("m")
    pcis = ("0000:1a:00.0", "0000:3b:00.0", "0000:5e:00.0", "0000:af:00.0")
    c, a, _, _ = (e.gpu(h2, p) for p in pcis)
    e.vm("x", h2, ["san"], vgpu="grid_l4-8q", gpu=c)
    e.vm("y", h2, ["san"], vgpu="grid_l4-8q", gpu=a)
    e.vm("z", h2, ["san"], vgpu="grid_l4-8q", gpu=a)
    model = ClusterModel(Facts(e.inv), "c")
    (guest,) = model.by_host["h1"]
    assert _assignments(model.initial["h2"], guest.demands) == [
        ((0, 8192), (0, 1)),  # C, A
        ((1, 24576), (0, 2)),  # C, B: B keeps 16384
        ((0, 8192), (1, 0)),  # A, C
        ((1, 16384), (1, 2)),  # A, B
        ((1, 24576), (2, 0)),  # B, C
        ((1, 16384), (2, 1)),  # B, A
        ((2, 32768), (2, 3)),  # B, B2
    ]
    assert _assignments(model.initial["h2"], guest.demands, first_only=True) == [
        ((0, 8192), (0, 1))
    ]
    # The search takes the first of the best: C, A (in the cluster's order of GPUs).
    with _no_greedy():
        outcome = model.fail({"h1"})
    assert outcome.assignment[guest.index] == ("h2", (0, 1))


def _slot(memory: int, rule: str, known: bool) -> Slot:
    """A GPU of no board NVIDIA's data knows ("G"), under ``rule``."""
    e = Estate()
    h = e.host("h", None)
    slot = Slot(h, e.gpu(h))
    slot.model, slot.memory, slot.vgpu_ok = "G", memory, True
    slot.share = sharing.GpuRule(rule, known, memory, None)
    return slot


def test_a_vgpu_of_a_type_nvidia_does_not_describe_fits_alone_and_no_more_is_proven() -> None:
    # Nothing says how large grid_g-custom is: one fits an empty GPU its host offers it on
    # (here one of 1 MB), and a second is not proven.
    slot = _slot(1, sharing.EXACT, known=False)
    d = Demand(kind="vgpu", profile="grid_g-custom", model="G")
    assert (slot.fits(d), slot.room(d)) == (True, 1)
    slot.take("a", d)
    assert (slot.fits(d), slot.vgpus, slot.used) == (False, [("a", "grid_g-custom", 1)], 1)


def test_room_follows_the_sharing_mode_the_host_reports() -> None:
    # An L4 running a 12q takes 4q vGPUs only in mixed-size mode. NVIDIA's placements for
    # 24 GB GPUs (vGPU 17 user guide, A.3): a 12q at 0 or 12 (12 slots), a 4q at 0, 8, 12
    # or 20 (4 slots). Whatever the 12q's slot, two 4q fit in the other half, in any order
    # and at any of their slots; a third never does (with the 12q at 0, the 4q at 12 and
    # 20 leave 16-19, no 4q's start).
    e = Estate()
    h = e.host("h", None)  # ESXi 8.0.3
    mixed, same = Slot(h, e.gpu(h, vgpu_mode="mixedSize")), Slot(h, e.gpu(h, vgpu_mode="sameSize"))
    d = Demand(kind="vgpu", profile="grid_l4-4q", model="NVIDIA L4")
    for slot in (mixed, same):
        slot.take("big", Demand(kind="vgpu", profile="grid_l4-12q", model="NVIDIA L4"))
        slot.seated = 1
    assert (mixed.fits(d), mixed.room(d)) == (True, 2)
    assert (same.fits(d), same.room(d)) == (False, 0)


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


def test_demands_of_a_vgpu_with_no_profile_and_a_device_with_no_id() -> None:
    # No profile: no size, no GPU name; no PCI id: the device is "?".
    assert _demand("vgpu", None, None, []) == Demand(kind="vgpu", profile="")
    assert _demand("passthrough", None, None, []) == Demand(kind="passthrough", device="?")


def test_dynamic_directpath_sub_ids_any_where_an_entry_gives_none() -> None:
    # Two allowed devices, sub ids given for one: the other takes any sub ids (-1).
    att = GpuAttachment(
        "dynamic",
        allowed=[(0x10DE, 0x27B8), (0x10DE, 0x1EB8)],
        allowed_sub_ids=[(0x10DE, 0x16CA), None],
        custom_label="inference",
    )
    d = Demand(kind="dynamic", allowed=((0x10DE, 0x1EB8), (0x10DE, 0x27B8)))
    assert _dynamic_wants(d, att) == Demand(
        kind="dynamic",
        allowed=((0x10DE, 0x1EB8), (0x10DE, 0x27B8)),
        label="inference",
        allowed_sub=((0x10DE, 0x1EB8, -1, -1), (0x10DE, 0x27B8, 0x10DE, 0x16CA)),
    )
    # No sub ids at all, and no label: neither is asked for.
    plain = GpuAttachment("dynamic", allowed=[(0x10DE, 0x27B8)])
    d = Demand(kind="dynamic", allowed=((0x10DE, 0x27B8),))
    assert _dynamic_wants(d, plain) == d


def test_gpu_slots_take_the_catalogues_frame_buffer_and_vgpus_in_shared_direct_only() -> None:
    # An L4 reporting 23034 MB (what the driver leaves usable) is sized by NVIDIA's
    # nominal 24576 MB, as vGPU profiles are. Only a GPU in Shared Direct mode takes
    # vGPUs; one in Shared mode ("basic"), in passthrough or pending it, does not.
    e = Estate()
    e.cluster("c")
    h = e.host("h", "c")
    e.gpu(h, "0000:1a:00.0").memory_mb = 23034
    for pci, mode in (("0000:3b:00.0", "basic"), ("0000:5e:00.0", "passthrough")):
        e.gpu(h, pci, mode=mode)
    e.gpu(h, "0000:af:00.0", mode="pending")
    slots = ClusterModel(Facts(e.inv), "c").initial["h"]
    assert [(s.pci_id, s.memory, s.vgpu_ok) for s in slots] == [
        ("0000:1a:00.0", 24576, True),
        ("0000:3b:00.0", 24576, False),
        ("0000:5e:00.0", 24576, False),
        ("0000:af:00.0", 24576, False),
    ]


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


def test_a_dynamic_device_the_data_does_not_locate_is_seated_on_a_free_gpu() -> None:
    # v's Dynamic DirectPath device names no GPU (no PCI id in the data): it is seated on
    # h1's one passthrough L4, the first that fits. Losing h2, w (the same) then finds
    # no free GPU on h1.
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c"), e.host("h2", "c")
    e.gpu(h1, mode="passthrough")
    pt2 = e.gpu(h2, mode="passthrough")
    e.datastore("san", [h1, h2])
    v = e.vm("v", h1, ["san"])
    v.gpus.append(GpuAttachment("dynamic", allowed=[(0x10DE, 0x27B8)]))
    w = e.vm("w", h2, ["san"], dynamic=pt2)
    w.gpus[0].allowed = [(0x10DE, 0x27B8)]
    (failure,) = [f for f in simulate_cluster(e.inv, "c").failures if f.host == "h2"]
    assert failure.placed == []
    assert [p.vm for p in failure.unplaced] == ["w"]


def _three_hosts(profiles: tuple[str, ...] | None = None) -> tuple[Estate, Any, Any, Any]:
    """Cluster c: hosts h1, h2 and h3 (offering ``profiles`` where given), an idle L4 each,
    all on datastore san."""
    e = Estate()
    e.cluster("c")
    hosts = [
        e.host(f"h{i}", "c") if profiles is None else e.host(f"h{i}", "c", profiles=profiles)
        for i in (1, 2, 3)
    ]
    e.datastore("san", hosts)
    for h in hosts:
        e.gpu(h)
    return e, hosts[0], hosts[1], hosts[2]


def test_exact_search_counts_a_priority_with_no_vm_placed_as_none() -> None:
    # h1 runs a (grid_l4-24q, high) and b (grid_l4-12q, medium). h2 and h3 each have an
    # idle L4; only h2 offers grid_l4-12q. The search (no greedy answer) seats a first and
    # tries h2 first: b then finds no GPU, and that leaf places one high VM and no medium
    # one. Only with a on h3 does b restart, on h2: that placement must win.
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c"), e.host("h2", "c")
    h3 = e.host("h3", "c", profiles=("grid_l4-24q",))
    e.datastore("san", [h1, h2, h3])
    for h in (h1, h2, h3):
        e.gpu(h)
    e.vm("a", h1, ["san"], vgpu="grid_l4-24q", priority="high")
    e.vm("b", h1, ["san"], vgpu="grid_l4-12q", priority="medium")
    assert _searched(e) == {"a": ("h3", (0,)), "b": ("h2", (0,))}


def test_exact_search_keeps_the_first_of_equally_good_placements() -> None:
    # h1 runs a (grid_l4-24q, high), b and c (grid_l4-12q each, kept apart by a rule). h2
    # and h3 each have an idle L4 (h3 is sized, h2 is not, so they are not alike): a takes
    # one, and b or c the other. The search (no greedy answer) finds a on h2 and b on h3
    # first. With a on h3 and b on h2, the bound still counts c (it leaves the rule out),
    # so the search reaches that placement too, no better than the first: the first stays.
    e, h1, _, h3 = _three_hosts()
    h3.memory_mb = 524288
    e.vm("a", h1, ["san"], vgpu="grid_l4-24q", priority="high")
    e.vm("b", h1, ["san"], vgpu="grid_l4-12q")
    e.vm("c", h1, ["san"], vgpu="grid_l4-12q")
    e.inv.clusters[0].vm_vm_rules.append(VmVmRule("apart", vms=["b", "c"]))
    assert _searched(e) == {"a": ("h2", (0,)), "b": ("h3", (0,))}


def test_a_greedy_answer_undone_for_the_search_frees_every_vgpu_it_placed() -> None:
    # h1 runs a1 and a2 (grid_l4-8q, high) on one L4 and c (grid_l4-24q, 65536 MB) on the
    # other. h2 (of unknown size) and h3 (65536 MB: too small for c) have an idle L4 each.
    # The greedy pass puts a1 on h2, the first of two alike GPUs, and a2 beside it: c finds
    # no GPU. The search starts again from the GPUs as they were, with both vGPUs taken off
    # h2's L4 (a1 first, though a2 was placed after it), and restarts all three.
    e, h1, _, h3 = _three_hosts()
    h3.memory_mb = 65536
    shared, whole = h1.gpus[0], e.gpu(h1, "0000:af:00.0")
    e.vm("a1", h1, ["san"], vgpu="grid_l4-8q", gpu=shared, priority="high")
    e.vm("a2", h1, ["san"], vgpu="grid_l4-8q", gpu=shared, priority="high")
    c = e.vm("c", h1, ["san"], vgpu="grid_l4-24q", gpu=whole)
    c.memory_mb = c.memory_reservation_mb = 65536
    model = ClusterModel(Facts(e.inv), "c")
    index = {g.name: g.index for g in model.by_host["h1"]}
    state = State({h: model.initial[h] for h in ("h2", "h3")}, model.free)
    state.apart = {"h2": {}, "h3": {}}
    greedy = model._greedy(model.by_host["h1"], state, {"h1"})
    assert greedy == {index["a1"]: ("h2", (0,)), index["a2"]: ("h2", (0,))}
    outcome = model.fail({"h1"})
    assert outcome.assignment == {
        index["a1"]: ("h3", (0,)),
        index["a2"]: ("h3", (0,)),
        index["c"]: ("h2", (0,)),
    }


def test_hosts_in_different_drs_host_groups_are_not_alike() -> None:
    # h2 and h3 differ only in the DRS host group each is in: v must run on h2's group,
    # u (a VM without GPU) on h3's. Losing h1, w (high) is seated first and could go to
    # either; only with w on h3 does v restart, on h2. Taken as alike, h3 would never be
    # tried for w.
    e, h1, _, _ = _three_hosts()
    e.vm("w", h1, ["san"], vgpu="grid_l4-24q", priority="high")
    e.vm("v", h1, ["san"], vgpu="grid_l4-24q", gpu=e.gpu(h1, "0000:af:00.0"))
    e.vm("u", h1, ["san"])
    e.inv.clusters[0].vm_host_rules += [
        VmHostRule("v-on-g2", True, True, True, "v-group", "g2", ["v"], ["h2"]),
        VmHostRule("u-on-g3", True, True, True, "u-group", "g3", ["u"], ["h3"]),
    ]
    model = ClusterModel(Facts(e.inv), "c")
    index = {g.name: g.index for g in model.by_host["h1"]}
    assert model.fail({"h1"}).assignment == {
        index["w"]: ("h3", (0,)),
        index["v"]: ("h2", (0,)),
    }


def test_hosts_running_vms_of_an_anti_affinity_rule_are_not_alike() -> None:
    # y (on h1) is kept apart from x, a VM without GPU on h2; h3 runs z, a VM like x that
    # another rule keeps apart from q (on h1). h2 and h3 differ only in the rule their VM
    # is in. Losing h1 and h2, y restarts on h3; losing h1 and h3, it cannot go next to x:
    # N+1, even with manual placement.
    e, h1, h2, h3 = _three_hosts()
    e.vm("y", h1, ["san"], vgpu="grid_l4-8q")
    e.vm("x", h2, ["san"])
    e.vm("z", h3, ["san"])
    e.vm("q", h1, ["san"])
    e.inv.clusters[0].vm_vm_rules += [
        VmVmRule("apart", vms=["x", "y"]),
        VmVmRule("others", vms=["q", "z"]),
    ]
    sim = simulate_cluster(e.inv, "c")
    assert [[p.to_host for p in f.placed] for f in sim.failures] == [["h3"], [], []]
    assert (sim.tolerates, sim.manual_tolerates) == (1, 1)


def test_gpus_running_different_profiles_of_one_size_are_not_alike() -> None:
    # On ESXi 7.0 U3 a GPU runs one profile. h2's L4 runs a grid_l4-8q, h3's a grid_l4-8c:
    # the same frame buffer used, by one vGPU each. v (grid_l4-8c) of h1 can join only h3's.
    # The exact search alone (no greedy answer) must not take the two hosts as alike.
    e, h1, h2, h3 = _three_hosts(profiles=("grid_l4-8q", "grid_l4-8c"))
    for h in (h1, h2, h3):
        h.version, h.build = "7.0.3", "21930508"
    e.vm("v", h1, ["san"], vgpu="grid_l4-8c")
    e.vm("q", h2, ["san"], vgpu="grid_l4-8q")
    e.vm("c", h3, ["san"], vgpu="grid_l4-8c")
    assert _searched(e) == {"v": ("h3", (0,))}


def test_policy_pass_groups_alike_hosts_when_some_k_passes_the_limit() -> None:
    # Six alike hosts, each with an L4 running one grid_l4-8q VM: any three lost, their
    # VMs join the other three L4s. With a limit of 16, 20 triples pass it: the policy pass
    # then takes the alike hosts as one class and tries one pair and one triple, both
    # placed: N+3. Taken one by one, the triples would be sampled and N+3 not claimed.
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in range(1, 7)]
    e.datastore("san", hosts)
    for h in hosts:
        e.gpu(h)
        e.vm(f"v{h.name[1:]}", h, ["san"], vgpu="grid_l4-8q")
    with patch("gpuaudit.simulation.failures.COMBINATION_LIMIT", 16):
        out = simulate_cluster_notes(e.inv, "c")
    assert out.notes == [
        "memory not checked on h1, h2, h3, h4, 2 more: the host's memory size is unknown"
    ]
    assert (out.simulation.tolerates, out.simulation.manual_tolerates) == (3, 3)


def test_policy_pass_fails_each_host_while_every_k_asked_for_fits_the_limit() -> None:
    # The hosts of test_policy_pairs_of_alike_hosts_are_each_tried, and w1 and w2 with no
    # GPU: six hosts, 15 pairs, searched up to two failures. With a limit of 15 every pair
    # fits (the 20 triples are not asked for), so each host is its own class for the
    # policy pass, and losing y with z, unlike x with z, leaves y2 without a GPU: N+1.
    e = Estate()
    e.cluster("c")
    x, c, y, z = (e.host(n, "c") for n in ("x", "c", "y", "z"))
    w1, w2 = e.host("w1", "c", profiles=()), e.host("w2", "c", profiles=())
    for h in (x, c, y, w1, w2):
        h.memory_mb = 65536
    z.memory_mb = 262144
    e.gpu(c)
    for i in range(4):
        e.gpu(z, f"0000:{0x3B + i:02x}:00.0")
    e.datastore("san", [x, c, y, z, w1, w2])
    for h in (x, y):
        small, big = e.gpu(h), e.gpu(h, "0000:af:00.0")
        e.gpu(h, "0000:d8:00.0")
        e.vm(f"{h.name}1", h, ["san"], vgpu="grid_l4-8q", gpu=small, priority="high")
        e.vm(f"{h.name}2", h, ["san"], vgpu="grid_l4-24q", gpu=big)
    e.vm("c1", c, ["san"], vgpu="grid_l4-8q")
    e.vm("filler", c, ["san"])
    with patch("gpuaudit.simulation.failures.COMBINATION_LIMIT", 15):
        out = simulate_cluster_notes(e.inv, "c", max_failures=2)
    assert out.notes == []
    assert out.simulation.tolerates == 1


def test_vgpus_of_a_vm_that_one_gpu_lists_are_all_seated_on_it() -> None:
    # m has two grid_l4-8q devices, and only h1's second L4 lists it: both run there. The
    # first L4 (idle) would take the second device too, but the data places the VM's
    # vGPUs on the GPU that lists it. The GPU's view names the VM once per vGPU.
    e = Estate()
    e.cluster("c")
    h1 = e.host("h1", "c")
    e.gpu(h1)
    second = e.gpu(h1, "0000:af:00.0")
    e.datastore("san", [h1])
    m = e.vm("m", h1, ["san"], vgpu="grid_l4-8q", gpu=second)
    m.gpus.append(GpuAttachment("vgpu", profile="grid_l4-8q"))
    sim = simulate_cluster(e.inv, "c")
    assert sim.capacity == [
        GpuSlots("h1", "0000:3b:00.0", "NVIDIA L4", 24576, "idle"),
        GpuSlots(
            "h1", "0000:af:00.0", "NVIDIA L4", 24576, "vgpu", "grid_l4-8q", 3, 2, 16384, ["m", "m"]
        ),
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


def test_a_gpu_reported_time_sliced_shows_no_room_for_more_mig_vgpus() -> None:
    # The data shows a MIG-backed grid_a100d-1-10c on an A100 that reports time-sliced
    # (sameSize) mode: it can take no more MIG-backed vGPUs, so its capacity is what runs.
    e = Estate()
    e.cluster("c")
    h = e.host("h", "c", profiles=("grid_a100d-1-10c",))
    e.gpu(h, model="a100", vgpu_mode="sameSize")
    e.datastore("san", [h])
    e.vm("m", h, ["san"], vgpu="grid_a100d-1-10c")
    (view,) = simulate_cluster(e.inv, "c").capacity
    assert (view.profile, view.capacity, view.used) == ("grid_a100d-1-10c", 1, 1)


def test_a_vgpu_seen_on_no_gpu_may_go_to_a_gpu_of_unknown_model() -> None:
    # v (grid_l4-8q) runs on h1, which reports no GPU; h2's only GPU is of a model the
    # catalogue does not know (16384 MB, Shared Direct). Nothing says it is not an L4:
    # losing h1, v restarts there.
    e = Estate()
    e.cluster("c")
    h1, h2 = e.host("h1", "c"), e.host("h2", "c")
    g = e.gpu(h2)
    g.device_id, g.device_name, g.model, g.known_model, g.memory_mb = 0x9999, "", "", False, 16384
    e.datastore("san", [h1, h2])
    vm = e.vm("v", h1, ["san"])
    vm.gpus.append(GpuAttachment("vgpu", profile="grid_l4-8q"))
    failure = simulate_cluster(e.inv, "c").failures[0]
    assert [(p.vm, p.to_host, p.to_gpu) for p in failure.placed] == [("v", "h2", "0000:3b:00.0")]


def test_a_gpu_running_a_vgpu_of_no_profile_shows_no_profile() -> None:
    # m's vGPU has no profile in the data: it takes the L4's whole frame buffer, and the
    # GPU's view names no profile.
    e = Estate()
    e.cluster("c")
    h = e.host("h", "c")
    g = e.gpu(h)
    e.datastore("san", [h])
    m = e.vm("m", h, ["san"])
    m.gpus.append(GpuAttachment("vgpu", profile=None))
    g.vms.append("m")
    assert simulate_cluster(e.inv, "c").capacity == [
        GpuSlots("h", "0000:3b:00.0", "NVIDIA L4", 24576, "vgpu", "", 1, 1, 24576, ["m"])
    ]
