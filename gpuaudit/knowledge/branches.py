"""NVIDIA vGPU software branches on VMware vSphere, as far as NVIDIA's documents say.

Each branch carries its driver branch (the vGPU manager's major version), whether it
is a long-term support branch (LTSB), the month NVIDIA's support for it ends, and the
ESXi releases its release notes list ("Hypervisor Software Releases"). A fact that no
NVIDIA document gpuaudit's authors could read gives is ``None``: every verdict that
needs it is "not proven", never a pass.

Sources:

- Driver branch, branch type and end of support of vGPU 13 to 19: "NVIDIA Virtual GPU
  (vGPU) Software", https://docs.nvidia.com/vgpu/index.html (tables "Active vGPU
  Software Releases" and "Older vGPU Software Releases"); for example "NVIDIA vGPU 16 |
  R535 | Long-Term Support | ... | July 2026" and "NVIDIA vGPU 19 | R580 | Long-Term
  Support | ... | July 2028".
- vGPU 20 is R595: "Security Bulletin: GPU Display Driver - May 2026" (NVIDIA bulletin
  5821), https://github.com/NVIDIA/product-security/blob/main/2026/5821/5821.md, rows
  "(R595 vGPU 20)". No NVIDIA document read gives its branch type or end of support.
- vGPU 21: no NVIDIA document read mentions it; it is not in the table, so a manager of
  a later driver branch is of no known branch.
- ESXi releases: the "Hypervisor Software Releases" section of each branch's release
  notes for VMware vSphere (``VgpuBranch.notes``). gpuaudit holds, for vGPU 13 to 18,
  the first release of each ESXi line those notes list; for vGPU 19 and 20 it holds
  none. The full lists, and how they change between the point releases of a branch,
  were not read for any branch: of the vGPU 19.0 notes only the opening was, which
  sends the reader to "Hypervisor Software Releases" "For details of which VMware
  vSphere releases are supported" without listing them, and neither the notes of vGPU
  16, 17, 18 and 20 nor an NVIDIA AI Enterprise support matrix naming ESXi updates
  were. So a release between the first of a line and a later line held is not proven
  for vGPU 13 to 18, and no release is for 19 and 20.
- Patches and later updates: no NVIDIA text read says whether a listed release covers
  its patches or the later updates of its line. A patch build of ESXi 7.0 or 8.0
  reports its update's version (8.0 U3e is 8.0.3: Broadcom KB 395110, see
  gpuaudit/knowledge/releases.py), so it is a release of the update listed; a later update
  is not proven supported. An ESX 9 maintenance release (9.0.1) is a release of its
  own, later than 9.0. A deployment guide that is not NVIDIA's reports that the vGPU
  20 notes ask for ESXi 8.0 Update 3 "P06 and later updates": read from no NVIDIA page,
  it is not used, but it warns that a list may name a patch within an update, which a
  ``Release`` (an update) cannot hold; such an entry would need the patch's build.
- Guest driver compatibility: "Virtual GPU Software R580 for VMware vSphere Release
  Notes" (vGPU 19.0), 1.2 "Compatibility Requirements for the NVIDIA vGPU Manager and
  Guest VM Driver", https://docs.nvidia.com/vgpu/19.0/grid-vgpu-release-notes-vmware-vsphere/index.html:
  "The following combinations of NVIDIA vGPU Manager and guest VM driver releases are
  compatible with each other. - NVIDIA vGPU Manager with guest VM drivers from the same
  release - NVIDIA vGPU Manager from a later major release branch with guest VM drivers
  from the previous branch - NVIDIA vGPU Manager from a later long-term support branch
  with guest VM drivers from the previous long-term support branch". And: "If you
  install an incompatible guest VM driver release for the release of the vGPU Manager
  that you are using, the NVIDIA vGPU fails to load."
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import NamedTuple

from gpuaudit.knowledge.releases import Release

_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


class Known(NamedTuple):
    """A fact about a branch or a pairing: True, False, or None when not known; and why."""

    value: bool | None
    why: str


@dataclass(frozen=True)
class VgpuBranch:
    number: int  # vGPU software major release, e.g. 16
    driver: int  # its driver branch, e.g. 535 (R535): the vGPU manager's major version
    ltsb: bool | None  # a long-term support branch; None: not published
    supported_until: tuple[int, int] | None  # (year, month) NVIDIA's support ends; None: unknown
    esxi: tuple[Release, ...] | None  # the first listed release of each ESXi line; None: unknown
    notes: str  # NVIDIA's release notes for the branch on VMware vSphere

    def __str__(self) -> str:
        return f"vGPU {self.number} (R{self.driver})"

    def listed(self) -> str:
        """The ESXi releases gpuaudit holds for the branch: ESXi 7.0 U3, 8.0."""
        return "ESXi " + ", ".join(str(r) for r in self.esxi or ())

    def lists(self, release: Release) -> Known:
        """Whether NVIDIA lists ``release`` for this branch: True when gpuaudit holds it,
        False when it is older than the releases held for its line (or its line is not
        listed and an older one is), None when gpuaudit holds no list or the release is
        later than every release held for its line."""
        if self.esxi is None:
            return Known(None, f"the ESXi releases {self} supports are not in gpuaudit's data")
        if release in self.esxi:
            return Known(True, f"ESXi {release} is listed for {self}")
        line = [r for r in self.esxi if r.line() == release.line()]
        if (line and release > max(line)) or (not line and release > max(self.esxi)):
            return Known(
                None,
                f"ESXi {release} is later than the releases gpuaudit holds for {self} "
                f"({self.listed()}): whether NVIDIA lists it is not known",
            )
        return Known(False, f"ESXi {release} is not supported by {self} (listed: {self.listed()})")

    def end_of_support(self) -> str:
        if self.supported_until is None:
            return "not published"
        year, month = self.supported_until
        return f"{_MONTHS[month - 1]} {year}"

    def support_ended(self, today: date) -> Known:
        """Whether NVIDIA's support of the branch has ended by ``today``. NVIDIA names a
        month, not a day: within that month it is not known."""
        if self.supported_until is None:
            return Known(None, f"NVIDIA has published no end of support for {self}")
        now, end = (today.year, today.month), self.supported_until
        if now == end:
            return Known(
                None,
                f"NVIDIA's support of {self} ends in {self.end_of_support()}, without a day",
            )
        if now > end:
            return Known(True, f"NVIDIA's support of {self} ended in {self.end_of_support()}")
        return Known(False, f"NVIDIA supports {self} until {self.end_of_support()}")


def _notes(number: int) -> str:
    root = "grid" if number <= 16 else "vgpu"
    return f"https://docs.nvidia.com/{root}/{number}.0/grid-vgpu-release-notes-vmware-vsphere/index.html"


BRANCHES: tuple[VgpuBranch, ...] = (
    VgpuBranch(13, 470, True, (2024, 8), (Release(6, 5), Release(6, 7), Release(7, 0)), _notes(13)),
    VgpuBranch(14, 510, False, (2023, 2), (Release(6, 7), Release(7, 0)), _notes(14)),
    VgpuBranch(15, 525, False, (2023, 12), (Release(7, 0), Release(8, 0)), _notes(15)),
    VgpuBranch(16, 535, True, (2026, 7), (Release(7, 0), Release(8, 0)), _notes(16)),
    VgpuBranch(17, 550, False, (2025, 6), (Release(7, 0, 3), Release(8, 0)), _notes(17)),
    VgpuBranch(18, 570, False, (2026, 3), (Release(8, 0), Release(9, 0)), _notes(18)),
    VgpuBranch(19, 580, True, (2028, 7), None, _notes(19)),
    VgpuBranch(20, 595, None, None, None, _notes(20)),
)
# The newest branch whose release notes' compatibility section was read (vGPU 19, R580):
# its LTSB pairing is not in the R525 text, and the texts between were not read.
LTSB_PAIRING_FROM = 19

_VERSION = re.compile(r"\s*(\d+)((?:\.\d+)*)")


def driver_version(version: str | None) -> str | None:
    """The driver version a vGPU manager version starts with (535.161.05 of
    535.161.05-1OEM.800.1.0); None when it starts with no number."""
    match = _VERSION.match(version or "")
    return match.group(1) + match.group(2) if match else None


def branch_for(manager_version: str | None) -> VgpuBranch | None:
    """The branch of a vGPU manager version (535.161.05 -> vGPU 16); None when unknown."""
    version = driver_version(manager_version)
    if version is None:
        return None
    driver = int(version.split(".")[0])
    return next((b for b in BRANCHES if b.driver == driver), None)


def listing_branches(release: Release) -> list[VgpuBranch]:
    """The branches whose listed ESXi releases include ``release``."""
    return [b for b in BRANCHES if b.lists(release).value is True]


def _previous_ltsb(manager: VgpuBranch) -> VgpuBranch | None:
    """The LTSB before ``manager``; None when a branch between is of unknown type."""
    for branch in sorted(BRANCHES, key=lambda b: -b.number):
        if branch.number >= manager.number:
            continue
        if branch.ltsb is None:
            return None
        if branch.ltsb:
            return branch
    return None


def guest_meets_manager(guest: str, manager: str) -> Known:
    """Whether a VM whose guest driver is of release ``guest`` loads its vGPU on a host
    whose vGPU manager is ``manager`` (both vGPU manager versions, e.g. 580.65.05), by
    NVIDIA's compatible combinations. A pairing outside them is not known, except a
    guest driver of a later branch than the manager: no NVIDIA text read allows one."""
    gv, mv = driver_version(guest), driver_version(manager)
    if gv is not None and gv == mv:
        return Known(True, f"{guest} is the same release")
    g, m = branch_for(guest), branch_for(manager)
    if g is None or m is None:
        unknown = guest if g is None else manager
        return Known(None, f"vGPU manager {unknown} is of no driver branch in gpuaudit's data")
    pair = f"guest drivers of {guest} on vGPU manager {manager}"
    if g.number == m.number:
        return Known(
            None,
            f"{pair}: two releases of {m}, a pairing NVIDIA's R580 release notes do not "
            "list as compatible (they list the same release)",
        )
    if g.number > m.number:
        return Known(False, f"{pair}: guest drivers of {g} are newer than {m}")
    if g.number == m.number - 1:
        return Known(True, f"{pair}: {m} with guest drivers of the previous branch")
    if m.ltsb is None:
        return Known(None, f"{pair}: whether {m} is a long-term support branch is not published")
    if m.ltsb and _previous_ltsb(m) == g:
        if m.number >= LTSB_PAIRING_FROM:
            return Known(True, f"{pair}: {m} with guest drivers of the previous LTSB")
        return Known(
            None,
            f"{pair}: the previous LTSB, a pairing first seen in NVIDIA's R580 release "
            f"notes; those of {m} were not read",
        )
    return Known(None, f"{pair}: none of the combinations NVIDIA lists as compatible")
