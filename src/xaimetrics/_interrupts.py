"""How the command line stops: the first Ctrl-C is the command's, a second one ends the process at once.

A command handles the first ``KeyboardInterrupt`` (the grid's runner lets calls in flight finish and stores them).
Once it has, :func:`exit_now_on_interrupt` makes any further Ctrl-C end the process at once with code 130, after
killing its children, instead of raising a ``KeyboardInterrupt`` in whatever the interpreter does then (joining
threads at exit, a finaliser) and printing a traceback. SIGTERM is turned into the same orderly stop as a first
Ctrl-C (:func:`terminate_as_interrupt`): without it, a process that started Ray ends in Ray's handler, with a
native crash dump. Children are the local models' worker processes and a Ray runtime started here
(:func:`stop_children`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType

__all__ = ["exit_now_on_interrupt", "stop_children", "terminate_as_interrupt"]


def stop_children() -> None:
    """Kill the local models' worker processes and stop a Ray runtime this process started, if any (modules
    that were never imported started nothing)."""
    worker = sys.modules.get("xaimetrics.simulators._worker")
    if worker is not None:
        with contextlib.suppress(Exception):
            worker.stop_workers()
    ray_backend = sys.modules.get("xaimetrics.benchmark._ray")
    if ray_backend is not None:
        with contextlib.suppress(Exception):
            ray_backend.stop_ray()


def _exit_now(signum: int, frame: FrameType | None) -> None:
    stop_children()
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write("Stopped at once.\n")
        sys.stderr.flush()
    os._exit(130)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _handle(signum: int, handler: Callable[[int, FrameType | None], None]) -> Callable[[], None]:
    """Set ``handler`` for ``signum`` (from the main thread only, as Python allows); a function restoring the
    previous one."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    try:
        previous = signal.signal(signum, handler)
    except (ValueError, OSError):
        return lambda: None

    def restore() -> None:
        with contextlib.suppress(ValueError, OSError, TypeError):
            signal.signal(signum, previous)

    return restore


def exit_now_on_interrupt() -> None:
    """From now on, SIGINT and SIGTERM kill the children and end the process at once (code 130, one line).

    Example:
        >>> import signal
        >>> previous = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
        >>> exit_now_on_interrupt()
        >>> signal.getsignal(signal.SIGINT).__name__
        '_exit_now'
        >>> _ = signal.signal(signal.SIGINT, previous[0]), signal.signal(signal.SIGTERM, previous[1])
    """
    _handle(signal.SIGINT, _exit_now)
    _handle(signal.SIGTERM, _exit_now)


def terminate_as_interrupt() -> Callable[[], None]:
    """Make SIGTERM raise ``KeyboardInterrupt``, so that it stops a command as a first Ctrl-C does; returns a
    function that restores the previous handler.

    Example:
        >>> import signal
        >>> before = signal.getsignal(signal.SIGTERM)
        >>> restore = terminate_as_interrupt()
        >>> signal.getsignal(signal.SIGTERM).__name__
        '_interrupt'
        >>> restore()
        >>> signal.getsignal(signal.SIGTERM) is before
        True
    """
    return _handle(signal.SIGTERM, _interrupt)
