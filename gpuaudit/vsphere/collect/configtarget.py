"""vCenter's own description of the vGPU profiles of a host: QueryConfigTarget.

vCenter publishes it only in ``EnvironmentBrowser.QueryConfigTarget(host)``: a method
of a cluster's environment browser, asked about one host, not a property the bulk
retrieval could read. Its ``vgpuProfileInfo`` (vSphere 7.0 U3, API 7.0.3.0) lists
each vGPU profile of the host with its frame buffer in GiB (``fbSizeInGib``), its
sharing (``profileSharing``: ``timeSliced`` or ``mig``), its class
(``profileClass``: ``compute`` or ``quadro``) and the PCI ids of its GPU
(``deviceVendorId``); from 8.0 U2 (API 8.0.2.0) also vCenter's vMotion stun time
estimates (``stunTimeEstimates``).

The answer depends on the host's ESXi build and GPU model, so the collector asks once
per distinct (ESXi build, GPU models) among the connected 7.0.3+ GPU hosts of each
cluster that runs a powered-on vGPU VM, about the first such host by name, and gives
every host of that group its answer: each profile a host offers gets vCenter's
description of the profile of that name. The cost is one call per group: at most
clusters x builds x GPU models, in practice one or two per vGPU cluster. Nothing is
asked when the negotiated API is older than 7.0.3 (the answer could not carry the
profiles); the stun estimates are kept only when the API is 8.0.2 or later and the
host asked runs ESXi 8.0.2 or later.

A profile vCenter lists that the host asked does not offer (its
``config.sharedPassthruGpuTypes`` lacks it) is kept apart, in the host's
``unlisted_vgpu_profiles``: ``vgpu_profiles`` stays what the host offers.

The same answer lists, from API 8.0.0.1, the vendor device groups the host offers
(``vendorDeviceGroupInfo``): devices that must be allocated to a VM as a unit, such as
NVLink-connected GPUs. Which devices a host links is its own hardware, not its build's
or its GPU model's, so in a cluster that runs a powered-on VM using a vendor device
group every GPU host is asked on its own: one call per such host, where a group of
hosts would share one answer elsewhere. Every host of a group keeps the groups of the
answer with the host asked (``device_groups_host``).

NotSupported means this vCenter offers no such answer; any other fault (NoPermission,
...) becomes a gap on the cluster, and, where a VM of the cluster uses a device group,
on the host asked for its device groups. Either way the hosts keep no description, no
estimates and no device groups: VM-10 falls back to its own model, capacity to NVIDIA's
figures, and a restart that needs a device group is not proven on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyVmomi import VmomiSupport, vim, vmodl

from gpuaudit.inventory import (
    DeviceGroupComponent,
    Gap,
    Host,
    Inventory,
    StunEstimate,
    VendorDeviceGroup,
    VgpuProfile,
)
from gpuaudit.knowledge import releases as R

PROFILE_INFO_API = "vim.version.v7_0_3_0"
STUN_ESTIMATES_API = "vim.version.v8_0_2_0"
DEVICE_GROUPS_API = "vim.version.v8_0_0_1"  # vendorDeviceGroupInfo, config.deviceGroups
FIRST_RELEASE = R.Release(7, 0, 3)  # the first to describe its vGPU profiles
FIRST_STUN_RELEASE = R.Release(8, 0, 2)  # the first whose description holds stun estimates
NVIDIA_VGPU = "nvidiaVgpu"  # a device group component's type: an NVIDIA vGPU
_VMIOP = vim.vm.device.VirtualPCIPassthrough.VmiopBackingInfo
GAP_PATH = "environmentBrowser.QueryConfigTarget().vgpuProfileInfo"
DEVICE_GROUPS_GAP_PATH = "environmentBrowser.QueryConfigTarget().vendorDeviceGroupInfo"


@dataclass(frozen=True)
class ProfileFacts:
    """What vgpuProfileInfo says of one profile (None where it says nothing)."""

    name: str
    frame_buffer_gib: int | None = None
    sharing: str | None = None
    profile_class: str | None = None
    device_vendor_id: int | None = None


def config_target_groups(inv: Inventory) -> dict[str, list[list[Host]]]:
    """Per cluster that runs a powered-on vGPU VM, or a powered-on VM using a vendor device
    group: its connected 7.0.3+ GPU hosts, grouped by (ESXi build, GPU model), each group
    sorted by name; in a cluster of the second kind, each host alone (linked_clusters)."""
    vgpu_clusters = {
        vm.cluster
        for vm in inv.vms
        if vm.cluster and vm.power_state == "poweredOn" and any(g.kind == "vgpu" for g in vm.gpus)
    }
    linked = linked_clusters(inv)
    groups: dict[str, dict[tuple[str, ...], list[Host]]] = {}
    for host in sorted(inv.hosts, key=lambda h: h.name):
        if host.cluster not in vgpu_clusters | linked or not host.connected or not host.gpus:
            continue
        release = R.esxi_release(host.version, host.build)
        if release is None or release < FIRST_RELEASE:
            continue
        # A tuple, not joined text: a name the host reports may itself hold the separator.
        key = (host.build, *sorted({g.model for g in host.gpus}))
        if host.cluster in linked:
            key = (host.name,)  # its own links: asked on its own
        groups.setdefault(host.cluster, {}).setdefault(key, []).append(host)
    return {cluster: list(by_key.values()) for cluster, by_key in groups.items()}


def linked_clusters(inv: Inventory) -> set[str]:
    """The clusters that run a powered-on VM using a vendor device group."""
    return {vm.cluster for vm in inv.vms if vm.cluster and vm.powered_on and vm.device_groups}


def collect_config_target(
    stub: Any, inv: Inventory, browsers: dict[str, Any], negotiated: str
) -> None:
    """Ask each cluster's environment browser once per group of config_target_groups."""
    if inv.vcenter.standalone_esxi or not VmomiSupport.IsChildVersion(negotiated, PROFILE_INFO_API):
        return
    with_estimates = VmomiSupport.IsChildVersion(negotiated, STUN_ESTIMATES_API)
    with_groups = VmomiSupport.IsChildVersion(negotiated, DEVICE_GROUPS_API)
    clusters = {c.name: c for c in inv.clusters}
    linked = linked_clusters(inv)
    for cluster_name, groups in sorted(config_target_groups(inv).items()):
        browser = browsers.get(cluster_name)
        if browser is None:
            continue  # the cluster's environmentBrowser was withheld: already a gap
        for hosts in groups:
            asked = hosts[0]
            try:
                target = browser.QueryConfigTarget(host=vim.HostSystem(asked.moref, stub))
            except vmodl.fault.NotSupported:
                continue  # this vCenter describes no profiles: NVIDIA's figures stay
            except vmodl.MethodFault as exc:
                fault = type(exc).__name__.rsplit(".", 1)[-1]
                cluster = clusters.get(cluster_name)
                moref = cluster.moref if cluster else ""
                inv.gaps.append(
                    Gap(cluster_name, "ClusterComputeResource", GAP_PATH, fault, moref=moref)
                )
                if with_groups and cluster_name in linked:
                    inv.gaps.append(
                        Gap(asked.name, "HostSystem", DEVICE_GROUPS_GAP_PATH, fault, asked.moref)
                    )
                continue
            facts = profile_facts(target)
            release = R.esxi_release(asked.version, asked.build)
            table = (
                estimates_of(target)
                if with_estimates and release is not None and release >= FIRST_STUN_RELEASE
                else {}
            )
            for host in hosts:
                host.stun_estimates = {p: list(points) for p, points in table.items()}
                host.stun_estimates_host = asked.name if table else None
                describe(host, facts, asked.name, unlisted=host is asked)
                if with_groups:
                    host.device_groups = device_groups_of(target)
                    host.device_groups_host = asked.name


