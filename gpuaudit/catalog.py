"""GPU catalogue: PCI ids to models, and NVIDIA vGPU profile arithmetic.

Sources: the PCI ids of NVIDIA data-centre GPUs and their frame buffers
(docs/gpu-catalogue.md lists them with the caveats). Per-GPU vGPU counts are not
tabulated: they follow from frame buffer, which is what the equal-size rule uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

NVIDIA = 0x10DE
AMD = 0x1002
INTEL = 0x8086
GPU_VENDORS = {NVIDIA: "NVIDIA", AMD: "AMD", INTEL: "Intel"}
VENDOR_NAMES = {
    NVIDIA: "NVIDIA Corporation",
    AMD: "Advanced Micro Devices, Inc. [AMD/ATI]",
    INTEL: "Intel Corporation",
}

# PCI base class 0x03 is "display controller" (0x0300 VGA, 0x0302 3D controller).
DISPLAY_CLASS = 0x03


@dataclass(frozen=True)
class GpuModel:
    name: str
    memory_mb: int
    # Short name used in vGPU profile names (grid_l4-4q -> "l4").
    profile_prefix: str
    mixed_size: bool = True  # supports mixed-size vGPU mode (T4 does not)
    architecture: str = ""  # turing, ampere, ada, hopper
    # BAR1 (the frame buffer aperture) in MB, where NVIDIA's product brief gives it.
    bar1_mb: int | None = None
    # Needs 64-bit MMIO above 4 GB in a VM: NVIDIA's vGPU release notes list it among
    # the GPUs that need large MMIO space in passthrough (and for C-series vGPUs).
    large_bar: bool = False


_GB = 1024

# (vendor id, device id) -> model. A2 and A16 share an id: the host's device name
# tells them apart (see model_for).
# The large-BAR families, with BAR1 where NVIDIA's product briefs give it.
_AMPERE_32: dict[str, Any] = {"architecture": "ampere", "bar1_mb": 32 * _GB, "large_bar": True}
_AMPERE_64: dict[str, Any] = {"architecture": "ampere", "bar1_mb": 64 * _GB, "large_bar": True}
_AMPERE_128: dict[str, Any] = {"architecture": "ampere", "bar1_mb": 128 * _GB, "large_bar": True}
_ADA_LARGE: dict[str, Any] = {"architecture": "ada", "bar1_mb": 64 * _GB, "large_bar": True}
_HOPPER_128: dict[str, Any] = {"architecture": "hopper", "bar1_mb": 128 * _GB, "large_bar": True}
_HOPPER: dict[str, Any] = {"architecture": "hopper", "large_bar": True}

MODELS: dict[tuple[int, int], GpuModel] = {
    (NVIDIA, 0x1EB8): GpuModel(
        "NVIDIA T4", 16 * _GB, "t4", mixed_size=False, architecture="turing", bar1_mb=256
    ),
    (NVIDIA, 0x25B6): GpuModel("NVIDIA A16", 16 * _GB, "a16", architecture="ampere"),
    (NVIDIA, 0x2236): GpuModel("NVIDIA A10", 24 * _GB, "a10", architecture="ampere"),
    (NVIDIA, 0x27B8): GpuModel("NVIDIA L4", 24 * _GB, "l4", architecture="ada"),
    (NVIDIA, 0x26B5): GpuModel("NVIDIA L40", 48 * _GB, "l40", **_ADA_LARGE),
    (NVIDIA, 0x26B9): GpuModel("NVIDIA L40S", 48 * _GB, "l40s", **_ADA_LARGE),
    (NVIDIA, 0x2235): GpuModel("NVIDIA A40", 48 * _GB, "a40", **_AMPERE_64),
    (NVIDIA, 0x20B7): GpuModel("NVIDIA A30", 24 * _GB, "a30", **_AMPERE_32),
    (NVIDIA, 0x20F1): GpuModel("NVIDIA A100 PCIe 40GB", 40 * _GB, "a100", **_AMPERE_64),
    (NVIDIA, 0x20B1): GpuModel("NVIDIA A100 PCIe 40GB", 40 * _GB, "a100", **_AMPERE_64),
    (NVIDIA, 0x20B5): GpuModel("NVIDIA A100 PCIe 80GB", 80 * _GB, "a100d", **_AMPERE_128),
    (NVIDIA, 0x20B0): GpuModel("NVIDIA A100 SXM4 40GB", 40 * _GB, "a100x", **_AMPERE_64),
    (NVIDIA, 0x20B2): GpuModel("NVIDIA A100 SXM4 80GB", 80 * _GB, "a100dx", **_AMPERE_128),
    (NVIDIA, 0x2331): GpuModel("NVIDIA H100 PCIe", 80 * _GB, "h100", **_HOPPER_128),
    (NVIDIA, 0x2330): GpuModel("NVIDIA H100 SXM5", 80 * _GB, "h100x", **_HOPPER_128),
    (NVIDIA, 0x2321): GpuModel("NVIDIA H100 NVL", 94 * _GB, "h100l", **_HOPPER_128),
    (NVIDIA, 0x2335): GpuModel("NVIDIA H200 SXM", 141 * _GB, "h200x", **_HOPPER),
    (NVIDIA, 0x233B): GpuModel("NVIDIA H200 NVL", 141 * _GB, "h200", **_HOPPER),
}
_A2 = GpuModel("NVIDIA A2", 16 * _GB, "a2", architecture="ampere")


# GPU architectures from Ampere on: their vGPUs run on SR-IOV virtual functions.
SRIOV_ARCHITECTURES = frozenset({"ampere", "ada", "hopper", "blackwell"})


def vgpu_needs_sriov(model: GpuModel) -> bool:
    """Ampere and later GPUs back each vGPU with an SR-IOV virtual function."""
    return model.architecture in SRIOV_ARCHITECTURES


def model_for_profile(prefix: str) -> GpuModel | None:
    """The catalogue model whose vGPU profiles start with ``prefix`` (grid_a100-... -> a100)."""
    every = [*MODELS.values(), _A2]
    return next((m for m in every if m.profile_prefix == prefix), None)


def unsigned16(value: int) -> int:
    """PCI ids come back from the vSphere API as signed 16-bit values."""
    return value & 0xFFFF


def is_gpu(vendor_id: int, class_id: int) -> bool:
    """A display-class device from a GPU vendor."""
    return unsigned16(vendor_id) in GPU_VENDORS and (unsigned16(class_id) >> 8) == DISPLAY_CLASS


def model_for(vendor_id: int, device_id: int, device_name: str = "") -> GpuModel | None:
    """The catalogue model for an id, or None for an id the catalogue does not know."""
    key = (unsigned16(vendor_id), unsigned16(device_id))
    model = MODELS.get(key)
    if model is not None and key == (NVIDIA, 0x25B6) and re.search(r"\bA2\b", device_name):
        return _A2
    return model


def model_name(vendor_id: int, device_id: int, device_name: str = "") -> str:
    """A display name: the catalogue's, else what the host reports, else the raw ids."""
    model = model_for(vendor_id, device_id, device_name)
    if model is not None:
        return model.name
    if device_name:
        return device_name
    return f"{unsigned16(vendor_id):04x}:{unsigned16(device_id):04x}"


