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
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large structure is built and used.

    pyVmomi builds a few objects per XML element, millions for a large estate, all
    alive until the inventory is assembled; the check builds a model, findings and
    evidence per object, all alive until the reports are written. What they leave in
    reference cycles is collected once on the way out, after the caller has dropped
    it: by the last of the pauses that overlap (threads of a fleet), and only if the
    collector was on when the first began.
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
            collect = _pausers == 0 and _resume
            if collect:
                gc.enable()
        if collect:
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
