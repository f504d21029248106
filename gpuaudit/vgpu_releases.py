"""ESXi and vCenter releases, and the vCenter releases vGPU vMotion features need.

ESXi and vCenter 6.x report every update as version 6.x.0: their build tells the
update apart. The ESXi releases each NVIDIA vGPU branch supports are in
gpuaudit/vgpu_branches.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Release:
    major: int
    minor: int
    update: int = 0

    def __str__(self) -> str:
        base = f"{self.major}.{self.minor}"
        return f"{base} U{self.update}" if self.update else base

    def line(self) -> tuple[int, int]:
        return self.major, self.minor


# The first build of each update, for releases whose version does not name it.
_ESXI_6X_BUILDS = {
    (6, 5): (4564106, 5969303, 8294253, 13932383),
    (6, 7): (8169922, 10302608, 13006603, 14320388),
}
_VCENTER_6X_BUILDS = {
    (6, 5): (4602587, 5973321, 7312210, 13834586),
    (6, 7): (8217866, 10244745, 13010631, 14367737),
}


def _release(
    version: str, build: str, builds_6x: Mapping[tuple[int, int], tuple[int, ...]]
) -> Release | None:
    parts = version.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:3]):
        return None
    major, minor = int(parts[0]), int(parts[1])
    update = int(parts[2]) if len(parts) > 2 else 0
    firsts = builds_6x.get((major, minor))
    if firsts is not None:
        if not build.strip().isdigit():
            return None  # the update is unknown without the build
        number = int(build)
        update = max((i for i, first in enumerate(firsts) if number >= first), default=0)
    return Release(major, minor, update)


def esxi_release(version: str, build: str) -> Release | None:
    """An ESXi host's release from summary.config.product; None when unreadable."""
    return _release(version, build, _ESXI_6X_BUILDS)


def vcenter_release(version: str, build: str) -> Release | None:
    """A vCenter's release from its about info; None when unreadable."""
    return _release(version, build, _VCENTER_6X_BUILDS)


# vCenter 7.0 Update 3f (build 20051473) is the first to evacuate vGPU VMs
# automatically in maintenance mode (VgpuMMAutomationTimeoutSecs).
VCENTER_70U3F_BUILD = 20051473


# What vCenter must be for vGPU vMotion, and for its stun-time estimates.
VGPU_VMOTION = Release(6, 7, 1)
STUN_TIME_ESTIMATES = Release(8, 0, 2)

REFERENCES = {
    "vgpu_vmotion": (
        "vSphere 7.0: Virtual Machine Conditions and Limitations for vMotion (vGPU from 6.7 U1)",
        "https://docs.vmware.com/en/VMware-vSphere/7.0/com.vmware.vsphere.vm_admin.doc/"
        "GUID-0540DF43-9963-4AF9-A4DB-254414DC00DA.html",
    ),
    "stun_time": (
        "vSphere 8.0: Set a stun time limit for vGPU VMs (8.0 Update 2)",
        "https://docs.vmware.com/en/VMware-vSphere/8.0/vsphere-vm-administration/"
        "GUID-02E3B010-476B-4E70-A407-BBE0EA250E29.html",
    ),
}
