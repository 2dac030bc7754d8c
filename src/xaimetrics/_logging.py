"""The ``xaimetrics`` logger: silent in a library, on stderr for the command line.

Every module logs under a child of ``xaimetrics`` (``xaimetrics.simulators``, ``xaimetrics.benchmark``, ...):
retries with their status and wait, response-cache hits and misses, fallbacks, worker restarts, skipped
settings. The package logger has a :class:`logging.NullHandler`, so a program that imports xaimetrics prints
nothing until it configures logging itself (the library convention of the standard library's ``logging``
HOWTO); the ``xaimetrics`` command adds one stderr handler (:func:`log_to_stderr`) for the level that ``-v``
/ ``--log-level`` chose. Messages never contain API keys or request headers.

Example:
    >>> import logging
    >>> logging.getLogger("xaimetrics").handlers[0].__class__.__name__
    'NullHandler'
    >>> level_from_options(verbose=0, log_level=None), level_from_options(verbose=2, log_level=None)
    (30, 10)
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["LOGGER_NAME", "LOG_LEVELS", "level_from_options", "log_to_stderr"]

LOGGER_NAME = "xaimetrics"
#: the names ``--log-level`` accepts
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

logging.getLogger(LOGGER_NAME).addHandler(logging.NullHandler())


def level_from_options(verbose: int, log_level: str | None) -> int:
    """The level of the command line's handler: ``--log-level`` if given, else WARNING lowered by each ``-v``
    (``-v`` INFO, ``-vv`` DEBUG)."""
    if log_level is not None:
        return int(getattr(logging, log_level.upper()))
    return max(logging.DEBUG, logging.WARNING - 10 * verbose)


@contextmanager
def log_to_stderr(level: int, stream: TextIO | None = None) -> Iterator[logging.Handler]:
    """Show the ``xaimetrics`` records of ``level`` and above on ``stream`` (stderr) while the block runs.

    The handler and the logger's previous level are removed/restored at the end, so that calling the command
    in-process (tests, notebooks) leaves logging as it found it.
    """
    logger = logging.getLogger(LOGGER_NAME)
    handler = logging.StreamHandler(sys.stderr if stream is None else stream)
    handler.setFormatter(logging.Formatter(_FORMAT, datefmt="%H:%M:%S"))
    handler.setLevel(level)
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(min(level, previous) if previous != logging.NOTSET else level)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
