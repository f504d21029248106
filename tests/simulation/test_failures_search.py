"""simulate.py: how the greedy pass, the exact search and its bound, and the hosts' own GPU
choice (the policy pass) place displaced VMs; which host failures are tried (each one, one of
alike hosts, or the most loaded when there are too many combinations) and the notes when a
limit is hit. Written out by hand from small clusters."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

from gpuaudit.inventory import GpuAttachment, VmHostRule, VmVmRule
from gpuaudit.model.facts import Facts
from gpuaudit.results import Placement, SpareCapacity
from gpuaudit.simulation.failures import (
    ClusterModel,
    Outcome,
    State,
    _assignments,
    simulate_cluster,
    simulate_cluster_notes,
)
from tests.support.builders import Estate, healthy


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
