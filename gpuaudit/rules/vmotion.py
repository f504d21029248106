"""vMotion rules: can a vGPU VM move to another host, and is the path there ready?"""

from __future__ import annotations

from gpuaudit.inventory import VGPU_MANAGER_PRIVILEGE, Cluster, Host, VCenter, Vm
from gpuaudit.knowledge import branches as B
from gpuaudit.knowledge import releases as R
from gpuaudit.model import facts as F
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.registry import Context, Outcome, name_few, not_proven, rule

# ESXi 6.7 Update 1 (the first release with vGPU vMotion) is version 6.7.0, build 10302608.
VGPU_VMOTION_BUILD = 10302608
# The prerequisite of vGPU vMotion since vSphere 6.7 U1, which an HA restart shares.
_PREREQ = (
    "A vGPU VM moves with vMotion, or restarts with HA, only onto a host that offers the same "
    "vGPU profile on the same GPU model."
)


def hotmigrate(ctx: Context, vcenter: VCenter) -> Outcome | None:
    vgpu_vms = ctx.facts.vgpu_vms
    if not vgpu_vms or vcenter.standalone_esxi:
        return None
    value = vcenter.vgpu_hotmigrate_enabled
    evidence = {"setting": "vgpu.hotmigrate.enabled", "value": value, "vgpu_vms": len(vgpu_vms)}
    if value is True:
        message = "vgpu.hotmigrate.enabled is true"
    elif value is None:
        message = "vgpu.hotmigrate.enabled could not be read: vGPU vMotion may be off"
    else:
        message = "vgpu.hotmigrate.enabled is not true: vGPU VMs cannot be vMotioned"
    return Outcome(value is True, message, evidence)


rule(
    id="VM-01",
    title="vGPU VMs exist and vCenter's vgpu.hotmigrate.enabled is not true",
    category="vmotion",
    severity="medium",
    scope=scopes.THE_VCENTER,
    rationale="""vCenter refuses to vMotion a vGPU VM unless the advanced setting
        vgpu.hotmigrate.enabled is true (vSphere 6.7 U1 and later). Without it, host maintenance
        means powering vGPU VMs off.""",
    remediation="""Set vgpu.hotmigrate.enabled to true in vCenter's advanced settings.""",
    references=(sources.VGPU_VMOTION_7, sources.VGPU_STUN_TIME_LIMIT),
)(hotmigrate)


def source_types(f: F.Facts, vm: Vm) -> set[str]:
    """The physical GPU types the VM's vGPUs run on; for a VM not running, those of its
    host's GPUs. Empty when its host is not in the inventory."""
    host = f.hosts.get(vm.host or "")
    if host is None:
        return set()
    running = {F.gpu_type(g) for g in host.gpus if vm.name in g.vms}
    return running or set(f.gpu_types(host))


def _offering(f: F.Facts, cluster: str, wanted: tuple[str, ...], vm: Vm) -> list[Host]:
    """The other active hosts of the VM's cluster that offer its profiles (lower case)."""
    return [h for h in f.hosts_offering(cluster, wanted) if h.name != vm.host]


def profile_elsewhere(ctx: Context, vm: Vm) -> Outcome | None:
    f = ctx.facts
    cluster = f.vm_cluster(vm)
    wanted = tuple(p.lower() for p in F.profiles(vm))
    if cluster is None or not wanted:
        return None
    # NVIDIA moves a vGPU only to a physical GPU of the same type, and a type name is not
    # always one board's: the RTX PRO 6000 and 4500 Blackwell both offer DC-16C.
    source = source_types(f, vm)
    # The VMs of one host with the same profiles have the same targets: found once.
    targets: list[str] = ctx.once(
        ("VM-02 targets", cluster, wanted, vm.host, frozenset(source)),
        lambda: [h.name for h in _offering(f, cluster, wanted, vm) if source & f.gpu_types(h)],
    )
    profiles = ", ".join(F.profiles(vm))
    # The count, not the names: in a large cluster the list repeats for every VM.
    evidence = {
        "profiles": F.profiles(vm),
        "hosts_offering_count": len(targets),
        "gpu_types": sorted(source),
    }
    if targets:
        return Outcome(True, f"{profiles} is also offered by {name_few(targets)}", evidence)
    offering = _offering(f, cluster, wanted, vm)
    others = [h.name for h in offering]
    if others and not source:
        return not_proven(
            f"{profiles} is also offered by {name_few(others)}",
            f"the GPU type of {vm.name}'s host is not known, so no host is proven to have "
            "a GPU of the same type",
            evidence,
        )
    unknown = [
        h.name
        for h in offering
        if any(F.board_unknown(g) and g.graphics_type == F.SHARED_DIRECT for g in h.gpus)
    ]
    if unknown:
        return not_proven(
            f"{profiles} is also offered by {name_few(unknown)}",
            f"no catalogue knows the board of {name_few(unknown)}, so whether it is of the "
            f"VM's type ({', '.join(sorted(source))}) is not known",
            evidence,
        )
    if others:
        offer = "offers" if len(others) == 1 else "offer"
        message = (
            f"{name_few(others)} {offer} {profiles} only on another type of GPU (the VM's: "
            f"{', '.join(sorted(source))}): NVIDIA moves a vGPU only to a GPU of the same type"
        )
    else:
        message = f"no other connected host of {cluster} offers {profiles}"
    return Outcome(False, f"{message}: no vMotion or HA target", evidence)


