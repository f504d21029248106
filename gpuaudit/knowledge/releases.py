"""ESXi and vCenter releases, and the vCenter releases vGPU vMotion features need.

ESXi and vCenter 6.x report every update as version 6.x.0: their build tells the
update apart. From 7.0 the version names the update (summary.config.product.version
8.0.3 is 8.0 Update 3), and every patch of an update keeps it: Broadcom KB 395110,
"Unified VCF Versioning in ESXi Release" (https://knowledge.broadcom.com/external/article/395110),
gives ESXi 7.0/8.0 versions as "<Major>.<Minor>.<Update release> - <Internal quarter
identifier>.<Patch identifier>.<Buildnumber>", for example "ESXi 8.0 Update 3e has a
version string of 8.0.3-0.70.24674464", and an 8.0 U2b patch (8.0.2-0.30.23305546) and
an 8.0 U2c express patch (8.0.2-0.40.23825572) those of 8.0 U2. A release here is the
update, so a patch build is of its update.

From 9.0 the fields are "<Major version>.<Minor version>.<Maintenance version>.<Express/
hot patch identifier>.<Buildnumber>", and "User facing release aliases such as Update 2a
or U3b ... are discontinued" (the same KB): a release of 9.x is named by its version,
9.0.1, never "9.0 U1". Its third number is a maintenance release, which the KB sets
beside an 8.0 patch release ("8.0 U2b / P03" beside "9.2.1.0"); whether NVIDIA's
listing of 9.0 covers 9.0.1 no NVIDIA text read says, so 9.0.1 stays a release of its
own, later than 9.0. The ESXi releases each NVIDIA vGPU branch supports are in
gpuaudit/knowledge/branches.py.
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
        if not self.update:
            return base
        # 9.x has no updates by name: 9.0.1 is a maintenance release (KB 395110).
        return f"{base}.{self.update}" if self.major >= 9 else f"{base} U{self.update}"

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
