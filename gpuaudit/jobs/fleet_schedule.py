"""Which targets of a fleet scan to start, so that their memory stays within a budget.

Pure: sizes in, decisions out. gpuaudit.jobs.fleet asks it each time a target finishes.

A target's expected peak is that of its own scan's process: a base every process
pays (the interpreter, gpuaudit, what it shares with the fleet's process it was
forked from) plus a figure per object (host or VM) of its vCenter, both measured by
the benchmark. Targets start largest first (ties in file order); each time a slot
frees, every waiting target whose expected peak still fits beside the running ones
starts, in that order. A target larger than the whole budget still runs, but alone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

MIB = 1024 * 1024

# Two targets' scans, each in a process of its own, measured by bench.fleet
# (docs/performance.md, "A fleet within a memory budget"): 376 MiB for 625 hosts +
# 11,250 VMs (11,875 objects) and 110 MiB for 39 hosts + 703 VMs (742 objects).
# The line through them: (376 - 110) / (11,875 - 742) = 0.0239 MiB (24.5 KiB) per
# object, and 110 - 742 x 0.0239 = 92 MiB for the process itself. A process's
# resident memory counts the pages it still shares with the fleet's process, so
# summed over the running processes these figures are what the system is asked for
# at most, which is what the budget bounds.
MIB_PER_OBJECT = (376 - 110) / (11_875 - 742)
PROCESS_MIB = 110 - 742 * MIB_PER_OBJECT

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
    return int((PROCESS_MIB + count * MIB_PER_OBJECT) * MIB)


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
