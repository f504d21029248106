"""The config-maximum cluster of the simulation benchmark is what its docstring says."""

from __future__ import annotations

from collections import Counter

from bench.config_max import config_max_cluster
from gpuaudit.simulation.failures import simulate_cluster


def test_the_cluster_is_vsphere_8s_maximum_with_mig_and_vgpu() -> None:
    inv = config_max_cluster()
    assert len(inv.hosts) == 96  # vSphere 8: at most 96 hosts per cluster
    assert all(len(h.gpus) == 8 for h in inv.hosts)
    modes = Counter(g.vgpu_mode for h in inv.hosts for g in h.gpus)
    assert modes == {"sameSize": 64 * 8, "multiInstanceGpu": 32 * 8}
    (cluster,) = inv.clusters
    (pin,) = cluster.vm_host_rules
    assert pin.mandatory and pin.vms and len(pin.hosts) == 16
    assert cluster.vm_vm_rules and all(len(r.vms) == 2 for r in cluster.vm_vm_rules)
    profiles = Counter(a.profile for vm in inv.vms for a in vm.gpus)
    # half the GPUs busy: L4s with 4 x 4q, 2 x 8q or 1 x 12q; A100s with 3g.40gb + 2g.20gb
    assert profiles["grid_a100d-3-40c"] == profiles["grid_a100d-2-20c"] == 32 * 4
    l4_gpus = profiles["grid_l4-4q"] // 4 + profiles["grid_l4-8q"] // 2 + profiles["grid_l4-12q"]
    assert l4_gpus == 64 * 4


def test_a_small_one_honours_its_required_rule() -> None:
    inv = config_max_cluster(hosts=18)
    (cluster,) = inv.clusters
    (pin,) = cluster.vm_host_rules
    sim = simulate_cluster(inv, cluster.name)
    moved = [p for f in sim.failures for p in f.placed if p.vm in pin.vms]
    assert moved, "a failure displaces a pinned VM"
    assert all(p.to_host in pin.hosts for p in moved)
