"""A pause of the cyclic garbage collector over work that builds millions of objects and
keeps them: the collector's parse of vCenter's answers, and the check of an inventory.

Each full collection walks every live object, and such work frees next to none of them
while it runs: at the configuration maximum the collections took a sixth of a 10,000-VM
collection, and nearly a third of the check of 45,000 VMs. What the work leaves in
reference cycles is collected once, on the way out.
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