rule(
    id="VM-02",
    title="No other host of the cluster offers a vGPU VM's profile on its type of GPU",
    category="vmotion",
    severity="high",
    scope=scopes.GPU_VMS,
    rationale=f"""{_PREREQ} A vGPU VM whose profile no other connected host offers can neither be
        vMotioned nor restarted by HA: its host is a single point of failure. NVIDIA requires
        a physical GPU of the same type on the destination, and a vGPU type name may belong
        to more than one board (the RTX PRO 6000 and RTX PRO 4500 Blackwell Server Editions
        both offer DC-8C, DC-16C and DC-32C), so a target must offer the profile on a GPU of
        the VM's board (by NVIDIA's PCI ids of the board, else the same PCI device id). Where
        the type of the VM's own GPU is unknown, or a host offers the profile on a GPU whose
        board nothing tells (no catalogue model, no PCI ids: a what-if's new host of a
        model no catalogue knows), the finding is not proven.""",
    remediation="""Install the same GPU model (and NVIDIA host driver) on at least one more host of
        the cluster, so that it offers the profile.""",
    references=(sources.VGPU_VMOTION_67, sources.NVIDIA_VGPU_USER_GUIDE),
)(profile_elsewhere)


def mixed_models(ctx: Context, cluster: Cluster) -> Outcome | None:
    by_model: dict[str, list[str]] = {}
    for host in ctx.facts.connected_hosts(cluster.name):
        for model in sorted({g.model for g in host.gpus if F.gpu_usable(g)}):
            by_model.setdefault(model, []).append(host.name)
    if not by_model:
        return None
    evidence = {"hosts_by_model": by_model}
    if len(by_model) == 1:
        message = f"one GPU model: {next(iter(by_model))}"
    else:
        groups = "; ".join(f"{m}: {', '.join(h)}" for m, h in sorted(by_model.items()))
        message = (
            f"{len(by_model)} GPU models (supported; watch the spare capacity per model): vGPU "
            f"VMs can move only within a group ({groups})"
        )
    return Outcome(len(by_model) == 1, message, evidence)


rule(
    id="VM-03",
    title="A cluster mixes GPU models",
    category="vmotion",
    severity="low",
    scope=scopes.CLUSTERS_WITH_GPUS,
    rationale=f"""{_PREREQ} Mixing GPU models in one cluster is supported: Assignable Hardware
        places a VM by the attributes of the device it needs, on any host that has one. The
        risk is spare capacity per model: a vGPU VM can move, or restart, only among the hosts
        with its own model, a Dynamic DirectPath VM only among hosts with an allowed device.
        The host-failure simulation reports spare capacity and N+k per GPU model and profile
        family; HA-08 judges the cluster. Only usable GPUs count (passthrough active or in
        Shared Direct mode).""",
    remediation="""Watch the spare capacity and N+k of each GPU model in the cluster's
        simulation; keep at least two hosts of each model, and spare GPUs of each model for
        its largest profile.""",
    references=(
        sources.VGPU_VMOTION_67,
        sources.NVIDIA_VGPU_USER_GUIDE,
        sources.ASSIGNABLE_HARDWARE,
    ),
)(mixed_models)


def vmotion_nic(ctx: Context, host: Host) -> Outcome | None:
    if not ctx.facts.cluster_gpu_vms(host.cluster or ""):
        return None
    nics = [n.device for n in host.vmotion_nics]
    message = f"vMotion on {', '.join(nics)}" if nics else "no VMkernel adapter has vMotion"
    return Outcome(bool(nics), message, {"vmotion_nics": nics})


rule(
    id="VM-04",
    title="A host in a cluster with GPU VMs has no vMotion-enabled VMkernel adapter",
    category="vmotion",
    severity="medium",
    scope=scopes.CLUSTER_HOSTS,
    rationale="""A host without a vMotion VMkernel adapter can neither send nor receive a vMotion:
        its GPU VMs must be powered off for maintenance, and DRS cannot balance onto it.""",
    remediation="""Enable the vMotion service on a VMkernel adapter of the host (10 GbE or faster
        for vGPU VMs).""",
    references=(sources.VMKERNEL_NETWORKING,),
)(vmotion_nic)


