"""What VMware's published stun times say of a vGPU VM's stun time: bounds, never a guess.

The tables, at 10 Gb/s, quoted from VMware's pages:

- ESXi 7.0 and later: vCenter Server and Host Management 7.0, "Migrating Virtual
  Machines with vGPU" (GUID-8FE6A0DA-49E9-472B-815B-D630CF2014AD), "Estimated
  Worst-Case Stun Times", by vGPU memory and VM memory, "tested over a 10Gb network
  with NVIDIA Tesla V100 PCIe 32 GB GPUs". The same page's expected times (8 GB
  12 s, 32 GB 39 s) are for a partly used frame buffer and stay below the worst case.
- ESXi 6.7: vCenter Server and Host Management 6.7, the same topic, first edition
  (Tesla P40, 10 Gb): stun time by used vGPU frame buffer; that page gives no VM
  memory. 16 GB and 24 GB are "100+ (vMotion timeout)": more than 100 s, no more.

Every row and column of the tables rises, so a VM between published points lies
between their times: the point at or below each of its sizes bounds the time from
below, the point at or above from above. Beyond the last row or column nothing
bounds it from above; below the first, nothing from below.

VMware's estimate follows the slower vMotion NIC of the two hosts (vSphere 8.0,
"vMotion stun time limit": a 25 Gbps source and a 10 Gbps destination are
estimated at 10 Gbps), so a faster path never stuns longer: above 10 Gb/s the
10 Gb/s time bounds it from above only, below 10 Gb/s from below only.

vCenter's own estimates (8.0 U2 and later, per vGPU profile at a few bandwidths)
are bounded alike between its bandwidths. The stun time falls like a fixed part plus
a part over the bandwidth, a convex curve: between two published bandwidths the
straight line joining them lies above it, and the point at the higher bandwidth
below it. Above the highest bandwidth, the highest point's time bounds it from above
and nothing from below; below the lowest, the lowest point's time bounds it from
below, and that time scaled up with the lowest bandwidth over the path's, as if all
of it were transfer, from above.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from gpuaudit.inventory import StunEstimate

REFERENCE_BANDWIDTH_MBPS = 10_000  # every published table: "tested over a 10Gb network"

Cell = tuple[float, float | None]  # at least, at most (None: nothing bounds it above)


@dataclass(frozen=True)
class Bounds:
    """A stun time is at least ``low`` and at most ``high`` seconds; None where nothing
    published bounds it, and ``unknown`` says why."""

    low: float | None
    high: float | None
    unknown: tuple[str, ...] = ()


def exact(*seconds: float) -> tuple[Cell, ...]:
    """A table row of published times, each both the least and the most."""
    return tuple((s, s) for s in seconds)


def bracket(points: tuple[float, ...], value: float) -> tuple[int | None, int | None]:
    """The index of the last published point at or below ``value``, and of the first at
    or above it; None where there is none."""
    below = [i for i, p in enumerate(points) if p <= value]
    above = [i for i, p in enumerate(points) if p >= value]
    return (below[-1] if below else None), (above[0] if above else None)


@dataclass(frozen=True)
class StunTable:
    """VMware's stun times at 10 Gb/s: a row per GB of vGPU frame buffer, a column per GB
    of VM memory (no columns where the page gives no VM memory)."""

    name: str
    vgpu_gb: tuple[float, ...]
    vm_memory_gb: tuple[float, ...]
    cells: tuple[tuple[Cell, ...], ...]

    def bounds(self, vgpu_gb: float, vm_memory_gb: float | None) -> Bounds:
        """The bounds at 10 Gb/s for one vGPU's data in a VM of ``vm_memory_gb`` (None:
        not known)."""
        unknown = []
        row_low, row_high = bracket(self.vgpu_gb, vgpu_gb)
        if row_high is None:
            unknown.append(
                f"{vgpu_gb:g} GB of vGPU data is beyond {self.name}, which ends at "
                f"{self.vgpu_gb[-1]:g} GB"
            )
        col_low: int | None = 0
        col_high: int | None = 0
        if self.vm_memory_gb and vm_memory_gb is None:
            col_low = col_high = None
            unknown.append("the VM's memory size is unknown")
        elif self.vm_memory_gb and vm_memory_gb is not None:
            col_low, col_high = bracket(self.vm_memory_gb, vm_memory_gb)
            if col_high is None:
                unknown.append(
                    f"{vm_memory_gb:g} GB of VM memory is beyond {self.name}, which ends at "
                    f"{self.vm_memory_gb[-1]:g} GB"
                )
        low = None
        if row_low is not None and col_low is not None:
            low = self.cells[row_low][col_low][0]
        high = None
        if row_high is not None and col_high is not None:
            high = self.cells[row_high][col_high][1]
            if high is None:
                unknown.append(
                    f"{self.name} gives only a least time at {self.vgpu_gb[row_high]:g} GB"
                )
        return Bounds(low, high, tuple(unknown))


TABLE_70 = StunTable(
    name="VMware's ESXi 7.0 table",
    vgpu_gb=(1, 2, 4, 8, 16, 32),
    vm_memory_gb=(4, 8, 16, 32),
    cells=(
        exact(5, 6, 8, 12),  # 1 GB of vGPU memory
        exact(7, 9, 11, 15),  # 2 GB
        exact(13, 14, 16, 21),  # 4 GB
        exact(24, 25, 28, 32),  # 8 GB
        exact(47, 48, 50, 54),  # 16 GB
        exact(91, 92, 95, 99),  # 32 GB
    ),
)
TABLE_67 = StunTable(
    name="VMware's ESXi 6.7 table",
    vgpu_gb=(1, 2, 4, 8, 10, 12, 16, 24),
    vm_memory_gb=(),
    cells=(
        *((row,) for row in exact(9.0, 16.5, 31.4, 61.3, 76.3, 91.2)),
        ((100, None),),  # 16 GB: "100+ (vMotion timeout)"
        ((100, None),),  # 24 GB: the same
    ),
)


def at_bandwidth(bounds: Bounds, bandwidth_mbps: int) -> Bounds:
    """A table's bounds at 10 Gb/s read for a path of ``bandwidth_mbps``."""
    if bandwidth_mbps == REFERENCE_BANDWIDTH_MBPS:
        return bounds
    why = f"VMware publishes stun times at 10 Gb/s only, not at {bandwidth_mbps / 1000:g} Gb/s"
    if bandwidth_mbps > REFERENCE_BANDWIDTH_MBPS:
        return Bounds(None, bounds.high, (*bounds.unknown, why))
    return Bounds(bounds.low, None, (*bounds.unknown, why))


