"""The host-failure simulation on hand-built clusters, and its speed on a large one; and,
written out by hand from small clusters, where displaced VMs restart, the notes on a
simulation's limits, and what each GPU shows and has room for."""

from __future__ import annotations

import random
import time
from unittest.mock import patch

from gpuaudit.inventory import GpuAttachment, Inventory, VmHostRule
from gpuaudit.model.facts import Facts
from gpuaudit.results import GpuSlots, Placement, SpareCapacity
from gpuaudit.simulation import sharing
from gpuaudit.simulation.failures import (
    ClusterModel,
    Demand,
    Slot,
    _demand,
    _dynamic_wants,
    simulate,
    simulate_all,
    simulate_cluster,
    simulate_cluster_notes,
)
from tests.support.builders import Estate, healthy, passthrough_estate


def test_every_host_is_failed_and_every_vm_placed() -> None:
    sim = simulate_cluster(healthy().inv, "c1")
    assert (sim.cluster, sim.hosts, sim.gpu_vms) == ("c1", 3, 3)
    assert [f.host for f in sim.failures] == ["h1", "h2", "h3"]
    for failure in sim.failures:
        assert failure.displaced == 1 and failure.unplaced == []
        (p,) = failure.placed
        assert p.from_host == failure.host and p.to_host != failure.host
        assert p.to_gpu == "0000:3b:00.0" and p.restart_priority == "medium"
    assert sim.tolerates == 2  # three 8q on three L4s: any two hosts can go
    assert sim.worst_host == "h1"


def test_capacity_before_and_after_the_worst_failure() -> None:
    sim = simulate_cluster(healthy().inv, "c1")
    before = {(s.host, s.pci_id): s for s in sim.capacity}
    assert len(before) == 3
    slot = before[("h2", "0000:3b:00.0")]
    assert (slot.mode, slot.profile, slot.capacity, slot.used, slot.used_mb) == (
        "vgpu",
        "grid_l4-8q",
        3,
        1,
        8192,
    )
    after = {(s.host, s.pci_id): s for s in sim.after_worst}
    assert ("h1", "0000:3b:00.0") not in after  # the failed host's GPU is gone
    assert sum(s.used for s in after.values()) == 3


def test_fixed_passthrough_is_never_placed() -> None:
    sim = simulate_cluster(passthrough_estate(buffer=True).inv, "pt")
    failure = sim.failures[0]
    assert failure.placed == []
    (p,) = failure.unplaced
    assert p.vm == "pv1" and "fixed DirectPath" in (p.reason or "")
    assert sim.tolerates == 0
    idle = [s for s in sim.capacity if s.mode == "idle"]
    assert [s.host for s in idle] == ["p3"]


def test_dynamic_directpath_moves_to_a_free_matching_gpu() -> None:
    e = Estate()
    e.cluster("dyn")
    hosts = [e.host(f"d{i}", "dyn", profiles=()) for i in (1, 2, 3)]
    gpus = [e.gpu(h, mode="passthrough") for h in hosts]
    e.gpu(hosts[2], "0000:af:00.0", model="t4", mode="passthrough")
    e.datastore("nfs", hosts, transport="nfs")
    e.vm("a", hosts[0], ["nfs"], dynamic=gpus[0])
    e.vm("b", hosts[1], ["nfs"], dynamic=gpus[1])
    sim = simulate_cluster(e.inv, "dyn")
    moves = {f.host: [(p.vm, p.to_host, p.to_gpu) for p in f.placed] for f in sim.failures}
    assert moves["d1"] == [("a", "d3", "0000:3b:00.0")]  # the L4, not the T4
    assert moves["d2"] == [("b", "d3", "0000:3b:00.0")]
    assert sim.tolerates == 1  # both fail: one free L4 for two VMs


