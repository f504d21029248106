"""SR-IOV virtual functions among a host's PCI devices.

With SR-IOV enabled (Ampere and later GPUs back each vGPU with a virtual function),
ESXi lists a GPU's virtual functions in ``hardware.pciDevice`` beside the GPU
itself: NVIDIA display-class devices whose subsystem device id is 0x0000. A
physical board always carries a subsystem id of its own, so govc's
``gpu.host.info`` (govmomi, ``isPhysicalGPU``) keeps only NVIDIA devices whose
``subDeviceId`` is not 0x0000; the collector does the same where the subsystem vendor
is NVIDIA (a device that reports no subsystem at all, vendor 0 too, stays a GPU: no
GPU is dropped on a missing figure). A virtual function is
no GPU: it is recorded on its physical GPU, the one NVIDIA GPU on the same PCI
segment and bus (where the functions sit behind the GPU's own function 0, as
``lspci`` shows them); one whose bus holds no physical GPU, or several, is kept
on the host as unattached. That the functions share their GPU's bus is inferred
from ``lspci`` listings of Linux hosts, not yet confirmed from an ESXi host.
"""

from __future__ import annotations

from gpuaudit.inventory import Gpu
from gpuaudit.knowledge.catalog import NVIDIA
from gpuaudit.vsphere.collect.instances import pci_key


def is_virtual_function(vendor_id: int, sub_vendor_id: int, sub_device_id: int) -> bool:
    """An NVIDIA device with subsystem 10de:0000: a virtual function, not a GPU (ids
    unsigned). A device that reports no subsystem at all (0000:0000) stays a GPU."""
    return vendor_id == NVIDIA and sub_vendor_id == NVIDIA and sub_device_id == 0


def attach(gpus: list[Gpu], functions: list[str]) -> list[str]:
    """Record each virtual function (a PCI id) on the physical NVIDIA GPU of its
    segment and bus; return those no single GPU takes, in the order given."""
    by_bus: dict[tuple[int, int], list[Gpu]] = {}
    for gpu in gpus:
        key = pci_key(gpu.pci_id)
        if key is not None and gpu.vendor_id == NVIDIA:
            by_bus.setdefault(key[:2], []).append(gpu)
    unattached = []
    for function in functions:
        key = pci_key(function)
        owners = by_bus.get(key[:2], []) if key is not None else []
        if len(owners) == 1:
            owners[0].virtual_functions.append(function)
        else:
            unattached.append(function)
    return unattached