def describe(host: Host, facts: list[ProfileFacts], asked: str, unlisted: bool) -> None:
    """Give each profile of ``host`` vCenter's facts of the profile of that name (in any
    case); with ``unlisted``, keep the profiles ``host`` does not offer apart."""
    by_name = {f.name.lower(): f for f in facts}
    offered = set()
    for profile in host.vgpu_profiles:
        offered.add(profile.name.lower())
        found = by_name.get(profile.name.lower())
        if found is not None:
            _apply(profile, found)
    host.vgpu_profile_info_host = asked if facts else None
    if unlisted:
        host.unlisted_vgpu_profiles = []
        for f in facts:
            if f.name.lower() not in offered:
                extra = VgpuProfile(name=f.name)
                _apply(extra, f)
                host.unlisted_vgpu_profiles.append(extra)


def _apply(profile: VgpuProfile, facts: ProfileFacts) -> None:
    profile.frame_buffer_gib = facts.frame_buffer_gib
    profile.sharing = facts.sharing
    profile.profile_class = facts.profile_class
    profile.device_vendor_id = facts.device_vendor_id


def profile_facts(target: Any) -> list[ProfileFacts]:
    """vgpuProfileInfo's profiles in vCenter's order, the first of each name (in any case);
    entries without a name are left out."""
    facts: list[ProfileFacts] = []
    seen = set()
    for info in getattr(target, "vgpuProfileInfo", None) or []:
        name = _name(info)
        if not name or name.lower() in seen:
            continue
        seen.add(name.lower())
        facts.append(
            ProfileFacts(
                name=name,
                frame_buffer_gib=_positive(getattr(info, "fbSizeInGib", None)),
                sharing=_text(getattr(info, "profileSharing", None)),
                profile_class=_text(getattr(info, "profileClass", None)),
                device_vendor_id=_positive(getattr(info, "deviceVendorId", None)),
            )
        )
    return facts


