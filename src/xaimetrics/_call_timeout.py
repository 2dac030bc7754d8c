"""The base deadline of a local LLM call (``call_timeout``): the argument, its environment variable and its
check, shared by the llama.cpp simulator, the command line and the grid's settings (a leaf)."""

from __future__ import annotations

import os

from xaimetrics._validation import invalid

__all__ = ["CALL_TIMEOUT_ENV", "DEFAULT_CALL_TIMEOUT", "resolve_call_timeout"]

#: the base deadline of a call when neither the argument nor :data:`CALL_TIMEOUT_ENV` says
DEFAULT_CALL_TIMEOUT = 120.0
#: the environment variable that sets ``call_timeout="auto"`` (``--llm-call-timeout`` on the command line)
CALL_TIMEOUT_ENV = "XAIMETRICS_LLM_CALL_TIMEOUT"


def resolve_call_timeout(value: float | str | None, owner: str = "LlamaCppSimulator") -> float | None:
    """The base deadline in seconds that ``call_timeout`` stands for: a number > 0, ``None`` (no deadline) or
    ``"auto"`` (:data:`CALL_TIMEOUT_ENV` when set, a number or ``none``; else 120 s).

    Example:
        >>> resolve_call_timeout(30), resolve_call_timeout(None)
        (30.0, None)
    """
    argument = "call_timeout"
    if value == "auto":
        text = os.environ.get(CALL_TIMEOUT_ENV, "").strip()
        if not text:
            return DEFAULT_CALL_TIMEOUT
        if text.lower() == "none":
            return None
        try:
            value = float(text)
        except ValueError:
            value, argument, owner = text, CALL_TIMEOUT_ENV, "the environment"
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not value > 0
        or value == float("inf")
    ):
        raise invalid(argument, owner, "a number of seconds > 0, None (no deadline) or 'auto'", value)
    return float(value)
