"""vMotion stun time of vGPU VMs: will a vGPU VM's stun time stay below the tolerance?

During a vGPU vMotion the VM is stunned while its vGPU state (mostly the frame
buffer) and the last of its memory cross the vMotion network. gpuaudit does not
model that time: it reads it from what vCenter and VMware publish
(gpuaudit/rules/stun_bounds.py), which bound it rather than give it exactly:

1. vCenter's own estimates (8.0 U2 and later), where the VM's host has them for
   every vGPU of the VM: vCenter's answer is preferred to a table.
2. Otherwise VMware's published table for the source host's ESXi release, at
   10 Gb/s, by vGPU data and (ESXi 7.0 and later) VM memory.

The path's bandwidth is the slower of the source host's vMotion uplink and the
slowest eligible destination's, because DRS or maintenance mode may pick any of
them (the stun-time limit page of vSphere 8.0 U2 says the estimate follows the
destination's bandwidth at migration time); a destination whose bandwidth is not
known leaves the time unbounded from above.

DRS automates a vGPU VM's vMotion only when its estimated stun time is lower than
the limit (Broadcom KB 313479), and a stun time limit "must be higher than the
estimated maximum stun time" (vSphere 8.0). So the VM passes when the upper bound
is below the tolerance, fails when the lower bound reaches it, and is otherwise not
proven, naming what is not known.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuaudit.inventory import Cluster, GpuAttachment, Host, Vm
from gpuaudit.knowledge import catalog
from gpuaudit.knowledge import releases as R
from gpuaudit.model import facts as F
from gpuaudit.results import Reference
from gpuaudit.rules import scopes, sources, vmotion
from gpuaudit.rules.drs import DEFAULT_STUN_TOLERATED_S, REFERENCES, STUN_TOLERATED
from gpuaudit.rules.registry import Context, Outcome, name_few, not_proven, rule
from gpuaudit.rules.stun_bounds import (
    TABLE_67,
    TABLE_70,
    Bounds,
    StunTable,
    at_bandwidth,
    combined,
    vcenter_bounds,
)

VCENTER = "vCenter's estimate"

API_VGPU_PROFILE_INFO = Reference(
    "vSphere API reference: VirtualMachineVgpuProfileInfo (stunTimeEstimates, 8.0.2)",
    "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/"
    "data-structures/VirtualMachineVgpuProfileInfo",
)


@dataclass(frozen=True)
class Estimate:
    """A VM's stun time bounds, the source that gave them and the path they hold for."""

    bounds: Bounds
    source: str = ""  # VCENTER or a table's name; "" when nothing could be read
    path: str = ""  # "for 8 GB of vGPU data and 16 GB of VM memory at 10 Gb/s"


def table_for(release: R.Release | None) -> StunTable | None:
    """VMware's table for a source host's ESXi release; None when the release is unknown."""
    if release is None:
        return None
    return TABLE_67 if release < R.Release(7, 0) else TABLE_70


def migrate_data_mb(attachment: GpuAttachment) -> tuple[int | None, str]:
    """The vGPU's migration data in MB and where it comes from (backing or profile)."""
    if attachment.migrate_data_mb:
        return attachment.migrate_data_mb, "vgpuMigrateDataSizeMB"
    info = catalog.parse_profile(attachment.profile or "")
    if info is None:
        return None, "unknown"
    return info.memory_mb, "profile frame buffer"


def vmotion_bandwidth_mbps(host: Host) -> int | None:
    """The fastest known vMotion uplink of a host (as VM-07 judges it); None if unknown."""
    speeds = [n.uplink_speed_mbps for n in host.vmotion_nics if n.uplink_speed_mbps]
    return max(speeds) if speeds else None


def by_vcenter(host: Host, vgpus: list[GpuAttachment], bandwidth_mbps: int) -> Bounds | None:
    """vCenter's bounds for the VM's vGPUs on ``host``; None unless it estimates every one."""
    table = {name.lower(): points for name, points in host.stun_estimates.items() if points}
    wanted = [(a.profile or "").lower() for a in vgpus]
    if not table or not all(p in table for p in wanted):
        return None
    return combined([vcenter_bounds(table[p], bandwidth_mbps) for p in wanted], add_lows=True)


def vm_memory_gb(vm: Vm) -> float | None:
    """The VM's memory in GB; None when config.hardware.memoryMB was not read (0)."""
    return vm.memory_mb / 1024 if vm.memory_mb > 0 else None


def by_table(table: StunTable, vm: Vm, vgpus: list[GpuAttachment], bandwidth_mbps: int) -> Bounds:
    """The table's bounds for the VM's vGPUs on a path of ``bandwidth_mbps``."""
    memory_gb = vm_memory_gb(vm)
    parts = []
    for attachment in vgpus:
        data_mb, _ = migrate_data_mb(attachment)
        if data_mb is None:
            why = f"the frame buffer of vGPU profile {attachment.profile!r} is unknown"
            parts.append(Bounds(None, None, (why,)))
        else:
            parts.append(at_bandwidth(table.bounds(data_mb / 1024, memory_gb), bandwidth_mbps))
    return combined(parts, add_lows=False)