def device_groups_of(target: Any) -> list[VendorDeviceGroup]:
    """vendorDeviceGroupInfo's groups in vCenter's order; entries without a name are left
    out (a VM names its group by it)."""
    groups = []
    for info in getattr(target, "vendorDeviceGroupInfo", None) or []:
        name = str(getattr(info, "deviceGroupName", "") or "")
        if not name:
            continue
        groups.append(
            VendorDeviceGroup(
                name=name,
                description=str(getattr(info, "deviceGroupDescription", "") or ""),
                components=[
                    _component(c) for c in getattr(info, "componentDeviceInfo", None) or []
                ],
            )
        )
    return groups


def _component(info: Any) -> DeviceGroupComponent:
    """One component; an nvidiaVgpu one with the vGPU profile its device's backing names."""
    kind = str(getattr(info, "type", "") or "")
    backing = getattr(getattr(info, "device", None), "backing", None)
    profile = None
    if kind == NVIDIA_VGPU and isinstance(backing, _VMIOP):
        profile = str(backing.vgpu or "") or None
    return DeviceGroupComponent(
        type=kind,
        vendor=str(getattr(info, "vendorName", "") or ""),
        device=str(getattr(info, "deviceName", "") or ""),
        configurable=bool(getattr(info, "isConfigurable", False)),
        vgpu_profile=profile,
    )


def estimates_of(target: Any) -> dict[str, list[StunEstimate]]:
    """Profile name -> its estimates by rising bandwidth; profiles without any are left out."""
    table: dict[str, list[StunEstimate]] = {}
    for info in getattr(target, "vgpuProfileInfo", None) or []:
        name = _name(info)
        points = [
            StunEstimate(bandwidth_mbps=int(p.migrationBW), stun_s=int(p.stunTime))
            for p in getattr(info, "stunTimeEstimates", None) or []
            if p.migrationBW and p.migrationBW > 0
        ]
        if name and points:
            table[name] = sorted(points, key=lambda p: p.bandwidth_mbps)
    return table


def _name(info: Any) -> str:
    """profileName, else the target name vCenter gives every ConfigTarget entry."""
    return str(getattr(info, "profileName", "") or getattr(info, "name", "") or "")


def _positive(value: Any) -> int | None:
    """A whole number above 0, else None: a required long vCenter left unset reads as 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


def _text(value: Any) -> str | None:
    return str(value) if value else None
