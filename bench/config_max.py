"""The largest cluster vSphere 8 allows, for the failover simulation's scale figures.

96 hosts (the vSphere 8 maximum per cluster) with 8 GPUs each, two GPU kinds side by
side: two thirds of the hosts carry L4s in time-sliced vGPU mode (4q, 8q and 12q VMs,
equal-size mode), one third A100 80GB in MIG mode (1g.10gb, 2g.20gb and 3g.40gb
instances). DRS rules bind the placement: a required VM-Host rule keeps the MIG VMs of
one group on the first half of the A100 hosts, and anti-affinity rules keep pairs of
VMs apart. About half of each kind's capacity is in use, so a host failure displaces
about 20 VMs that must find room, and every restart is decided by the exact rules.
"""

from __future__ import annotations

from gpuaudit.inventory import Inventory, VmHostRule, VmVmRule
from tests.support.builders import Estate

HOSTS = 96
GPUS_PER_HOST = 8
L4_PROFILES = ("grid_l4-4q", "grid_l4-8q", "grid_l4-12q")
MIG_PROFILES = ("grid_a100d-1-10c", "grid_a100d-2-20c", "grid_a100d-3-40c")


def config_max_cluster(hosts: int = HOSTS, gpus: int = GPUS_PER_HOST) -> Inventory:
    """One cluster "max" of ``hosts`` hosts x ``gpus`` GPUs, MIG and vGPU mixed, with DRS rules."""
    e = Estate()
    cluster = e.cluster("max")
    built = []
    for i in range(hosts):
        mig = i % 3 == 2
        profiles = MIG_PROFILES if mig else L4_PROFILES
        host = e.host(f"esx{i:03d}", "max", profiles=profiles)
        host.memory_mb = 1024 * 1024
        for j in range(gpus):
            pci = f"0000:{0x18 + j:02x}:00.0"
            if mig:
                e.gpu(host, pci, model="a100", vgpu_mode="multiInstanceGpu")
            else:
                e.gpu(host, pci, model="l4", vgpu_mode="sameSize")
        built.append(host)
    e.datastore("san-max", built)
    count = 0
    pinned: list[str] = []
    apart: list[str] = []
    mig_hosts = [h for h in built if h.gpus[0].vgpu_mode == "multiInstanceGpu"]
    for h_index, host in enumerate(built):
        mig = host in mig_hosts
        for j, gpu in enumerate(host.gpus):
            if j % 2:  # half of the GPUs busy, half free
                continue
            if mig:
                # one 3g.40gb and one 2g.20gb: 5 of 7 compute slices in use
                placed = [MIG_PROFILES[2], MIG_PROFILES[1]]
            else:
                placed = [L4_PROFILES[(h_index + j) % 3]]
                placed *= {"grid_l4-4q": 4, "grid_l4-8q": 2, "grid_l4-12q": 1}[placed[0]]
            for profile in placed:
                priority = "high" if count % 5 == 0 else None
                vm = e.vm(
                    f"vm{count:05d}", host, ["san-max"], vgpu=profile, gpu=gpu, priority=priority
                )
                if mig and mig_hosts.index(host) < len(mig_hosts) // 2 and count % 2:
                    pinned.append(vm.name)
                if count % 7 == 0:
                    apart.append(vm.name)
                count += 1
    rack = [h.name for h in mig_hosts[: len(mig_hosts) // 2]]
    cluster.vm_host_rules.append(
        VmHostRule(
            "mig-rack-a",
            mandatory=True,
            vm_group="mig-rack-a-vms",
            host_group="mig-rack-a",
            vms=pinned,
            hosts=rack,
        )
    )
    for n in range(0, len(apart) - 1, 2):
        cluster.vm_vm_rules.append(VmVmRule(f"apart-{n // 2}", vms=apart[n : n + 2]))
    return e.inv
