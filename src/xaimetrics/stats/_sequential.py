"""The exact group-sequential sign-flip test: a mean difference tested at several looks, the type-I error
controlled over all of them.

Under the null the signs of the unit differences are independent fair coins whatever their sizes (the exact
test's assumption), so, given the sizes seen so far, every sign pattern is equally likely and the probability of
any rejection region is a count. At each look the region is the most extreme patterns not rejected at an earlier
look, as many as keep the probability of *rejecting at any look so far* within the α spent by then. The joint
probability is counted, not bounded: α that an earlier look could not use and the overlap between looks carry
over to later looks, with the error still ≤ α over all looks, exactly. Up to :data:`EXACT_SEQUENTIAL_UNITS` units
every pattern is enumerated; beyond, a fixed seeded set of random patterns plus the observed one. The grid's
questions (controls, methods, Holm–Shaffer) are asked with it in ``xaimetrics.benchmark._sequential``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from xaimetrics._validation import invalid

#: up to this many units every sign pattern is enumerated (2¹⁶ = 65,536); beyond, random patterns
EXACT_SEQUENTIAL_UNITS = 16
#: random sign patterns beyond :data:`EXACT_SEQUENTIAL_UNITS` (plus the observed one)
_RANDOM_PATTERNS = 2**15 - 1

#: the direction a sequential test shows
SequentialAlternative = Literal["greater", "less"]
Alternative = SequentialAlternative


@dataclass(frozen=True)
class SequentialTest:
    """What :func:`sequential_sign_test` concluded: whether it ``rejected``, at which ``look`` (its index in the
    looks) and on how many units (``n_units``; both ``None`` when not rejected), and ``pvalue``, the smallest α at
    which the test rejects by the last look made."""

    rejected: bool
    look: int | None
    n_units: int | None
    pvalue: float


@functools.lru_cache(maxsize=8)
def _exact_patterns(n: int) -> np.ndarray:
    """All 2ⁿ sign patterns as a ``(2ⁿ, n)`` int8 matrix of ±1."""
    bits = (np.arange(2**n, dtype=np.int64)[:, None] >> np.arange(n, dtype=np.int64)[None, :]) & 1
    return (1 - 2 * bits).astype(np.int8)


def _random_patterns(n: int, seed: int) -> np.ndarray:
    """:data:`_RANDOM_PATTERNS` seeded sign patterns of length ``n``, column by column, so that the patterns of a
    longer run extend those of a shorter one (the looks of one sequence see one reference set)."""
    columns = [
        np.random.default_rng([seed, j]).integers(0, 2, size=_RANDOM_PATTERNS, dtype=np.int8)
        for j in range(n)
    ]
    return (1 - 2 * np.stack(columns, axis=1)).astype(np.int8)


def _statistics(
    values: np.ndarray, looks: Sequence[int], *, exact: bool, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(T, observed)``: the sum of the first ``looks[k]`` values under every reference sign pattern
    (``(P, K)``), and the observed sums (``(K,)``)."""
    n = int(looks[-1])
    magnitudes = np.abs(values[:n])
    if exact:
        patterns = _exact_patterns(n)
    else:
        observed = np.where(values[:n] < 0, -1, 1).astype(np.int8)[None, :]
        patterns = np.concatenate([_random_patterns(n, seed), observed])
    cumulative = np.cumsum(patterns * magnitudes[None, :], axis=1)
    index = np.asarray(looks, dtype=np.int64) - 1
    return cumulative[:, index], np.cumsum(values[:n])[index]


def _first_rejection(T: np.ndarray, observed: np.ndarray, allowed: np.ndarray) -> int | None:
    """The index of the first look whose region holds the observed sums, or ``None``.

    ``allowed[k]`` is how many patterns may be rejected at looks ``0…k`` together; each look's region is the
    largest set of the most extreme patterns not yet rejected that keeps within it (ties are kept together).
    """
    P, K = T.shape
    done = np.zeros(P, dtype=bool)
    scale = float(np.max(np.abs(T))) if T.size else 0.0
    tol = 1e-9 * max(scale, 1e-12)
    for k in range(K):
        budget = int(allowed[k]) - int(done.sum())
        if budget <= 0:
            continue
        free = np.flatnonzero(~done)
        values = T[free, k]
        if budget >= values.size:
            cut = -math.inf
        else:
            cut = float(np.partition(values, values.size - budget - 1)[values.size - budget - 1]) + tol
        if observed[k] > cut:
            return k
        done[free[values > cut]] = True
    return None


@dataclass(frozen=True)
class _Hypothesis:
    """One directional hypothesis on a column of unit differences: reject when the mean of ``d − shift`` is
    shown ``> 0`` (``"greater"``) or ``< 0`` (``"less"``)."""

    column: str
    shift: float
    alternative: Alternative


