"""Which vGPUs may share one physical GPU, by ESXi release and the GPU's vGPU mode.

- Before ESXi 8.0 U2, a GPU runs vGPUs of exactly one profile: the profile of the
  first vGPU started on it locks the GPU ("exact").
- From 8.0 U2, vGPUs of the same frame-buffer size may share a GPU across series,
  an 8q next to an 8c ("size").
- Different sizes need mixed-size mode, ``HostGraphicsInfo.vgpuMode = mixedSize``,
  which ESXi 8.0 U3 introduced ("mixed"). The frame buffers must fit together, and
  each profile stays within NVIDIA's maximum for mixed-size mode, which is lower
  than in equal-size mode for some profiles: the largest power of two not above the
  equal-size count (NVIDIA vGPU user guide, "Virtual GPU Types", mixed-size columns;
  T4 has no mixed-size mode).
- A GPU in MIG mode (``vgpuMode = multiInstanceGpu``) runs MIG-backed vGPUs only,
  placed by MIG geometry (gpuaudit.mig). Where the mode is unreadable (before 8.0 U3),
  a MIG-backed profile name means MIG mode, and a GPU never runs both kinds.

A host whose release is unreadable gets the strictest rule ("exact"). Capacity uses
the GPU's nominal frame buffer from the catalogue, since ESXi may report a
``memorySizeInKB`` slightly below it, and a full-size profile must still fit.

Sources (SOURCES): VMware, "What's new for GPUs in vSphere 8 Update 3" (8.0 U2
same-size series mixing, 8.0 U3 mixed sizes); the vSphere API's
HostGraphicsInfoVgpuMode (since 8.0.3.0); NVIDIA, heterogeneous (mixed-size) vGPU;
NVIDIA's MIG user guide (gpuaudit.mig).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from gpuaudit import catalog, mig
from gpuaudit.inventory import Gpu, Host
from gpuaudit.vgpu_releases import Release, esxi_release

SOURCES = (
    "https://blogs.vmware.com/cloud-foundation/2024/07/03/what-is-new-for-gpus-in-vsphere-8-update-3",
    "https://developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/"
    "data-structures/HostGraphicsInfoVgpuMode_enum",
    "https://docs.nvidia.com/ai-enterprise/release-8/latest/infra-software/vgpu/features/"
    "heterogeneous-vgpu.html",
    mig.MIG_PROFILES_SOURCE,
)

EXACT = "exact"  # one profile per GPU
SAME_SIZE = "size"  # one frame-buffer size per GPU, any series
MIXED_SIZE = "mixed"  # sizes may differ, within the mixed-size maximums
MIG = "mig"  # MIG-backed vGPUs by MIG geometry

SERIES_MIXING = Release(8, 0, 2)  # same size, different series
MIXED_SIZES = Release(8, 0, 3)  # vgpuMode mixedSize

Placed = Sequence[tuple[str, str, int]]  # (vm, profile, frame buffer MB) on one GPU


def policy(host: Host, gpu: Gpu) -> str:
    """The sharing rule of one GPU, from its host's release and its vGPU mode."""
    if gpu.vgpu_mode == "multiInstanceGpu":
        return MIG
    release = esxi_release(host.version, host.build)
    model = catalog.model_for(gpu.vendor_id, gpu.device_id, gpu.device_name)
    mixed_capable = model is None or model.mixed_size
    newer = release is None or release >= MIXED_SIZES  # the mode exists from 8.0 U3
    if gpu.vgpu_mode == "mixedSize" and mixed_capable and newer:
        return MIXED_SIZE
    if release is not None and release >= SERIES_MIXING:
        return SAME_SIZE
    return EXACT


def mode_known(gpu: Gpu) -> bool:
    """The host reports the GPU's vGPU mode (ESXi 8.0 U3 and later)."""
    return bool(gpu.vgpu_mode)


def nominal_memory(gpu: Gpu) -> int:
    """The frame buffer in MB: the catalogue's nominal size, else what the host reports."""
    model = catalog.model_for(gpu.vendor_id, gpu.device_id, gpu.device_name)
    if model is not None:
        return model.memory_mb
    return gpu.memory_mb


@lru_cache(maxsize=4096)
def is_mig(profile: str) -> bool:
    return mig.is_mig_profile(profile)


def mixed_size_maximum(memory_mb: int, size_mb: int) -> int:
    """NVIDIA's maximum of one profile per GPU in mixed-size mode."""
    count = catalog.vgpus_per_gpu(memory_mb, size_mb)
    return 1 << (count.bit_length() - 1) if count > 0 else 0


def accepts(rule: str, known: bool, memory: int, placed: Placed, profile: str, size: int) -> bool:
    """Can a GPU running ``placed`` take one more vGPU of ``profile`` (``size`` MB)?"""
    mig_form = is_mig(profile)
    if rule == MIG or (not known and (mig_form or any(is_mig(p) for _, p, _ in placed))):
        if not mig_form or not all(is_mig(p) for _, p, _ in placed):
            return False
        profiles = [p for _, p, _ in placed] + [profile]
        if all(mig.mig_profile(p) is not None for p in profiles):
            return mig.fits(profiles)
        return sum(s for _, _, s in placed) + size <= memory  # a board not in the tables
    if mig_form:
        return False  # a time-sliced GPU
    if rule == MIXED_SIZE:
        if sum(s for _, _, s in placed) + size > memory:
            return False
        same = sum(1 for _, p, _ in placed if p == profile)
        return same + 1 <= mixed_size_maximum(memory, size)
    if rule == EXACT and any(p != profile for _, p, _ in placed):
        return False
    if any(s != size for _, _, s in placed):
        return False
    return (len(placed) + 1) * size <= memory


def room(rule: str, known: bool, memory: int, placed: Placed, profile: str, size: int) -> int:
    """How many more vGPUs of ``profile`` the GPU takes, on its own."""
    if not accepts(rule, known, memory, placed, profile, size):
        return 0
    if is_mig(profile):
        more = list(placed)
        while accepts(rule, known, memory, more, profile, size):
            more.append(("", profile, size))
        return len(more) - len(placed)
    if rule == MIXED_SIZE:
        free = (memory - sum(s for _, _, s in placed)) // size
        same = sum(1 for _, p, _ in placed if p == profile)
        return min(free, mixed_size_maximum(memory, size) - same)
    return memory // size - len(placed)


def refusal(rule: str, known: bool, memory: int, placed: Placed, profile: str, size: int) -> str:
    """Why a release- or mode-specific rule keeps the vGPU off the GPU; "" if not."""
    if not placed or accepts(rule, known, memory, placed, profile, size):
        return ""
    running = sorted({p for _, p, _ in placed})
    mig_form = is_mig(profile)
    if rule == MIG or (not known and (mig_form or any(is_mig(p) for p in running))):
        if not mig_form or not all(is_mig(p) for p in running):
            return "a GPU runs either MIG-backed or time-sliced vGPUs, not both"
        return f"no MIG placement left next to {', '.join(running)} (NVIDIA's MIG geometry)"
    if mig_form:
        return "the GPU is not in MIG mode"
    if rule == MIXED_SIZE:
        if sum(s for _, _, s in placed) + size > memory:
            return ""
        most = mixed_size_maximum(memory, size)
        return f"NVIDIA allows {most} of {profile} per GPU in mixed-size mode"
    same_size = all(s == size for _, _, s in placed)
    if rule == EXACT and same_size and any(p != profile for p in running):
        return f"it runs {', '.join(running)}, and before ESXi 8.0 U2 a GPU runs one profile"
    return ""  # a full GPU, or one of another size in equal-size mode: capacity
