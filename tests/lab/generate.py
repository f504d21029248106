"""Generate large scenarios, for scale tests of the collector and the lab.

``generate(clusters, hosts_per_cluster, gpus_per_host, vms)`` returns a scenario
dict (docs/scenario-format.md) that ``normalise()`` accepts. The estate cycles
through three cluster designs so that every GPU attachment kind appears:

- vGPU clusters: L4 GPUs in sharedDirect mode, each GPU running one grid_l4
  profile (equal-size mode), with ``on`` placements that fit its frame buffer;
- passthrough clusters: L40S GPUs in fixed DirectPath I/O, one VM per GPU;
- Dynamic DirectPath clusters: A100 80GB GPUs assigned at power-on;
- MIG clusters (``designs`` with ``"mig"``): A100 80GB GPUs in multiInstanceGpu
  mode, each running one grid_a100d-*c MIG-backed vGPU profile.

``generate_max(fraction)`` gives the shape of the vSphere 8 configuration
maximums (or a fraction of it): 2,500 hosts in clusters of 96 (the last one
smaller), 4 GPUs per host in all four designs, 45,000 registered VMs of which
about 40,000 powered on and 40% with a GPU, and per cluster a required VM-Host
DRS rule and a VM-VM anti-affinity rule.

Every cluster has vSphere HA on, two VMFS datastores shared by all its hosts
(Fibre Channel in even clusters, hardware iSCSI in odd ones) with two paths per
host, and a vMotion VMkernel adapter on every host. VMs are spread round-robin
over the hosts; ``gpu_vm_share`` of them get a GPU while one is free, and the
rest of the GPU VMs wait powered off. The same arguments give the same scenario.

    python -m tests.lab.generate --clusters 64 --hosts 16 --gpus 4 --vms 10240 -o big.yaml
    python -m tests.lab.generate --max 1 -o max.yaml
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path
from typing import Any

import yaml

L4, L40S, A100_80 = 0x27B8, 0x26B9, 0x20B5
# Equal-size profiles used on the vGPU clusters' GPUs, with how many fit one L4.
L4_PROFILES = {"grid_l4-2q": 12, "grid_l4-4q": 6, "grid_l4-8q": 3, "grid_l4-24q": 1}
# MIG-backed profiles on an A100 80GB, with how many fit one GPU (7 slices).
MIG_PROFILES = {
    "grid_a100d-1-10c": 7,
    "grid_a100d-2-20c": 3,
    "grid_a100d-3-40c": 2,
    "grid_a100d-7-80c": 1,
}
DESIGNS = ("vgpu", "passthrough", "dynamic")
MAX_DESIGNS = ("vgpu", "passthrough", "dynamic", "mig")
# vSphere 8 configuration maximums.
MAX_HOSTS, MAX_HOSTS_PER_CLUSTER, MAX_REGISTERED_VMS, MAX_POWERED_ON_VMS = 2500, 96, 45000, 40000
MAX_GPUS_PER_HOST = 4
# Of the registered VMs, the share left powered off at random; with the GPU VMs
# that wait for a free GPU, about 40,000 of the 45,000 are powered on.
MAX_POWERED_OFF_SHARE = 0.028
PRIORITIES = ("high", "highest", "low", "disabled")


def _pci_id(index: int) -> str:
    """PCI addresses of GPUs: 0000:17:00.0, 0000:3b:00.0, 0000:65:00.0, ..."""
    buses = (0x17, 0x3B, 0x65, 0x86, 0xAF, 0xD8, 0x31, 0x4B)
    bus = buses[index % len(buses)] + index // len(buses)
    return f"0000:{bus:02x}:00.0"


def _ip(prefix: int, n: int) -> str:
    return f"10.{prefix}.{n // 250}.{n % 250 + 1}"


def _telemetry(rng: random.Random, samples: int) -> dict[str, list[int]]:
    """Counter series around a random level: utilisation, memory, temperature, power."""
    level = rng.randint(0, 90)
    util = [min(100, max(0, level + rng.randint(-8, 8))) for _ in range(samples)]
    return {
        "utilization": util,
        "memory_used_mb": [2000 + 200 * u for u in util],
        "temperature_c": [40 + u // 2 for u in util],
        "power_w": [20 + u for u in util],
    }


def generate(
    clusters: int,
    hosts_per_cluster: int,
    gpus_per_host: int,
    vms: int,
    gpu_vm_share: float = 0.4,
    seed: int = 0,
    telemetry_samples: int = 0,
    *,
    designs: tuple[str, ...] = DESIGNS,
    total_hosts: int | None = None,
    powered_off_share: float = 0.05,
    drs_rules: bool = False,
) -> dict[str, Any]:
    """A scenario with the given numbers of clusters, hosts, GPUs per host and VMs.

    With ``telemetry_samples``, every GPU of the vGPU clusters gets counter series of
    that many samples (the host driver sees only those; passthrough GPUs report none).
    ``total_hosts`` caps the hosts: the clusters fill up in order, the last one
    smaller. ``drs_rules`` gives each cluster of two hosts or more a required VM-Host
    rule and a VM-VM anti-affinity rule.
    """
    if clusters < 1 or hosts_per_cluster < 1 or gpus_per_host < 0 or vms < 0:
        raise ValueError("clusters and hosts must be at least 1; GPUs and VMs at least 0")
    if not 0.0 <= gpu_vm_share <= 1.0:
        raise ValueError("gpu_vm_share is a fraction between 0 and 1")
    rng = random.Random(seed)
    profiles = list(L4_PROFILES)
    cluster_list: list[dict[str, Any]] = []
    datastores: list[dict[str, Any]] = []
    hosts: list[tuple[str, str, list[dict[str, Any]]]] = []  # (name, design, gpus)
    host_number = 0
    for c in range(clusters):
        design = designs[c % len(designs)]
        fc = c % 2 == 0
        cluster_hosts = []
        size = hosts_per_cluster
        if total_hosts is not None:
            size = min(size, total_hosts - c * hosts_per_cluster)
            if size < 1:
                raise ValueError("total_hosts leaves a cluster without a host")
        for h in range(size):
            name = f"esx-{c:03d}-{h:02d}.gen.local"
            gpus = []
            for g in range(gpus_per_host):
                gpu: dict[str, Any] = {"pci_id": _pci_id(g)}
                if design == "vgpu":
                    gpu.update(device_id=L4, vgpu_mode="sameSize")
                    if telemetry_samples:
                        gpu["telemetry"] = _telemetry(rng, telemetry_samples)
                elif design == "mig":
                    gpu.update(device_id=A100_80, vgpu_mode="multiInstanceGpu")
                elif design == "passthrough":
                    gpu.update(device_id=L40S, passthrough={"enabled": True})
                else:
                    gpu.update(device_id=A100_80, passthrough={"enabled": True})
                gpus.append(gpu)
            adapters: list[dict[str, Any]]
            if fc:
                adapters = [
                    {"device": "vmhba2", "type": "fc"},
                    {"device": "vmhba3", "type": "fc"},
                ]
            else:
                adapters = [
                    {"device": "vmhba4", "type": "iscsi", "software": False},
                    {"device": "vmhba5", "type": "iscsi", "software": False},
                ]
            host: dict[str, Any] = {
                "name": name,
                "gpus": gpus,
                "adapters": adapters,
                "vmotion": [{"device": "vmk1", "ip": _ip(100 + c // 250, host_number)}],
            }
            if design == "vgpu":
                host["graphics"] = {"default_type": "sharedDirect"}
                host["vgpu_profiles"] = [{"name": p} for p in profiles]
            elif design == "mig":
                host["graphics"] = {"default_type": "sharedDirect"}
                host["vgpu_profiles"] = [{"name": p} for p in MIG_PROFILES]
            cluster_hosts.append(host)
            hosts.append((name, design, gpus))
            host_number += 1
        policy = ("percent", "slots", "dedicated-hosts")[c % 3]
        admission: dict[str, Any] = {"enabled": True, "policy": policy}
        if policy == "dedicated-hosts":
            admission["failover_hosts"] = [cluster_hosts[-1]["name"]]
        cluster_list.append(
            {
                "name": f"cl-{c:03d}-{design}",
                "ha": {"enabled": True, "admission_control": admission},
                "drs": {"enabled": True},
                "hosts": cluster_hosts,
            }
        )
        paths = ["vmhba2", "vmhba3"] if fc else ["vmhba4", "vmhba5"]
        for d in (1, 2):
            datastores.append(
                {
                    "name": f"{'fc' if fc else 'iscsi'}-{c:03d}-{d}",
                    "capacity_gb": 16384,
                    "free_gb": 8192 + rng.randrange(4096),
                    "mounts": [{"host": h["name"], "paths": paths} for h in cluster_hosts],
                }
            )

    # Per host: which GPU takes which profile, and how much room is left on it.
    room: dict[str, list[int]] = {}
    profile_of: dict[str, list[str]] = {}
    for name, design, gpus in hosts:
        if design == "vgpu":
            profile_of[name] = [profiles[(i + len(name)) % len(profiles)] for i in range(len(gpus))]
            room[name] = [L4_PROFILES[p] for p in profile_of[name]]
        elif design == "mig":
            mig = list(MIG_PROFILES)
            profile_of[name] = [mig[(i + len(name)) % len(mig)] for i in range(len(gpus))]
            room[name] = [MIG_PROFILES[p] for p in profile_of[name]]
        else:
            room[name] = [1] * len(gpus)
    vm_list = []
    gpu_vms = round(vms * gpu_vm_share)
    gpu_slots = set(rng.sample(range(vms), gpu_vms)) if vms else set()
    for i in range(vms):
        name, design, gpus = hosts[i % len(hosts)]
        c = (i % len(hosts)) // hosts_per_cluster
        vm: dict[str, Any] = {
            "name": f"vm-{i:05d}",
            "host": name,
            "memory_mb": rng.choice((8192, 16384, 32768)),
            "datastores": [datastores[2 * c + i % 2]["name"]],
        }
        if rng.random() < powered_off_share:
            vm["power"] = "poweredOff"
        if rng.random() < 0.1:
            vm["restart_priority"] = rng.choice(PRIORITIES)
        if i in gpu_slots and gpus:
            vm["memory_reservation_mb"] = vm["memory_mb"]
            free = next((g for g, left in enumerate(room[name]) if left > 0), None)
            powered_on = vm.get("power", "poweredOn") == "poweredOn"
            if free is None or not powered_on:
                vm["power"] = "poweredOff"
                free = 0
            elif powered_on:
                room[name][free] -= 1
            pci_id = gpus[free]["pci_id"]
            if design in ("vgpu", "mig"):
                vm["gpus"] = [{"vgpu": profile_of[name][free], "migrate_supported": True}]
                if vm.get("power", "poweredOn") == "poweredOn":
                    vm["gpus"][0]["on"] = pci_id
            elif design == "passthrough":
                vm["memory_locked_to_max"] = True
                vm["gpus"] = [{"passthrough": pci_id}]
            else:
                vm["memory_locked_to_max"] = True
                dynamic: dict[str, Any] = {
                    "allowed": [{"vendor_id": 0x10DE, "device_id": A100_80}],
                    "label": "a100-80",
                }
                if vm.get("power", "poweredOn") == "poweredOn":
                    dynamic["assigned"] = pci_id
                vm["gpus"] = [{"dynamic": dynamic}]
        vm_list.append(vm)
    if drs_rules:
        _add_drs_rules(cluster_list, vm_list)

    return {
        "description": (
            f"Generated: {clusters} clusters x {hosts_per_cluster} hosts x {gpus_per_host} "
            f"GPUs, {vms} VMs ({gpu_vm_share:.0%} with a GPU), seed {seed}."
        ),
        "vcenter": {"settings": {"vgpu.hotmigrate.enabled": True}},
        "datacenters": [
            {
                "name": "dc-generated",
                "clusters": cluster_list,
                "datastores": datastores,
                "vms": vm_list,
            }
        ],
    }


def _add_drs_rules(cluster_list: list[dict[str, Any]], vm_list: list[dict[str, Any]]) -> None:
    """Per cluster: its first half of hosts as a host group that the powered-on VMs
    running there must stay on (required), and two VMs on different hosts kept apart."""
    on_host: dict[str, list[str]] = {}
    for vm in vm_list:
        if vm.get("power", "poweredOn") == "poweredOn":
            on_host.setdefault(vm["host"], []).append(vm["name"])
    for cluster in cluster_list:
        names = [h["name"] for h in cluster["hosts"]]
        if len(names) < 2:
            continue
        pinned_hosts = names[: len(names) // 2]
        pinned_vms = [vm for h in pinned_hosts for vm in on_host.get(h, [])[:1]]
        apart = [on_host[h][-1] for h in names[-2:] if on_host.get(h)]
        short = cluster["name"]
        cluster["groups"] = [{"name": f"{short}-pinned-hosts", "hosts": pinned_hosts}]
        cluster["rules"] = []
        if pinned_vms:
            cluster["groups"].append({"name": f"{short}-pinned-vms", "vms": pinned_vms})
            cluster["rules"].append(
                {
                    "name": f"{short}-pinned",
                    "kind": "vm-host",
                    "mandatory": True,
                    "vm_group": f"{short}-pinned-vms",
                    "affine_host_group": f"{short}-pinned-hosts",
                }
            )
        if len(apart) == 2:
            cluster["rules"].append(
                {"name": f"{short}-apart", "kind": "anti-affinity", "vms": apart}
            )


def generate_max(fraction: float = 1.0, seed: int = 0) -> dict[str, Any]:
    """The vSphere 8 configuration maximums' estate, or ``fraction`` of it."""
    if not 0.0 < fraction <= 1.0:
        raise ValueError("fraction is between 0 (excluded) and 1")
    hosts = max(1, round(MAX_HOSTS * fraction))
    return generate(
        math.ceil(hosts / MAX_HOSTS_PER_CLUSTER),
        MAX_HOSTS_PER_CLUSTER,
        MAX_GPUS_PER_HOST,
        round(MAX_REGISTERED_VMS * fraction),
        seed=seed,
        designs=MAX_DESIGNS,
        total_hosts=hosts,
        powered_off_share=MAX_POWERED_OFF_SHARE,
        drs_rules=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.lab.generate", description="Write a large generated scenario."
    )
    parser.add_argument("--clusters", type=int, default=64)
    parser.add_argument("--hosts", type=int, default=16, help="hosts per cluster")
    parser.add_argument("--gpus", type=int, default=4, help="GPUs per host")
    parser.add_argument("--vms", type=int, default=10240)
    parser.add_argument("--gpu-vm-share", type=float, default=0.4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--telemetry", type=int, default=0, help="GPU counter samples per vGPU GPU (0: none)"
    )
    parser.add_argument(
        "--max",
        type=float,
        metavar="FRACTION",
        help="the configuration maximums' estate, or this fraction of it (1 for all); "
        "the shape options above are then ignored",
    )
    parser.add_argument("-o", "--output", type=Path, help="YAML file to write (default: stdout)")
    args = parser.parse_args(argv)
    try:
        if args.max is not None:
            scenario = generate_max(args.max, args.seed)
        else:
            scenario = generate(
                args.clusters,
                args.hosts,
                args.gpus,
                args.vms,
                args.gpu_vm_share,
                args.seed,
                args.telemetry,
            )
    except ValueError as exc:
        parser.error(str(exc))
    header = f"# {scenario['description']}\n# Written by python -m tests.lab.generate.\n"
    text = header + yaml.safe_dump(scenario, sort_keys=False, allow_unicode=True, width=100)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
