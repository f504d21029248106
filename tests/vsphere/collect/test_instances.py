"""gpuaudit/vsphere/collect/instances.py: which GPU a counter instance names, by hand.

The three-digit form is ESXi's decimal one (esx.conf's ``000:059:00.0`` is bus 0x3b);
``gpuN`` counts the GPUs the host driver owns (Shared or Shared Direct), in PCI order.
"""

from __future__ import annotations

from gpuaudit.inventory import Gpu
from gpuaudit.vsphere.collect.instances import driver_owned, match_instances, pci_key


def _gpu(pci: str, graphics: str | None = "sharedDirect", active: bool = False) -> Gpu:
    return Gpu(
        pci_id=pci,
        vendor_id=0x10DE,
        device_id=0x2235,
        graphics_type=graphics,
        passthrough_active=active,
    )


def test_three_digit_buses_are_decimal() -> None:
    assert pci_key("000:059:00.0") == (0, 0x3B, 0, 0)
    assert pci_key("000:024:00.0") == (0, 0x18, 0, 0)
    assert pci_key(" 000:175:31.7 ") == (0, 175, 31, 7)
    assert pci_key("059:00.0") == (0, 59, 0, 0)
    assert pci_key("0001:059:10.1") == (1, 59, 10, 1)
    # Two-digit buses stay hexadecimal.
    assert pci_key("0000:3b:00.0") == (0, 0x3B, 0, 0)
    assert pci_key("0000:24:10.0") == (0, 0x24, 0x10, 0)
    assert pci_key("000a:3b:1f.7") == (10, 0x3B, 0x1F, 7)
    assert pci_key("3B:00.0") == (0, 0x3B, 0, 0)


def test_decimal_forms_out_of_range_or_with_letters_are_no_address() -> None:
    assert pci_key("000:256:00.0") is None  # a bus is at most 255
    assert pci_key("000:255:00.0") == (0, 255, 0, 0)
    assert pci_key("000:059:32.0") is None  # a slot is at most 31
    assert pci_key("000:059:31.0") == (0, 59, 31, 0)
    assert pci_key("000:05e:00.0") is None
    assert pci_key("000:059:0a.0") is None
    assert pci_key("000:059:00.8") is None
    assert pci_key("0000:3b:00.8") is None
    assert pci_key("00000:3b:00.0") is None
    assert pci_key("gpu0") is None


def test_a_decimal_instance_matches_the_gpu_at_that_bus() -> None:
    at_3b, at_24, at_18 = _gpu("0000:3b:00.0"), _gpu("0000:24:00.0"), _gpu("0000:18:00.0")
    gpus = [at_3b, at_24, at_18]
    assert match_instances(gpus, ["000:059:00.0", "000:024:00.0"]) == (
        {"000:059:00.0": (at_3b, "pci"), "000:024:00.0": (at_18, "pci")},
        [],
    )
    # Not the GPU at bus 0x24, and no instance names it.
    assert match_instances([at_24, at_3b], ["000:024:00.0"]) == ({}, ["000:024:00.0"])


def test_gpu_n_counts_only_the_gpus_the_host_driver_owns() -> None:
    passthrough = _gpu("0000:3b:00.0", "direct", active=True)
    basic = _gpu("0000:5e:00.0", "basic")
    vgpu = _gpu("0000:af:00.0")
    shared = _gpu("0000:d8:00.0", "shared")
    gpus = [shared, vgpu, basic, passthrough]
    assert driver_owned(gpus) == [vgpu, shared]
    assert match_instances(gpus, ["gpu0", "gpu1", "gpu2"]) == (
        {"gpu0": (vgpu, "order"), "gpu1": (shared, "order")},
        ["gpu2"],
    )
    # Numbered from one over the two the driver owns.
    assert match_instances(gpus, ["gpu1", "gpu2"]) == (
        {"gpu1": (vgpu, "order"), "gpu2": (shared, "order")},
        [],
    )


def test_a_sharedirect_gpu_in_active_passthrough_is_not_the_drivers() -> None:
    odd = _gpu("0000:3b:00.0", "sharedDirect", active=True)
    vgpu = _gpu("0000:af:00.0")
    assert driver_owned([odd, vgpu]) == [vgpu]


def test_without_any_graphics_type_every_gpu_not_passed_through_counts() -> None:
    a = _gpu("0000:3b:00.0", None)
    b = _gpu("0000:5e:00.0", None, active=True)
    c = _gpu("0000:af:00.0", None)
    assert driver_owned([c, b, a]) == [a, c]
    assert match_instances([c, b, a], ["gpu0", "gpu1"]) == (
        {"gpu0": (a, "order"), "gpu1": (c, "order")},
        [],
    )
    # One GPU with a graphics type is enough to go by the types.
    d = _gpu("0000:d8:00.0", "basic")
    assert driver_owned([a, d]) == []


def test_the_only_gpu_and_the_only_instance() -> None:
    one = _gpu("0000:3b:00.0", "direct", active=True)
    assert match_instances([one], ["gpu0"]) == ({"gpu0": (one, "only")}, [])


def test_two_instances_that_name_one_gpu_match_it_once() -> None:
    at_3b, at_5e = _gpu("0000:3b:00.0"), _gpu("0000:5e:00.0")
    # 0000:3b:00.0 and ESXi's decimal 000:059:00.0 are the same address (0x3b = 59).
    assert match_instances([at_3b, at_5e], ["0000:3b:00.0", "000:059:00.0", "0000:5e:00.0"]) == (
        {"0000:3b:00.0": (at_3b, "pci"), "0000:5e:00.0": (at_5e, "pci")},
        ["000:059:00.0"],
    )


def test_gpu_n_counts_from_one_only_when_the_highest_number_is_the_count() -> None:
    first, second = _gpu("0000:3b:00.0"), _gpu("0000:5e:00.0")
    # gpu-N and upper case are the same numbering; gpu2 is the highest of two GPUs.
    assert match_instances([second, first], ["GPU-1", "gpu-2"]) == (
        {"GPU-1": (first, "order"), "gpu-2": (second, "order")},
        [],
    )
    # gpu3 on a host of two: no numbering from one, so gpu1 is the second GPU.
    assert match_instances([second, first], ["gpu1", "gpu3"]) == (
        {"gpu1": (second, "order")},
        ["gpu3"],
    )
