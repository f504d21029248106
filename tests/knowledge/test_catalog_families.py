"""The boards NVIDIA's vGPU 16 to 21 release notes name, each family read by the collector.

Every expectation is written out here, never read from gpuaudit.knowledge.catalog: the PCI ids
are parsed from the pci.ids lines quoted below (the PCI ID Repository,
github.com/pciutils/pciids, commit c1c12547d626ebf05fd0223144ad87fab5e95d06,
2026-08-22, vendor "10de  NVIDIA Corporation"), the frame buffer of one GPU is the
largest vGPU type of NVIDIA's "Virtual GPU Types for Supported GPUs" (P40-24Q is
24 GB), and the profile prefix is the type name before its size, in lower case
(P40-24Q is the ESXi profile grid_p40-24q).

ESXi reports its own device names, which glue the vendor to the model
(``NVIDIATesla P4``): a board is known by its ids, whatever the name says.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from pyVmomi import vim

from gpuaudit.inventory import Gpu, GpuAttachment, Inventory, Vm
from gpuaudit.model import facts as F
from gpuaudit.vsphere.collect.hosts import build_host
from gpuaudit.vsphere.collect.retrieve import ObjectProps

DISPLAY_3D = 0x0302  # PCI class 03 (display), subclass 02 (3D controller)
NVIDIA = 0x10DE

# pci.ids line (device), ESXi device name, model name, GB of one GPU, profile prefix
Board = tuple[str, str, str, int, str]

FAMILIES: dict[str, list[Board]] = {
    "maxwell": [
        ("\t13f3  GM204GL [Tesla M6]", "NVIDIATesla M6", "NVIDIA M6", 8, "m6"),
    ],
    "pascal": [
        ("\t1bb3  GP104GL [Tesla P4]", "NVIDIATesla P4", "NVIDIA P4", 8, "p4"),
        ("\t1bb4  GP104GL [Tesla P6]", "NVIDIATesla P6", "NVIDIA P6", 16, "p6"),
        ("\t1b38  GP102GL [Tesla P40]", "NVIDIATesla P40", "NVIDIA P40", 24, "p40"),
        (
            "\t15f7  GP100GL [Tesla P100 PCIe 12GB]",
            "NVIDIATesla P100-PCIE-12GB",
            "NVIDIA P100 PCIe 12GB",
            12,
            "p100c",
        ),
        (
            "\t15f8  GP100GL [Tesla P100 PCIe 16GB]",
            "NVIDIATesla P100-PCIE-16GB",
            "NVIDIA P100 PCIe 16GB",
            16,
            "p100",
        ),
        (
            "\t15f9  GP100GL [Tesla P100 SXM2 16GB]",
            "NVIDIATesla P100-SXM2-16GB",
            "NVIDIA P100 SXM2 16GB",
            16,
            "p100x",
        ),
    ],
    "volta": [
        (
            "\t1db1  GV100GL [Tesla V100 SXM2 16GB]",
            "NVIDIATesla V100-SXM2-16GB",
            "NVIDIA V100 SXM2 16GB",
            16,
            "v100x",
        ),
        (
            "\t1df5  GV100GL [Tesla V100 SXM2 16GB]",
            "NVIDIATesla V100-SXM2-16GB",
            "NVIDIA V100 SXM2 16GB",
            16,
            "v100x",
        ),
        (
            "\t1db3  GV100GL [Tesla V100 FHHL 16GB]",
            "NVIDIATesla V100-FHHL-16GB",
            "NVIDIA V100 FHHL 16GB",
            16,
            "v100l",
        ),
        (
            "\t1db4  GV100GL [Tesla V100 PCIe 16GB]",
            "NVIDIATesla V100-PCIE-16GB",
            "NVIDIA V100 PCIe 16GB",
            16,
            "v100",
        ),
        (
            "\t1db5  GV100GL [Tesla V100 SXM2 32GB]",
            "NVIDIATesla V100-SXM2-32GB",
            "NVIDIA V100 SXM2 32GB",
            32,
            "v100dx",
        ),
        (
            "\t1db6  GV100GL [Tesla V100 PCIe 32GB]",
            "NVIDIATesla V100-PCIE-32GB",
            "NVIDIA V100 PCIe 32GB",
            32,
            "v100d",
        ),
        (
            "\t1df6  GV100GL [Tesla V100S PCIe 32GB]",
            "NVIDIATesla V100S-PCIE-32GB",
            "NVIDIA V100S PCIe 32GB",
            32,
            "v100s",
        ),
    ],
    "turing": [
        (
            "\t1e36  TU102GL [Quadro RTX 6000]",
            "NVIDIAQuadro RTX 6000",
            "NVIDIA Quadro RTX 6000",
            24,
            "rtx6000",
        ),
    ],
    "ampere-rtx": [
        ("\t2230  GA102GL [RTX A6000]", "NVIDIARTX A6000", "NVIDIA RTX A6000", 48, "rtxa6000"),
        ("\t2231  GA102GL [RTX A5000]", "NVIDIARTX A5000", "NVIDIA RTX A5000", 24, "rtxa5000"),
        ("\t2233  GA102GL [RTX A5500]", "NVIDIARTX A5500", "NVIDIA RTX A5500", 24, "rtxa5500"),
    ],
    "ada": [
        ("\t27b6  AD104GL [L2]", "NVIDIAL2", "NVIDIA L2", 24, "l2"),
        ("\t26b7  AD102GL [L20]", "NVIDIAL20", "NVIDIA L20", 48, "l20"),
        ("\t26ba  AD102GL [L20]", "NVIDIAL20", "NVIDIA L20", 48, "l20"),
        (
            "\t26b2  AD102GL [RTX 5000 Ada Generation]",
            "NVIDIARTX 5000 Ada Generation",
            "NVIDIA RTX 5000 Ada Generation",
            32,
            "rtx5000-ada",
        ),
        (
            "\t26b3  AD102GL [RTX 5880 Ada Generation]",
            "NVIDIARTX 5880 Ada Generation",
            "NVIDIA RTX 5880 Ada Generation",
            48,
            "rtx5880-ada",
        ),
    ],
    "hopper": [
        ("\t2337  GH100 [H100 SXM5 64GB]", "", "NVIDIA H100 SXM5 64GB", 64, "h100xs"),
        ("\t2339  GH100 [H100 SXM5 94GB]", "", "NVIDIA H100 SXM5 94GB", 94, "h100xl"),
        ("\t2322  GH100 [H800 PCIe]", "", "NVIDIA H800 PCIe", 80, "h800"),
        ("\t2324  GH100 [H800]", "", "NVIDIA H800 SXM5", 80, "h800xm"),
        ("\t233a  GH100 [H800L 94GB]", "", "NVIDIA H800 NVL", 94, "h800l"),
        ("\t2329  GH100 [H20]", "", "NVIDIA H20", 96, "h20"),
        ("\t232c  GH100 [H20 HBM3e]", "", "NVIDIA H20 HBM3e", 141, "h20x"),
    ],
    # Blackwell's vGPU types are named DC-... on every board. The RTX PRO 6000 Blackwell
    # Server Edition has 96 GB (NVIDIA's product page); the RTX PRO 4500 32 GB (DC-32C);
    # NVIDIA names the B200 board "HGX B200 180GB".
    "blackwell": [
        (
            "\t2bb5  GB202GL [RTX PRO 6000 Blackwell Server Edition]",
            "",
            "NVIDIA RTX PRO 6000 Blackwell Server Edition",
            96,
            "dc",
        ),
        (
            "\t2c3a  GB203GL [RTX PRO 4500 Blackwell Server Edition]",
            "",
            "NVIDIA RTX PRO 4500 Blackwell Server Edition",
            32,
            "dc",
        ),
        ("\t2901  GB100 [B200]", "", "NVIDIA B200", 180, "dc"),
    ],
}

CASES = [
    pytest.param(line, esxi, name, gb, prefix, id=f"{family}-{line.split()[0]}")
    for family, boards in FAMILIES.items()
    for line, esxi, name, gb, prefix in boards
]

_DEVICE_LINE = re.compile(r"^\t([0-9a-f]{4})  (.+)$")


def device_id(pci_ids_line: str) -> int:
    match = _DEVICE_LINE.match(pci_ids_line)
    assert match is not None, pci_ids_line
    return int(match.group(1), 16)


def collected(device: int, name: str, sub_vendor: int = 0, sub_device: int = 0) -> Gpu:
    """One GPU as the collector reads it from a host's hardware.pciDevice."""
    pci = vim.host.PciDevice(
        id="0000:3b:00.0",
        classId=DISPLAY_3D,
        vendorId=NVIDIA,
        deviceId=device,
        subVendorId=sub_vendor,
        subDeviceId=sub_device,
        vendorName="NVIDIA Corporation",
        deviceName=name,
    )
    props: dict[str, Any] = {"name": "esx01", "hardware.pciDevice": [pci]}
    host = build_host(ObjectProps("host-1", "HostSystem", props), {})
    (gpu,) = host.gpus
    return gpu


