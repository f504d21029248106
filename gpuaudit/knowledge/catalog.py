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

from gpuaudit.knowledge import type_names

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
    architecture: str = ""  # maxwell, pascal, volta, turing, ampere, ada, hopper, blackwell
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
# Pascal and Volta boards likewise (NVIDIA's vGPU 17 user guide lists no mixed-size
# types for the Volta boards it still supports).
_PASCAL: dict[str, Any] = {"architecture": "pascal", "mixed_size": False}
_VOLTA: dict[str, Any] = {"architecture": "volta", "mixed_size": False}
_BLACKWELL: dict[str, Any] = {"architecture": "blackwell", "large_bar": True}

# Device 25b6 is two boards: pci.ids "GA107GL [A2 / A16]", with the subsystem ids
# "A16 - 25B6 10DE 14A9 / A2 - 25B6 10DE 157E". One GPU of either has 16 GB (an A16
# board carries four); vGPU types A16-1B ... A16-16Q and A2-1B ... A2-16Q.
_A16 = GpuModel("NVIDIA A16", 16 * _GB, "a16", architecture="ampere")
_A2 = GpuModel("NVIDIA A2", 16 * _GB, "a2", architecture="ampere")
# Quadro RTX 6000 (24 GB; RTX6000-1B ... RTX6000-24Q) and RTX 8000 (48 GB;
# RTX8000-1B ... RTX8000-48Q) share device ids 1e30 and 1e78 (BY_SUBSYSTEM).
_TURING_EQUAL: dict[str, Any] = {"architecture": "turing", "mixed_size": False}
_RTX6000 = GpuModel("NVIDIA Quadro RTX 6000", 24 * _GB, "rtx6000", **_TURING_EQUAL)
_RTX8000 = GpuModel("NVIDIA Quadro RTX 8000", 48 * _GB, "rtx8000", **_TURING_EQUAL)

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
    # The boards below are those NVIDIA's vGPU 16 to 21 release notes and type tables
    # name besides the ones above (gpuaudit/knowledge/vgpu-types/ holds their types). Names
    # and ids from pci.ids (github.com/pciutils/pciids, commit c1c12547, 2026-08-22).
    # 13f3 "GM204GL [Tesla M6]": 8 GB; M6-0B ... M6-8Q
    (NVIDIA, 0x13F3): GpuModel("NVIDIA M6", 8 * _GB, "m6", **_MAXWELL),
    # Pascal (vGPU 16 is the last branch to support it): equal-size mode only.
    # 1bb3 "GP104GL [Tesla P4]": 8 GB; P4-1B ... P4-8Q
    (NVIDIA, 0x1BB3): GpuModel("NVIDIA P4", 8 * _GB, "p4", **_PASCAL),
    # 1bb4 "GP104GL [Tesla P6]": 16 GB; P6-1B ... P6-16Q
    (NVIDIA, 0x1BB4): GpuModel("NVIDIA P6", 16 * _GB, "p6", **_PASCAL),
    # 1b38 "GP102GL [Tesla P40]": 24 GB; P40-1B ... P40-24Q
    (NVIDIA, 0x1B38): GpuModel("NVIDIA P40", 24 * _GB, "p40", **_PASCAL),
    # 15f7 "GP100GL [Tesla P100 PCIe 12GB]": 12 GB; P100C-1B ... P100C-12Q
    (NVIDIA, 0x15F7): GpuModel("NVIDIA P100 PCIe 12GB", 12 * _GB, "p100c", **_PASCAL),
    # 15f8 "GP100GL [Tesla P100 PCIe 16GB]": 16 GB; P100-1B ... P100-16Q
    (NVIDIA, 0x15F8): GpuModel("NVIDIA P100 PCIe 16GB", 16 * _GB, "p100", **_PASCAL),
    # 15f9 "GP100GL [Tesla P100 SXM2 16GB]": 16 GB; P100X-1B ... P100X-16Q
    (NVIDIA, 0x15F9): GpuModel("NVIDIA P100 SXM2 16GB", 16 * _GB, "p100x", **_PASCAL),
    # Volta: equal-size mode only.
    # 1db1 and 1df5 "GV100GL [Tesla V100 SXM2 16GB]": 16 GB; V100X-1B ... V100X-16Q
    (NVIDIA, 0x1DB1): GpuModel("NVIDIA V100 SXM2 16GB", 16 * _GB, "v100x", **_VOLTA),
    (NVIDIA, 0x1DF5): GpuModel("NVIDIA V100 SXM2 16GB", 16 * _GB, "v100x", **_VOLTA),
    # 1db3 "GV100GL [Tesla V100 FHHL 16GB]": 16 GB; V100L-1B ... V100L-16Q
    (NVIDIA, 0x1DB3): GpuModel("NVIDIA V100 FHHL 16GB", 16 * _GB, "v100l", **_VOLTA),
    # 1db4 "GV100GL [Tesla V100 PCIe 16GB]": 16 GB; V100-1B ... V100-16Q
    (NVIDIA, 0x1DB4): GpuModel("NVIDIA V100 PCIe 16GB", 16 * _GB, "v100", **_VOLTA),
    # 1db5 "GV100GL [Tesla V100 SXM2 32GB]": 32 GB; V100DX-1B ... V100DX-32Q
    (NVIDIA, 0x1DB5): GpuModel("NVIDIA V100 SXM2 32GB", 32 * _GB, "v100dx", **_VOLTA),
    # 1db6 "GV100GL [Tesla V100 PCIe 32GB]": 32 GB; V100D-1B ... V100D-32Q
    (NVIDIA, 0x1DB6): GpuModel("NVIDIA V100 PCIe 32GB", 32 * _GB, "v100d", **_VOLTA),
    # 1df6 "GV100GL [Tesla V100S PCIe 32GB]": 32 GB; V100S-1B ... V100S-32Q
    (NVIDIA, 0x1DF6): GpuModel("NVIDIA V100S PCIe 32GB", 32 * _GB, "v100s", **_VOLTA),
    # 1e36 "TU102GL [Quadro RTX 6000]": 24 GB; RTX6000-1B ... RTX6000-24Q (1e30 and
    # 1e78 are the RTX 6000 or 8000 by subsystem: BY_SUBSYSTEM)
    (NVIDIA, 0x1E36): _RTX6000,
    # 2230 "GA102GL [RTX A6000]": 48 GB; RTXA6000-1B ... RTXA6000-48Q
    (NVIDIA, 0x2230): GpuModel("NVIDIA RTX A6000", 48 * _GB, "rtxa6000", architecture="ampere"),
    # 2231 "GA102GL [RTX A5000]": 24 GB; RTXA5000-1B ... RTXA5000-24Q
    (NVIDIA, 0x2231): GpuModel("NVIDIA RTX A5000", 24 * _GB, "rtxa5000", architecture="ampere"),
    # 2233 "GA102GL [RTX A5500]": 24 GB; RTXA5500-1B ... RTXA5500-24Q
    (NVIDIA, 0x2233): GpuModel("NVIDIA RTX A5500", 24 * _GB, "rtxa5500", architecture="ampere"),
    # 27b6 "AD104GL [L2]": 24 GB; L2-1B ... L2-24Q
    (NVIDIA, 0x27B6): GpuModel("NVIDIA L2", 24 * _GB, "l2", architecture="ada"),
    # 26b7 and 26ba "AD102GL [L20]" (L20 and L20 Liquid Cooled): 48 GB; L20-1B ... L20-48Q
    (NVIDIA, 0x26B7): GpuModel("NVIDIA L20", 48 * _GB, "l20", architecture="ada"),
    (NVIDIA, 0x26BA): GpuModel("NVIDIA L20", 48 * _GB, "l20", architecture="ada"),
    # 26b2 "AD102GL [RTX 5000 Ada Generation]": 32 GB; RTX5000-Ada-1B ... RTX5000-Ada-32Q
    (NVIDIA, 0x26B2): GpuModel(
        "NVIDIA RTX 5000 Ada Generation", 32 * _GB, "rtx5000-ada", architecture="ada"
    ),
    # 26b3 "AD102GL [RTX 5880 Ada Generation]": 48 GB; RTX5880-Ada-1B ... RTX5880-Ada-48Q
    (NVIDIA, 0x26B3): GpuModel(
        "NVIDIA RTX 5880 Ada Generation", 48 * _GB, "rtx5880-ada", architecture="ada"
    ),
    # 2337 "GH100 [H100 SXM5 64GB]": 64 GB; H100XS-...-64C
    (NVIDIA, 0x2337): GpuModel("NVIDIA H100 SXM5 64GB", 64 * _GB, "h100xs", **_HOPPER),
    # 2339 "GH100 [H100 SXM5 94GB]": 94 GB; H100XL-...-94C
    (NVIDIA, 0x2339): GpuModel("NVIDIA H100 SXM5 94GB", 94 * _GB, "h100xl", **_HOPPER),
    # 2322 "GH100 [H800 PCIe]" (NVIDIA's H800 PCIe 80GB): 80 GB; H800-...-80C
    (NVIDIA, 0x2322): GpuModel("NVIDIA H800 PCIe", 80 * _GB, "h800", **_HOPPER),
    # 2324 "GH100 [H800]" (NVIDIA's H800 SXM5 80GB): 80 GB; H800XM-...-80C
    (NVIDIA, 0x2324): GpuModel("NVIDIA H800 SXM5", 80 * _GB, "h800xm", **_HOPPER),
    # 233a "GH100 [H800L 94GB]" (H800 NVL): 94 GB; H800L-...-94C
    (NVIDIA, 0x233A): GpuModel("NVIDIA H800 NVL", 94 * _GB, "h800l", **_HOPPER),
    # 2329 "GH100 [H20]" (NVIDIA's H20 SXM5 96GB): 96 GB; H20-...-96C
    (NVIDIA, 0x2329): GpuModel("NVIDIA H20", 96 * _GB, "h20", **_HOPPER),
    # 232c "GH100 [H20 HBM3e]" (NVIDIA's H20 SXM5 141GB): 141 GB; H20X-...-141C
    (NVIDIA, 0x232C): GpuModel("NVIDIA H20 HBM3e", 141 * _GB, "h20x", **_HOPPER),
    # Blackwell: vGPU type names DC-... that do not name the board, so the prefix "dc"
    # is shared and a type is looked up on the host's board.
    # 2bb5 "GB202GL [RTX PRO 6000 Blackwell Server Edition]": 96 GB (NVIDIA's product
    # page); DC-3Q ... DC-4-24C
    (NVIDIA, 0x2BB5): GpuModel(
        "NVIDIA RTX PRO 6000 Blackwell Server Edition", 96 * _GB, "dc", **_BLACKWELL
    ),
    # 2c3a "GB203GL [RTX PRO 4500 Blackwell Server Edition]": 32 GB; DC-8C ... DC-32C
    (NVIDIA, 0x2C3A): GpuModel(
        "NVIDIA RTX PRO 4500 Blackwell Server Edition", 32 * _GB, "dc", **_BLACKWELL
    ),
    # 2901 "GB100 [B200]" (NVIDIA's HGX B200 180GB): 180 GB; MIG-backed types only. The
    # B300 (3182) waits for NVIDIA's type table (gpuaudit/knowledge/vgpu-types/b300-hgx.yaml).
    (NVIDIA, 0x2901): GpuModel("NVIDIA B200", 180 * _GB, "dc", **_BLACKWELL),
}