def interpolate(points: list[StunEstimate], bandwidth_mbps: int) -> float:
    """vCenter's stun time at ``bandwidth_mbps`` from its points, an upper bound (see the
    module docstring)."""
    ordered = sorted(points, key=lambda p: p.bandwidth_mbps)
    low, high = ordered[0], ordered[-1]
    if bandwidth_mbps >= high.bandwidth_mbps:
        return float(high.stun_s)
    if bandwidth_mbps <= low.bandwidth_mbps:
        return low.stun_s * low.bandwidth_mbps / bandwidth_mbps
    for left, right in itertools.pairwise(ordered):
        if left.bandwidth_mbps <= bandwidth_mbps <= right.bandwidth_mbps:
            share = (bandwidth_mbps - left.bandwidth_mbps) / (
                right.bandwidth_mbps - left.bandwidth_mbps
            )
            return left.stun_s + share * (right.stun_s - left.stun_s)
    return float(low.stun_s)  # not reached: the points cover the range


def vcenter_bounds(points: list[StunEstimate], bandwidth_mbps: int) -> Bounds:
    """What vCenter's points for one profile say of its stun time at ``bandwidth_mbps``."""
    faster = sorted(
        (p for p in points if p.bandwidth_mbps >= bandwidth_mbps), key=lambda p: p.bandwidth_mbps
    )
    if not faster:
        why = f"vCenter estimates no bandwidth at or above {bandwidth_mbps / 1000:g} Gb/s"
        return Bounds(None, interpolate(points, bandwidth_mbps), (why,))
    return Bounds(float(faster[0].stun_s), interpolate(points, bandwidth_mbps))


def combined(parts: list[Bounds], add_lows: bool) -> Bounds:
    """A VM's bounds from its vGPUs': at most the sum of their upper bounds, since vSphere
    adds the contributions of a VM's PCI devices (vSphere 8.0, "vMotion stun time limit").
    At least the largest lower bound; the sum of them where each is a device's contribution
    (``add_lows``: vCenter's), but a table's times each hold the VM's memory too."""
    lows = [p.low for p in parts]
    known_lows = [low for low in lows if low is not None]
    highs = [p.high for p in parts if p.high is not None]
    low: float | None = max(known_lows, default=None)
    if add_lows and len(known_lows) == len(lows):
        low = sum(known_lows)
    high = sum(highs) if len(highs) == len(parts) else None
    unknown = tuple(dict.fromkeys(why for p in parts for why in p.unknown))
    return Bounds(low, high, unknown)
