"""Retry decisions and waits for HTTP simulators: exponential backoff with jitter, honouring Retry-After."""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass

from xaimetrics._validation import invalid

__all__ = ["RetryPolicy", "parse_retry_after"]

#: HTTP statuses worth retrying: request timeout, conflict/lock, rate limit, and server-side errors.
RETRYABLE_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


@dataclass(frozen=True)
class RetryPolicy:
    """How many times to try, and how long to wait between tries.

    The wait before retry ``n`` (1-based) is ``uniform(0.5, 1) · min(backoff_max, backoff_base · 2**(n-1))``
    ("equal jitter", so concurrent clients de-synchronise), raised to the server's ``Retry-After`` when it
    sends one (capped at ``max_retry_after``).

    Args:
        max_retries: retries after the first attempt (``0`` = a single attempt).
        backoff_base: first wait in seconds.
        backoff_max: cap of the exponential wait in seconds.
        max_retry_after: cap on a server-requested wait in seconds.

    Example:
        >>> policy = RetryPolicy(max_retries=3, backoff_base=1.0, backoff_max=4.0)
        >>> [round(policy.wait(n, jitter=1.0), 1) for n in (1, 2, 3, 4)]
        [1.0, 2.0, 4.0, 4.0]
        >>> policy.wait(1, retry_after=7.5, jitter=1.0)
        7.5
    """

    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 20.0
    max_retry_after: float = 120.0

    def __post_init__(self) -> None:
        if (
            isinstance(self.max_retries, bool)
            or not isinstance(self.max_retries, int)
            or self.max_retries < 0
        ):
            raise invalid("max_retries", "RetryPolicy", "an integer ≥ 0", self.max_retries)
        for name in ("backoff_base", "backoff_max", "max_retry_after"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise invalid(name, "RetryPolicy", "a number of seconds ≥ 0", value)

    def wait(self, retry: int, *, retry_after: float | None = None, jitter: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based); ``jitter`` in [0.5, 1] fixes the draw."""
        factor = random.uniform(0.5, 1.0) if jitter is None else jitter
        delay = factor * min(self.backoff_max, self.backoff_base * 2.0 ** (retry - 1))
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_retry_after))
        return delay


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds the server asked to wait: ``retry-after-ms``, else ``Retry-After`` (seconds or an HTTP date).

    Example:
        >>> parse_retry_after({"retry-after": "2.5"})
        2.5
        >>> parse_retry_after({"retry-after-ms": "150", "retry-after": "9"})
        0.15
        >>> parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0)
        10.0
        >>> parse_retry_after({}) is None
        True
    """
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, moment.timestamp() - (time.time() if now is None else now))