def tolerated_s(cluster: Cluster | None) -> tuple[int, str]:
    """The cluster's tolerated stun time and where it comes from."""
    value = (cluster.drs_options if cluster else {}).get(STUN_TOLERATED)
    try:
        return int(str(value).strip()), STUN_TOLERATED
    except ValueError:
        return DEFAULT_STUN_TOLERATED_S, "default"


def stated(bounds: Bounds) -> str:
    """The bounds in words: "28 s", "at most 32 s", "between 50 and 95 s", "unknown"."""
    low, high = bounds.low, bounds.high
    if low is not None and high is not None:
        return f"{low:g} s" if low == high else f"between {low:g} and {high:g} s"
    if high is not None:
        return f"at most {high:g} s"
    return "unknown" if low is None else f"at least {low:g} s"


def on_path(host: Host, vm: Vm, vgpus: list[GpuAttachment], bandwidth_mbps: int) -> Estimate:
    """The bounds for the VM's vGPUs on a path of ``bandwidth_mbps`` from ``host``: vCenter's
    where it estimates every vGPU, else the table of the host's release."""
    speed = f"at {bandwidth_mbps / 1000:g} Gb/s"
    from_vcenter = by_vcenter(host, vgpus, bandwidth_mbps)
    if from_vcenter is not None:
        return Estimate(from_vcenter, VCENTER, speed)
    table = table_for(R.esxi_release(host.version, host.build))
    if table is None:
        return Estimate(Bounds(None, None, (f"the ESXi release of {host.name} is unknown",)))
    sizes = [mb for a in vgpus if (mb := migrate_data_mb(a)[0]) is not None]
    data = f"{sum(sizes) / 1024:g} GB of vGPU data"
    if len(sizes) < len(vgpus):
        data = "vGPU data of unknown size"
    memory_gb = vm_memory_gb(vm)
    memory = "unknown" if memory_gb is None else f"{memory_gb:g} GB of"
    path = f"for {data} and {memory} VM memory {speed}"
    return Estimate(by_table(table, vm, vgpus, bandwidth_mbps), table.name, path)


@dataclass(frozen=True)
class Destinations:
    """The other hosts a vGPU VM may move to, by what bounds the path's bandwidth."""

    slowest: tuple[int, str] | tuple[None, None]  # (bandwidth, host) of the slowest known
    unknown: tuple[str, ...]  # the destinations whose vMotion bandwidth is unknown


def destinations(
    f: F.Facts, cluster: str, wanted: tuple[str, ...], source_host: str, source: frozenset[str]
) -> Destinations | None:
    """The destinations of a VM on ``source_host`` with the profiles ``wanted`` (lower case)
    on GPUs of the types ``source``: the other active hosts of the cluster offering them on
    a GPU of such a type (every one where the type is not known); None when there is none."""
    offering = [h for h in f.hosts_offering(cluster, wanted) if h.name != source_host]
    # Only a host with a GPU of the VM's type is a destination (NVIDIA's "a physical GPU
    # of the same type"): a profile of the same name on another board is none.
    targets = [h for h in offering if not source or source & f.gpu_types(h)]
    if not targets:
        return None
    speeds = [(vmotion_bandwidth_mbps(h), h.name) for h in targets]
    known = sorted((bw, name) for bw, name in speeds if bw is not None)
    unknown = tuple(name for bw, name in speeds if bw is None)
    return Destinations(known[0] if known else (None, None), unknown)


