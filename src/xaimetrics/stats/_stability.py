"""How stable is an order of methods across independent units? Kendall's τ between the orders on disjoint halves
of the units (:func:`split_half_stability`), and the splits themselves (:func:`half_splits`)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class SplitHalfStability:
    """Kendall's τ over splits of the units into halves (:func:`split_half_stability`): its mean, min and max
    (NaN when no split gave one), the number of splits that did, and the number of units (``n_seeds``)."""

    tau_mean: float
    tau_min: float
    tau_max: float
    n_splits: int
    n_seeds: int


def split_half_stability(scores: pd.DataFrame, *, max_splits: int = 50, seed: int = 0) -> SplitHalfStability:
    """Kendall's τ between the method orders (by mean) on two disjoint halves of the units (rows of the
    units × methods ``scores``).

    Every split of the units into two halves when there are at most ``max_splits`` of them, else
    ``max_splits`` distinct random ones drawn directly (seeded; the splits are never listed: 28 units have
    20 million), gives one τ (``scipy.stats.kendalltau``; 0 when it is undefined). Fewer than two units or
    methods: ``tau_mean`` is NaN.

    Example:
        >>> s = pd.DataFrame({"A": [0.9, 0.8, 0.7, 0.9], "B": [0.5, 0.6, 0.4, 0.5]})
        >>> split_half_stability(s).tau_mean
        1.0
    """
    from scipy import stats

    n = len(scores)
    nan = math.nan
    if n < 2 or scores.shape[1] < 2:
        return SplitHalfStability(nan, nan, nan, 0, n)
    rows = list(range(n))
    values = scores.to_numpy(dtype=float)
    taus = []
    for first in half_splits(n, max_splits, seed):
        mask = np.isin(rows, first)
        with np.errstate(all="ignore"):
            a = pd.Series(np.nanmean(values[mask], axis=0))
            b = pd.Series(np.nanmean(values[~mask], axis=0))
        ok = a.notna() & b.notna()
        if ok.sum() < 2:
            continue
        tau = stats.kendalltau(a[ok], b[ok]).statistic
        taus.append(0.0 if math.isnan(tau) else float(tau))
    if not taus:
        return SplitHalfStability(nan, nan, nan, 0, n)
    return SplitHalfStability(float(np.mean(taus)), float(np.min(taus)), float(np.max(taus)), len(taus), n)


def half_splits(n: int, max_splits: int, seed: int) -> list[tuple[int, ...]]:
    """Distinct splits of ``range(n)`` into a first half of ``n // 2`` units and the rest (with ``n`` even, a
    split and its mirror are one: the first half holds unit 0): all of them when there are at most
    ``max_splits``, else ``max_splits`` drawn at random without listing the others.

    Example:
        >>> half_splits(4, 10, 0)
        [(0, 1), (0, 2), (0, 3)]
    """
    half = n // 2
    even = 2 * half == n
    total = math.comb(n, half) // (2 if even else 1)
    if total <= max_splits:
        return [c for c in itertools.combinations(range(n), half) if 0 in c or not even]
    rng = np.random.default_rng(seed)
    drawn: dict[tuple[int, ...], None] = {}
    while len(drawn) < max_splits:
        first = rng.permutation(n)[:half]
        if even and 0 not in first:
            first = np.setdiff1d(np.arange(n), first)
        drawn[tuple(sorted(int(i) for i in first))] = None
    return list(drawn)
