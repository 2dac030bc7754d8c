"""The one concurrency model for simulator calls: a pool of threads, bounded, that stops starting calls at the
first exception or Ctrl-C.

Simulator calls wait on the network or on a local model that releases the GIL, so threads are enough; every
caller (:meth:`BaseSimulator.generate_batch <xaimetrics.simulators.BaseSimulator.generate_batch>`, the Ray
tasks of the benchmark runner) goes through :func:`map_bounded`, and the runner's own pool follows the same
rule with its ``concurrency`` setting.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["map_bounded"]

T = TypeVar("T")
R = TypeVar("R")


def map_bounded(function: Callable[[T], R], items: Sequence[T], max_workers: int) -> list[R]:
    """``[function(item) for item in items]`` with at most ``max_workers`` calls at a time, in order.

    When a call raises (or Ctrl-C reaches the waiting thread), the items not started yet are cancelled and the
    exception is raised at once: no call starts after it, and none is made twice (the calls in flight end on
    their own; their results are dropped).

    Example:
        >>> map_bounded(lambda x: x * x, [3, 1, 2], max_workers=2)
        [9, 1, 4]
    """
    if max_workers <= 1 or len(items) <= 1:
        return [function(item) for item in items]
    pool = concurrent.futures.ThreadPoolExecutor(
        max_workers=min(max_workers, len(items)), thread_name_prefix="xaimetrics-call"
    )
    futures = [pool.submit(function, item) for item in items]
    try:
        results = [future.result() for future in futures]
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results
