"""What the collector must find in a lab scenario, derived from the scenario file alone.

This is the test oracle for the collector: it reads the normalised scenario
(tests/lab/scenario.py) and builds the Inventory that a correct collector returns
for the lab serving it. It never calls the collector, so a collector bug cannot
hide in its own expectations.

Values that only the server chooses (morefs, device keys, labels, the instance
UUID) are left empty here; ``comparable`` blanks them on both sides.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import uuid
from typing import Any

from gpuaudit.inventory import (
    AdmissionControl,
    Cluster,
    ConfigIssue,
    CounterStats,
    Datastore,
    DatastoreMount,
    DeviceGroupComponent,
    Gap,
    Gpu,
    GpuAttachment,
    GpuTelemetry,
    Host,
    HostTelemetry,
    Inventory,
    Licence,
    Licensing,
    LunPath,
    ProfileCapacity,
    StorageAdapter,
    StunEstimate,
    Telemetry,
    VCenter,
    VendorDeviceGroup,
    VgpuProfile,
    Vm,
    VmDeviceGroup,
    VmHostRule,
    VmotionNic,
    VmVmRule,
)

_LOCAL_KINDS = {"sas", "block", "pscsi", "pcie"}

# The GPUs gpuaudit names, stated here rather than read from gpuaudit.knowledge.catalog so that a
# catalogue mistake cannot hide in its own expectation. Device ids (vendor 0x10de) and
# their names as the PCI ID Repository's pci.ids lists them (https://pci-ids.ucw.cz/);
# frame buffer of one GPU in GB from NVIDIA's "Virtual GPU Types for Supported GPUs"
# (the largest vGPU type of each board: M10-8Q, T4-16Q, A16-16Q, H100L-94C, ...).
_NVIDIA = 0x10DE
_GPU_MODELS: dict[int, tuple[str, int]] = {
    0x13BD: ("NVIDIA M10", 8),  # GM107GL [Tesla M10], four GPUs per board
    0x13F2: ("NVIDIA M60", 8),  # GM204GL [Tesla M60], two GPUs per board
    0x1EB8: ("NVIDIA T4", 16),  # TU104GL [Tesla T4]
    0x25B6: ("NVIDIA A16", 16),  # GA107GL [A2 / A16]: the subsystem id tells the A2
    0x2236: ("NVIDIA A10", 24),  # GA102GL [A10]
    0x27B8: ("NVIDIA L4", 24),  # AD104GL [L4]
    0x26B5: ("NVIDIA L40", 48),  # AD102GL [L40]
    0x26B9: ("NVIDIA L40S", 48),  # AD102GL [L40S]
    0x26B1: ("NVIDIA RTX 6000 Ada Generation", 48),  # AD102GL [RTX 6000 Ada Generation]
    0x20F1: ("NVIDIA A100 PCIe 40GB", 40),  # GA100 [A100 PCIe 40GB]
    0x20B1: ("NVIDIA A100 PCIe 40GB", 40),  # GA100 [A100 PCIe 40GB]
    0x20B5: ("NVIDIA A100 PCIe 80GB", 80),  # GA100 [A100 PCIe 80GB]
    0x20B0: ("NVIDIA A100 SXM4 40GB", 40),  # GA100 [A100 SXM4 40GB]
    0x20B2: ("NVIDIA A100 SXM4 80GB", 80),  # GA100 [A100 SXM4 80GB]
    0x2331: ("NVIDIA H100 PCIe", 80),  # GH100 [H100 PCIe]
    0x2330: ("NVIDIA H100 SXM5", 80),  # GH100 [H100 SXM5 80GB]
    0x2321: ("NVIDIA H100 NVL", 94),  # GH100 [H100L 94GB]
    0x2235: ("NVIDIA A40", 48),  # GA102GL [A40]
    0x20B7: ("NVIDIA A30", 24),  # GA100GL [A30 PCIe]
    0x2335: ("NVIDIA H200 SXM", 141),  # GH100 [H200 SXM 141GB]
    0x233B: ("NVIDIA H200 NVL", 141),  # GH100 [H200 NVL]
    0x13F3: ("NVIDIA M6", 8),  # GM204GL [Tesla M6]
    0x1BB3: ("NVIDIA P4", 8),  # GP104GL [Tesla P4]
    0x1BB4: ("NVIDIA P6", 16),  # GP104GL [Tesla P6]
    0x1B38: ("NVIDIA P40", 24),  # GP102GL [Tesla P40]
    0x15F7: ("NVIDIA P100 PCIe 12GB", 12),  # GP100GL [Tesla P100 PCIe 12GB]
    0x15F8: ("NVIDIA P100 PCIe 16GB", 16),  # GP100GL [Tesla P100 PCIe 16GB]
    0x15F9: ("NVIDIA P100 SXM2 16GB", 16),  # GP100GL [Tesla P100 SXM2 16GB]
    0x1DB1: ("NVIDIA V100 SXM2 16GB", 16),  # GV100GL [Tesla V100 SXM2 16GB]
    0x1DF5: ("NVIDIA V100 SXM2 16GB", 16),  # GV100GL [Tesla V100 SXM2 16GB]
    0x1DB3: ("NVIDIA V100 FHHL 16GB", 16),  # GV100GL [Tesla V100 FHHL 16GB]
    0x1DB4: ("NVIDIA V100 PCIe 16GB", 16),  # GV100GL [Tesla V100 PCIe 16GB]
    0x1DB5: ("NVIDIA V100 SXM2 32GB", 32),  # GV100GL [Tesla V100 SXM2 32GB]
    0x1DB6: ("NVIDIA V100 PCIe 32GB", 32),  # GV100GL [Tesla V100 PCIe 32GB]
    0x1DF6: ("NVIDIA V100S PCIe 32GB", 32),  # GV100GL [Tesla V100S PCIe 32GB]
    0x1E36: ("NVIDIA Quadro RTX 6000", 24),  # TU102GL [Quadro RTX 6000]
    0x2230: ("NVIDIA RTX A6000", 48),  # GA102GL [RTX A6000]
    0x2231: ("NVIDIA RTX A5000", 24),  # GA102GL [RTX A5000]
    0x2233: ("NVIDIA RTX A5500", 24),  # GA102GL [RTX A5500]
    0x27B6: ("NVIDIA L2", 24),  # AD104GL [L2]
    0x26B7: ("NVIDIA L20", 48),  # AD102GL [L20]
    0x26BA: ("NVIDIA L20", 48),  # AD102GL [L20]
    0x26B2: ("NVIDIA RTX 5000 Ada Generation", 32),  # AD102GL [RTX 5000 Ada Generation]
    0x26B3: ("NVIDIA RTX 5880 Ada Generation", 48),  # AD102GL [RTX 5880 Ada Generation]
    0x2337: ("NVIDIA H100 SXM5 64GB", 64),  # GH100 [H100 SXM5 64GB]
    0x2339: ("NVIDIA H100 SXM5 94GB", 94),  # GH100 [H100 SXM5 94GB]
    0x2322: ("NVIDIA H800 PCIe", 80),  # GH100 [H800 PCIe]
    0x2324: ("NVIDIA H800 SXM5", 80),  # GH100 [H800]
    0x233A: ("NVIDIA H800 NVL", 94),  # GH100 [H800L 94GB]
    0x2329: ("NVIDIA H20", 96),  # GH100 [H20]
    0x232C: ("NVIDIA H20 HBM3e", 141),  # GH100 [H20 HBM3e]
    # GB202GL [RTX PRO 6000 Blackwell Server Edition]; 96 GB from NVIDIA's product page
    0x2BB5: ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 96),
    0x2C3A: ("NVIDIA RTX PRO 4500 Blackwell Server Edition", 32),  # GB203GL [...]
    0x2901: ("NVIDIA B200", 180),  # GB100 [B200]; NVIDIA's HGX B200 180GB
}
# pci.ids: 1e30 and 1e78 "TU102GL [Quadro RTX 6000/8000]", told apart by subsystem
# ("10de 12ba  Quadro RTX 6000", "10de 129e  Quadro RTX 8000" under 1e30; "10de 13d9
# Quadro RTX 6000", "10de 13d8  Quadro RTX 8000" under 1e78).
_BY_SUBSYSTEM: dict[tuple[int, int, int], tuple[str, int]] = {
    (0x1E30, 0x10DE, 0x12BA): ("NVIDIA Quadro RTX 6000", 24),
    (0x1E30, 0x10DE, 0x129E): ("NVIDIA Quadro RTX 8000", 48),
    (0x1E78, 0x10DE, 0x13D9): ("NVIDIA Quadro RTX 6000", 24),
    (0x1E78, 0x10DE, 0x13D8): ("NVIDIA Quadro RTX 8000", 48),
}
# pci.ids: "A16 - 25B6 10DE 14A9 / A2 - 25B6 10DE 157E".
_A16_SUBSYSTEM = (0x25B6, 0x10DE, 0x14A9)
_A2_SUBSYSTEM = (0x25B6, 0x10DE, 0x157E)
_A2 = ("NVIDIA A2", 16)


def _u16(value: int) -> int:
    """The vSphere API returns PCI ids as signed 16-bit numbers."""
    return value & 0xFFFF


def _names_the_a2_alone(device_name: str) -> bool:
    return bool(re.search(r"\bA2\b", device_name)) and not re.search(r"\bA16\b", device_name)


def _known_gpu(
    vendor: int, device: int, device_name: str, sub_vendor: int, sub_device: int
) -> tuple[str, int] | None:
    """(display name, frame buffer in MB) of a GPU gpuaudit knows, else None."""
    if vendor == _NVIDIA and (device, sub_vendor, sub_device) in _BY_SUBSYSTEM:
        name, gigabytes = _BY_SUBSYSTEM[(device, sub_vendor, sub_device)]
        return name, gigabytes * 1024
    if vendor != _NVIDIA or device not in _GPU_MODELS:
        return None
    name, gigabytes = _GPU_MODELS[device]
    board = (device, sub_vendor, sub_device)
    # Without a subsystem id to go by, only a name that names the A2 alone says A2.
    unknown_board = device == 0x25B6 and board not in (_A16_SUBSYSTEM, _A2_SUBSYSTEM)
    if board == _A2_SUBSYSTEM or (unknown_board and _names_the_a2_alone(device_name)):
        name, gigabytes = _A2
    return name, gigabytes * 1024


# How the lab numbers the GPU counters it serves (docs/scenario-format.md): from
# vcenter.gpu_counter_key, in the order of vcenter.gpu_counters, each name with its rollups.
_ROLLUPS = {
    "utilization": ("none", "average", "maximum", "minimum"),
    "mem.used": ("none", "average", "maximum", "minimum"),
    "mem.usage": ("none", "average", "maximum", "minimum"),
    "temperature": ("average",),
    "power.used": ("average",),
}
_GPU_COUNTER_LEVEL = 4
# GpuTelemetry field -> (counter name, the scenario series it is served from).
_FIELDS = {
    "utilization_percent": ("utilization", "utilization"),
    "memory_used_mb": ("mem.used", "memory_used_mb"),
    "memory_usage_percent": ("mem.usage", "memory_used_mb"),
    "temperature_c": ("temperature", "temperature_c"),
    "power_w": ("power.used", "power_w"),
}
WINDOW_HOURS = 24
INTERVAL = 300  # the past-day interval, which a 24-hour window reads
# A standalone ESXi host keeps the last hour of 20-second samples, and no more.
ESXI_WINDOW_HOURS = 1
REALTIME_INTERVAL = 20
TREND_POINTS = 48


def expected_inventory(scenario: dict[str, Any]) -> Inventory:
    """The inventory a correct collector builds for ``scenario`` (normalised)."""
    vc = scenario.get("vcenter", {})
    esxi = vc.get("kind") == "esxi"
    settings = vc.get("settings", {})
    hotmigrate = settings.get("vgpu.hotmigrate.enabled")
    inv = Inventory(
        vcenter=VCenter(
            name=f"{vc.get('name', '')} {vc.get('version', '')} build-{vc.get('build', '')}",
            product=str(vc.get("name", "")),
            version=str(vc.get("version", "")),
            build=str(vc.get("build", "")),
            api_version=str(vc.get("api_version", "")),
            api_type="HostAgent" if esxi else "VirtualCenter",
            # A missing key means the feature is off (QueryOptions raises InvalidName);
            # an ESXi host has no such setting at all.
            vgpu_hotmigrate_enabled=None if esxi else str(hotmigrate).strip().lower() == "true",
        )
    )
    for dc in scenario["datacenters"]:
        _add_datacenter(inv, dc)
    _add_vgpu_managers(inv, scenario)
    _add_telemetry(inv, scenario)
    api = _numbers(vc.get("api_version", ""))
    if not esxi and api >= (7, 0, 3):
        _add_config_target(
            inv, scenario, with_estimates=api >= (8, 0, 2), with_groups=api >= (8, 0, 0, 1)
        )
    if not esxi and api >= (9, 0):
        _add_capacity(inv, scenario)
    # ESXi's licence is its host's own: there is no vCenter licence.
    vcenter_licence = None if esxi else _licence(vc["licence"])
    inv.licensing = Licensing(collected=True, vcenter=vcenter_licence)
    return inv


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in str(version).split(".") if n.isdigit())


def _specs(scenario: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        h["name"]: h
        for dc in scenario["datacenters"]
        for h in [*(h for c in dc["clusters"] for h in c["hosts"]), *dc["standalone_hosts"]]
    }


def _add_config_target(
    inv: Inventory, scenario: dict[str, Any], with_estimates: bool, with_groups: bool
) -> None:
    """vCenter's description of the vGPU profiles: in each cluster running a powered-on
    vGPU VM, the connected 7.0.3+ GPU hosts of one ESXi build and GPU model all get what
    the scenario says of the profiles of the first of them by name, each for the profiles
    of its own name; and the stun time estimates where that host runs 8.0.2 or later.
    From API 8.0.0.1 also the vendor device groups the host asked offers; in a cluster
    running a powered-on VM that uses a device group, every such host is asked alone."""
    specs = _specs(scenario)
    linked = {vm.cluster for vm in inv.vms if vm.power_state == "poweredOn" and vm.device_groups}
    vgpu_clusters = linked | {
        vm.cluster
        for vm in inv.vms
        if vm.power_state == "poweredOn" and any(g.kind == "vgpu" for g in vm.gpus)
    }
    first: dict[tuple[str | None, str, str], str] = {}
    for host in sorted(inv.hosts, key=lambda h: h.name):
        if host.cluster not in vgpu_clusters or not host.connected or not host.gpus:
            continue
        if _numbers(host.version) < (7, 0, 3):
            continue
        models = ",".join(sorted({g.model for g in host.gpus}))
        if host.cluster in linked:
            models = host.name  # a host of its own
        asked = first.setdefault((host.cluster, host.build, models), host.name)
        if with_groups:
            host.device_groups = [_device_group(g) for g in specs[asked]["device_groups"]]
            host.device_groups_host = asked
        served = specs[asked].get("vgpu_profiles", [])
        described = {p["name"].lower(): p for p in served}
        for profile in host.vgpu_profiles:
            fact = described.get(profile.name.lower())
            if fact is not None:
                profile.frame_buffer_gib = fact["fb_gib"] or None
                profile.sharing = fact["sharing"]
                profile.profile_class = fact["class"]
                profile.device_vendor_id = fact["device_vendor_id"] or None
        host.vgpu_profile_info_host = asked if served else None
        if not with_estimates or _numbers(specs[asked]["version"]) < (8, 0, 2):
            continue
        host.stun_estimates = {
            p["name"]: [
                StunEstimate(**e)
                for e in sorted(p["stun_estimates"], key=lambda e: e["bandwidth_mbps"])
            ]
            for p in served
            if p.get("stun_estimates")
        }
        host.stun_estimates_host = asked if host.stun_estimates else None


def _device_group(spec: dict[str, Any]) -> VendorDeviceGroup:
    return VendorDeviceGroup(
        name=spec["name"],
        description=spec["description"],
        components=[
            DeviceGroupComponent(
                type=c["type"],
                vendor=c["vendor"],
                device=c["device"],
                configurable=c["configurable"],
                vgpu_profile=c["vgpu"] if c["type"] == "nvidiaVgpu" else None,
            )
            for c in spec["components"]
        ],
    )


def _add_capacity(inv: Inventory, scenario: dict[str, Any]) -> None:
    """vCenter's capacity (vSphere 9.0): each connected GPU host offering vGPU profiles is
    asked about each of them; a declared count is kept, an unknown answer (declared, or
    for a profile declaring nothing, NotSupported) is a gap naming its faults."""
    specs = _specs(scenario)
    for host in inv.hosts:
        if not host.connected or not host.gpus or not host.vgpu_profiles:
            continue
        declared = {p["name"]: p["capacity"] for p in specs[host.name]["vgpu_profiles"]}
        for profile in host.vgpu_profiles:
            answer = declared[profile.name]
            if "unknown" in answer:
                reason = ", ".join(sorted(set(answer["unknown"])))
                path = f"directPathProfileManager.QueryCapacity({profile.name})"
                inv.gaps.append(Gap(host.name, "HostSystem", path, reason))
            else:
                profile.capacity = ProfileCapacity(**answer)


def _query_metric_limit(settings: dict[str, Any]) -> int | None:
    """vCenter's limit on the metrics of one QueryPerf: the setting, else 256; <= 0 is none."""
    value = int(settings.get("config.vpxd.stats.maxQueryMetrics", 256))
    return value if value > 0 else None