def migrate_supported(ctx: Context, vm: Vm) -> Outcome | None:
    f = ctx.facts
    if f.inventory.vcenter.standalone_esxi:
        return None  # vMotion needs a vCenter
    vgpus = [a for a in vm.gpus if a.kind == "vgpu"]
    if not vgpus:
        return None
    host = f.vm_host(vm)
    caps = F.offered(host) if host else {}
    backing = [a.profile for a in vgpus if a.migrate_supported is False]
    on_host = [a.profile for a in vgpus if caps.get((a.profile or "").lower()) is False]
    evidence = {
        "profiles": [a.profile for a in vgpus],
        "backing_migrate_supported": [a.migrate_supported for a in vgpus],
        "host_migrate_supported": [caps.get((a.profile or "").lower()) for a in vgpus],
    }
    problems = []
    if backing:
        problems.append("the VM's vGPU backing says migrateSupported false")
    if on_host:
        problems.append(
            f"{vm.host} reports migrateSupported false for {', '.join(map(str, on_host))}"
        )
    message = "; ".join(problems) if problems else "vGPU migration is supported"
    return Outcome(not problems, message, evidence)


rule(
    id="VM-05",
    title="vGPU migration is unsupported for a VM's profile",
    category="vmotion",
    severity="medium",
    scope=scopes.GPU_VMS,
    rationale="""ESXi reports per vGPU profile whether it can be migrated (migrateSupported), and
        the VM's vGPU backing says it too (vSphere 7.0 U2+). When either says false, the VM cannot
        be vMotioned, whatever vCenter's setting.""",
    remediation="""Check the NVIDIA vGPU software release and GPU against NVIDIA's list of vGPU
        migration support; upgrade the host driver, or plan maintenance with the VM powered
        off.""",
    references=(sources.API_VMIOP_BACKING, sources.NVIDIA_VGPU_USER_GUIDE),
)(migrate_supported)


def _branch_support(host: Host, release: R.Release) -> tuple[B.Known, dict[str, object]]:
    """Whether the host's vGPU branch lists its ESXi release (None: not known, with the
    missing fact), and the evidence."""
    branch = B.branch_for(host.vgpu_manager_version)
    evidence: dict[str, object]
    if branch is not None:
        # Where NVIDIA lists the branch's ESXi releases: the page to check a verdict against.
        evidence = {"vgpu_branch": branch.number, "vgpu_release_notes": branch.notes}
        return branch.lists(release), evidence
    # Which branches list the release says what to look for; it proves nothing.
    evidence = {"listing_vgpu_branches": [b.number for b in B.listing_branches(release)]}
    if host.vgpu_manager_version:
        why = f"vGPU manager {host.vgpu_manager_version} is of no driver branch in gpuaudit's data"
    else:
        why = (
            f"the vGPU manager version is not known (reading it needs {VGPU_MANAGER_PRIVILEGE}):"
            f" ESXi {release} cannot be checked against its vGPU branch"
        )
    return B.Known(None, why), evidence


def esxi_version(ctx: Context, host: Host) -> Outcome | None:
    f = ctx.facts
    vcenter = f.inventory.vcenter
    if vcenter.standalone_esxi:
        return None  # vMotion needs a vCenter
    if not any(F.is_vgpu_vm(vm) for vm in f.host_gpu_vms(host.name)):
        return None
    release = R.esxi_release(host.version, host.build)
    vc_release = R.vcenter_release(vcenter.version, vcenter.build)
    evidence: dict[str, object] = {
        "version": host.version,
        "build": host.build,
        "esxi_release": str(release) if release else None,
        "vcenter_release": str(vc_release) if vc_release else None,
        "vgpu_manager_version": host.vgpu_manager_version,
    }
    if release is None:
        message = f"the ESXi release of version {host.version!r} build {host.build!r} is unknown"
        return Outcome(False, message, evidence)
    problems, notes, unknown = [], [], []
    if release < R.VGPU_VMOTION:
        problems.append(f"ESXi {release} is older than 6.7 U1: no vGPU vMotion")
    support, branch_evidence = _branch_support(host, release)
    evidence.update(branch_evidence)
    if support.value is False:
        problems.append(support.why)
    elif support.value is None:
        unknown.append(support.why)
    else:
        notes.append(support.why)
    if vc_release is None:
        unknown.append(f"the vCenter release of version {vcenter.version!r} is unknown")
    elif vc_release < R.VGPU_VMOTION:
        problems.append(f"vCenter {vc_release} is older than 6.7 U1: no vGPU vMotion")
    elif vc_release < R.STUN_TIME_ESTIMATES:
        notes.append(f"vCenter {vc_release} predates 8.0 U2: no stun-time estimates")
    message = "; ".join(problems + unknown + notes)
    if problems or not unknown:
        return Outcome(not problems, message, evidence)
    return not_proven(message, "; ".join(unknown), evidence)


