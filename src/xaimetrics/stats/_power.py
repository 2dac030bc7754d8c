"""Power of the exact sign-flip tests the benchmark runs, by seeded Monte Carlo (DESIGN §3d: plan with the test
you run).

The one-sample t-test's power (``statsmodels.stats.power.TTestPower``) overstates the exact sign-flip test's at
small sizes and strict levels: its p-values come in steps of ``1/2ⁿ``. At the t planner's minimum detectable
difference the exact test realised power 0.67 at 8 seeds, 0.75 at 10 and 0.78 at 20 (planned 0.80). Neither
scipy nor statsmodels gives the power of a permutation test, so it is simulated here:

- unit differences ``z + δ`` with ``z ~ N(0, 1)`` (the differences over their standard deviation: power depends
  on ``δ/sd`` only), :data:`N_SIMULATIONS` samples drawn once per size from a fixed seed (common random
  numbers: power is then monotone in ``δ``, so bisection is exact on the simulated curve);
- every sample is compared with **its own** sign-flip distribution, vectorised: the sign patterns are one
  matrix ``P`` (all ``2ⁿ`` of them up to 10 units, a fixed random set plus the identity beyond, as
  ``sign_flip_test`` draws beyond 13), ``A = Z Pᵀ`` is computed once per size and level, and
  since a shift ``δ`` moves pattern ``k``'s sum by ``δ · Σ P_k``, each sample's rejection region is a threshold
  on ``δ`` (:func:`_thresholds`) — so a power is a comparison of ``N_SIMULATIONS`` numbers;
- beyond :data:`SIMULATED_UNITS` units the sign-flip test's power equals the t-test's within Monte-Carlo error
  (its p-value grid is far finer than any level), and the t formulas are used.

Results are cached per (units, level, alternative, power), so ``assess`` and the calibration pay once.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable

import numpy as np

from xaimetrics.stats._exact import Alternative

__all__ = [
    "N_SIMULATIONS",
    "SIMULATED_UNITS",
    "equivalence_power",
    "exact_power",
    "solve_effect",
    "solve_margin",
]

#: simulated samples per size (Monte-Carlo SE of a power of 0.8: 0.009)
N_SIMULATIONS = 2000
#: beyond this many units the t-test's power is used (the sign-flip test's equals it within MC error)
SIMULATED_UNITS = 30
#: up to this many units every sign pattern is enumerated; beyond, a fixed random set. Fewer than the test's 13:
#: 2¹³ patterns × 2,000 samples cost a second per size, and the power of the exact test and of its random-pattern
#: version differ by less than the Monte-Carlo error once 1,999 patterns make the p-value grid finer than the level
_EXACT = 10
#: random sign patterns beyond ``_EXACT`` units (the test draws 9,999; 1,999 keep its p-value grid finer than
#: any level the benchmark uses, 0.0005, at a fifth of the memory)
_PATTERNS = 1_999


@functools.lru_cache(maxsize=64)
def _patterns(n: int) -> np.ndarray:
    """Sign patterns, shape ``(K, n)``, the identity (all +1) first."""
    if n <= _EXACT:
        return np.array(list(itertools.product((1.0, -1.0), repeat=n)))
    rng = np.random.default_rng(12345 + n)
    return np.vstack([np.ones((1, n)), rng.choice((1.0, -1.0), size=(_PATTERNS, n))])


@functools.lru_cache(maxsize=256)
def _thresholds(n: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per simulated sample ``z`` (``N_SIMULATIONS`` of them, fixed seed), the shifts beyond which the one-sided
    sign-flip tests of ``z + shift`` reject at ``level``: ``greater`` rejects iff ``shift > g``, ``less`` iff
    ``shift < l``.

    Pattern ``k``'s sum ``A_k + shift · Σ P_k`` is at least the observed ``A_0 + shift · n`` iff ``shift ≤ C_k =
    (A_k − A_0)/(n − Σ P_k)``; so ``p_greater(shift) = (1 + #{C_k ≥ shift})/K`` (the identity always counts:
    scipy's "+1" for random patterns), below ``level`` iff at most ``m`` of the ``C_k`` reach ``shift``.
    """
    patterns = _patterns(n).astype(np.float32)  # float32: half the memory traffic, thresholds to ~1e-6
    z = np.random.default_rng(2024 + n).standard_normal((N_SIMULATIONS, n)).astype(np.float32)
    a = z @ patterns.T
    free = patterns.sum(axis=1) < n  # every pattern but the identity
    c = (a[:, free] - a[:, :1]) / (n - patterns.sum(axis=1)[free])
    k = patterns.shape[0]
    m = math.ceil(level * k - 1) - 1  # the most patterns that may reach the observed sum for p < level
    if m < 0:
        return np.full(N_SIMULATIONS, np.inf), np.full(N_SIMULATIONS, -np.inf)
    # two order statistics per sample: a partition, not a sort (a rerun of the demo plans ~20 sizes)
    width = c.shape[1]
    upper, lower = width - (m + 1), m
    ordered = np.partition(c, sorted({lower, upper}), axis=1)
    return ordered[:, upper], ordered[:, lower]


