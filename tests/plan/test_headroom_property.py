"""Headroom under N+1 against brute force on small random clusters.

For each row (GPU model and profile, or passthrough GPU) the new VMs are placed one
after another (gpuaudit.plan.headroom.placements). The brute force then writes the first
n of them into a copy of the inventory as ordinary powered-on VMs (listed on the GPU they
run on, vCenter's remaining capacity of their profile one less per vGPU), for n = 0, 1,
2, ..., and runs the failure simulation on it (simulate_cluster, as a scan does): the
headroom under N+1 must be the largest n before the first n whose simulation no longer
tolerates one host failure, and the headroom now the number of VMs placed. Every placed
VM must also be valid where it was put (the simulation's own reference checks, in
tests/simulation/test_failures_property.py, see the VM restart where it runs when its host is not
the one lost).
"""

from __future__ import annotations

import copy
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuaudit.inventory import Inventory, ProfileCapacity, Vm
from gpuaudit.model.facts import Facts
from gpuaudit.plan.headroom import REQUIRED_FAILURES, headroom, placements, rows, template_memory
from gpuaudit.simulation.failures import ClusterModel, simulate_cluster
from tests.simulation.test_failures_property import clusters


def examples(n: int) -> int:
    """``n`` examples, or fewer during a mutation run (scripts/mutation sets
    GPUAUDIT_MUTATION_EXAMPLES): each example runs the failure simulation many times,
    and a mutant is tested against every example. Fewer examples can only let more
    mutants survive, so a score measured so is, if anything, too low."""
    cap = os.environ.get("GPUAUDIT_MUTATION_EXAMPLES")
    return min(n, int(cap)) if cap else n


def with_new(inv: Inventory, new: list[tuple[Vm, tuple[str, ...]]]) -> Inventory:
    """The inventory with the new VMs as the collector would read them."""
    out = copy.deepcopy(inv)
    hosts = {h.name: h for h in out.hosts}
    for vm, seats in new:
        vm = copy.deepcopy(vm)
        vm.cluster = "c"
        vm.memory_reservation_mb = vm.memory_mb
        out.vms.append(vm)
        host = hosts[vm.host or ""]
        for att, pci in zip(vm.gpus, seats, strict=True):
            gpu = next(g for g in host.gpus if g.pci_id == pci)
            if att.kind == "vgpu":
                gpu.vms.append(vm.name)
                for p in host.vgpu_profiles:
                    if p.name.lower() == att.profile and p.capacity is not None:
                        p.capacity.remaining -= 1
    return out


def brute_force(inv: Inventory, new: list[tuple[Vm, tuple[str, ...]]]) -> int:
    """The largest n before the first n whose simulation loses N+1."""
    for n in range(len(new) + 1):
        sim = simulate_cluster(with_new(inv, new[:n]), "c")
        if sim.tolerates < REQUIRED_FAILURES:
            return max(n - 1, 0)
    return len(new)


@st.composite
def with_capacity(draw: st.DrawFn, dense: bool = False, light: bool = False) -> Inventory:
    """A random cluster where vCenter answered QueryCapacity for some profiles; ``light``
    ones have HA on and about half their VMs powered off, so that most tolerate N+1."""
    inv = draw(clusters(dense=dense))
    if light:
        inv.clusters[0].ha_enabled = True
        for vm in inv.vms:
            if draw(st.booleans()):
                vm.power_state = "poweredOff"
    for host in inv.hosts:
        for p in host.vgpu_profiles:
            if draw(st.integers(0, 3)) == 0:
                left = draw(st.integers(-1, 4))
                p.capacity = ProfileCapacity(
                    max=8, consumed=0, remaining=left, unused_reservation=0
                )
    return inv


def check(inv: Inventory) -> None:
    facts = Facts(inv)
    result = headroom(facts, inv.clusters[0])
    base = ClusterModel(facts, "c", max_failures=REQUIRED_FAILURES)
    found = {(r.gpu_model, r.profile): r for r in result.rows}
    assert len(found) == len(result.rows)
    for gpu_model, profile, demand in rows(base):
        row = found.pop((gpu_model, profile))
        memory = template_memory(facts, "c", profile)
        new = placements(base, demand, memory, gpu_model, profile)
        assert row.fits_now == len(new)
        new = new[:8]  # the brute force is one simulation per n
        expected = brute_force(inv, new)
        assert min(row.fits_nk, len(new)) == expected, (gpu_model, profile, row)
    assert not found


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(with_capacity())
def test_headroom_matches_brute_force(inv: Inventory) -> None:
    check(inv)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=list(HealthCheck))
@given(with_capacity(dense=True))
def test_headroom_matches_brute_force_on_dense_clusters(inv: Inventory) -> None:
    check(inv)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(with_capacity(dense=True, light=True))
def test_headroom_matches_brute_force_on_light_clusters(inv: Inventory) -> None:
    check(inv)
