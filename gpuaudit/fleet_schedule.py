"""Which targets of a fleet scan to start, so that their memory stays within a budget.

Pure: sizes in, decisions out. gpuaudit.fleet asks it each time a target finishes.

A target's expected peak is its size in objects (hosts + VMs) times a figure per
object measured by the benchmark. Targets start largest first (ties in file
order); each time a slot frees, every waiting target whose expected peak still
fits beside the running ones starts, in that order. A target larger than the
whole budget still runs, but alone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

MIB = 1024 * 1024

# The peak resident memory of one scan per object (host or VM) of its vCenter:
# 929 MiB for 2,500 hosts + 45,000 VMs (47,500 objects) at the configuration
# maximum, docs/performance.md (bench.run --max, commit ee9960c), that is
# 929 / 47,500 = 0.0196 MiB (20 KiB) per object. The peak at the maximum over its
# objects is the largest per-object figure measured (289 MiB over 11,875 objects
# is 0.0243 at a quarter of it, which includes the interpreter's own 70 MiB or
# so, paid once per process, not once per target).
MIB_PER_OBJECT = 929 / 47_500

# A target with no scan in the history is expected at the configuration maximum
# (2,500 hosts, 45,000 VMs): no cheaper count comes before its own scan, and
# expecting it smaller could overshoot the budget.
UNKNOWN_OBJECTS = 47_500

# The default budget: half of the machine's memory.
DEFAULT_SHARE = 0.5

_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(i?B?)\s*", re.IGNORECASE)
_POWERS = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4}


class SizeError(ValueError):
    """A memory size that cannot be read."""


def parse_size(text: str) -> int:
    """Bytes in ``text``: a number with an optional unit, 1.5GiB, 800MiB, 2G, 512M, 1048576.

    K, M, G and T are powers of 1,024 with or without "iB" (memory is counted so).
    Raises SizeError for anything else, or for zero.
    """
    match = _SIZE.fullmatch(text)
    if match is None:
        raise SizeError(f"{text!r} is not a size (for example 1.5GiB, 800MiB or 2G)")
    number, unit, suffix = match.groups()
    if suffix and not unit and suffix.lower() != "b":
        raise SizeError(f"{text!r} is not a size (for example 1.5GiB, 800MiB or 2G)")
    size = int(float(number) * 1024 ** _POWERS[unit.upper()])
    if size <= 0:
        raise SizeError(f"{text!r}: the memory budget must be more than 0")
    return size


def machine_memory() -> int | None:
    """The machine's physical memory in bytes, or None where the system does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return None


def default_budget() -> int:
    """Half of the machine's memory; 2 GiB where it cannot be read."""
    memory = machine_memory()
    return int(memory * DEFAULT_SHARE) if memory else 2 * 1024 * MIB


def expected_peak(objects: int | None) -> int:
    """The expected peak of one target's scan in bytes, from its hosts + VMs (None: unknown)."""
    count = UNKNOWN_OBJECTS if objects is None else objects
    return int(count * MIB_PER_OBJECT * MIB)


def start_order(peaks: Sequence[int]) -> list[int]:
    """The indices of the targets, largest expected peak first, ties in file order."""
    return sorted(range(len(peaks)), key=lambda i: (-peaks[i], i))


def to_start(
    waiting: Sequence[int],
    running: Sequence[int],
    peaks: Sequence[int],
    budget: int,
    concurrency: int,
) -> list[int]:
    """Which of ``waiting`` (in start order) to start now, beside ``running``.

    Each starts if a slot is free and the expected peaks of the running ones and
    its own add up to at most ``budget``; when nothing runs, the first waiting one
    starts whatever its size, so a target larger than the budget runs alone.
    """
    started: list[int] = []
    held = sum(peaks[i] for i in running)
    busy = len(running)
    for index in waiting:
        if busy >= concurrency:
            break
        if busy and held + peaks[index] > budget:
            continue
        started.append(index)
        held += peaks[index]
        busy += 1
    return started
