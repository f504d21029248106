"""The NVIDIA vGPU manager of each vGPU host: HostImageConfigManager.fetchSoftwarePackages.

vSphere reports the vGPU manager's version only in the host's installed software:
``HostImageConfigManager.fetchSoftwarePackages`` (the host's
``configManager.imageConfigManager``; API 6.5) lists its VIBs as ``SoftwarePackage``s
("This data is reported by CLI:: esxcli software vib get"), each with its ``name`` and
``version``. The vSphere Web Services API reference gives the method one required
privilege, ``Host.Config.Image`` (vim.host.ImageConfigManager, "Required Privileges";
pyVmomi's method table says the same), which the Read-only role lacks: an account with
that role gets NoPermission.

The host driver VIB. NVIDIA ships the vGPU manager as a software component for each
ESXi line: "Install the NVIDIA vGPU hypervisor host driver and the NVIDIA GPU Management
daemon from their software component files", the host driver's for vSphere 7.0.3 being
``NVD-VMware-x86_64-525.125.03-1OEM.703.0.0.17630552-bundle-<build-number>`` and the
daemon's ``VMW-esx-7.0.2-nvd-gpu-mgmt-daemon-1.0-0.0.0001`` (NVIDIA AI Enterprise User
Guide, 2.7.1 "Installing the NVIDIA Virtual GPU Manager on VMware vSphere",
https://docs.nvidia.com/ai-enterprise/latest/user-guide/index.html). The VIBs those
components install, as ESXi names them, are read from the package files and from
esxcli's installation results (no NVIDIA page read lists ``esxcli software vib list``):

- ``NVD-VMware_ESXi_8.0.0_Driver`` (in ``NVD-VGPU-800_<version>-1OEM.800.1.0.20613240``,
  the vGPU package for vSphere 8.0, e.g. ``NVD_bootbank_NVD-VMware_ESXi_8.0.0_Driver_
  535.104.06-1OEM.800.1.0.20613240.vib``) and ``NVD-VMware_ESXi_7.0.2_Driver`` (vSphere
  7.0, e.g. ``..._Driver_535.54.06-1OEM.702.0.0.17630552``);
- ``NVD-AIE_ESXi_8.0.0_Driver`` (NVIDIA AI Enterprise's ``NVD-AIE-800`` component, e.g.
  ``NVD-AIE_ESXi_8.0.0_Driver_525.105.14-1OEM.800.1.0.20613240.vib``);
- ``NVIDIA-VMware_ESXi_<release>_Host_Driver`` before them (e.g.
  ``NVIDIA-VMware_ESXi_6.7_Host_Driver`` 440.43).

The GPU management daemon's VIB (``nvdgpumgmtdaemon``, installed as
``NVD_bootbank_nvdgpumgmtdaemon_525.147.01-1OEM.700.1.0.15843807``) carries the same
driver version but is not the manager: it is left out, as is every other package. The
manager's version is the VIB version's upstream part, before the first hyphen
(``550.54.16`` of ``550.54.16-1OEM.800.1.0.20613240``): the driver version nvidia-smi
reports ("Driver Version: 550.54.16").

The collector asks each connected host that offers vGPU profiles or runs a vGPU VM: one
RetrievePropertiesEx for those hosts' ``configManager.imageConfigManager``, then one
call per host, never per VM; nothing when there is no such host. What it cannot tell
becomes a gap on the host, never a guess: NoPermission the gap that names the
privilege (a known limit of the role, which fails nothing); any other fault, a host
whose packages hold no manager VIB, several manager VIBs, or a version that is not a
driver version, a gap that says so. GPU-08, GPU-09 and VM-06 judge the version.
"""

from __future__ import annotations

import re
from typing import Any

from pyVmomi import vim, vmodl

from gpuaudit.common.progress import Progress, Step, ignore
from gpuaudit.inventory import VGPU_MANAGER_CALL, VGPU_MANAGER_PRIVILEGE, Gap, Host, Inventory
from gpuaudit.vsphere.collect.retrieve import retrieve_objects

