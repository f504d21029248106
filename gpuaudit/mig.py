"""Multi-Instance GPU (MIG) geometry: which MIG-backed vGPUs one physical GPU holds.

A MIG-backed vGPU (``grid_a100-3-20c``: 3 compute slices, 20 GB) runs on a GPU
instance of the matching MIG profile (3g.20gb). A GPU in MIG mode is cut into
compute slices and memory slices, and each GPU instance starts at one of the fixed
memory slices its profile allows and covers a fixed span of them. So capacity is
not frame buffer divided by profile size: an A100 40GB holds at most 7 instances
of 1g.5gb (not 8) and 3 of 2g.10gb (not 4), and mixed sizes fit only where their
placements do not overlap.

The tables follow NVIDIA's MIG user guide, "Supported MIG Profiles" (the number of
instances available per profile, and the placements that ``nvidia-smi mig -lgipp``
lists: start memory slice and span), which is also the maximum number of
MIG-backed vGPUs per GPU in the "Virtual GPU Types" tables of NVIDIA's vGPU user
guide. A profile with media extensions (``+me``, vGPU names ending ``me``) takes
the GPU's only set of media engines: one such instance per GPU.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

MIG_PROFILES_SOURCE = (
    "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html"
)

# grid_a100-3-20c, grid_a100-1-5cme, nvidia_h100-1-10c: (gpu, compute slices, GB, me)
_MIG_NAME = re.compile(r"^(?:grid|nvidia)_([a-z0-9]+)-(\d+)-(\d+)[abcq](me)?$")


@dataclass(frozen=True)
class MigProfile:
    name: str  # the MIG user guide's name, e.g. 1g.5gb+me
    compute: int  # compute slices
    span: int  # memory slices covered
    starts: tuple[int, ...]  # the memory slices an instance may start at
    maximum: int  # instances per GPU
    media: bool = False  # takes the GPU's media engines (+me)


@dataclass(frozen=True)
class MigGeometry:
    gpu: str  # the board, as the MIG user guide names it
    compute: int  # compute slices per GPU
    slices: int  # memory slices per GPU
    profiles: dict[str, MigProfile]  # by the vGPU name's "<slices>-<GB>[me]" part
    source: str = MIG_PROFILES_SOURCE


_ANY7 = (0, 1, 2, 3, 4, 5, 6)
_EVEN = (0, 2, 4, 6)


def _seven_slice(gb: int, name_gb: tuple[int, int, int, int, int]) -> dict[str, MigProfile]:
    """The A100 / H100 / H200 layout: 7 compute and 8 memory slices of ``gb`` GB each.

    ``name_gb`` is the GB in the names of 1g (two slices), 2g, 3g, 4g and 7g.
    """
    one2, two, three, four, seven = name_gb
    return {
        f"1-{gb}": MigProfile(f"1g.{gb}gb", 1, 1, _ANY7, 7),
        f"1-{gb}me": MigProfile(f"1g.{gb}gb+me", 1, 1, _ANY7, 1, media=True),
        f"1-{one2}": MigProfile(f"1g.{one2}gb", 1, 2, _EVEN, 4),
        f"2-{two}": MigProfile(f"2g.{two}gb", 2, 2, (0, 2, 4), 3),
        f"3-{three}": MigProfile(f"3g.{three}gb", 3, 4, (0, 4), 2),
        f"4-{four}": MigProfile(f"4g.{four}gb", 4, 4, (0,), 1),
        f"7-{seven}": MigProfile(f"7g.{seven}gb", 7, 8, (0,), 1),
    }


A30 = MigGeometry(
    "A30 24GB",
    4,
    4,
    {
        "1-6": MigProfile("1g.6gb", 1, 1, (0, 1, 2, 3), 4),
        "1-6me": MigProfile("1g.6gb+me", 1, 1, (0, 1, 2, 3), 1, media=True),
        "2-12": MigProfile("2g.12gb", 2, 2, (0, 2), 2),
        "2-12me": MigProfile("2g.12gb+me", 2, 2, (0, 2), 1, media=True),
        "4-24": MigProfile("4g.24gb", 4, 4, (0,), 1),
    },
)
A100_40GB = MigGeometry("A100 40GB", 7, 8, _seven_slice(5, (10, 10, 20, 20, 40)))
A100_80GB = MigGeometry("A100 80GB", 7, 8, _seven_slice(10, (20, 20, 40, 40, 80)))
H100_80GB = MigGeometry("H100 80GB", 7, 8, _seven_slice(10, (20, 20, 40, 40, 80)))
H100_94GB = MigGeometry("H100 NVL 94GB", 7, 8, _seven_slice(12, (24, 24, 47, 47, 94)))
H200_141GB = MigGeometry("H200 141GB", 7, 8, _seven_slice(18, (35, 35, 71, 71, 141)))

# vGPU profile-name prefix (gpuaudit.catalog) -> geometry
GEOMETRIES: dict[str, MigGeometry] = {
    "a30": A30,
    "a100": A100_40GB,
    "a100x": A100_40GB,
    "a100d": A100_80GB,
    "a100dx": A100_80GB,
    "h100": H100_80GB,
    "h100x": H100_80GB,
    "h100l": H100_94GB,
    "h200": H200_141GB,
    "h200x": H200_141GB,
}


def is_mig_profile(name: str) -> bool:
    """A vGPU profile name in the MIG-backed form: a slice count before the size."""
    return _MIG_NAME.match(name.strip().lower()) is not None


@lru_cache(maxsize=4096)
def mig_profile(name: str) -> tuple[MigGeometry, MigProfile] | None:
    """The geometry and MIG profile of a MIG-backed vGPU; None when not in the tables."""
    match = _MIG_NAME.match(name.strip().lower())
    if match is None:
        return None
    gpu, slices, gigabytes, media = match.groups()
    geometry = GEOMETRIES.get(gpu)
    if geometry is None:
        return None
    profile = geometry.profiles.get(f"{slices}-{gigabytes}{media or ''}")
    return None if profile is None else (geometry, profile)


def fits(names: Iterable[str]) -> bool:
    """Can one GPU run MIG-backed vGPUs of all these profiles at once?

    Every profile must be in the tables and of one geometry, within its maximum, with
    at most one media-extension instance and the compute slices, and the instances
    must have non-overlapping placements on their allowed start slices.
    """
    # The host-failure simulation asks about the same few combinations hundreds of
    # thousands of times at the configuration maximum; the answer does not depend on
    # their order, since the placement search below tries every start of every instance.
    return _fits(tuple(sorted(names)))


@lru_cache(maxsize=65536)
def _fits(names: tuple[str, ...]) -> bool:
    found = [mig_profile(n) for n in names]
    if not found:
        return True
    if any(f is None for f in found):
        return False
    geometries = {id(f[0]) for f in found if f is not None}
    if len(geometries) != 1:
        return False
    geometry = found[0][0] if found[0] is not None else None
    assert geometry is not None
    profiles = [f[1] for f in found if f is not None]
    counts = Counter(profiles)
    if any(n > p.maximum for p, n in counts.items()):
        return False
    if sum(1 for p in profiles if p.media) > 1:
        return False
    if sum(p.compute for p in profiles) > geometry.compute:
        return False
    return _place(sorted(profiles, key=lambda p: -p.span), [False] * geometry.slices)


def _place(profiles: list[MigProfile], taken: list[bool]) -> bool:
    """Backtracking: each instance on a start slice whose span is free."""
    if not profiles:
        return True
    first, rest = profiles[0], profiles[1:]
    for start in first.starts:
        cover = range(start, start + first.span)
        if start + first.span > len(taken) or any(taken[i] for i in cover):
            continue
        for i in cover:
            taken[i] = True
        placed = _place(rest, taken)
        for i in cover:
            taken[i] = False
        if placed:
            return True
    return False
