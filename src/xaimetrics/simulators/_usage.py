"""Token, cost and latency accounting for simulators, safe under threads and asyncio."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xaimetrics.simulators._base import SimulatorResponse

__all__ = ["UsageSummary", "UsageTracker"]


@dataclass(frozen=True)
class UsageSummary:
    """Totals over the responses a :class:`UsageTracker` has seen.

    ``calls`` counts every response (cached or not, failed or not); ``cached_calls`` those read from a cache;
    ``failed_calls`` those with an error; ``attempts`` the requests actually sent (retries included, cached
    calls excluded). Token and cost totals include cached responses' tokens but no cost for them.
    """

    calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def mean_latency_s(self) -> float:
        """Mean latency per call (0 when there was none)."""
        return self.latency_s / self.calls if self.calls else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {**asdict(self), "total_tokens": self.total_tokens}


class UsageTracker:
    """Sums calls, cached calls, failures, tokens, cost and latency of simulator responses.

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
        self._totals = UsageSummary()

    def record(self, response: SimulatorResponse) -> None:
        """Add one response to the totals."""
        with self._lock:
            t = self._totals
            self._totals = UsageSummary(
                calls=t.calls + 1,
                cached_calls=t.cached_calls + int(response.cached),
                failed_calls=t.failed_calls + int(response.error is not None),
                attempts=t.attempts + (0 if response.cached else int(response.attempts)),
                prompt_tokens=t.prompt_tokens + int(response.prompt_tokens),
                completion_tokens=t.completion_tokens + int(response.completion_tokens),
                cost_usd=t.cost_usd + (0.0 if response.cached else float(response.cost_usd)),
                latency_s=t.latency_s + float(response.latency_s),
            )

    def summary(self) -> UsageSummary:
        """A snapshot of the totals."""
        with self._lock:
            return self._totals

    def reset(self) -> None:
        """Set every total back to zero."""
        with self._lock:
            self._totals = UsageSummary()

    def __getstate__(self) -> dict[str, UsageSummary]:
        return {"totals": self.summary()}

    def __setstate__(self, state: dict[str, UsageSummary]) -> None:
        self._lock = threading.Lock()
        self._totals = state["totals"]

    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"UsageTracker(calls={s.calls}, cached_calls={s.cached_calls}, failed_calls={s.failed_calls}, "
            f"total_tokens={s.total_tokens}, cost_usd={s.cost_usd:.4f})"
        )
