"""simulate.py: the reasons a displaced VM is not restarted, the notes on a simulation's
limits and the spare capacity rows, written out by hand from small clusters."""

from __future__ import annotations

from gpuaudit.inventory import GpuAttachment
from gpuaudit.simulate import simulate_cluster, simulate_cluster_notes
from tests.builders import Estate


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
    # VMs) runs a 16804 MB VM and keeps 13588 MB; h3's L4 runs a grid_l4-8q and is on
    # ESXi 7.0 U3, where a GPU runs one profile only.
    e = Estate()
    e.cluster("c")
    profiles = ("grid_l4-8q", "grid_l4-8c")
    hosts = [e.host(f"h{i}", "c", profiles=profiles) for i in (1, 2, 3)]
    for h in hosts:
        e.gpu(h)
    hosts[1].memory_mb = 32768
    hosts[2].version, hosts[2].build = "7.0.3", "21930508"
    e.datastore("san", hosts)
    e.vm("v", hosts[0], ["san"], vgpu="grid_l4-8c")
    e.vm("other", hosts[1], ["san"])
    e.vm("w", hosts[2], ["san"], vgpu="grid_l4-8q")
    out = simulate_cluster_notes(e.inv, "c")
    assert out.notes == ["memory not checked on h1, h3: the host's memory size is unknown"]
    (p,) = out.simulation.failures[0].unplaced
    assert p.reason == (
        "not enough memory for its 16804 MB (reservation and overhead) on the eligible "
        "hosts h2 (free h2: 13588 MB); no GPU capacity left for grid_l4-8c on NVIDIA L4 "
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


def test_five_hosts_with_one_reason_are_named_four_and_counted() -> None:
    e = Estate()
    e.cluster("c")
    hosts = [e.host(f"h{i}", "c") for i in range(1, 7)]
    for h in hosts:
        e.gpu(h)
    for h in hosts[1:]:
        h.connection_state = "disconnected"
    e.datastore("san", hosts)
    e.vm("v", hosts[0], ["san"], vgpu="grid_l4-8q")
    (p,) = simulate_cluster(e.inv, "c").failures[0].unplaced
    assert p.reason == (
        "no surviving host can take it "
        "(h2, h3, h4, h5, 1 more: not connected or in maintenance mode)"
    )
