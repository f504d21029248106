"""gpuaudit.common.gc_pause: the collector's pause, counted across the threads of a fleet."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest

from gpuaudit.common.gc_pause import gc_paused, long_lived


def _overlapping(
    context: Callable[[], AbstractContextManager[None]], look: Callable[[], dict[str, object]]
) -> dict[str, object]:
    """Two threads in ``context``, the second entering before the first leaves;
    what ``look`` sees in the second once the first has left."""
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def first() -> None:
        with context():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    def second() -> None:
        first_in.wait(10)
        with context():
            second_in.set()
            first_out.wait(10)
            seen.update(look())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    return seen


def test_overlapping_pauses_of_a_fleet_resume_and_collect_once_at_the_last_end() -> None:
    # Two targets' retrievals in threads: the first to end must not switch the
    # collector back on under the other, nor run a full collection then.
    runs = gc.get_stats()[2]["collections"]
    seen = _overlapping(
        gc_paused,
        lambda: {
            "enabled after the first ended": gc.isenabled(),
            "collections then": gc.get_stats()[2]["collections"],
        },
    )
    assert seen == {"enabled after the first ended": False, "collections then": runs}
    assert gc.isenabled()
    assert gc.get_stats()[2]["collections"] == runs + 1


def test_the_collector_is_paused_while_parsing_and_runs_after() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    runs = gc.get_stats()[2]["collections"]
    with gc_paused():
        pass
    assert gc.get_stats()[2]["collections"] == runs + 1
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # left as it was
    finally:
        gc.enable()


class _Cycle:
    """An object in a reference cycle with itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def _alive(ref: weakref.ref[_Cycle]) -> bool:
    return ref() is not None


def test_what_was_alive_before_is_left_out_of_collections_until_the_end() -> None:
    old = _Cycle()
    old_ref = weakref.ref(old)
    with long_lived():
        assert gc.get_freeze_count() > 0
        del old  # garbage now, but frozen: a collection during the work leaves it
        gc.collect()
        assert _alive(old_ref)
        new = _Cycle()
        new_ref = weakref.ref(new)
        del new  # made during the work: collected as usual
        gc.collect()
        assert not _alive(new_ref)
    assert gc.get_freeze_count() == 0
    gc.collect()  # back in the oldest generation, the old cycle is collected
    assert not _alive(old_ref)


def test_overlapping_freezes_of_a_fleet_thaw_at_the_last_end() -> None:
    seen = _overlapping(
        long_lived, lambda: {"frozen after the first ended": gc.get_freeze_count() > 0}
    )
    assert seen == {"frozen after the first ended": True}
    assert gc.get_freeze_count() == 0


def test_a_freeze_ends_when_the_work_fails() -> None:
    with pytest.raises(RuntimeError), long_lived():
        raise RuntimeError("a renderer failed")
    assert gc.get_freeze_count() == 0