class _Prepared:
    """A hypothesis's sums under the reference patterns, computed once and tested at any level.

    With ``skew_check`` a rejection must also be confirmed, at the look where it is made, by the
    skewness-corrected t-test at that look's spent level (:func:`~xaimetrics.stats.
    skewness_corrected_pvalue`): the exact test assumes symmetric differences, and small gains with rare large
    losses fool it (the fixed-size tests do the same, :func:`~xaimetrics.stats.robust_pvalue`). Requiring
    both can only reject less often, so the exact guarantee under symmetry holds: the look of a rejection is
    at or after the exact test's first one, whose region keeps the error over all looks within α.
    """

    def __init__(
        self,
        values: np.ndarray,
        unit_looks: Sequence[int],
        *,
        exact: bool,
        seed: int,
        skew_check: bool = False,
    ) -> None:
        self.unit_looks = list(unit_looks)
        self.n_patterns = 0
        self.skew: list[float] = []
        if skew_check:
            from xaimetrics.stats._exact import skewness_corrected_pvalue

            self.skew = [
                skewness_corrected_pvalue(values[:n], alternative="greater") for n in self.unit_looks
            ]
        if not self.unit_looks:
            self.T, self.observed = np.zeros((0, 0)), np.zeros(0)
            return
        self.T, self.observed = _statistics(values, self.unit_looks, exact=exact, seed=seed)
        self.n_patterns = self.T.shape[0]

    def first_rejection(self, fractions: Sequence[float], alpha: float) -> int | None:
        """The index of the look at which the test at level ``alpha`` rejects, or ``None``."""
        if not self.n_patterns:
            return None
        allowed = np.floor(np.asarray(fractions) * alpha * self.n_patterns * (1 + 1e-9)).astype(np.int64)
        first = _first_rejection(self.T, self.observed, allowed)
        if first is None or not self.skew:
            return first
        confirmed = (
            k for k in range(first, len(self.unit_looks))
            if math.isnan(self.skew[k]) or self.skew[k] <= fractions[k] * alpha * (1 + 1e-9)
        )  # fmt: skip
        return next(confirmed, None)

    def pvalue(self, fractions: Sequence[float]) -> float:
        """The smallest level at which the sequential test rejects by the last look (bisection); with the skew
        check, at least the skewness-corrected p of the last look."""
        if not self.n_patterns or self.first_rejection(fractions, 1.0) is None:
            return 1.0
        floor = (
            0.0 if not self.skew or math.isnan(self.skew[-1]) else self.skew[-1] / max(fractions[-1], 1e-12)
        )
        low, high = 0.0, 1.0
        while high - low > 1e-5 * max(high, 1e-3):  # three significant digits are printed
            middle = (low + high) / 2
            if self.first_rejection(fractions, middle) is None:
                low = middle
            else:
                high = middle
        return min(1.0, max(high, floor))


def _prepare(
    values: np.ndarray,
    unit_looks: Sequence[int],
    *,
    exact: bool | None = None,
    seed: int = 0,
    skew_check: bool = False,
) -> _Prepared:
    usable = [n for n in unit_looks if 0 < n <= values.size]
    if exact is None:
        exact = bool(usable) and usable[-1] <= EXACT_SEQUENTIAL_UNITS
    return _Prepared(values, usable, exact=exact, seed=seed, skew_check=skew_check)


def _superiority(hypothesis: _Hypothesis) -> bool:
    """A claim of benefit (a positive control passing, a method helping): the tests get the skew check."""
    return hypothesis.alternative == "greater" and hypothesis.shift == 0.0


def _oriented(differences: np.ndarray, hypothesis: _Hypothesis) -> np.ndarray:
    shifted = differences - hypothesis.shift
    return shifted if hypothesis.alternative == "greater" else -shifted


def sequential_sign_test(
    differences: Sequence[float] | np.ndarray,
    *,
    looks: Sequence[int],
    fractions: Sequence[float],
    alpha: float = 0.05,
    alternative: Alternative = "greater",
    seed: int = 0,
) -> SequentialTest:
    """The exact group-sequential sign-flip test of the mean of ``differences`` (in the order the units came).

    Args:
        differences: one value per independent unit, in arrival order (NaN not allowed: pass complete units).
        looks: the numbers of units at which the test was (or is) made, increasing; looks beyond the data are
            ignored (they have not happened yet).
        fractions: the share of ``alpha`` spent by each look (cumulative, non-decreasing, the last ≤ 1).
        alpha: the type-I error over all looks.
        alternative: ``"greater"`` (the mean is shown > 0) or ``"less"``.
        seed: the seed of the random reference patterns beyond :data:`EXACT_SEQUENTIAL_UNITS` units.

    Returns:
        a :class:`SequentialTest`.

    Example:
        >>> d = [0.1, 0.2, 0.05, 0.3, 0.1, 0.2]
        >>> out = sequential_sign_test(d, looks=[5, 6], fractions=[0.8, 1.0])
        >>> out.rejected, out.n_units, round(out.pvalue, 4)
        (True, 5, 0.0156)
    """
    values = np.asarray(differences, dtype=float).ravel()
    if not np.all(np.isfinite(values)):
        raise invalid(
            "differences", "sequential_sign_test", "finite values, one per complete unit",
            "NaN or infinite values", "Drop incomplete units before testing.",
        )  # fmt: skip
    if len(fractions) != len(looks):
        raise invalid(
            "fractions", "sequential_sign_test", f"one value per look ({len(looks)})", len(fractions)
        )
    if alternative not in ("greater", "less"):
        raise invalid("alternative", "sequential_sign_test", "'greater' or 'less'", alternative)
    made = [i for i, n in enumerate(looks) if 0 < n <= values.size]
    prepared = _prepare(values if alternative == "greater" else -values, [looks[i] for i in made], seed=seed)
    spent = [fractions[i] for i in made]
    first = prepared.first_rejection(spent, alpha)
    return SequentialTest(
        rejected=first is not None,
        look=None if first is None else made[first],
        n_units=None if first is None else prepared.unit_looks[first],
        pvalue=prepared.pvalue(spent),
    )


def sequential_pvalue(
    differences: Sequence[float] | np.ndarray,
    *,
    looks: Sequence[int],
    fractions: Sequence[float],
    alternative: Alternative = "greater",
) -> float:
    """The smallest α at which :func:`sequential_sign_test` rejects by the last look made (1 when it never does).

    Example:
        >>> sequential_pvalue([0.1, 0.2, 0.05, 0.3, 0.1], looks=[5], fractions=[1.0])
        0.03125
    """
    return float(
        sequential_sign_test(differences, looks=looks, fractions=fractions, alternative=alternative).pvalue
    )