@pytest.mark.parametrize(("line", "esxi_name", "name", "gigabytes", "prefix"), CASES)
def test_each_board_is_known_by_its_ids(
    line: str, esxi_name: str, name: str, gigabytes: int, prefix: str
) -> None:
    gpu = collected(device_id(line), esxi_name)
    assert (gpu.model, gpu.known_model, gpu.memory_mb) == (name, True, gigabytes * 1024)
    assert F.gpu_prefix(gpu) == prefix
    # NVIDIA's published types of the board are found for it.
    board = F.gpu_board(gpu)
    assert board is not None and device_id(line) in board.device_ids


def test_esxis_glued_name_is_kept_as_the_host_reports_it() -> None:
    gpu = collected(device_id("\t1bb3  GP104GL [Tesla P4]"), "NVIDIATesla P4")
    assert (gpu.device_name, gpu.model) == ("NVIDIATesla P4", "NVIDIA P4")


def test_a_device_id_the_catalogue_does_not_know_stays_unknown() -> None:
    # pci.ids "\t1b06  GP102 [GeForce GTX 1080 Ti]": no vGPU board. The B300
    # ("\t3182  GB110 [B300 SXM6 AC]") waits for NVIDIA's vGPU type table.
    gpu = collected(0x1B06, "NVIDIAGeForce GTX 1080 Ti")
    assert (gpu.model, gpu.known_model, gpu.memory_mb) == ("NVIDIAGeForce GTX 1080 Ti", False, 0)
    gpu = collected(0x3182, "")
    assert (gpu.model, gpu.known_model) == ("10de:3182", False)


