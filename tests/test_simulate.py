"""The host-failure simulation on hand-built clusters, and its speed on a large one."""

from __future__ import annotations

import random
import time
from unittest.mock import patch

from gpuaudit.inventory import Inventory
from gpuaudit.simulation.failures import (
    ClusterModel,
    simulate,
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