def test_exact_search_finds_what_greedy_misses() -> None:
    """Two dynamic VMs, one free L4 and one free T4: the flexible VM must take the T4."""
    e = Estate()
    e.cluster("x")
    src, dst = e.host("src", "x", profiles=()), e.host("dst", "x", profiles=())
    l4, t4 = e.gpu(src, "0000:01:00.0"), e.gpu(src, "0000:02:00.0", model="t4")
    for g in (l4, t4):
        g.passthrough_enabled = g.passthrough_active = True
        g.graphics_type = "direct"
    e.gpu(dst, "0000:01:00.0", mode="passthrough")
    e.gpu(dst, "0000:02:00.0", model="t4", mode="passthrough")
    e.datastore("nfs", [src, dst], transport="nfs")
    flexible = e.vm("a-flexible", src, ["nfs"], dynamic=t4)
    flexible.gpus[0].allowed = [(0x10DE, 0x27B8), (0x10DE, 0x1EB8)]
    e.vm("b-l4-only", src, ["nfs"], dynamic=l4)
    failure = simulate_cluster(e.inv, "x").failures[0]
    assert failure.unplaced == []
    # The host itself gives the flexible VM its first free allowed device, the L4; the
    # exact search finds that the L4-only VM fits when the flexible one takes the T4.
    assert [(p.vm, p.to_gpu) for p in failure.placed] == [("a-flexible", "0000:01:00.0")]
    assert [(p.vm, p.to_gpu) for p in failure.manual_only] == [("b-l4-only", "0000:01:00.0")]


def test_search_limit_is_reported_never_claimed_as_no_room() -> None:
    e = healthy()
    with (
        patch.object(ClusterModel, "_greedy", lambda self, guests, state, down: {}),
        patch("gpuaudit.simulation.failures.SEARCH_WORK", 0),
        patch("gpuaudit.simulation.failures._policy_choice", lambda slots, demands, policy: None),
    ):
        result = simulate_cluster_notes(e.inv, "c1")
    unplaced = [p for f in result.simulation.failures for p in f.unplaced]
    assert unplaced and all("search limit" in (p.reason or "") for p in unplaced)
    assert not any("no GPU capacity" in (p.reason or "") for p in unplaced)
    assert any("search hit its limit" in note for note in result.notes)
    assert result.simulation.tolerates == 0  # not proven, so not claimed


def test_equal_size_mode_holds_one_size_per_gpu() -> None:
    e = Estate()
    e.cluster("eq")
    a, b = e.host("a", "eq"), e.host("b", "eq")
    ga, gb = e.gpu(a), e.gpu(b)
    e.datastore("san", [a, b])
    e.vm("four", a, ["san"], vgpu="grid_l4-4q", gpu=ga)
    e.vm("eight", b, ["san"], vgpu="grid_l4-8q", gpu=gb)
    sim = simulate_cluster(e.inv, "eq")
    assert all(len(f.unplaced) == 1 for f in sim.failures)
    gb.vgpu_mode = ga.vgpu_mode = "mixedSize"  # now 4 + 8 GB fit on one 24 GB GPU
    sim = simulate_cluster(e.inv, "eq")
    assert all(f.unplaced == [] for f in sim.failures)


def test_maintenance_and_disconnected_hosts_are_no_targets() -> None:
    e = healthy()
    e.inv.hosts[1].in_maintenance = True
    e.inv.hosts[2].connection_state = "notResponding"
    e.inv.hosts[2].gpus = []
    sim = simulate_cluster(e.inv, "c1")
    (p,) = sim.failures[0].unplaced
    assert "not connected or in maintenance mode" in (p.reason or "")


def test_simulate_covers_clusters_with_gpus_only() -> None:
    e = healthy()
    e.cluster("cpu")
    e.host("cpu1", "cpu")
    assert [s.cluster for s in simulate(e.inv)] == ["c1"]


def test_no_gpu_vms_tolerates_the_bound() -> None:
    e = passthrough_estate()
    e.inv.vms.clear()
    for h in e.inv.hosts:
        h.gpus[0].vms.clear()
    sim = simulate_cluster(e.inv, "pt")
    assert sim.gpu_vms == 0 and sim.worst_host is None and sim.tolerates == 2


# --- a 64-host cluster with 8 GPUs per host -----------------------------------------------


