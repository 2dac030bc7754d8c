"""map_bounded: results in order, at most ``max_workers`` calls at a time, nothing started after a failure."""

from __future__ import annotations

import threading
import time

import pytest

from xaimetrics._threads import map_bounded


def test_results_keep_the_items_order_and_the_bound_holds() -> None:
    lock, state = threading.Lock(), {"now": 0, "peak": 0}

    def call(item: int) -> int:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.02 * (item % 3))  # later items may finish first
        with lock:
            state["now"] -= 1
        return item * 10

    assert map_bounded(call, list(range(9)), max_workers=3) == [i * 10 for i in range(9)]
    assert state["peak"] == 3


def test_one_worker_runs_in_the_calling_thread() -> None:
    threads = map_bounded(lambda _: threading.get_ident(), [1, 2, 3], max_workers=1)
    assert set(threads) == {threading.get_ident()}


def test_a_failure_is_raised_and_no_item_starts_after_it() -> None:
    started: list[int] = []
    release = threading.Event()

    def call(item: int) -> int:
        started.append(item)
        if item == 0:
            raise RuntimeError("boom")
        release.wait(1.0)  # the other worker holds item 1 while the failure is raised
        return item

    with pytest.raises(RuntimeError, match="boom"):
        map_bounded(call, list(range(20)), max_workers=2)
    release.set()
    time.sleep(0.05)
    assert len(started) <= 3  # item 0, item 1 in flight, at most one more picked up before the cancel
