"""The NVIDIA vGPU manager of each vGPU host: do the managers of a cluster accept the
guest drivers of each other's VMs, and is each one's branch still supported by NVIDIA?

Both read ``Host.vgpu_manager_version``, which the collector reads only with the
Host.Config.Image privilege, beyond the Read-only role: without it the collector records
a gap instead, and these rules then give no verdict.
"""

from __future__ import annotations

from gpuaudit.inventory import VGPU_MANAGER_CALL, VGPU_MANAGER_PRIVILEGE, Cluster, Host
from gpuaudit.knowledge import branches as B
from gpuaudit.model import facts as F
from gpuaudit.rules import scopes, sources
from gpuaudit.rules.drift import listed, spread
from gpuaudit.rules.registry import Context, Outcome, not_proven, rule

# Reading installed software (esxcli software vib get) needs a privilege the Read-only
# role lacks: refused, the collector records a gap naming it.
SOFTWARE_CALL = VGPU_MANAGER_CALL
SOFTWARE_PRIVILEGE = VGPU_MANAGER_PRIVILEGE

READ_PRIVILEGE = (
    "vSphere Web Services API 8.0 U3: HostImageConfigManager.fetchSoftwarePackages "
    "(privilege Host.Config.Image)",
    "https://developer.broadcom.com/xapis/vmware-storage-policy-api/8.0U3/"
    "vim.host.ImageConfigManager.html",
)


def _runs_vgpu_vms(ctx: Context, host: Host) -> bool:
    return any(F.is_vgpu_vm(vm) for vm in ctx.facts.host_gpu_vms(host.name))


def is_vgpu_host(ctx: Context, host: Host) -> bool:
    """The vGPU manager is installed (the host offers vGPU profiles) or vGPU VMs run."""
    return bool(host.vgpu_profiles) or _runs_vgpu_vms(ctx, host)


def vgpu_hosts(ctx: Context, cluster: Cluster) -> list[Host]:
    """The connected vGPU hosts of the cluster."""
    return [h for h in ctx.facts.connected_hosts(cluster.name) if is_vgpu_host(ctx, h)]


def vgpu_manager(ctx: Context, cluster: Cluster) -> Outcome | None:
    hosts = vgpu_hosts(ctx, cluster)
    versions = spread(hosts, lambda h: h.vgpu_manager_version)
    if len(hosts) < 2 or not versions:
        return None  # nothing to compare, or nothing read (a gap names the privilege)
    unknown = sorted(h.name for h in hosts if not h.vgpu_manager_version)
    # A VM's guest driver is taken to be of its host's release. The drivers in use are
    # those of the hosts that run vGPU VMs; with none running, of every vGPU host.
    drivers_from = [h for h in hosts if _runs_vgpu_vms(ctx, h)] or hosts
    guests = spread(drivers_from, lambda h: h.vgpu_manager_version)
    pairings = [
        (guest, manager, B.guest_meets_manager(guest, manager))
        for guest in guests
        for manager in versions
        if guest != manager
    ]
    evidence: dict[str, object] = {
        "versions": versions,
        "pairings": [
            {"guest": g, "manager": m, "compatible": k.value, "why": k.why} for g, m, k in pairings
        ],
    }
    if unknown:
        evidence["unknown"] = unknown
    if len(versions) == 1:
        whose = " whose version is known" if unknown else ""
        found = f"every vGPU host{whose} runs vGPU manager {next(iter(versions))}"
    else:
        found = f"{len(versions)} vGPU manager versions: {listed(versions)}"
    failed = [k.why for _, _, k in pairings if k.value is False]
    if failed:
        message = f"{found}; a VM moved to another host meets {'; '.join(failed)}"
        return Outcome(False, message, evidence)
    reasons = [k.why for _, _, k in pairings if k.value is None]
    if unknown:
        reasons.append(f"the vGPU manager version of {', '.join(unknown)} is not known")
    if reasons:
        return not_proven(found, "; ".join(reasons), evidence)
    compatible = [k.why for _, _, k in pairings]
    note = f"; NVIDIA lists as compatible {'; '.join(compatible)}" if compatible else ""
    return Outcome(True, found + note, evidence)


