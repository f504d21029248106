"""vMotion stun time of vGPU VMs: will a vGPU VM's stun time stay within the tolerance?

During a vGPU vMotion the VM is stunned while its vGPU state (mostly the frame
buffer) crosses the vMotion network: the stun time grows with the data and shrinks
with the bandwidth. The model, per GB of vGPU migration data at 10 Gb/s, is a
straight line fitted to VMware's published figures for a full frame buffer:

- ESXi 6.7 (vCenter Server and Host Management 6.7, first edition, 10 GbE):
  1 GB 9.0 s, 8 GB 61.3 s, 12 GB 91.2 s, 16 GB or more over 100 s.
  Model: 1.5 s + 7.5 s per GB.
- ESXi 7.0 and later (vCenter Server and Host Management 7.0, estimated worst-case
  stun times at 10 GbE, VM memory 4 GB): 1 GB 5 s, 2 GB 7 s, 4 GB 13 s, 8 GB 24 s,
  16 GB 47 s, 32 GB 91 s. Model: 2.0 s + 2.8 s per GB. The same page's expected
  times (8 GB 12 s, 32 GB 39 s) are for a partly used frame buffer and stay below it.

The per-GB term scales with 10 Gb/s over the bandwidth of the migration, which is
the slower of the source host's vMotion uplink and the destination's; the
destination is the slowest eligible host, because DRS or maintenance mode may pick
any of them (the stun-time limit page of vSphere 8.0 U2 says the estimate follows
the destination's bandwidth at migration time). tests/test_rules_stun.py checks
that the model reproduces every figure above within 1 s.

vCenter 8.0 U2 and later publishes its own estimates per vGPU profile (C- and
Q-series) at a few bandwidths: where the VM's host has them for every vGPU of the
VM, they replace the model, summed over the VM's vGPUs as vCenter sums them.
Between two published bandwidths the time is interpolated linearly in the
bandwidth: the stun time falls like a fixed part plus a part over the bandwidth,
a convex curve, so the straight line between two points lies above it and never
makes the estimate optimistic. Above the highest bandwidth the highest point's
time stays (no extrapolation downward); below the lowest, its time scales up
with the lowest bandwidth over the path's, as the whole time were transfer.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from gpuaudit import catalog
from gpuaudit import facts as F
from gpuaudit import vgpu_releases as R
from gpuaudit.inventory import Cluster, GpuAttachment, Host, StunEstimate, Vm
from gpuaudit.results import Reference
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.drs import DEFAULT_STUN_TOLERATED_S, REFERENCES, STUN_TOLERATED
from gpuaudit.rules.registry import Context, Outcome, rule

REFERENCE_BANDWIDTH_MBPS = 10_000
VCENTER = "vCenter's estimate"
MODEL = "gpuaudit's model"


@dataclass(frozen=True)
class StunModel:
    """Stun time at 10 Gb/s: a fixed part plus a part per GB of vGPU migration data."""

    fixed_s: float
    per_gb_s: float

    def seconds(self, data_gb: float, bandwidth_mbps: int) -> float:
        scale = REFERENCE_BANDWIDTH_MBPS / bandwidth_mbps
        return self.fixed_s + self.per_gb_s * data_gb * scale


ESXI_67 = StunModel(fixed_s=1.5, per_gb_s=7.5)
ESXI_70 = StunModel(fixed_s=2.0, per_gb_s=2.8)

API_VGPU_PROFILE_INFO = Reference(
    "vSphere API reference: VirtualMachineVgpuProfileInfo (stunTimeEstimates, 8.0.2)",
    "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/"
    "data-structures/VirtualMachineVgpuProfileInfo",
)


def model_for(release: R.Release | None) -> StunModel:
    """The model of a source host's release; an unknown release gets the current one."""
    if release is not None and release < R.Release(7, 0):
        return ESXI_67
    return ESXI_70


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


def interpolate(points: list[StunEstimate], bandwidth_mbps: int) -> float:
    """vCenter's stun time at ``bandwidth_mbps`` from its points (see the module docstring)."""
    ordered = sorted(points, key=lambda p: p.bandwidth_mbps)
    low, high = ordered[0], ordered[-1]
    if bandwidth_mbps >= high.bandwidth_mbps:
        return float(high.stun_s)
    if bandwidth_mbps <= low.bandwidth_mbps:
        return low.stun_s * low.bandwidth_mbps / bandwidth_mbps
    for left, right in itertools.pairwise(ordered):
        if left.bandwidth_mbps <= bandwidth_mbps <= right.bandwidth_mbps:
            share = (bandwidth_mbps - left.bandwidth_mbps) / (
                right.bandwidth_mbps - left.bandwidth_mbps
            )
            return left.stun_s + share * (right.stun_s - left.stun_s)
    return float(low.stun_s)  # not reached: the points cover the range


def vcenter_seconds(host: Host, vgpus: list[GpuAttachment], bandwidth_mbps: int) -> float | None:
    """vCenter's stun time of the VM's vGPUs on ``host``, summed; None unless it gives
    estimates for every one of them."""
    table = {name.lower(): points for name, points in host.stun_estimates.items() if points}
    wanted = [(a.profile or "").lower() for a in vgpus]
    if not table or not all(p in table for p in wanted):
        return None
    return sum(interpolate(table[p], bandwidth_mbps) for p in wanted)


def tolerated_s(cluster: Cluster | None) -> tuple[int, str]:
    """The cluster's tolerated stun time and where it comes from."""
    value = (cluster.drs_options if cluster else {}).get(STUN_TOLERATED)
    try:
        return int(str(value).strip()), STUN_TOLERATED
    except ValueError:
        return DEFAULT_STUN_TOLERATED_S, "default"


