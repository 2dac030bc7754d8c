"""Token, cost and latency accounting for simulators: one :class:`Usage` record, summed with ``+``.

A response carries the usage of its call; a :class:`~xaimetrics.consim.ConSimResult` carries its response's;
a tracker and a grid run sum them. This module imports nothing else from the package (a leaf), so the
simulator protocol and the results can both build on it.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import asdict, dataclass
from typing import Generic, Protocol, TypeVar

from xaimetrics._validation import invalid

__all__ = ["Usage", "UsageTracker", "UsageView"]

T = TypeVar("T")


@dataclass(frozen=True)
class Usage:
    """Calls, requests, tokens, cost and latency of one simulator call, or the sum of several (``+``, ``sum``).

    ``calls`` counts responses (cached or not, failed or not); ``cached_calls`` those read from a cache;
    ``failed_calls`` those with an error; ``attempts`` the requests sent (retries included; a response cache
    reports 0 for its hits). Tokens and latency include cached calls; ``cost_usd`` does not (a cached call
    costs nothing). ``cached_prompt_tokens`` counts the prompt tokens the backend read from its *prompt* cache
    (a provider's prefix cache or a KV cache) instead of computing them: an OpenAI-compatible server counts them
    inside ``prompt_tokens`` (it bills every prompt token, the cached ones at a discount); the local llama.cpp
    simulator leaves them out of ``prompt_tokens``, which counts what it computed. :meth:`of_call` builds the
    record of one call.

    Example:
        >>> first = Usage.of_call(prompt_tokens=12, completion_tokens=3, cost_usd=0.5, attempts=2)
        >>> again = Usage.of_call(prompt_tokens=12, completion_tokens=3, cost_usd=0.5, cached=True, attempts=0)
        >>> total = sum([first, again], Usage())
        >>> total.calls, total.cached_calls, total.attempts, total.total_tokens, total.cost_usd
        (2, 1, 2, 30, 0.5)
        >>> first + again == total
        True
    """

    calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached_prompt_tokens: int = 0

    @classmethod
    def of_call(
        cls,
        *,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        latency_s: float = 0.0,
        cost_usd: float = 0.0,
        cached: bool = False,
        attempts: int = 1,
        failed: bool = False,
        cached_prompt_tokens: int = 0,
    ) -> Usage:
        """The usage of one call; a cached call costs nothing."""
        return cls(
            calls=1,
            cached_calls=int(bool(cached)),
            failed_calls=int(bool(failed)),
            attempts=int(attempts),
            prompt_tokens=int(prompt_tokens),
            completion_tokens=int(completion_tokens),
            cost_usd=0.0 if cached else float(cost_usd),
            latency_s=float(latency_s),
            cached_prompt_tokens=int(cached_prompt_tokens),
        )

    def __add__(self, other: Usage) -> Usage:
        """The field-wise sum: the one way usage is totalled (trackers, results, grid runs)."""
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in dataclasses.fields(self)}
        )

    def __radd__(self, other: object) -> Usage:
        # sum(usages) starts from the integer 0
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self
        return NotImplemented

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cached(self) -> bool:
        """True when every call was read from a cache (and there was at least one)."""
        return self.calls > 0 and self.cached_calls == self.calls

    @property
    def mean_latency_s(self) -> float:
        """Mean latency per call (0 when there was none)."""
        return self.latency_s / self.calls if self.calls else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {**asdict(self), "total_tokens": self.total_tokens}


class _FromUsage(Generic[T]):
    """A read-only attribute that reads the field of the same name from the owner's ``usage``."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: UsageView | None, owner: type | None = None) -> T:
        if instance is None:
            return self  # type: ignore[return-value]  # the descriptor itself, for class-level introspection
        return getattr(instance.usage, self.name)


class UsageView:
    """The accounting attributes of an object with a ``usage`` record, read from it (never copied).

    :class:`~xaimetrics.simulators.SimulatorResponse`, :class:`~xaimetrics.consim.ConSimResult` and
    :class:`~xaimetrics.benchmark.RunSummary` carry one :class:`Usage` and keep these names for their readers.

    Example:
        >>> class Call(UsageView):
        ...     usage = Usage.of_call(prompt_tokens=5, completion_tokens=2, attempts=3)
        >>> Call().total_tokens, Call().attempts, Call().cached, Call().calls
        (7, 3, False, 1)
    """

    usage: Usage
    calls = _FromUsage[int]()
    cached_calls = _FromUsage[int]()
    prompt_tokens = _FromUsage[int]()
    cached_prompt_tokens = _FromUsage[int]()
    completion_tokens = _FromUsage[int]()
    total_tokens = _FromUsage[int]()
    latency_s = _FromUsage[float]()
    cost_usd = _FromUsage[float]()
    cached = _FromUsage[bool]()
    attempts = _FromUsage[int]()


class _HasUsage(Protocol):
    @property
    def usage(self) -> Usage: ...


class UsageTracker:
    """Sums the :class:`Usage` of simulator responses, safe under threads and asyncio.

    Every :class:`~xaimetrics.simulators.BaseSimulator` has one (``simulator.usage``); assign the same
    tracker to several simulators to sum them together.

    Example:
        >>> from xaimetrics.simulators import SimulatorResponse
        >>> tracker = UsageTracker()
        >>> tracker.record(SimulatorResponse("Sample_1: a", prompt_tokens=12, completion_tokens=3, cost_usd=0.5))
        >>> tracker.record(SimulatorResponse("", error="HTTP 503", attempts=3))
        >>> summary = tracker.summary()
        >>> (summary.calls, summary.failed_calls, summary.attempts, summary.total_tokens, summary.cost_usd)
        (2, 1, 4, 15, 0.5)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals = Usage()

    def record(self, response: _HasUsage | Usage) -> None:
        """Add one response's usage (or a :class:`Usage`) to the totals."""
        usage = response if isinstance(response, Usage) else getattr(response, "usage", None)
        if not isinstance(usage, Usage):
            raise invalid(
                "response", "UsageTracker.record", "a SimulatorResponse or a Usage", type(response).__name__
            )
        with self._lock:
            self._totals = self._totals + usage

    def summary(self) -> Usage:
        """A snapshot of the totals."""
        with self._lock:
            return self._totals

    def reset(self) -> None:
        """Set every total back to zero."""
        with self._lock:
            self._totals = Usage()

    def __getstate__(self) -> dict[str, Usage]:
        return {"totals": self.summary()}

    def __setstate__(self, state: dict[str, Usage]) -> None:
        self._lock = threading.Lock()
        self._totals = state["totals"]

    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"UsageTracker(calls={s.calls}, cached_calls={s.cached_calls}, failed_calls={s.failed_calls}, "
            f"total_tokens={s.total_tokens}, cost_usd={s.cost_usd:.4f})"
        )