MANAGER_PATH = "configManager.imageConfigManager"
PHASE = "reading the vGPU managers' versions"
GAP_PATH = f"vGPU manager version ({VGPU_MANAGER_CALL})"
NO_PRIVILEGE = f"needs the {VGPU_MANAGER_PRIVILEGE} privilege, which the Read-only role lacks"
# The NVIDIA vGPU manager (host driver) VIBs, by name, in any case (see above).
MANAGER_VIBS = (
    re.compile(r"NVD-(?:VMware|AIE)_ESXi_[0-9.]+_Driver", re.IGNORECASE),
    re.compile(r"NVIDIA-VMware_ESXi_[0-9.]+_Host_Driver", re.IGNORECASE),
)
# A driver version: two or more dot-separated numbers (550.54.16, 535.161.05).
_DRIVER = re.compile(r"[0-9]+(?:\.[0-9]+)+")


def software_hosts(inv: Inventory) -> list[Host]:
    """The hosts to ask, by name: connected, offering vGPU profiles or running a vGPU VM."""
    vgpu_vm_hosts = {
        vm.host for vm in inv.vms if vm.host and any(g.kind == "vgpu" for g in vm.gpus)
    }
    return sorted(
        (h for h in inv.hosts if h.connected and (h.vgpu_profiles or h.name in vgpu_vm_hosts)),
        key=lambda h: h.name,
    )


def collect_software(content: Any, inv: Inventory, progress: Progress | None = None) -> None:
    """Each host of software_hosts: its vGPU manager version, or a gap saying why not."""
    hosts = software_hosts(inv)
    if not hosts:
        return
    say = progress or ignore
    say(Step(PHASE, 0, len(hosts), "hosts"))
    managers = retrieve_objects(content, vim.HostSystem, [h.moref for h in hosts], (MANAGER_PATH,))
    for done, host in enumerate(hosts, 1):
        props = managers.get(host.moref)
        manager = props.get(MANAGER_PATH) if props is not None else None
        if manager is None:
            why = props.missing.get(MANAGER_PATH) if props is not None else None
            inv.gaps.append(_gap(host, f"{MANAGER_PATH} not read: {why or 'none reported'}"))
        else:
            try:
                packages = manager.FetchSoftwarePackages()
            except vim.fault.NoPermission:
                inv.gaps.append(_gap(host, NO_PRIVILEGE, VGPU_MANAGER_PRIVILEGE))
            except vmodl.MethodFault as exc:
                inv.gaps.append(_gap(host, type(exc).__name__.rsplit(".", 1)[-1]))
            else:
                version, why = manager_version(list(packages or []))
                if version is None:
                    inv.gaps.append(_gap(host, why))
                host.vgpu_manager_version = version
        say(Step(PHASE, done, len(hosts), "hosts"))


def manager_version(packages: list[Any]) -> tuple[str | None, str]:
    """The vGPU manager version the packages give, or None and why not."""
    found = [p for p in packages if is_manager_vib(str(getattr(p, "name", "") or ""))]
    if not found:
        return None, (
            f"none of the host's {len(packages)} software packages is an NVIDIA vGPU manager VIB"
        )
    if len(found) > 1:
        listed = ", ".join(f"{p.name} {p.version}" for p in found)
        return None, f"{len(found)} NVIDIA vGPU manager VIBs: {listed}"
    vib = found[0]
    version = driver_version(str(getattr(vib, "version", "") or ""))
    if version is None:
        return None, f"the version of {vib.name} ({vib.version!r}) is not a driver version"
    return version, ""


def is_manager_vib(name: str) -> bool:
    """Whether a VIB of this name is NVIDIA's vGPU manager (host driver)."""
    return any(pattern.fullmatch(name) for pattern in MANAGER_VIBS)


def driver_version(vib_version: str) -> str | None:
    """The driver version a VIB version starts with: 550.54.16 of
    550.54.16-1OEM.800.1.0.20613240; None when its upstream part is not one."""
    upstream = vib_version.split("-", 1)[0]
    return upstream if _DRIVER.fullmatch(upstream) else None


def _gap(host: Host, reason: str, privilege: str = "") -> Gap:
    return Gap(host.name, "HostSystem", GAP_PATH, reason, moref=host.moref, privilege=privilege)