def stun_time(ctx: Context, vm: Vm) -> Outcome | None:
    f = ctx.facts
    vgpus = [a for a in vm.gpus if a.kind == "vgpu"]
    host = f.vm_host(vm)
    cluster_name = f.vm_cluster(vm)
    if f.inventory.vcenter.standalone_esxi or not vgpus or host is None or not cluster_name:
        return None  # vMotion needs a vCenter and a cluster to move within
    sizes = [migrate_data_mb(a) for a in vgpus]
    source_bw = vmotion_bandwidth_mbps(host)
    if source_bw is None:
        return None  # VM-04 and VM-07 judge the missing bandwidth
    wanted = tuple(p.lower() for p in F.profiles(vm))
    targets = [h for h in f.hosts_offering(cluster_name, wanted) if h.name != vm.host]
    if not targets:
        return None  # VM-02 judges a VM with no host to move to
    known = [(vmotion_bandwidth_mbps(h), h.name) for h in targets]
    destinations = sorted((bw, name) for bw, name in known if bw is not None)
    # With no destination's bandwidth known, the source's still bounds the estimate below.
    dest_bw, dest = destinations[0] if destinations else (None, None)
    bandwidth = min(source_bw, dest_bw or source_bw)
    by_vcenter = vcenter_seconds(host, vgpus, bandwidth)
    if by_vcenter is None and any(mb is None for mb, _ in sizes):
        return None  # an unknown profile, and no estimate of vCenter's for it
    data_mb = sum(mb or 0 for mb, _ in sizes)
    if by_vcenter is not None:
        estimate, estimated_by = round(by_vcenter), VCENTER
    else:
        model = model_for(R.esxi_release(host.version, host.build))
        estimate, estimated_by = round(model.seconds(data_mb / 1024, bandwidth)), MODEL
    cluster = next((c for c in f.inventory.clusters if c.name == cluster_name), None)
    limit, limit_source = tolerated_s(cluster)
    evidence = {
        "migrate_data_mb": data_mb,
        "data_source": sorted({source for _, source in sizes}),
        "source_bandwidth_mbps": source_bw,
        "slowest_destination": dest,
        "destination_bandwidth_mbps": dest_bw,
        "estimated_stun_s": estimate,
        "estimate_source": estimated_by,
        "vcenter_estimates_from": host.stun_estimates_host if by_vcenter is not None else None,
        "tolerated_s": limit,
        "tolerated_from": limit_source,
        "destinations_bandwidth_unknown": [name for bw, name in known if bw is None],
    }
    if by_vcenter is not None:
        path = f"at {bandwidth / 1000:g} Gb/s"
    else:
        path = f"for {data_mb / 1024:g} GB of vGPU data at {bandwidth / 1000:g} Gb/s"
    if dest is None:
        if estimate <= limit:
            return None  # VM-07 reports the unknown bandwidth of the destinations
        message = (
            f"estimated stun time at least {estimate} s ({estimated_by}) {path} (the vMotion "
            f"bandwidth of every destination is unknown) exceeds the tolerated {limit} s"
        )
        return Outcome(False, message, evidence)
    stated = f"estimated stun time {estimate} s ({estimated_by}) {path} to {dest}"
    if estimate > limit:
        return Outcome(False, f"{stated} exceeds the tolerated {limit} s", evidence)
    return Outcome(True, f"{stated} is within the tolerated {limit} s", evidence)


rule(
    id="VM-10",
    title="A vGPU VM's estimated vMotion stun time exceeds the tolerated stun time",
    category="vmotion",
    severity="medium",
    scope=scopes.GPU_VMS,
    rationale=f"""A vGPU VM is stunned while its vGPU state crosses the vMotion network. The
        estimate takes the vGPU's migration data (vgpuMigrateDataSizeMB of its backing, from
        vSphere 8.0 U1; otherwise the profile's frame buffer, an upper bound), the slower of the
        vMotion uplinks of its host and of the slowest host that offers its profile, and a
        model fitted to VMware's published stun times (ESXi 6.7: about 7.5 s per GB at 10 GbE;
        ESXi 7.0 and later, worst case: about 2.8 s per GB). DRS and maintenance mode skip a
        VM whose stun time exceeds {STUN_TOLERATED} (default {DEFAULT_STUN_TOLERATED_S} s),
        and ESXi 6.7 U1 and U2 abort such a vMotion. Where vCenter 8.0 U2 or later publishes
        its own estimate for the VM's profiles (stunTimeEstimates of
        EnvironmentBrowser.QueryConfigTarget, read once per cluster, ESXi build and GPU
        model), that estimate is used instead, interpolated linearly between its bandwidths,
        never below the time of its highest bandwidth and scaled up below its lowest; the
        message says which source it used. The per-VM stun time limit of 8.0 U2 is no
        documented API property (VirtualMachineConfigInfo in pyVmomi 9 has none), so the
        cluster's tolerance is the limit judged.""",
    remediation=f"""Put the vMotion network of the VM's host and of the hosts offering its
        profile on 25 GbE or faster (or several vMotion adapters), use a smaller profile, or
        raise {STUN_TOLERATED} (and the VM's stun time limit) above the estimate if the
        workload tolerates the pause.""",
    references=(
        sources.VGPU_VMOTION_67,
        sources.VGPU_VMOTION_7,
        sources.VGPU_STUN_TIME_LIMIT,
        sources.API_VMIOP_BACKING,
        API_VGPU_PROFILE_INFO,
        *REFERENCES["VM-09"][1:2],
    ),
)(stun_time)