def stun_time(ctx: Context, vm: Vm) -> Outcome | None:
    f = ctx.facts
    vgpus = [a for a in vm.gpus if a.kind == "vgpu"]
    host = f.vm_host(vm)
    cluster_name = f.vm_cluster(vm)
    if f.inventory.vcenter.standalone_esxi or not vgpus or host is None or not cluster_name:
        return None  # vMotion needs a vCenter and a cluster to move within
    if not host.vmotion_nics:
        return None  # VM-04 judges a host that cannot vMotion at all
    wanted = tuple(p.lower() for p in F.profiles(vm))
    source = frozenset(vmotion.source_types(f, vm))
    # The VMs of one host with the same profiles share their destinations: found once.
    paths = ctx.once(
        ("VM-10 destinations", cluster_name, wanted, host.name, source),
        lambda: destinations(f, cluster_name, wanted, host.name, source),
    )
    if paths is None:
        return None  # VM-02 judges a VM with no host to move to
    source_bw = vmotion_bandwidth_mbps(host)
    dest_bw, dest = paths.slowest
    unknown_hosts = list(paths.unknown)
    if source_bw is None:
        estimate = Estimate(
            Bounds(None, None, (f"the vMotion bandwidth of {host.name} is unknown",))
        )
    else:
        estimate = on_path(host, vm, vgpus, min(source_bw, dest_bw or source_bw))
    bounds = estimate.bounds
    if unknown_hosts:
        # A destination of unknown bandwidth may be the slowest: nothing bounds it above.
        why = f"the vMotion bandwidth of {name_few(unknown_hosts)} is unknown"
        bounds = Bounds(bounds.low, None, (*bounds.unknown, why))
    sizes = [migrate_data_mb(a) for a in vgpus]
    cluster = next((c for c in f.inventory.clusters if c.name == cluster_name), None)
    limit, limit_source = tolerated_s(cluster)
    evidence = {
        "migrate_data_mb": sum(mb or 0 for mb, _ in sizes),
        "data_source": sorted({source for _, source in sizes}),
        "vm_memory_mb": vm.memory_mb,
        "source_bandwidth_mbps": source_bw,
        "slowest_destination": dest,
        "destination_bandwidth_mbps": dest_bw,
        "stun_s_at_least": bounds.low,
        "stun_s_at_most": bounds.high,
        "estimate_source": estimate.source,
        "vcenter_estimates_from": host.stun_estimates_host if estimate.source == VCENTER else None,
        "unknown": list(bounds.unknown),
        "tolerated_s": limit,
        "tolerated_from": limit_source,
        "destinations_bandwidth_unknown": unknown_hosts,
    }
    told = " ".join(
        part
        for part in (
            f"estimated stun time {stated(bounds)}",
            f"({estimate.source})" if estimate.source else "",
            estimate.path,
            f"to {dest}" if dest else "",
        )
        if part
    )
    if bounds.high is not None and bounds.high < limit:
        return Outcome(True, f"{told} is below the tolerated {limit} s", evidence)
    if bounds.low is not None and bounds.low >= limit:
        return Outcome(False, f"{told} is not below the tolerated {limit} s", evidence)
    reason = "; ".join(bounds.unknown) or f"the published figures put it {stated(bounds)}"
    message = f"{told}: not proven below the tolerated {limit} s: {reason}"
    return not_proven(message, reason, evidence)


rule(
    id="VM-10",
    title="A vGPU VM's vMotion stun time is not proven below the tolerated stun time",
    category="vmotion",
    severity="medium",
    scope=scopes.GPU_VMS,
    rationale=f"""A vGPU VM is stunned while its vGPU state crosses the vMotion network. Where
        vCenter 8.0 U2 or later publishes its own estimates for the VM's profiles
        (stunTimeEstimates of EnvironmentBrowser.QueryConfigTarget, read once per cluster,
        ESXi build and GPU model), they decide; otherwise VMware's published worst-case table
        does (ESXi 7.0 and later: by vGPU memory, 1 to 32 GB, and VM memory, 4 to 32 GB, at
        10 GbE; ESXi 6.7: by frame buffer). The vGPU data is the backing's
        vgpuMigrateDataSizeMB (vSphere 8.0 U1 and later), else the profile's frame buffer; the
        path runs at the slower of the vMotion uplinks of the VM's host and of the slowest
        other host offering its profiles on a GPU of the VM's type (NVIDIA migrates a vGPU
        only to a physical GPU of the same type; where the VM's type is unknown, every host
        offering them). The figures bound the time rather than give it:
        between published points it lies between their times, and a faster link never stuns
        longer; beyond the table, on a link slower than 10 GbE, or where a bandwidth is
        unknown, nothing bounds it from above. DRS automates a vGPU VM's vMotion only when its
        estimated stun time is lower than {STUN_TOLERATED} (default
        {DEFAULT_STUN_TOLERATED_S} s), and ESXi 6.7 U1 and U2 abort a longer one: the VM passes
        when its stun time is proven below the tolerance, fails when it is proven not to be,
        and is not proven otherwise, naming what is unknown. The per-VM stun time limit of 8.0
        U2 is no documented API property (VirtualMachineConfigInfo in pyVmomi 9 has none), so
        the cluster's tolerance is the limit judged.""",
    remediation=f"""Put the vMotion network of the VM's host and of the hosts offering its
        profile on 25 GbE or faster (or several vMotion adapters), use a smaller profile, or
        raise {STUN_TOLERATED} (and the VM's stun time limit) above the estimate if the
        workload tolerates the pause. Where the time is not proven (a VM beyond VMware's
        table, or a link other than 10 GbE), vCenter and ESXi 8.0 U2 or later give their own
        estimate, which decides.""",
    references=(
        sources.VGPU_VMOTION_67,
        sources.VGPU_VMOTION_7,
        sources.VGPU_STUN_TIME_LIMIT,
        sources.API_VMIOP_BACKING,
        API_VGPU_PROFILE_INFO,
        *REFERENCES["VM-09"][1:2],
    ),
)(stun_time)