# pci.ids: "\t1e30  TU102GL [Quadro RTX 6000/8000]" with "\t\t10de 129e  Quadro RTX 8000"
# and "\t\t10de 12ba  Quadro RTX 6000"; "\t1e78  TU102GL [Quadro RTX 6000/8000]" with
# "\t\t10de 13d8  Quadro RTX 8000" and "\t\t10de 13d9  Quadro RTX 6000".
@pytest.mark.parametrize(
    ("device", "sub_device", "name", "gigabytes", "prefix"),
    [
        (0x1E30, 0x129E, "NVIDIA Quadro RTX 8000", 48, "rtx8000"),
        (0x1E30, 0x12BA, "NVIDIA Quadro RTX 6000", 24, "rtx6000"),
        (0x1E78, 0x13D8, "NVIDIA Quadro RTX 8000", 48, "rtx8000"),
        (0x1E78, 0x13D9, "NVIDIA Quadro RTX 6000", 24, "rtx6000"),
    ],
)
def test_the_quadro_rtx_6000_and_8000_differ_by_subsystem(
    device: int, sub_device: int, name: str, gigabytes: int, prefix: str
) -> None:
    gpu = collected(device, "NVIDIAQuadro RTX 6000/8000", NVIDIA, sub_device)
    assert (gpu.model, gpu.known_model, gpu.memory_mb) == (name, True, gigabytes * 1024)
    assert F.gpu_prefix(gpu) == prefix


def test_a_shared_quadro_device_id_without_its_subsystem_is_not_guessed() -> None:
    gpu = collected(0x1E30, "TU102GL [Quadro RTX 6000/8000]")
    assert (gpu.known_model, gpu.memory_mb) == (False, 0)


def test_the_shared_blackwell_prefix_gives_no_frame_buffer_of_its_own() -> None:
    # A DC- vGPU on no GPU gpuaudit knows: 8 GB is a twelfth of an RTX PRO 6000 (96 GB)
    # and a quarter of an RTX PRO 4500 (32 GB), so the prefix alone tells no share and the
    # vGPU counts as a whole GPU. An L4 prefix tells one: 4 GB of 24 GB.
    facts = F.Facts(Inventory())
    dc = GpuAttachment(kind="vgpu", profile="nvidia_dc-8c")
    l4 = GpuAttachment(kind="vgpu", profile="grid_l4-4q")
    vm = Vm(name="vm", moref="vm-1", gpus=[dc, l4])
    assert facts.attachment_fraction(vm, dc) == 1.0
    assert facts.attachment_fraction(vm, l4) == pytest.approx(4 / 24)
