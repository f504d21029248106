"""Which physical GPU a GPU counter instance names.

ESXi names a GPU's counter instance in one of three ways:

- a PCI address in hex, as ``hardware.pciDevice[].id`` gives it (``0000:3b:00.0``,
  or without the segment, ``3b:00.0``);
- a PCI address in ESXi's three-digit form (``000:059:00.0``), whose numbers are
  decimal, as in esx.conf and older ``lspci``: bus 059 is bus 0x3b. A bus of three
  digits is read as decimal only; one that holds a hex letter matches no address;
- ``gpuN`` (or ``gpu-N``), the host driver's own numbering. The NVIDIA host driver
  (the vGPU manager) numbers only the GPUs it owns, those in Shared or Shared Direct
  (vGPU) mode, in PCI order; a GPU passed through to a VM, or with no host driver
  (``basic``), is not among them. Where the host reported no graphics type for any
  GPU, every GPU not in active passthrough is counted. A host that numbers
  ``gpu1..gpuN`` for N such GPUs counts from one.

A host with one GPU and one instance matches them whatever the instance's name.
"""

from __future__ import annotations

import re

from gpuaudit.inventory import Gpu

# Graphics types under which the NVIDIA host driver owns a GPU.
DRIVER_TYPES = frozenset({"shared", "sharedDirect"})

_HEX = re.compile(r"^(?:([0-9a-f]{1,4}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})\.([0-7])$")
_DECIMAL = re.compile(r"^(?:([0-9]{1,4}):)?([0-9]{3}):([0-9]{2})\.([0-7])$")
_INDEX = re.compile(r"^gpu-?(\d+)$")

Address = tuple[int, int, int, int]  # segment, bus, slot, function


def pci_key(text: str) -> Address | None:
    """A PCI address as numbers; None for text that is not one."""
    text = text.strip().lower()
    found = _DECIMAL.match(text)
    if found is not None:
        segment, bus, slot, function = found.groups()
        key = (int(segment or "0"), int(bus), int(slot), int(function))
        return key if key[1] <= 0xFF and key[2] <= 0x1F else None
    found = _HEX.match(text)
    if found is None:
        return None
    segment, bus, slot, function = found.groups()
    return int(segment or "0", 16), int(bus, 16), int(slot, 16), int(function)


def driver_owned(gpus: list[Gpu]) -> list[Gpu]:
    """The GPUs the host driver numbers, in PCI order."""
    if any(g.graphics_type is not None for g in gpus):
        owned = [g for g in gpus if g.graphics_type in DRIVER_TYPES and not g.passthrough_active]
    else:
        owned = [g for g in gpus if not g.passthrough_active]
    return sorted(owned, key=lambda g: pci_key(g.pci_id) or (0, 0, 0, 0))


def match_instances(
    gpus: list[Gpu], instances: list[str]
) -> tuple[dict[str, tuple[Gpu, str]], list[str]]:
    """Counter instance -> (GPU, how it matched); and the instances that matched none."""
    by_pci = {pci_key(g.pci_id): g for g in gpus}
    ordered = driver_owned(gpus)
    indices = {i: int(m.group(1)) for i in instances if (m := _INDEX.match(i.lower()))}
    base = 0
    if indices and 0 not in indices.values() and max(indices.values()) == len(ordered):
        base = 1
    matches: dict[str, tuple[Gpu, str]] = {}
    unmatched = []
    for instance in instances:
        key = pci_key(instance)
        gpu = by_pci.get(key) if key else None
        how = "pci"
        if gpu is None and instance in indices:
            position = indices[instance] - base
            gpu = ordered[position] if 0 <= position < len(ordered) else None
            how = "order"
        if gpu is None and len(gpus) == 1 and len(instances) == 1:
            gpu, how = gpus[0], "only"
        if gpu is None or any(g is gpu for g, _ in matches.values()):
            unmatched.append(instance)
            continue
        matches[instance] = (gpu, how)
    return matches, unmatched
