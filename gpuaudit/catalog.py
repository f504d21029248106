"""GPU catalogue: PCI ids to models, and NVIDIA vGPU profile arithmetic.

Sources, cited again next to the data they give:

- PCI ids: the PCI ID Repository, https://pci-ids.ucw.cz/read/PC/10de (read from
  pci.ids in github.com/pciutils/pciids, commit c1c12547, 2026-08-22). It names one
  device, 25b6, "GA107GL [A2 / A16]" and tells the two boards apart only by subsystem:
  "A16 - 25B6 10DE 14A9 / A2 - 25B6 10DE 157E".
- Frame buffer and vGPU type names per board: NVIDIA's Virtual GPU Software User
  Guide, "Virtual GPU Types for Supported GPUs"
  (https://docs.nvidia.com/vgpu/17.0/grid-vgpu-user-guide/index.html; the Maxwell
  boards and their 0Q/0B types in
  https://docs.nvidia.com/vgpu/10.0/grid-vgpu-user-guide/index.html) and the vGPU
  types reference of NVIDIA AI Enterprise
  (https://docs.nvidia.com/ai-enterprise/release-7/7.5/infra-software/vgpu/reference/index.html).
  A type named A16-2B on a board appears on ESXi as the profile grid_a16-2b: the
  profile prefix is the type name before its size, in lower case.

Per-GPU vGPU counts are not tabulated: they follow from frame buffer, which is what
the equal-size rule uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpuaudit import vgpu_names

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
    architecture: str = ""  # maxwell, turing, ampere, ada, hopper
    # BAR1 (the frame buffer aperture) in MB, where NVIDIA's product brief gives it.
    bar1_mb: int | None = None
    # Needs 64-bit MMIO above 4 GB in a VM: NVIDIA's vGPU release notes list it among
    # the GPUs that need large MMIO space in passthrough (and for C-series vGPUs).
    large_bar: bool = False


_GB = 1024

# The large-BAR families, with BAR1 where NVIDIA's product briefs give it.
_AMPERE_32: dict[str, Any] = {"architecture": "ampere", "bar1_mb": 32 * _GB, "large_bar": True}
_AMPERE_64: dict[str, Any] = {"architecture": "ampere", "bar1_mb": 64 * _GB, "large_bar": True}
_AMPERE_128: dict[str, Any] = {"architecture": "ampere", "bar1_mb": 128 * _GB, "large_bar": True}
_ADA_LARGE: dict[str, Any] = {"architecture": "ada", "bar1_mb": 64 * _GB, "large_bar": True}
_HOPPER_128: dict[str, Any] = {"architecture": "hopper", "bar1_mb": 128 * _GB, "large_bar": True}
_HOPPER: dict[str, Any] = {"architecture": "hopper", "large_bar": True}
# Maxwell boards run equal-size vGPUs only (mixed-size mode came with vGPU 17, which
# supports no Maxwell board).
_MAXWELL: dict[str, Any] = {"architecture": "maxwell", "mixed_size": False}

# Device 25b6 is two boards: pci.ids "GA107GL [A2 / A16]", with the subsystem ids
# "A16 - 25B6 10DE 14A9 / A2 - 25B6 10DE 157E". One GPU of either has 16 GB (an A16
# board carries four); vGPU types A16-1B ... A16-16Q and A2-1B ... A2-16Q.
_A16 = GpuModel("NVIDIA A16", 16 * _GB, "a16", architecture="ampere")
_A2 = GpuModel("NVIDIA A2", 16 * _GB, "a2", architecture="ampere")

# (vendor id, device id) -> model. The comment above each row gives the device's
# name in pci.ids, the frame buffer of one GPU, and the vGPU types NVIDIA's "Virtual
# GPU Types" list for the board (smallest ... largest).
MODELS: dict[tuple[int, int], GpuModel] = {
    # 13bd "GM107GL [Tesla M10]": four GPUs of 8 GB per board; M10-0B ... M10-8Q
    (NVIDIA, 0x13BD): GpuModel("NVIDIA M10", 8 * _GB, "m10", **_MAXWELL),
    # 13f2 "GM204GL [Tesla M60]": two GPUs of 8 GB per board; M60-0B ... M60-8Q
    (NVIDIA, 0x13F2): GpuModel("NVIDIA M60", 8 * _GB, "m60", **_MAXWELL),
    # 1eb8 "TU104GL [Tesla T4]": 16 GB; T4-1B ... T4-16Q
    (NVIDIA, 0x1EB8): GpuModel(
        "NVIDIA T4", 16 * _GB, "t4", mixed_size=False, architecture="turing", bar1_mb=256
    ),
    # 25b6 "GA107GL [A2 / A16]": the A16 unless its subsystem id says A2 (model_for)
    (NVIDIA, 0x25B6): _A16,
    # 2236 "GA102GL [A10]": 24 GB; A10-1B ... A10-24Q
    (NVIDIA, 0x2236): GpuModel("NVIDIA A10", 24 * _GB, "a10", architecture="ampere"),
    # 27b8 "AD104GL [L4]": 24 GB; L4-1B ... L4-24Q
    (NVIDIA, 0x27B8): GpuModel("NVIDIA L4", 24 * _GB, "l4", architecture="ada"),
    # 26b5 "AD102GL [L40]": 48 GB; L40-1B ... L40-48Q
    (NVIDIA, 0x26B5): GpuModel("NVIDIA L40", 48 * _GB, "l40", **_ADA_LARGE),
    # 26b9 "AD102GL [L40S]": 48 GB; L40S-1B ... L40S-48Q
    (NVIDIA, 0x26B9): GpuModel("NVIDIA L40S", 48 * _GB, "l40s", **_ADA_LARGE),
    # 26b1 "AD102GL [RTX 6000 Ada Generation]": 48 GB; RTX6000-Ada-1B ... RTX6000-Ada-48Q
    (NVIDIA, 0x26B1): GpuModel(
        "NVIDIA RTX 6000 Ada Generation", 48 * _GB, "rtx6000-ada", architecture="ada"
    ),
    # 2235 "GA102GL [A40]": 48 GB; A40-1B ... A40-48Q
    (NVIDIA, 0x2235): GpuModel("NVIDIA A40", 48 * _GB, "a40", **_AMPERE_64),
    # 20b7 "GA100GL [A30 PCIe]": 24 GB; A30-4C ... A30-24C
    (NVIDIA, 0x20B7): GpuModel("NVIDIA A30", 24 * _GB, "a30", **_AMPERE_32),
    # 20f1 and 20b1 "GA100 [A100 PCIe 40GB]": 40 GB; A100-4C ... A100-40C
    (NVIDIA, 0x20F1): GpuModel("NVIDIA A100 PCIe 40GB", 40 * _GB, "a100", **_AMPERE_64),
    (NVIDIA, 0x20B1): GpuModel("NVIDIA A100 PCIe 40GB", 40 * _GB, "a100", **_AMPERE_64),
    # 20b5 "GA100 [A100 PCIe 80GB]": 80 GB; A100D-4C ... A100D-80C
    (NVIDIA, 0x20B5): GpuModel("NVIDIA A100 PCIe 80GB", 80 * _GB, "a100d", **_AMPERE_128),
    # 20b0 "GA100 [A100 SXM4 40GB]" (NVIDIA's A100 HGX 40GB): 40 GB; A100X-4C ... A100X-40C
    (NVIDIA, 0x20B0): GpuModel("NVIDIA A100 SXM4 40GB", 40 * _GB, "a100x", **_AMPERE_64),
    # 20b2 "GA100 [A100 SXM4 80GB]" (A100 HGX 80GB): 80 GB; A100DX-4C ... A100DX-80C
    (NVIDIA, 0x20B2): GpuModel("NVIDIA A100 SXM4 80GB", 80 * _GB, "a100dx", **_AMPERE_128),
    # 2331 "GH100 [H100 PCIe]" (H100 PCIe 80GB): 80 GB; H100-4C ... H100-80C
    (NVIDIA, 0x2331): GpuModel("NVIDIA H100 PCIe", 80 * _GB, "h100", **_HOPPER_128),
    # 2330 "GH100 [H100 SXM5 80GB]": 80 GB; H100XM-4C ... H100XM-80C
    (NVIDIA, 0x2330): GpuModel("NVIDIA H100 SXM5", 80 * _GB, "h100xm", **_HOPPER_128),
    # 2321 "GH100 [H100L 94GB]" (H100 NVL, NVIDIA's H100 PCIe 94GB): 94 GB; H100L-...-94C
    (NVIDIA, 0x2321): GpuModel("NVIDIA H100 NVL", 94 * _GB, "h100l", **_HOPPER_128),
    # 2335 "GH100 [H200 SXM 141GB]": 141 GB; H200X-...-141C
    (NVIDIA, 0x2335): GpuModel("NVIDIA H200 SXM", 141 * _GB, "h200x", **_HOPPER),
    # 233b "GH100 [H200 NVL]" (NVIDIA's H200 PCIe 141GB): 141 GB; H200-...-141C
    (NVIDIA, 0x233B): GpuModel("NVIDIA H200 NVL", 141 * _GB, "h200", **_HOPPER),
}

# (vendor, device, subsystem vendor, subsystem device) -> model, for the device ids
# that name more than one board (see _A16 and _A2 above).
BY_SUBSYSTEM: dict[tuple[int, int, int, int], GpuModel] = {
    (NVIDIA, 0x25B6, NVIDIA, 0x14A9): _A16,
    (NVIDIA, 0x25B6, NVIDIA, 0x157E): _A2,
}


# GPU architectures from Ampere on: their vGPUs run on SR-IOV virtual functions.
SRIOV_ARCHITECTURES = frozenset({"ampere", "ada", "hopper", "blackwell"})


def vgpu_needs_sriov(model: GpuModel) -> bool:
    """Ampere and later GPUs back each vGPU with an SR-IOV virtual function."""
    return model.architecture in SRIOV_ARCHITECTURES


def all_models() -> list[GpuModel]:
    """Every model of the catalogue once, those told apart by subsystem id included."""
    every = [*MODELS.values(), *BY_SUBSYSTEM.values()]
    return list(dict.fromkeys(every))


def model_for_profile(prefix: str) -> GpuModel | None:
    """The catalogue model whose vGPU profiles start with ``prefix`` (grid_a100-... -> a100)."""
    return next((m for m in all_models() if m.profile_prefix == prefix), None)


def unsigned16(value: int) -> int:
    """PCI ids come back from the vSphere API as signed 16-bit values."""
    return value & 0xFFFF


def is_gpu(vendor_id: int, class_id: int) -> bool:
    """A display-class device from a GPU vendor."""
    return unsigned16(vendor_id) in GPU_VENDORS and (unsigned16(class_id) >> 8) == DISPLAY_CLASS


def model_for(
    vendor_id: int,
    device_id: int,
    device_name: str = "",
    *,
    sub_vendor_id: int = 0,
    sub_device_id: int = 0,
) -> GpuModel | None:
    """The catalogue model for an id, or None for an id the catalogue does not know.

    Where one device id names several boards (25b6: A2 and A16), the subsystem id
    decides. Without a subsystem id the catalogue knows (an inventory saved before
    they were read), a device name that names only the A2 does; anything else,
    ESXi's "GA107GL [A2 / A16]" included, is taken for the A16.
    """
    key = (unsigned16(vendor_id), unsigned16(device_id))
    board = BY_SUBSYSTEM.get((*key, unsigned16(sub_vendor_id), unsigned16(sub_device_id)))
    if board is not None:
        return board
    model = MODELS.get(key)
    if model is _A16 and _names_only_the_a2(device_name):
        return _A2
    return model


def _names_only_the_a2(device_name: str) -> bool:
    return bool(re.search(r"\bA2\b", device_name)) and not re.search(r"\bA16\b", device_name)


def model_name(
    vendor_id: int,
    device_id: int,
    device_name: str = "",
    *,
    sub_vendor_id: int = 0,
    sub_device_id: int = 0,
) -> str:
    """A display name: the catalogue's, else what the host reports, else the raw ids."""
    model = model_for(
        vendor_id, device_id, device_name, sub_vendor_id=sub_vendor_id, sub_device_id=sub_device_id
    )
    if model is not None:
        return model.name
    if device_name:
        return device_name
    return f"{unsigned16(vendor_id):04x}:{unsigned16(device_id):04x}"


# The Maxwell-era types of size 0 (M10-0B, M10-0Q, M60-0B, M60-0Q) have a 512 MB
# frame buffer (NVIDIA's vGPU 10 user guide, "Virtual GPU Types").
ZERO_PROFILE_MB = vgpu_names.ZERO_PROFILE_MB

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
    """Parse an NVIDIA vGPU profile name (every published form: gpuaudit/vgpu_names.py);
    None when it follows none of them."""
    reading = vgpu_names.read(name)
    if reading is None:
        return None
    return VgpuProfileInfo(
        name=name,
        gpu=reading.board,
        memory_mb=reading.memory_mb,
        series=reading.series,
        mig_slices=reading.mig_slices,
    )


def vgpus_per_gpu(gpu_memory_mb: int, profile_memory_mb: int) -> int:
    """Equal-size mode: how many vGPUs of one profile a physical GPU holds."""
    if profile_memory_mb <= 0:
        return 0
    return gpu_memory_mb // profile_memory_mb