rule(
    id="VM-06",
    title="A vGPU host's ESXi release is outside its vGPU branch, or vCenter is too old",
    category="vmotion",
    severity="medium",
    scope=scopes.CONNECTED_HOSTS,
    rationale="""vMotion of vGPU VMs needs ESXi and vCenter 6.7 Update 1 or later, and each NVIDIA
        vGPU software branch supports only the ESXi releases its release notes list
        ("Hypervisor Software Releases"). The branch comes from the vGPU manager version.
        A release is an update: a patch build reports its update's version (ESXi 8.0 U3e
        is 8.0.3, 8.0 U3) and is judged as that update; ESX 9 names no updates, and 9.0.1
        is a release later than 9.0. gpuaudit holds the first listed release of each ESXi
        line for vGPU 13 to 18 and no list for vGPU 19 and 20. The verdict is not proven,
        never a pass, when the vGPU manager version is not known (reading it needs
        Host.Config.Image, which the Read-only role lacks), when it is of no branch
        gpuaudit knows, when gpuaudit holds no ESXi list for the branch, or when the
        host's release is later than those it holds for the branch: no NVIDIA text read
        says that a branch supports the later updates of an ESXi line it lists. vCenter
        8.0 Update 2 or later adds stun-time estimates and per-VM stun-time limits.""",
    remediation="""Keep each host's ESXi release within the releases its NVIDIA vGPU branch
        lists (upgrade ESXi or the vGPU manager together), and vCenter at 6.7 U1 or later
        (8.0 U2 or later for stun-time estimates). Where the verdict is not proven, check
        the host's release against the "Hypervisor Software Releases" section of the
        release notes of its branch, and waive the finding with that page as the
        reason.""",
    references=(
        sources.VGPU_VMOTION_67,
        sources.VGPU_VMOTION_7,
        R.REFERENCES["vgpu_vmotion"],
        sources.VGPU_STUN_TIME_LIMIT,
        sources.NVIDIA_VGPU_RELEASES,
    ),
)(esxi_version)


def vmotion_speed(ctx: Context, host: Host) -> Outcome | None:
    f = ctx.facts
    if f.inventory.vcenter.standalone_esxi:
        return None  # vMotion needs a vCenter
    if not host.vmotion_nics or not any(F.is_vgpu_vm(vm) for vm in f.host_gpu_vms(host.name)):
        return None  # VM-04 judges a host without a vMotion adapter
    speeds = {n.device: n.uplink_speed_mbps for n in host.vmotion_nics}
    evidence = {
        "uplink_speed_mbps": [s for s in speeds.values() if s],
        "switches": {n.device: n.switch for n in host.vmotion_nics},
    }
    unknown = [device for device, speed in speeds.items() if speed is None]
    if unknown:
        evidence["uplinks_unknown"] = unknown
        message = (
            f"the uplinks of vMotion adapter {', '.join(unknown)} could not be determined: "
            "its vMotion bandwidth is unknown"
        )
        return Outcome(False, message, evidence)
    fastest = max(s for s in speeds.values() if s)
    ok = fastest >= 10000
    message = f"fastest vMotion uplink {fastest} Mb/s" + ("" if ok else ": below 10 Gb/s")
    return Outcome(ok, message, evidence)


rule(
    id="VM-07",
    title="The vMotion network of a host with vGPU VMs is slower than 10 Gb/s or unknown",
    category="vmotion",
    severity="low",
    scope=scopes.HOSTS,
    rationale="""A vGPU VM's frame buffer travels with it during vMotion; VMware recommends 10 GbE
        or faster for vGPU vMotion, and slow links stretch the stun time of large profiles. The
        uplinks of a vMotion VMkernel adapter are those of its standard switch, or, on a
        distributed switch, the host's uplinks of that switch; when they cannot be determined,
        the finding says so rather than passing.""",
    remediation="""Put the vMotion VMkernel adapter on a 10 GbE or faster uplink; for an unknown
        uplink, check that the adapter's switch has a connected uplink on the host.""",
    references=(sources.VGPU_VMOTION_7, sources.VGPU_STUN_TIME_LIMIT),
)(vmotion_speed)
