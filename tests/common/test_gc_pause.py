"""gpuaudit.common.gc_pause: the collector's pause, counted across the threads of a fleet."""

from __future__ import annotations

import gc
import threading

from gpuaudit.common.gc_pause import gc_paused


def test_overlapping_pauses_of_a_fleet_resume_and_collect_once_at_the_last_end() -> None:
    # Two targets' retrievals in threads: the first to end must not switch the
    # collector back on under the other, nor run a full collection then.
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def first() -> None:
        with gc_paused():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    def second() -> None:
        first_in.wait(10)
        with gc_paused():
            second_in.set()
            first_out.wait(10)
            seen["enabled after the first ended"] = gc.isenabled()
            seen["collections then"] = gc.get_stats()[2]["collections"]

    runs = gc.get_stats()[2]["collections"]
    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
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