# grid_l4-4q, grid_a100-3-20c (MIG-backed), grid_a100-1-5cme (MIG with media
# extensions), nvidia_l40s-48q
_PROFILE = re.compile(r"^(grid|nvidia)_([a-z0-9]+)-(?:(\d+)-)?(\d+)([abcq])(?:me)?$")

SERIES_EDITIONS = {
    "q": "NVIDIA RTX Virtual Workstation",
    "b": "NVIDIA Virtual PC",
    "a": "NVIDIA Virtual Applications",
    "c": "NVIDIA AI Enterprise",
}


@dataclass(frozen=True)
class VgpuProfileInfo:
    name: str
    gpu: str  # profile prefix, e.g. "l4"
    memory_mb: int  # frame buffer of one vGPU
    series: str  # q, b, a or c
    mig_slices: int | None = None

    @property
    def edition(self) -> str:
        return SERIES_EDITIONS[self.series]


def parse_profile(name: str) -> VgpuProfileInfo | None:
    """Parse an NVIDIA vGPU profile name; None when it does not follow the pattern."""
    match = _PROFILE.match(name.strip().lower())
    if match is None:
        return None
    _, gpu, slices, gigabytes, series = match.groups()
    return VgpuProfileInfo(
        name=name,
        gpu=gpu,
        memory_mb=int(gigabytes) * _GB,
        series=series,
        mig_slices=int(slices) if slices else None,
    )


def vgpus_per_gpu(gpu_memory_mb: int, profile_memory_mb: int) -> int:
    """Equal-size mode: how many vGPUs of one profile a physical GPU holds."""
    if profile_memory_mb <= 0:
        return 0
    return gpu_memory_mb // profile_memory_mb