rule(
    id="GPU-08",
    title="A vGPU VM moved within its cluster meets a vGPU manager that may not load its driver",
    category="gpu",
    severity="high",
    scope=scopes.CLUSTERS_WITH_GPUS,
    rationale=f"""A vGPU VM's guest driver loads only with a vGPU manager NVIDIA lists as
        compatible with it: of the same release; of the next major branch; or, from
        vGPU 19 (R580), of the next long-term support branch (LTSB) after the driver's
        LTSB. An incompatible one fails to load the vGPU. A VM that vMotion, DRS or an
        HA restart moves to another host of its cluster meets that host's manager with
        its own guest driver, taken to be of its current host's release. The rule fails
        when such a pairing has a guest driver of a later branch than the manager, which
        no NVIDIA text allows; it is not proven for a pairing NVIDIA does not list
        (two releases of one branch: NVIDIA's R580 text lists only the same release), for
        a branch gpuaudit does not know, and when a host's version is unknown. vSphere
        reports the manager version only through the installed software
        ({SOFTWARE_CALL}, the NVIDIA vGPU manager VIB), which needs the
        {SOFTWARE_PRIVILEGE} privilege: the Read-only role lacks it, and without it the
        collector records a data gap that names the privilege; where no host's version is
        known the rule gives no verdict. With the privilege, and in a saved inventory that
        carries the versions, the versions are judged.""",
    remediation="""Install the same NVIDIA vGPU manager (host driver VIB) release on every vGPU
        host of the cluster, in maintenance mode, and keep the guest drivers at that
        release or the branch before it. During a rolling upgrade, upgrade hosts that run
        no VMs first and move VMs only onto upgraded hosts. To let the audit read the
        versions, compare them with esxcli software vib list | grep -i nvidia on each
        host.""",
    references=(
        sources.NVIDIA_VGPU_19_VSPHERE_NOTES,
        READ_PRIVILEGE,
        sources.NVIDIA_VGPU_USER_GUIDE,
    ),
)(vgpu_manager)


def branch_support(ctx: Context, host: Host) -> Outcome | None:
    if not host.vgpu_manager_version or not is_vgpu_host(ctx, host):
        return None  # not read: DATA-01 lists the gap
    branch = B.branch_for(host.vgpu_manager_version)
    evidence: dict[str, object] = {"vgpu_manager_version": host.vgpu_manager_version}
    if branch is None:
        message = f"vGPU manager {host.vgpu_manager_version} is of no branch in gpuaudit's data"
        return not_proven(message, f"{message}: its end of support is not known", evidence)
    evidence.update(vgpu_branch=branch.number, supported_until=branch.end_of_support())
    ended = branch.support_ended(ctx.today)
    if ended.value is None:
        message = f"{ended.why} (vGPU manager {host.vgpu_manager_version})"
        return not_proven(message, ended.why, evidence)
    if ended.value:
        message = f"{ended.why}: its vGPU manager {host.vgpu_manager_version} gets no more fixes"
        return Outcome(False, message, evidence)
    return Outcome(True, ended.why, evidence)


rule(
    id="GPU-09",
    title="A vGPU host's NVIDIA vGPU software branch is past NVIDIA's end of support",
    category="gpu",
    severity="medium",
    scope=scopes.CONNECTED_HOSTS,
    rationale="""NVIDIA supports a production branch of its vGPU software for one year and a
        long-term support branch (LTSB) for three, and publishes the month each branch's
        support ends. After it, the branch gets no security or bug fixes: NVIDIA's May
        2026 security bulletin fixes Virtual GPU Manager vulnerabilities in vGPU 16, 19
        and 20 only, none in vGPU 17 or 18, whose support had ended. The host's branch
        comes from its vGPU manager version (580.x is vGPU 19). NVIDIA names a month, not
        a day: within that month the verdict is not proven, and so it is for a branch
        whose end of support NVIDIA has not published (vGPU 20) or gpuaudit does not
        know. The manager version is read from the host's installed software, which needs
        the Host.Config.Image privilege, beyond the Read-only role: without it the rule
        gives no verdict (DATA-01 lists the gap).""",
    remediation="""Upgrade the host's NVIDIA vGPU manager, and the guest drivers of its VMs,
        to a branch NVIDIA still supports (an LTSB for the longest support), host by host
        in maintenance mode.""",
    references=(
        sources.NVIDIA_VGPU_RELEASES,
        sources.NVIDIA_BULLETIN_MAY_2026,
        READ_PRIVILEGE,
    ),
)(branch_support)
