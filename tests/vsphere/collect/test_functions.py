"""gpuaudit/vsphere/collect/functions.py: SR-IOV virtual functions, by hand.

govc's gpu.host.info keeps an NVIDIA device only when its subsystem device id is
not 0x0000 (govmomi, isPhysicalGPU); the functions of an A40 at 0000:3b:00.0 sit at
0000:3b:00.4 onwards.
"""

from __future__ import annotations

from gpuaudit.inventory import Gpu
from gpuaudit.vsphere.collect.functions import attach, is_virtual_function


def test_an_nvidia_device_without_subsystem_device_is_a_virtual_function() -> None:
    assert is_virtual_function(0x10DE, 0x10DE, 0x0000)
    assert not is_virtual_function(0x10DE, 0x10DE, 0x145A)  # the A40's own subsystem
    assert not is_virtual_function(0x10DE, 0x10DE, 0x0001)
    assert not is_virtual_function(0x10DE, 0x0000, 0x0000)  # no subsystem reported at all
    assert not is_virtual_function(0x10DE, 0x1028, 0x0000)
    assert not is_virtual_function(0x1002, 0x10DE, 0x0000)  # AMD: not judged by it
    assert not is_virtual_function(0x8086, 0x8086, 0x0000)


def _gpu(pci: str, vendor: int = 0x10DE) -> Gpu:
    return Gpu(pci_id=pci, vendor_id=vendor, device_id=0x2235)


def test_functions_attach_to_the_gpu_of_their_bus() -> None:
    a, b = _gpu("0000:3b:00.0"), _gpu("0000:5e:00.0")
    left = attach([a, b], ["0000:3b:00.4", "0000:5e:00.4", "0000:3b:01.0", "0000:3b:00.5"])
    assert left == []
    assert a.virtual_functions == ["0000:3b:00.4", "0000:3b:01.0", "0000:3b:00.5"]
    assert b.virtual_functions == ["0000:5e:00.4"]


def test_functions_no_single_gpu_takes_are_unattached() -> None:
    a, twin = _gpu("0000:3b:00.0"), _gpu("0000:3b:00.1")
    other_segment = _gpu("0001:5e:00.0")
    amd = _gpu("0000:af:00.0", vendor=0x1002)
    odd = _gpu("not-an-address")
    left = attach(
        [a, twin, other_segment, amd, odd],
        ["0000:3b:00.4", "0000:5e:00.4", "0001:5e:00.4", "0000:af:00.4", "0000:d8:00.4", "vf"],
    )
    assert left == ["0000:3b:00.4", "0000:5e:00.4", "0000:af:00.4", "0000:d8:00.4", "vf"]
    assert other_segment.virtual_functions == ["0001:5e:00.4"]
    assert a.virtual_functions == twin.virtual_functions == amd.virtual_functions == []
    assert attach([], ["0000:3b:00.4"]) == ["0000:3b:00.4"]