def exact_power(effect: float, n: int, level: float, alternative: Alternative = "two-sided") -> float:
    """Power of the sign-flip test at ``level`` for normal unit differences with mean ``effect`` standard
    deviations (signed: negative for ``"less"``); ``p < level`` rejects, as
    ``significant`` does. Simulated up to :data:`SIMULATED_UNITS` units, the t-test's beyond.

    Example:
        >>> round(exact_power(1.0, 10, 0.05, "greater"), 2), exact_power(5.0, 4, 0.05)
        (0.9, 0.0)
    """
    if n < 2:
        return 0.0
    if n > SIMULATED_UNITS:
        from statsmodels.stats.power import TTestPower

        side = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}[alternative]
        value = float(TTestPower().power(effect_size=effect, nobs=n, alpha=level, alternative=side))
        if math.isfinite(value):
            return value
        from scipy import stats  # the noncentral t overflows at large n · effect²: its normal limit

        signed = {"two-sided": abs(effect), "greater": effect, "less": -effect}[alternative]
        quantile = stats.norm.isf(level / 2 if alternative == "two-sided" else level)
        return float(stats.norm.cdf(signed * math.sqrt(n) - quantile))
    if alternative == "two-sided":
        above, below = _thresholds(n, level / 2)
        return float(np.mean((effect > above) | (effect < below)))
    above, below = _thresholds(n, level)
    return float(np.mean(effect > above) if alternative == "greater" else np.mean(effect < below))


@functools.lru_cache(maxsize=512)
def solve_effect(n: int, level: float, power: float, alternative: Alternative = "two-sided") -> float:
    """The smallest effect (in standard deviations) the sign-flip test detects with ``power`` at ``level``;
    ``inf`` when no effect reaches it (the test cannot go below ``level`` at ``n`` units).

    Example:
        >>> round(solve_effect(10, 0.05, 0.8), 2), solve_effect(4, 0.05, 0.8)
        (1.01, inf)
    """
    sign = -1.0 if alternative == "less" else 1.0
    return _bisect(lambda effect: exact_power(sign * effect, n, level, alternative) >= power, 0.0)


def _bisect(enough: Callable[[float], bool], low: float) -> float:
    """The smallest value above ``low`` where the monotone ``enough`` holds, to 0.0005; ``inf`` if none ≤ 50."""
    high = low + 8.0
    if not enough(high):
        if not enough(low + 50.0):
            return math.inf
        low, high = high, low + 50.0
    while high - low > 5e-4:
        middle = (low + high) / 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high


def equivalence_power(difference: float, margin: float, n: int, level: float) -> float:
    """Power of the TOST (two one-sided sign-flip tests at ``level``) to show equivalence within ``±margin``
    when the true difference is ``difference`` (both in standard deviations of the unit differences).

    Beyond :data:`SIMULATED_UNITS` units the normal approximation
    ``Φ((m − δ)√n − z) + Φ((m + δ)√n − z) − 1`` (``z`` the one-sided quantile at ``level``), floored at 0.

    Example:
        >>> round(equivalence_power(0.0, 1.0, 12, 0.05), 2), equivalence_power(0.0, 1.0, 4, 0.05)
        (0.9, 0.0)
    """
    if n < 2 or margin <= abs(difference):
        return 0.0
    if n > SIMULATED_UNITS:
        from scipy import stats

        z = float(stats.t.ppf(1 - level, n - 1))
        root = math.sqrt(n)
        value = stats.norm.cdf((margin - difference) * root - z) + stats.norm.cdf(
            (margin + difference) * root - z
        )
        return float(max(0.0, value - 1.0))
    above, below = _thresholds(n, level)  # TOST: p(d + m > 0) < level and p(d − m < 0) < level
    return float(np.mean((difference + margin > above) & (difference - margin < below)))


@functools.lru_cache(maxsize=512)
def solve_margin(n: int, level: float, power: float, difference: float = 0.0) -> float:
    """The smallest margin (in SDs) that the TOST shows with ``power`` at ``n`` units when the true difference
    is ``difference``; ``inf`` when none does.

    Example:
        >>> round(solve_margin(12, 0.05, 0.8), 2)
        0.9
    """
    return _bisect(lambda margin: equivalence_power(difference, margin, n, level) >= power, abs(difference))
