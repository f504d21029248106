"""GPU catalogue: PCI ids to models, and NVIDIA vGPU profile arithmetic.

Sources: the PCI ids of NVIDIA data-centre GPUs and their frame buffers
(docs/gpu-catalogue.md lists them with the caveats). Per-GPU vGPU counts are not
tabulated: they follow from frame buffer, which is what the equal-size rule uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


_GB = 1024

# (vendor id, device id) -> model. A2 and A16 share an id: the host's device name
# tells them apart (see model_for).
MODELS: dict[tuple[int, int], GpuModel] = {
    (NVIDIA, 0x1EB8): GpuModel("NVIDIA T4", 16 * _GB, "t4", mixed_size=False),
    (NVIDIA, 0x25B6): GpuModel("NVIDIA A16", 16 * _GB, "a16"),
    (NVIDIA, 0x2236): GpuModel("NVIDIA A10", 24 * _GB, "a10"),
    (NVIDIA, 0x27B8): GpuModel("NVIDIA L4", 24 * _GB, "l4"),
    (NVIDIA, 0x26B5): GpuModel("NVIDIA L40", 48 * _GB, "l40"),
    (NVIDIA, 0x26B9): GpuModel("NVIDIA L40S", 48 * _GB, "l40s"),
    (NVIDIA, 0x20F1): GpuModel("NVIDIA A100 PCIe 40GB", 40 * _GB, "a100"),
    (NVIDIA, 0x20B1): GpuModel("NVIDIA A100 PCIe 40GB", 40 * _GB, "a100"),
    (NVIDIA, 0x20B5): GpuModel("NVIDIA A100 PCIe 80GB", 80 * _GB, "a100d"),
    (NVIDIA, 0x20B0): GpuModel("NVIDIA A100 SXM4 40GB", 40 * _GB, "a100x"),
    (NVIDIA, 0x20B2): GpuModel("NVIDIA A100 SXM4 80GB", 80 * _GB, "a100dx"),
    (NVIDIA, 0x2331): GpuModel("NVIDIA H100 PCIe", 80 * _GB, "h100"),
    (NVIDIA, 0x2330): GpuModel("NVIDIA H100 SXM5", 80 * _GB, "h100x"),
    (NVIDIA, 0x2321): GpuModel("NVIDIA H100 NVL", 94 * _GB, "h100l"),
}
_A2 = GpuModel("NVIDIA A2", 16 * _GB, "a2")


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


# grid_l4-4q, grid_a100-3-20c (MIG-backed), nvidia_l40s-48q
_PROFILE = re.compile(r"^(grid|nvidia)_([a-z0-9]+)-(?:(\d+)-)?(\d+)([abcq])$")

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
