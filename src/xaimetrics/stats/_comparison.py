"""Comparisons on independent units: every column against a baseline column (Holm over a family), every pair
of columns, and a "best" column only when it beats every other one in corrected pairwise tests.

Each takes a units × competitors frame (one row per independent unit) and returns numbers only: a table whose
columns are named below, or a :class:`BestMethod`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from xaimetrics._validation import check_in_range, invalid
from xaimetrics.stats._exact import Alternative, holm, robust_pvalue, sign_flip_test, t_interval
from xaimetrics.stats._planning import minimum_detectable_difference

#: the columns of :func:`baseline_comparison`'s table
COMPARISON_COLUMNS = (
    "difference", "ci_low", "ci_high", "pvalue", "pvalue_adjusted", "significant", "mdd", "n_units",
)  # fmt: skip


def _shared_difference(scores: pd.DataFrame, first: str, second: str) -> np.ndarray:
    """``first − second`` on the units where both are finite."""
    a, b = scores[first].to_numpy(dtype=float), scores[second].to_numpy(dtype=float)
    shared = np.isfinite(a) & np.isfinite(b)
    return np.asarray(a[shared] - b[shared])


def baseline_comparison(
    scores: pd.DataFrame,
    baseline: str,
    *,
    family: Sequence[str] | None = None,
    alternative: Alternative = "two-sided",
    alpha: float = 0.05,
    power: float = 0.8,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Every column of ``scores`` against ``baseline`` on their shared units (rows: one per independent unit).

    Columns: ``difference`` (mean of method − baseline over units), ``ci_low``/``ci_high`` (:func:`t_interval`),
    ``pvalue`` (:func:`robust_pvalue`: the exact sign-flip test, and the skewness-corrected t-test must
    agree; unadjusted), ``pvalue_adjusted`` (Holm over ``family``; the other rows keep their own p),
    ``significant`` (adjusted ``p < alpha``), ``mdd`` (:func:`minimum_detectable_difference` at the family's
    Holm level) and ``n_units``.

    Args:
        scores: units × methods, one row per independent unit.
        baseline: the column every method is compared with.
        family: the methods corrected together (default: every column but the baseline).
        alternative: the direction tested.

    Example:
        >>> s = pd.DataFrame({"NoExplanation": [0.5, 0.6, 0.5, 0.55, 0.5, 0.6],
        ...                   "A": [0.7, 0.75, 0.68, 0.72, 0.7, 0.71], "B": [0.5, 0.62, 0.5, 0.56, 0.5, 0.6]})
        >>> table = baseline_comparison(s, "NoExplanation")
        >>> round(float(table.loc["A", "difference"]), 3), float(table.loc["A", "pvalue"]), bool(table.loc["A", "significant"])
        (0.168, 0.03125, False)
    """
    if baseline not in scores.columns:
        raise invalid(
            "baseline", "baseline_comparison", f"a column of scores {list(scores.columns)}", baseline
        )
    alpha = check_in_range(alpha, "alpha", "baseline_comparison", 0.0, 1.0)
    methods = [str(m) for m in scores.columns if m != baseline]
    members = [m for m in (methods if family is None else family) if m in methods]
    rows: dict[str, dict[str, float | bool | int]] = {}
    for method in methods:
        d = _shared_difference(scores, method, baseline)
        mean, low, high = t_interval(d, confidence=confidence)
        level = alpha / max(1, len(members)) if method in members else alpha
        rows[method] = {
            "difference": mean, "ci_low": low, "ci_high": high,
            "pvalue": robust_pvalue(d, alternative=alternative), "pvalue_adjusted": math.nan,
            "significant": False, "n_units": int(d.size),
            "mdd": minimum_detectable_difference(d, alpha=level, power=power, alternative=alternative),
        }  # fmt: skip
    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(COMPARISON_COLUMNS))
    table.index.name = "method"
    if len(table):
        table["pvalue_adjusted"] = table["pvalue"].astype(float)
        if members:
            table.loc[members, "pvalue_adjusted"] = holm(table.loc[members, "pvalue"].tolist(), alpha=alpha)
        table["significant"] = (table["pvalue_adjusted"] < alpha).fillna(False).astype(bool)
        table["n_units"] = table["n_units"].astype(int)
    return table


def pairwise_comparison(scores: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Every pair of methods (columns of the units × methods ``scores``): the mean difference over shared
    units, its sign-flip p-value, and the Holm-adjusted p over all pairs.

    Example:
        >>> s = pd.DataFrame({"A": [0.9, 0.8, 0.7, 0.9, 0.8, 0.85], "B": [0.5, 0.6, 0.4, 0.5, 0.5, 0.6],
        ...                   "C": [0.5, 0.61, 0.41, 0.5, 0.49, 0.6]})
        >>> pairwise_comparison(s)[["first", "second", "pvalue", "pvalue_adjusted"]].values.tolist()[0]
        ['A', 'B', 0.03125, 0.09375]
    """
    rows = []
    for first, second in itertools.combinations(scores.columns, 2):
        d = _shared_difference(scores, first, second)
        rows.append({"first": first, "second": second, "difference": float(d.mean()) if d.size else math.nan,
                     "pvalue": sign_flip_test(d), "n_units": int(d.size)})  # fmt: skip
    table = pd.DataFrame(rows, columns=["first", "second", "difference", "pvalue", "n_units"])
    table["pvalue_adjusted"] = holm(table["pvalue"].tolist(), alpha=alpha) if len(table) else []
    table["significant"] = (table["pvalue_adjusted"] < alpha).fillna(False).astype(bool)
    return table


@dataclass(frozen=True)
class BestMethod:
    """The method with the highest mean (``None`` with fewer than two), whether it is ``established`` (it beats
    every other one in the Holm-corrected pairwise tests, ``pairs``: :func:`pairwise_comparison`)."""

    method: str | None
    established: bool
    pairs: pd.DataFrame = field(default_factory=pd.DataFrame)


def best_method(scores: pd.DataFrame, *, alpha: float = 0.05) -> BestMethod:
    """The method with the highest mean over units, and whether it beats **every** other one in the
    Holm-corrected pairwise tests (:func:`pairwise_comparison`); only then may a report call it the best.

    Example:
        >>> s = pd.DataFrame({"A": [0.9, 0.8, 0.7, 0.9, 0.8, 0.85], "B": [0.5, 0.6, 0.4, 0.5, 0.5, 0.6]})
        >>> best_method(s).method, best_method(s).established
        ('A', True)
    """
    if scores.shape[1] < 2:
        return BestMethod(None, False)
    top = str(scores.mean(axis=0).idxmax())
    pairs = pairwise_comparison(scores, alpha=alpha)
    mine = pairs[(pairs["first"] == top) | (pairs["second"] == top)]
    signs = np.where(mine["first"] == top, 1.0, -1.0) * mine["difference"].to_numpy(dtype=float)
    established = bool(len(mine) and mine["significant"].all() and (signs > 0).all())
    return BestMethod(top, established, pairs)
