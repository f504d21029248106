"""NVIDIA vGPU type names as ESXi and vCenter give them: board, MIG slices, frame
buffer and series.

Every published form:

- ``grid_l4-4q``, ``nvidia_l40s-48q``: the type name (NVIDIA's ``L4-4Q``) in lower
  case behind a ``grid_`` or ``nvidia_`` prefix; a board name may hold hyphens, each
  followed by a letter (``grid_rtx6000-ada-48q``), so a MIG slice count never joins it;
- MIG-backed ``grid_a100-3-20c`` (slices, then size) and media extensions ending ``me``
  (``grid_a100-1-5cme``);
- the ``B4`` virtual PC types of Maxwell and Pascal boards and the T4 (``grid_m60-2b4``,
  ``grid_p40-1b4``, ``grid_t4-2b4``): a B type with four displays, of the size its
  number gives (NVIDIA's vGPU 8 user guide, "Virtual GPU Types": M60-2B4 has 2048 MB);
- Kepler's GRID K1 and K2 Q types (``grid_k120q`` ... ``grid_k280q``), whose number
  names no size: 512, 1024, 2048 and 4096 MB for K1x0Q and K2x0Q with x 2, 4, 6, 8
  (NVIDIA GRID vGPU User Guide, releases 1 to 4, "GRID K1 and K2 virtual GPU types").
  K100 and K200 carry no series letter and are left unread;
- Blackwell's ``DC-`` types, which name no board (``DC-32C``, MIG-backed
  ``DC-2-16C``; NVIDIA AI Enterprise 8, Blackwell vGPU types), with or without a prefix.

Size 0 (M10-0B, M60-0Q) is 512 MB (NVIDIA's vGPU 10 user guide). A name of any other
form is not read: the caller says so, never guesses a size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GB = 1024
ZERO_PROFILE_MB = 512  # the Maxwell types of size 0

_PROFILE = re.compile(
    r"^(?:grid|nvidia)_(?P<board>[a-z0-9]+(?:-[a-z][a-z0-9]*)*)-"
    r"(?:(?P<slices>\d+)-)?(?P<gib>\d+)(?P<series>[abcq])(?P<tail>me|4)?$"
)
_KEPLER = re.compile(r"^(?:grid|nvidia)_k(?P<board>[12])(?P<size>[2468])0q$")
_DC = re.compile(r"^(?:(?:grid|nvidia)_)?dc-(?:(?P<slices>\d+)-)?(?P<gib>\d+)(?P<series>[abcq])$")
# K1x0Q and K2x0Q: the frame buffer by x.
_KEPLER_MB = {"2": 512, "4": 1024, "6": 2048, "8": 4096}


@dataclass(frozen=True)
class Reading:
    board: str  # the name's board: "l4", "m60", "k1", "dc"
    memory_mb: int
    series: str  # q, b, a or c
    mig_slices: int | None = None


def read(name: str) -> Reading | None:
    """A type name's board, frame buffer, series and MIG slices; None for another form."""
    text = name.strip().lower()
    found = _PROFILE.match(text)
    if found is not None:
        tail = found["tail"]
        if tail == "4" and found["series"] != "b":
            return None  # only B types come with four displays
        if tail == "me" and not found["slices"]:
            return None  # media extensions are MIG-backed
        return Reading(
            board=found["board"],
            memory_mb=int(found["gib"]) * GB or ZERO_PROFILE_MB,
            series=found["series"],
            mig_slices=int(found["slices"]) if found["slices"] else None,
        )
    found = _KEPLER.match(text)
    if found is not None:
        return Reading(board=f"k{found['board']}", memory_mb=_KEPLER_MB[found["size"]], series="q")
    found = _DC.match(text)
    if found is not None and int(found["gib"]) > 0:
        return Reading(
            board="dc",
            memory_mb=int(found["gib"]) * GB,
            series=found["series"],
            mig_slices=int(found["slices"]) if found["slices"] else None,
        )
    return None