def big_cluster(mixed: bool, seed: int = 7) -> tuple[Inventory, int]:
    rnd = random.Random(seed)
    profiles = ("grid_l4-4q", "grid_l4-6q", "grid_l4-8q", "grid_l4-12q")
    e = Estate()
    e.cluster("big")
    hosts = [e.host(f"esx{i:02d}", "big", profiles=profiles) for i in range(64)]
    e.datastore("san", hosts)
    n = 0
    for host in hosts:
        for j in range(8):
            gpu = e.gpu(host, f"0000:{j + 1:02x}:00.0")
            profile, count = "grid_l4-6q", 3
            if mixed:
                profile = rnd.choice(profiles)
                count = rnd.randint(0, 24 // int(profile.split("-")[1][:-1]) - 1)
            for _ in range(count):
                n += 1
                e.vm(f"vm{n:04d}", host, ["san"], vgpu=profile, gpu=gpu)
    return e.inv, n


def test_large_cluster_is_fast() -> None:
    """The budget is one second; the assertion allows five so a slow CI box does not flake."""
    for mixed in (False, True):
        inv, vms = big_cluster(mixed)
        start = time.perf_counter()
        result = simulate_cluster_notes(inv, "big")
        elapsed = time.perf_counter() - start
        sim = result.simulation
        print(
            f"\n64 hosts x 8 GPUs, {vms} vGPU VMs ({'mixed' if mixed else 'uniform'}): "
            f"{elapsed:.3f} s, N+{sim.tolerates}, notes: {result.notes}"
        )
        assert len(sim.failures) == 64
        assert all(f.unplaced == [] for f in sim.failures)
        assert sim.tolerates >= 1
        assert elapsed < 5.0


def _board_estate(known_model: bool, vendor_id: int, device_id: int) -> Inventory:
    """h1 and h2, one L4 each running three L4-8Q (NVIDIA allows 3 per GPU: full), and
    h3 whose one vGPU-mode GPU, "Acme Z9", has the given catalogue model and PCI ids."""
    e = Estate()
    e.cluster("c1")
    hosts = [e.host(f"h{i}", "c1", profiles=("grid_l4-8q",)) for i in (1, 2, 3)]
    for h in hosts[:2]:
        e.gpu(h, vgpu_mode="sameSize")
    odd = e.gpu(hosts[2], vgpu_mode="sameSize")
    odd.model = odd.device_name = "Acme Z9"
    odd.known_model, odd.vendor_id, odd.device_id = known_model, vendor_id, device_id
    e.datastore("san", hosts)
    for i, h in enumerate(hosts[:2]):
        for j in range(3):
            e.vm(f"v{i}{j}", h, ["san"], vgpu="grid_l4-8q")
    return e.inv


def test_a_gpu_nothing_identifies_leaves_the_restarts_onto_it_not_proven() -> None:
    # No catalogue model and no PCI ids: whether h3's GPU is an L4 is not known. Read as
    # no, the 3 VMs of a lost h1 (or h2) find the other L4 full: N+0. Read as yes, they
    # restart on h3: N+1; losing two hosts leaves 3 VMs at best a full L4: not N+2.
    sim = simulate_cluster(_board_estate(False, 0, 0), "c1")
    assert (sim.tolerates, sim.tolerates_unproven) == (0, 1)
    assert sim.not_proven == [
        "no catalogue knows the board Acme Z9 of h3: which GPU VMs it takes is not known"
    ]
    h1 = next(f for f in sim.failures if f.host == "h1")
    assert sorted(p.vm for p in h1.unproven) == ["v00", "v01", "v02"] and h1.unplaced == []


def test_a_gpu_with_pci_ids_or_a_catalogue_model_is_another_gpu_type() -> None:
    # Its PCI ids (10de:26b9, an L40S), or a catalogue model, identify it: not an L4, so
    # it takes no L4-8Q, which is proven: N+0, nothing left undecided about it.
    for known, vendor, device in ((False, 0x10DE, 0x26B9), (True, 0, 0), (False, 0x10DE, 0)):
        sim = simulate_cluster(_board_estate(known, vendor, device), "c1")
        assert (sim.tolerates, sim.tolerates_unproven, sim.not_proven) == (0, None, [])


# --- small clusters, written out by hand --------------------------------------------------


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
