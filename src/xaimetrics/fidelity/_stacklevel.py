"""Warnings of the fidelity metrics point at the user's line, not at the library's internals."""

from __future__ import annotations

import os
import sys

__all__ = ["user_stacklevel"]


def user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the first caller outside ``xaimetrics.fidelity``."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame = frame.f_back
        level += 1
    return level