def _queries(hosts: int, counters: int, limit: int | None) -> int:
    """QueryPerf calls for ``hosts``: as many hosts per call as ``limit`` metrics allow."""
    if hosts == 0:
        return 0
    per_call = hosts if limit is None else max(1, limit // counters)
    return -(-hosts // per_call)


def _add_telemetry(inv: Inventory, scenario: dict[str, Any]) -> None:
    vc = scenario["vcenter"]
    esxi = vc.get("kind") == "esxi"
    hours = ESXI_WINDOW_HOURS if esxi else WINDOW_HOURS
    interval = REALTIME_INTERVAL if esxi else INTERVAL
    names = list(vc["gpu_counters"])
    counters = {}
    key = vc["gpu_counter_key"]
    for name in names:
        for rollup in _ROLLUPS[name]:
            if rollup == "average":
                counters[f"gpu.{name}.average"] = key
            key += 1
    gpu_hosts = [h for h in inv.hosts if h.gpus and h.connected]
    limit = None if esxi else _query_metric_limit(vc.get("settings", {}))
    inv.telemetry = Telemetry(
        collected=True,
        window_hours=hours,
        interval_s=interval,
        statistics_level=vc["statistics_level"],
        counters=counters,
        counter_levels={name: _GPU_COUNTER_LEVEL for name in counters},
        missing_counters=[
            f"gpu.{name}.average" for name in _ROLLUPS if f"gpu.{name}.average" not in counters
        ],
        queries=_queries(len(gpu_hosts), len(counters), limit) if counters else 0,
        metrics_per_query=limit if counters and gpu_hosts else None,
    )
    # Real time (ESXi) always serves the counters; a historical interval from level 4.
    kept = esxi or vc["statistics_level"] >= _GPU_COUNTER_LEVEL
    specs = {
        h["name"]: h
        for dc in scenario["datacenters"]
        for h in [h for c in dc["clusters"] for h in c["hosts"]] + dc["standalone_hosts"]
    }
    slots = hours * 3600 // interval
    for host in gpu_hosts:
        spec = specs[host.name]
        by_pci = {g["pci_id"]: g for g in spec["gpus"]}
        # gpuN: the GPUs the host driver owns (Shared or Shared Direct, not passed through).
        ordered = sorted(
            g.pci_id
            for g in host.gpus
            if by_pci[g.pci_id]["graphics_type"] in ("shared", "sharedDirect")
            and not by_pci[g.pci_id]["passthrough"]["active"]
        )
        instances = []
        unmatched = []
        for gpu in host.gpus:
            series = by_pci[gpu.pci_id].get("telemetry")
            if series is None or not kept:
                continue
            fields = {
                field: _served(field, series[source], by_pci[gpu.pci_id]["memory_mb"], slots)
                for field, (name, source) in _FIELDS.items()
                if name in names and series.get(source)
            }
            fields = {f: v for f, v in fields.items() if v is not None}
            if not fields:
                continue
            naming = spec["gpu_counter_instances"]
            index = naming == "index"
            if index and gpu.pci_id not in ordered:
                continue  # the host driver numbers only the GPUs it owns
            instance = f"gpu{ordered.index(gpu.pci_id)}" if index else gpu.pci_id
            if naming == "decimal":
                instance = _decimal(gpu.pci_id)
            if naming == "opaque":  # nvgpuN over every GPU in PCI order: a form no one reads
                instance = f"nvgpu{sorted(g.pci_id for g in host.gpus).index(gpu.pci_id)}"
                instances.append(instance)
                unmatched.append(instance)
                continue
            instances.append(instance)
            gpu.telemetry = GpuTelemetry(instance=instance, matched_by="order" if index else "pci")
            for field, values in fields.items():
                setattr(gpu.telemetry, field, _stats(values))
            if "utilization_percent" in fields:
                util = fields["utilization_percent"]
                gpu.telemetry.trend = _trend([None] * (slots - len(util)) + list(util))
        host.telemetry = HostTelemetry(
            status="reported" if instances else "none",
            instances=sorted(instances),
            unmatched=sorted(unmatched),
        )


def _decimal(pci_id: str) -> str:
    """0000:3b:00.0 as ESXi writes it in esx.conf: 000:059:00.0, each number decimal."""
    segment, bus, rest = pci_id.split(":")
    slot, function = rest.split(".")
    return f"{int(segment, 16):03d}:{int(bus, 16):03d}:{int(slot, 16):02d}.{function}"


def _served(field: str, series: list[float], memory_mb: int, slots: int) -> list[float] | None:
    """The most recent samples of a series as the lab serves them, in gpuaudit's units."""
    recent = series[-slots:]
    if field == "utilization_percent":
        return [round(v * 100) / 100 for v in recent]
    if field == "memory_used_mb":
        return [round(v * 1024) / 1024 for v in recent]
    if field == "memory_usage_percent":
        if memory_mb <= 0:
            return None
        return [round(v * 10000 / memory_mb) / 100 for v in recent]
    return [float(round(v)) for v in recent]


def _stats(values: list[float]) -> CounterStats:
    return CounterStats(
        average=round(sum(values) / len(values), 2), peak=round(max(values), 2), samples=len(values)
    )


def _trend(values: list[float | None]) -> list[float | None]:
    size = max(1, -(-len(values) // TREND_POINTS))
    points: list[float | None] = []
    for i in range(0, len(values), size):
        bucket = [v for v in values[i : i + size] if v is not None]
        points.append(round(sum(bucket) / len(bucket), 1) if bucket else None)
    return points


def _licence(spec: dict[str, Any]) -> Licence:
    return Licence(
        edition_key=spec["edition"],
        name=spec["name"],
        key_tail=spec["key"].rsplit("-", 1)[-1],
        expires=spec["expires"],
        evaluation=spec["edition"] == "eval" or spec["key"] == "00000-00000-00000-00000-00000",
        features={f["key"]: f["name"] for f in spec["features"]},
    )


def _add_datacenter(inv: Inventory, dc: dict[str, Any]) -> None:
    dc_name = dc["name"]
    inv.datacenters.append(dc_name)
    vms_by_name = {vm["name"]: vm for vm in dc.get("vms", [])}
    host_cluster: dict[str, str | None] = {}
    host_specs: dict[str, dict[str, Any]] = {}
    for cl in dc.get("clusters", []):
        overrides = {
            vm["name"]: vm["restart_priority"]
            for vm in dc.get("vms", [])
            if vm.get("restart_priority")
            and any(h["name"] == vm["host"] for h in cl.get("hosts", []))
        }
        isolation = {
            vm["name"]: vm["isolation_response"]
            for vm in dc.get("vms", [])
            if vm.get("isolation_response") not in (None, "clusterIsolationResponse")
            and any(h["name"] == vm["host"] for h in cl.get("hosts", []))
        }
        inv.clusters.append(_cluster(cl, dc_name, overrides, isolation))
        for host in cl.get("hosts", []):
            host_cluster[host["name"]] = cl["name"]
            host_specs[host["name"]] = host
    for host in dc.get("standalone_hosts", []):
        host_cluster[host["name"]] = None
        host_specs[host["name"]] = host

    for name, spec in host_specs.items():
        inv.hosts.append(_host(spec, dc_name, host_cluster[name], vms_by_name))
        if spec.get("connection", "connected") == "connected":
            inv.gaps.extend(_vmotion_gaps(name, spec))
        else:
            inv.gaps.append(
                Gap(
                    object=name,
                    kind="HostSystem",
                    property="config",
                    reason=f"host is {spec['connection']}",
                )
            )

    for ds in dc.get("datastores", []):
        inv.datastores.append(_datastore(ds, dc_name, host_specs))

    for vm in dc.get("vms", []):
        inv.vms.append(_vm(vm, dc_name, host_cluster, host_specs))


# NVIDIA's vGPU manager (host driver) VIB names: NVD-VMware_ESXi_8.0.0_Driver,
# NVD-AIE_ESXi_8.0.0_Driver, NVIDIA-VMware_ESXi_6.7_Host_Driver (collect/software.py).
_MANAGER_VIB = re.compile(
    r"NVD-(VMware|AIE)_ESXi_[0-9.]+_Driver|NVIDIA-VMware_ESXi_[0-9.]+_Host_Driver"
)
_SOFTWARE_GAP = "vGPU manager version (HostImageConfigManager.fetchSoftwarePackages)"


def _add_vgpu_managers(inv: Inventory, scenario: dict[str, Any]) -> None:
    """The vGPU manager version of every connected host that offers vGPU profiles or runs a
    vGPU VM: read from the host's NVIDIA VIB when the role grants Host.Config.Image, else a
    gap that names the privilege; a host without the VIB gets a gap."""
    granted = "Host.Config.Image" in scenario.get("role", {}).get("privileges", [])
    specs: dict[str, dict[str, Any]] = {}
    vgpu_vm_hosts = set()
    for dc in scenario["datacenters"]:
        for cl in dc.get("clusters", []):
            specs.update((h["name"], h) for h in cl.get("hosts", []))
        specs.update((h["name"], h) for h in dc.get("standalone_hosts", []))
        for vm in dc.get("vms", []):
            if any("vgpu" in g for g in vm.get("gpus", [])):
                vgpu_vm_hosts.add(vm["host"])
    for host in inv.hosts:
        spec = specs[host.name]
        connected = spec.get("connection", "connected") == "connected"
        if not connected or not (spec.get("vgpu_profiles") or host.name in vgpu_vm_hosts):
            continue
        manager = spec.get("vgpu_manager")
        if not granted:
            inv.gaps.append(
                Gap(
                    object=host.name,
                    kind="HostSystem",
                    property=_SOFTWARE_GAP,
                    reason="needs the Host.Config.Image privilege, which the Read-only role lacks",
                    privilege="Host.Config.Image",
                )
            )
        elif manager and _MANAGER_VIB.fullmatch(manager["vib"]):
            host.vgpu_manager_version = manager["vib_version"].split("-")[0]
        else:
            # The lab serves four of ESXi's own VIBs, and NVIDIA's two with a vgpu_manager.
            packages = 4 + (2 if manager else 0)
            reason = (
                f"none of the host's {packages} software packages is an NVIDIA vGPU manager VIB"
            )
            inv.gaps.append(Gap(host.name, "HostSystem", _SOFTWARE_GAP, reason))


def _issues(spec: dict[str, Any]) -> list[ConfigIssue]:
    return [ConfigIssue(i["kind"], i["message"]) for i in spec.get("config_issues", [])]


def _cluster(
    cl: dict[str, Any], dc: str, overrides: dict[str, str], isolation: dict[str, str]
) -> Cluster:
    ha = cl.get("ha", {})
    ac = ha.get("admission_control", {})
    policy = ac.get("policy")
    admission = AdmissionControl(enabled=bool(ac.get("enabled", False)), policy=policy)
    if policy == "slots":
        admission.failover_level = ac.get("failover_level")
    elif policy == "percent":
        admission.cpu_percent = ac.get("cpu_percent")
        admission.memory_percent = ac.get("memory_percent")
    elif policy == "dedicated-hosts":
        admission.failover_hosts = list(ac.get("failover_hosts", []))
    drs = cl.get("drs", {})
    return Cluster(
        name=cl["name"],
        moref="",
        datacenter=dc,
        ha_enabled=bool(ha.get("enabled", False)),
        ha_host_monitoring=bool(ha.get("host_monitoring", True)),
        admission_control=admission,
        default_restart_priority=ha.get("default_restart_priority", "medium"),
        drs_enabled=bool(drs.get("enabled", False)),
        drs_automation=drs.get("automation"),
        restart_priority_overrides=overrides,
        drs_options={str(k): str(v) for k, v in drs.get("options", {}).items()},
        isolation_response=ha["isolation_response"],
        isolation_response_overrides=isolation,
        vmcp_enabled=ha["vmcp"]["enabled"],
        vmcp_apd=ha["vmcp"]["apd"],
        vmcp_pdl=ha["vmcp"]["pdl"],
        heartbeat_policy=ha["heartbeat"]["policy"],
        heartbeat_datastores=list(ha["heartbeat"]["datastores"]),
        config_issues=_issues(cl),
        evc_mode=cl.get("evc_mode"),
        vm_host_rules=_vm_host_rules(cl),
        vm_vm_rules=[
            VmVmRule(
                name=r["name"],
                enabled=r["enabled"],
                affinity=r["kind"] == "affinity",
                mandatory=r["mandatory"],
                vms=list(r["vms"]),
            )
            for r in cl.get("rules", [])
            if r["kind"] != "vm-host"
        ],
        ha_options=dict(ha.get("options", {})),
    )


def _vm_host_rules(cl: dict[str, Any]) -> list[VmHostRule]:
    groups = {g["name"]: g for g in cl.get("groups", [])}
    rules = []
    for r in cl.get("rules", []):
        if r["kind"] != "vm-host":
            continue
        host_group = r["affine_host_group"] or r["anti_affine_host_group"]
        rules.append(
            VmHostRule(
                name=r["name"],
                enabled=r["enabled"],
                mandatory=r["mandatory"],
                affine=bool(r["affine_host_group"]),
                vm_group=r["vm_group"],
                host_group=host_group,
                vms=list(groups[r["vm_group"]]["vms"]),
                hosts=list(groups[host_group]["hosts"]),
            )
        )
    return rules


def _host(
    spec: dict[str, Any], dc: str, cluster: str | None, vms: dict[str, dict[str, Any]]
) -> Host:
    host = Host(
        name=spec["name"],
        moref="",
        datacenter=dc,
        cluster=cluster,
        version=str(spec["version"]),
        build=str(spec["build"]),
        vendor=spec["vendor"],
        model=spec["model"],
        connection_state=spec["connection"],
        in_maintenance=bool(spec["maintenance"]),
        cpu_cores=spec["cpu_cores"],
        cpu_mhz=spec["cpu_mhz"],
        memory_mb=spec["memory_gb"] * 1024,
        licence=_licence(spec["licence"]),
        ha_state=spec.get("ha_state") or "",
        config_issues=_issues(spec),
        max_evc_mode=spec.get("max_evc_mode"),
    )
    if spec["connection"] != "connected":
        return host  # a disconnected host reports no config and no hardware
    host.bios_version = spec["bios"]["version"]
    host.bios_release_date = spec["bios"]["release_date"]
    graphics = spec.get("graphics", {})
    host.default_graphics_type = graphics.get("default_type")
    host.assignment_policy = graphics.get("assignment_policy")
    host.gpus = [_gpu(g, spec, vms) for g in spec.get("gpus", [])]
    for gpu, g in zip(host.gpus, spec.get("gpus", []), strict=True):
        if g["sriov"]["listed"]:
            gpu.virtual_functions = _virtual_functions(g["pci_id"], g["sriov"]["vfs"])
    host.vgpu_profiles = [
        VgpuProfile(name=p["name"], migrate_supported=p["migrate"], suspend_supported=p["suspend"])
        for p in spec.get("vgpu_profiles", [])
    ]
    host.adapters = [_adapter(a) for a in spec.get("adapters", [])]
    host.vmotion_nics = [_vmotion_nic(n) for n in spec.get("vmotion", [])]
    return host


def _vmotion_nic(n: dict[str, Any]) -> VmotionNic:
    """A standard adapter is on port group vMotion-vmkN of vSwitch-vmotion; a distributed
    one on a port of dvs-vmotion, with no port group. Speed 0 is a link that is down."""
    distributed = n.get("switch") == "distributed"
    return VmotionNic(
        device=n["device"],
        ip=n["ip"],
        portgroup="" if distributed else f"vMotion-{n['device']}",
        uplink_speed_mbps=n["uplink_speed_mbps"] or None,
        switch="dvs-vmotion" if distributed else "vSwitch-vmotion",
        distributed=distributed,
    )


def _vmotion_gaps(name: str, spec: dict[str, Any]) -> list[Gap]:
    """A vMotion adapter whose switch has no connected uplink is a gap."""
    gaps = []
    for n in spec.get("vmotion", []):
        if n["uplink_speed_mbps"]:
            continue
        distributed = n.get("switch") == "distributed"
        switch = "distributed switch dvs-vmotion" if distributed else "vSwitch-vmotion"
        gaps.append(
            Gap(
                object=name,
                kind="HostSystem",
                property="config.network.proxySwitch" if distributed else "config.network.vswitch",
                reason=f"{n['device']}: no connected uplink on {switch}",
            )
        )
    return gaps


def _gpu(g: dict[str, Any], host: dict[str, Any], vms: dict[str, dict[str, Any]]) -> Gpu:
    vendor = _u16(g["vendor_id"])
    device = _u16(g["device_id"])
    known = _known_gpu(
        vendor, device, g["device_name"], _u16(g["sub_vendor_id"]), _u16(g["sub_device_id"])
    )
    # An unknown GPU keeps the name its host gives it, else its raw ids.
    model = known[0] if known else g["device_name"] or f"{vendor:04x}:{device:04x}"
    graphics_type = g.get("graphics_type")
    in_graphics_info = graphics_type not in (None, "none")
    pt = g.get("passthrough", {})
    sriov = g["sriov"] if g["sriov"]["reported"] else {}
    return Gpu(
        pci_id=g["pci_id"],
        vendor_id=vendor,
        device_id=device,
        sub_vendor_id=_u16(g["sub_vendor_id"]),
        sub_device_id=_u16(g["sub_device_id"]),
        vendor_name=g["vendor_name"],
        device_name=g["device_name"],
        model=model,
        known_model=known is not None,
        # The frame buffer comes from graphicsInfo; without an entry only the
        # GPU's published frame buffer can tell it.
        memory_mb=g["memory_mb"] if in_graphics_info else (known[1] if known else 0),
        passthrough_capable=bool(pt.get("capable", False)),
        passthrough_enabled=bool(pt.get("enabled", False)),
        passthrough_active=bool(pt.get("active", False)),
        hardware_label=pt.get("hardware_label", ""),
        graphics_type=graphics_type if in_graphics_info else None,
        vgpu_mode=g.get("vgpu_mode") if in_graphics_info else None,
        vms=_vms_on_gpu(g["pci_id"], host["name"], vms) if in_graphics_info else [],
        configured_graphics_type=None if g["device_type"] == "none" else g["device_type"],
        sriov_capable=sriov.get("capable"),
        sriov_enabled=sriov.get("enabled"),
        sriov_active=sriov.get("active"),
        sriov_vfs=sriov.get("vfs"),
    )


def _virtual_functions(pci_id: str, count: int) -> list[str]:
    """The PCI ids the lab lists for a GPU's virtual functions: its bus, from function 4
    of its slot on, eight functions a slot (0000:3b:00.4 ... 0000:3b:02.3 for 16)."""
    head, slot_function = pci_id.rsplit(":", 1)
    first = int(slot_function.split(".")[0], 16) * 8 + 4
    return [f"{head}:{(first + i) // 8:02x}.{(first + i) % 8}" for i in range(count)]


def _vms_on_gpu(pci_id: str, host: str, vms: dict[str, dict[str, Any]]) -> list[str]:
    """Powered-on VMs of ``host`` whose GPU device sits on ``pci_id`` (graphicsInfo.vm)."""
    users = []
    for vm in vms.values():
        if vm["host"] != host or vm.get("power", "poweredOn") != "poweredOn":
            continue
        for dev in vm.get("gpus", []):
            if _device_pci_id(dev) == pci_id:
                users.append(vm["name"])
                break
    return users


def _device_pci_id(dev: dict[str, Any]) -> str | None:
    if "vgpu" in dev:
        return dev.get("on")
    if "passthrough" in dev:
        return str(dev["passthrough"])
    if "dynamic" in dev:
        return dev["dynamic"].get("assigned")
    return None


def _adapter(a: dict[str, Any]) -> StorageAdapter:
    kind = a["type"]
    return StorageAdapter(
        device=a["device"],
        kind=kind,
        model=a.get("model", ""),
        driver=a.get("driver", ""),
        status=a.get("status", ""),
        port_wwn=_wwn(a.get("port_wwn")) if kind in ("fc", "fcoe") else None,
        node_wwn=_wwn(a.get("node_wwn")) if kind in ("fc", "fcoe") else None,
        iscsi_software=bool(a.get("software", True)) if kind == "iscsi" else None,
    )


def _wwn(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, int):
        value = f"{value & 0xFFFFFFFFFFFFFFFF:016x}"
        return ":".join(value[i : i + 2] for i in range(0, 16, 2))
    return str(value).lower()


def _paths(mount: dict[str, Any], adapters: dict[str, str]) -> list[LunPath]:
    paths = []
    for p in mount.get("paths", []):
        if isinstance(p, str):
            p = {"adapter": p, "state": "active"}
        paths.append(
            LunPath(adapter=p["adapter"], adapter_kind=adapters[p["adapter"]], state=p["state"])
        )
    return paths


def _datastore(ds: dict[str, Any], dc: str, hosts: dict[str, dict[str, Any]]) -> Datastore:
    dtype = ds["type"]
    vmfs = dtype == "VMFS"
    mounts = []
    for m in ds.get("mounts", []):
        host = hosts[m["host"]]
        connected = host["connection"] == "connected"
        kinds = {a["device"]: a["type"] for a in host.get("adapters", [])}
        mounts.append(
            DatastoreMount(
                host=m["host"],
                mounted=bool(m.get("mounted", True)),
                accessible=bool(m.get("accessible", True)),
                # A disconnected host reports no storage device, hence no paths.
                paths=_paths(m, kinds) if vmfs and connected else [],
            )
        )
    return Datastore(
        name=ds["name"],
        moref="",
        datacenter=dc,
        type=dtype,
        capacity_mb=ds["capacity_gb"] * 1024,
        free_mb=ds["free_gb"] * 1024,
        multiple_host_access=len(ds.get("mounts", [])) > 1,
        local=bool(ds.get("local", False)) if vmfs else None,
        luns=[ds["lun"]] if vmfs and ds.get("lun") else [],
        transport=_transport(dtype, bool(ds.get("local", False)), mounts),
        mounts=mounts,
    )


def _transport(dtype: str, local: bool, mounts: list[DatastoreMount]) -> str:
    if dtype.upper().startswith("NFS"):
        return "nfs"
    if dtype.lower() == "vsan":
        return "vsan"
    if dtype.upper() == "VVOL":
        return "vvol"
    if dtype.upper() != "VMFS":
        return "other"
    kinds = {
        "local" if p.adapter_kind in _LOCAL_KINDS else p.adapter_kind
        for m in mounts
        for p in m.paths
    }
    if not kinds:
        return "local" if local else "other"
    if len(kinds) > 1:
        return "mixed"
    return kinds.pop()


def _vm(
    vm: dict[str, Any],
    dc: str,
    host_cluster: dict[str, str | None],
    hosts: dict[str, dict[str, Any]],
) -> Vm:
    powered_on = vm["power"] == "poweredOn"
    host = hosts[vm["host"]]
    gpus_by_id = {g["pci_id"]: g for g in host.get("gpus", [])}
    attachments = []
    for dev in vm.get("gpus", []):
        if "vgpu" in dev:
            attachments.append(
                GpuAttachment(
                    kind="vgpu",
                    profile=dev["vgpu"],
                    migrate_supported=dev.get("migrate_supported"),
                    migrate_data_mb=dev.get("migrate_data_mb"),
                )
            )
        elif "passthrough" in dev:
            gpu = gpus_by_id[dev["passthrough"]]
            attachments.append(
                GpuAttachment(
                    kind="passthrough",
                    pci_id=dev["passthrough"],
                    vendor_id=_u16(gpu["vendor_id"]),
                    device_id=_u16(gpu["device_id"]),
                )
            )
        else:
            dyn = dev["dynamic"]
            attachments.append(
                GpuAttachment(
                    kind="dynamic",
                    pci_id=dyn.get("assigned") if powered_on else None,
                    allowed=[
                        (_u16(a["vendor_id"]), _u16(a["device_id"])) for a in dyn.get("allowed", [])
                    ],
                    custom_label=dyn.get("label") or None,
                    allowed_sub_ids=_allowed_sub_ids(dyn.get("allowed", [])),
                )
            )
    groups = vm.get("device_groups", [])
    for group in groups:
        for index in group["gpus"]:
            attachments[index].device_group = group["key"]
    return Vm(
        name=vm["name"],
        moref="",
        host=vm["host"],
        cluster=host_cluster[vm["host"]],
        datacenter=dc,
        power_state=vm["power"],
        memory_mb=vm["memory_mb"],
        memory_reservation_mb=vm["memory_reservation_mb"],
        memory_locked_to_max=bool(vm["memory_locked_to_max"]),
        datastores=list(vm["datastores"]),
        restart_priority=vm.get("restart_priority"),
        gpus=attachments,
        bios_uuid=uuid_from("vm-bios", vm["name"]),
        instance_uuid=uuid_from("vm-instance", vm["name"]),
        firmware=vm.get("firmware"),
        mmio_options=_mmio_options(vm) if _devices_read(vm) else {},
        vgpu_plugin_options=_vgpu_plugin_options(vm) if _devices_read(vm) else {},
        evacuation_poweroff=_evacuation_poweroff(vm) if _devices_read(vm) else None,
        min_evc_mode=vm.get("min_evc_mode"),
        device_groups=[VmDeviceGroup(g["name"], g["key"], len(g["gpus"])) for g in groups],
    )


def _devices_read(vm: dict[str, Any]) -> bool:
    """Whether the collector reads the VM's devices and extraConfig: every VM that may
    hold a GPU (a GPU device, not powered on, or all its memory reserved)."""
    return (
        bool(vm.get("gpus"))
        or vm["power"] != "poweredOn"
        or vm["memory_locked_to_max"]
        or vm["memory_reservation_mb"] >= vm["memory_mb"]
    )


def uuid_from(*parts: str) -> str:
    """The lab's name-derived UUID (estate.go's uuidFrom): SHA-1 of the NUL-ended parts."""
    digest = bytearray(hashlib.sha1(b"".join(p.encode() + b"\0" for p in parts)).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50
    digest[8] = (digest[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(digest)))


def _mmio_options(vm: dict[str, Any]) -> dict[str, str]:
    """The two 64-bit MMIO entries of the VM's extraConfig, under their documented names."""
    names = {
        "pcipassthru.use64bitmmio": "pciPassthru.use64bitMMIO",
        "pcipassthru.64bitmmiosizegb": "pciPassthru.64bitMMIOSizeGB",
    }
    return {
        names[key.lower()]: value
        for key, value in vm.get("extra_config", {}).items()
        if key.lower() in names
    }


def _vgpu_plugin_options(vm: dict[str, Any]) -> dict[str, str]:
    """The extraConfig entries pciPassthru<N>.cfg.enable_uvm, .enable_debugging and
    .enable_profiling, under NVIDIA's spelling (vGPU User Guide 17, 6.4.3 and 6.5)."""
    found = {}
    for key, value in vm.get("extra_config", {}).items():
        prefix, _, name = key.lower().partition(".cfg.")
        index = prefix.removeprefix("pcipassthru")
        if index.isdigit() and name in ("enable_uvm", "enable_debugging", "enable_profiling"):
            found[f"pciPassthru{index}.cfg.{name}"] = str(value)
    return found


def _evacuation_poweroff(vm: dict[str, Any]) -> str | None:
    """The extraConfig entry maintenance.vm.evacuation.poweroff, whatever its case."""
    found = [
        v
        for k, v in vm.get("extra_config", {}).items()
        if k.lower() == "maintenance.vm.evacuation.poweroff"
    ]
    return str(found[0]) if found else None


def comparable(inv: Inventory) -> dict[str, Any]:
    """The inventory as a dict with the server-chosen values blanked and lists sorted."""
    data = dataclasses.asdict(inv)
    data["source"] = data["collected_at"] = ""
    data["vcenter"]["instance_uuid"] = ""
    for kind in ("clusters", "hosts", "datastores", "vms"):
        for obj in data[kind]:
            obj["moref"] = ""
        data[kind].sort(key=lambda o: o["name"])
    for host in data["hosts"]:
        for adapter in host["adapters"]:
            adapter["key"] = ""
        host["adapters"].sort(key=lambda a: a["device"])
        host["gpus"].sort(key=lambda g: g["pci_id"])
        for gpu in host["gpus"]:
            gpu["vms"].sort()
    for vm in data["vms"]:
        for gpu in vm["gpus"]:
            gpu["label"] = ""
    for ds in data["datastores"]:
        ds["mounts"].sort(key=lambda m: m["host"])
        for mount in ds["mounts"]:
            mount["paths"].sort(key=lambda p: p["adapter"])
    for gap in data["gaps"]:
        gap["moref"] = ""
    # The window's ends come from the server's clock, and the reasons are prose.
    data["telemetry"]["start"] = data["telemetry"]["end"] = data["telemetry"]["note"] = ""
    for host in data["hosts"]:
        if host["telemetry"]:
            host["telemetry"]["reason"] = ""
    data["gaps"].sort(key=lambda g: (g["object"], g["property"]))
    data["datacenters"].sort()
    return data


def _allowed_sub_ids(allowed: list[dict[str, Any]]) -> list[tuple[int, int] | None]:
    """Each allowed entry's sub ids (-1 where unset), None for neither; [] when none has any.

    The lab omits an id of 0, as ESXi does for an unset optional int."""
    subs: list[tuple[int, int] | None] = []
    for a in allowed:
        vendor, device = a.get("sub_vendor_id") or None, a.get("sub_device_id") or None
        if vendor is None and device is None:
            subs.append(None)
        else:
            subs.append((-1 if vendor is None else vendor, -1 if device is None else device))
    return subs if any(s is not None for s in subs) else []