# (vendor, device, subsystem vendor, subsystem device) -> model, for the device ids
# that name more than one board (see _A16 and _A2 above). pci.ids names 1e30 and 1e78
# "TU102GL [Quadro RTX 6000/8000]" with the subsystems "10de 12ba  Quadro RTX 6000",
# "10de 129e  Quadro RTX 8000" (1e30) and "10de 13d9  Quadro RTX 6000", "10de 13d8
# Quadro RTX 8000" (1e78); without one of them the board is not known. NVIDIA's
# passive boards (RTX6000P, RTX8000P) carry the same ids and the same frame buffer.
BY_SUBSYSTEM: dict[tuple[int, int, int, int], GpuModel] = {
    (NVIDIA, 0x25B6, NVIDIA, 0x14A9): _A16,
    (NVIDIA, 0x25B6, NVIDIA, 0x157E): _A2,
    (NVIDIA, 0x1E30, NVIDIA, 0x12BA): _RTX6000,
    (NVIDIA, 0x1E30, NVIDIA, 0x129E): _RTX8000,
    (NVIDIA, 0x1E78, NVIDIA, 0x13D9): _RTX6000,
    (NVIDIA, 0x1E78, NVIDIA, 0x13D8): _RTX8000,
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
ZERO_PROFILE_MB = type_names.ZERO_PROFILE_MB

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
    """Parse an NVIDIA vGPU profile name (every published form: gpuaudit/knowledge/type_names.py);
    None when it follows none of them."""
    reading = type_names.read(name)
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
