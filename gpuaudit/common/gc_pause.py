"""The cyclic garbage collector kept off what it cannot free.

A pause (``gc_paused``) over work that builds millions of objects and keeps them: the
collector's parse of vCenter's answers, and the check of an inventory. Each full
collection walks every live object, and such work frees next to none of them while it
runs: at the configuration maximum the collections took a sixth of a 10,000-VM
collection, and nearly a third of the check of 45,000 VMs. What the work leaves in
reference cycles is collected once, on the way out.

A freeze (``long_lived``) over work that reads a large structure built before it: the
check reads the inventory, the reports read the inventory and the check's results.
Those objects outlive the work, but every full collection during it walks them again
(at the configuration maximum, each of the reports' full collections took 0.8 s of
walking what could not be freed). Frozen, they are left out of collections until the
work ends; what the work itself makes is collected as usual.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

# The collector's switch is one per process, and a fleet collects and checks several
# vCenters at once in threads: the pause is counted, so that one pause's end neither
# switches the collector back on, nor runs a full collection over every live object,
# in the middle of another's work.
_pause_lock = threading.Lock()
_pausers = 0
_resume = False  # whether the last pauser switches the collector back on
_freezers = 0


@contextlib.contextmanager
def gc_paused(collect: bool = True) -> Iterator[None]:
    """Pause the cyclic garbage collector while a large structure is built and used.

    pyVmomi builds a few objects per XML element, millions for a large estate, all
    alive until the inventory is assembled; the check builds a model, findings and
    evidence per object, all alive until the reports are written. What they leave in
    reference cycles is collected once on the way out, after the caller has dropped
    it: by the last of the pauses that overlap (threads of a fleet), and only if the
    collector was on when the first began.

    ``collect=False`` is for work that leaves no reference cycles (the check: a test
    holds it to that) inside a freeze (``long_lived``): what it made and keeps joins the
    frozen objects on the way out instead of being walked by a full collection (half a
    second at the configuration maximum) that would find nothing to free; the freeze's
    end moves it to the oldest generation. Outside a freeze it is collected as ever.
    """
    global _pausers, _resume
    with _pause_lock:
        if _pausers == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pausers += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pausers -= 1
            last = _pausers == 0 and _resume
            keep = not collect and _freezers > 0
            if keep:
                gc.freeze()  # before the collector is on again: no collection walks it
            if last:
                gc.enable()
        if last and not keep:
            gc.collect()


@contextlib.contextmanager
def long_lived() -> Iterator[None]:
    """Leave every object alive at the start out of the collector's walks until the end.

    The objects are not kept alive by this: one whose last reference goes is freed
    as ever; only a reference cycle among them waits for the end, when they return
    to the oldest generation. The freeze is the process's: in a fleet, it also holds
    what other threads had built when it began (a page being parsed, a check's
    results) until the last freeze that overlaps ends, and then they are collected.
    """
    global _freezers
    with _pause_lock:
        if _freezers == 0:
            gc.freeze()
        _freezers += 1
    try:
        yield
    finally:
        with _pause_lock:
            _freezers -= 1
            if _freezers == 0:
                gc.unfreeze()
