"""How stable is an order of methods across independent units? Kendall's τ between the orders on disjoint halves
of the units (:func:`split_half_stability`), how often the top-k set is the same (:func:`top_k_stability`), and
the splits themselves (:func:`half_splits`)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from xaimetrics._validation import check_positive_int, check_seed, invalid


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


@dataclass(frozen=True)
class TopKStability:
    """How often the top-``k`` set is the same across draws of the units (:func:`top_k_stability`).

    Attributes:
        k, scheme: the size of the top set and how the units were drawn (``"split_half"`` or ``"bootstrap"``).
        same_top_k: the share of draws with the same top set (both halves of a split; a resample and all units).
        n_draws, n_units: the draws made and the units drawn from.
        top_k: the top set on all units, sorted.
        table: per method its ``mean``, ``rank`` (all units), ``in_top_k`` and ``top_k_share`` (the share of the
            draws' top sets — each half of a split counts — that hold it).
    """

    k: int
    scheme: str
    same_top_k: float
    n_draws: int
    n_units: int
    top_k: list[str]
    table: pd.DataFrame


def top_k_stability(
    scores: pd.DataFrame,
    k: int = 3,
    *,
    scheme: Literal["split_half", "bootstrap"] = "split_half",
    n_draws: int = 200,
    seed: int = 0,
) -> TopKStability:
    """How often the top-``k`` set of methods (by mean over units) is the same across draws of the units.

    Args:
        scores: units × methods (one row per independent unit, e.g. a seed).
        k: the size of the top set (``< `` the number of methods).
        scheme: ``"split_half"`` — disjoint halves of the units (every split up to ``n_draws``, else
            ``n_draws`` random ones): ``same_top_k`` is the share of splits whose halves have the same top-k;
            ``"bootstrap"`` — units resampled with replacement: the share of resamples whose top-k is that of
            all units.
        n_draws: splits or resamples.
        seed: seeds the draws.

    Returns:
        a :class:`TopKStability`.

    Example:
        >>> s = pd.DataFrame({"A": [0.9, 0.8, 0.85, 0.9], "B": [0.7, 0.75, 0.6, 0.8], "C": [0.5, 0.75, 0.55, 0.6]})
        >>> out = top_k_stability(s, k=1)
        >>> out.same_top_k, out.top_k, out.table["top_k_share"].tolist()
        (1.0, ['A'], [1.0, 0.0, 0.0])
    """
    owner = "top_k_stability"
    if not isinstance(scores, pd.DataFrame) or scores.shape[1] < 2:
        raise invalid(
            "scores",
            owner,
            "a units × methods DataFrame with two or more methods",
            getattr(scores, "shape", scores),
        )
    k = check_positive_int(k, "k", owner)
    if k >= scores.shape[1]:
        raise invalid("k", owner, f"smaller than the number of methods ({scores.shape[1]})", k)
    if scheme not in ("split_half", "bootstrap"):
        raise invalid("scheme", owner, "'split_half' or 'bootstrap'", scheme)
    n_draws = check_positive_int(n_draws, "n_draws", owner)
    values = scores.to_numpy(dtype=np.float64)
    names = [str(c) for c in scores.columns]
    n = len(values)
    if n < 2:
        raise invalid("scores", owner, "two or more units (rows)", n)

    def top(rows: np.ndarray) -> frozenset[str]:
        with np.errstate(all="ignore"):
            means = np.nanmean(values[rows], axis=0)
        order = sorted(range(len(names)), key=lambda j: (-np.nan_to_num(means[j], nan=-np.inf), names[j]))
        return frozenset(names[j] for j in order[:k])

    everything = top(np.arange(n))
    counts = dict.fromkeys(names, 0)
    same = 0
    sets = 0
    if scheme == "split_half":
        splits = half_splits(n, n_draws, check_seed(seed, "seed", owner))
        for first in splits:
            mask = np.isin(np.arange(n), first)
            a, b = top(np.flatnonzero(mask)), top(np.flatnonzero(~mask))
            same += a == b
            for chosen in (a, b):
                sets += 1
                for name in chosen:
                    counts[name] += 1
        draws = len(splits)
    else:
        rng = np.random.default_rng(check_seed(seed, "seed", owner))
        for _ in range(n_draws):
            chosen = top(rng.integers(n, size=n))
            same += chosen == everything
            sets += 1
            for name in chosen:
                counts[name] += 1
        draws = n_draws
    with np.errstate(all="ignore"):
        means = np.nanmean(values, axis=0)
    table = pd.DataFrame({"mean": means}, index=pd.Index(names, name=scores.columns.name or "method"))
    table["rank"] = table["mean"].rank(ascending=False, method="min").astype(int)
    table["in_top_k"] = [name in everything for name in names]
    table["top_k_share"] = [counts[name] / sets for name in names]
    return TopKStability(k=k, scheme=scheme, same_top_k=same / draws, n_draws=draws, n_units=n,
                         top_k=sorted(everything), table=table)  # fmt: skip
