"""Ranking explanation methods across settings (ConSim paper §4.3, eq. 6–8).

Scores come as a *wide* table: one row per setting (dataset, model, seed, prompt type, …), one column per
method, the simulatability accuracy in each cell, NaN where a method was not run in that setting. Methods are
compared **pairwise on the settings where both have a score**; a setting missing for one method neither
counts as a win nor a loss.

- Win matrix (eq. 6): ``P[i, j] = Σ_s 0 / 1 / 2`` for a loss / tie / win of ``i`` over ``j``, normalised to
  0–100 by ``2·|S_ij|`` (the share of duels won, a tie counting half). The diagonal is 50 (a method ties
  itself), so that eq. 7 reads as written.
- Copeland rank (eq. 7): ``rank(i) = |M| + 1 − #{j ∈ M : P[i, j] ≥ 50}`` with ``j`` running over all
  methods *including* ``i``: a method that beats or ties every other one is ranked 1. Equal counts share a rank.
- Difference matrix (eq. 8): ``Diff[i, j] = mean_s(acc_i − acc_j)``, with the standard deviation, the
  two-sided **sign-flip permutation** p-value (exact up to 13 rows; :func:`~xaimetrics.stats.
  sign_flip_test`) and the Holm-adjusted p over all pairs. A constant difference over ``n`` rows gets the
  smallest p the test can give (``2/2ⁿ``), never 0: two seeds that agree are still only two seeds.

The rows should be **independent units** (one per seed: :func:`~xaimetrics.benchmark._analysis.unit_scores`); the
report and :func:`~xaimetrics.benchmark.assess` pass unit tables. Rows that share their samples (prompt types,
interpretations of one seed) are not independent, and a test over them is pseudo-replicated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from xaimetrics._validation import check_in_range, invalid

__all__ = [
    "PairwiseDifferences",
    "copeland_ranks",
    "pairwise_differences",
    "pivot_scores",
    "rank_methods",
    "win_matrix",
]


def pivot_scores(
    results: pd.DataFrame,
    *,
    method: str = "method",
    score: str = "score",
    setting: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Turn a long results table (one row per setting × method) into the wide table the rankings take.

    ``setting`` lists the columns that identify a setting; by default every column except ``method`` and
    ``score``. Two rows for the same setting and method are an error (they would be silently averaged).

    Example:
        >>> long = pd.DataFrame({"seed": [0, 0, 1, 1], "method": ["NMF", "PCA"] * 2, "score": [0.9, 0.6, 0.7, 0.8]})
        >>> pivot_scores(long).values.tolist()
        [[0.9, 0.6], [0.7, 0.8]]
    """
    for name, column in (("method", method), ("score", score)):
        if column not in results.columns:
            raise invalid(name, "pivot_scores", f"a column of 'results' ({list(results.columns)})", column)
    keys = list(setting) if setting is not None else [c for c in results.columns if c not in (method, score)]
    missing = [k for k in keys if k not in results.columns]
    if missing:
        raise invalid("setting", "pivot_scores", f"columns of 'results' ({list(results.columns)})", missing)
    if not keys:
        raise invalid("setting", "pivot_scores", "at least one column identifying a setting", "none")
    duplicated = results.duplicated(subset=[*keys, method], keep=False)
    if duplicated.any():
        example = results.loc[duplicated, [*keys, method]].iloc[0].to_dict()
        raise invalid(
            "results",
            "pivot_scores",
            "one row per setting and method",
            f"several rows for {example}",
            "Add the column that tells them apart to 'setting', or aggregate them first.",
        )
    wide = results.pivot_table(index=keys, columns=method, values=score, aggfunc="first", dropna=False)
    wide.columns.name = method
    return wide.astype(float)


def _check_wide(scores: pd.DataFrame, owner: str) -> np.ndarray:
    if not isinstance(scores, pd.DataFrame):
        raise invalid(
            "scores",
            owner,
            "a pandas DataFrame (settings × methods)",
            type(scores).__name__,
            "Build it with pivot_scores(results).",
        )
    if scores.shape[1] < 2:
        raise invalid("scores", owner, "at least two methods (columns)", scores.shape[1])
    if scores.columns.duplicated().any():
        raise invalid("scores", owner, "unique method names", list(scores.columns))
    return scores.to_numpy(dtype=float)


def win_matrix(scores: pd.DataFrame) -> pd.DataFrame:
    """Eq. 6 normalised to 0–100: the share of shared settings in which the row method beats the column one.

    Returns NaN for a pair of methods that share no setting.

    Example:
        >>> s = pd.DataFrame({"A": [0.9, 0.5, 0.7], "B": [0.6, 0.5, 0.8], "C": [0.1, 0.2, 0.3]})
        >>> win_matrix(s).round(1).values.tolist()
        [[50.0, 50.0, 100.0], [50.0, 50.0, 100.0], [0.0, 0.0, 50.0]]
    """
    values = _check_wide(scores, "win_matrix")
    a = values[:, :, None]
    b = values[:, None, :]
    both = ~np.isnan(a) & ~np.isnan(b)
    gap = np.nan_to_num(a) - np.nan_to_num(b)
    gap[np.abs(gap) <= 1e-12] = 0.0  # means of the same scores summed in another order tie, as they should
    points = np.where(both, np.sign(gap) + 1, 0).sum(axis=0)
    duels = both.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        normalised = np.where(duels > 0, 100.0 * points / (2.0 * duels), np.nan)
    return pd.DataFrame(normalised, index=scores.columns.copy(), columns=scores.columns.copy())


def copeland_ranks(wins: pd.DataFrame) -> pd.Series:
    """Eq. 7 from a win matrix: ``|M| + 1 − #{j : P[i, j] ≥ 50}`` (the diagonal counts).

    Example:
        >>> P = pd.DataFrame([[50, 70, 100], [30, 50, 55], [0, 45, 50]], index=list("ABC"), columns=list("ABC"))
        >>> copeland_ranks(P).tolist()
        [1, 2, 3]
    """
    if not isinstance(wins, pd.DataFrame) or wins.shape[0] != wins.shape[1]:
        raise invalid("wins", "copeland_ranks", "a square DataFrame from win_matrix", type(wins).__name__)
    values = wins.to_numpy(dtype=float)
    victories = (np.nan_to_num(values, nan=-1.0) >= 50.0).sum(axis=1)
    ranks = len(values) + 1 - victories
    return pd.Series(ranks.astype(int), index=wins.index.copy(), name="rank")


@dataclass(frozen=True)
class PairwiseDifferences:
    """Eq. 8 with its statistics; every field is a methods × methods DataFrame.

    ``pvalue`` is the unadjusted two-sided sign-flip p-value, ``pvalue_adjusted`` the Holm-adjusted one over
    all pairs, and ``significant`` is ``pvalue_adjusted < alpha``. Pairs that share no row have NaN p-values and
    are never significant; differences that are all zero get ``p = 1``.
    """

    mean: pd.DataFrame
    std: pd.DataFrame
    pvalue: pd.DataFrame
    n_settings: pd.DataFrame
    alpha: float
    pvalue_adjusted: pd.DataFrame | None = None

    @property
    def significant(self) -> pd.DataFrame:
        adjusted = self.pvalue if self.pvalue_adjusted is None else self.pvalue_adjusted
        return adjusted < self.alpha


def paired_pvalue(differences: np.ndarray) -> float:
    """Two-sided sign-flip permutation p-value of the paired differences ``acc_i − acc_j`` (exact up to 13).

    Example:
        >>> paired_pvalue(np.array([0.05, 0.05, 0.05])), paired_pvalue(np.array([0.0, 0.0]))
        (0.25, 1.0)
    """
    from xaimetrics.stats import sign_flip_test

    return sign_flip_test(differences)


def pairwise_differences(scores: pd.DataFrame, *, alpha: float = 0.05) -> PairwiseDifferences:
    """Mean and std of ``acc_i − acc_j`` over shared rows, with the sign-flip p-value and its Holm adjustment
    over every pair (rows: independent units, module docstring).

    Example:
        >>> s = pd.DataFrame({"A": [0.9, 0.8, 0.7, 0.9, 0.8, 0.9], "B": [0.5, 0.6, 0.4, 0.5, 0.6, 0.5]})
        >>> d = pairwise_differences(s)
        >>> round(float(d.mean.loc["A", "B"]), 3), float(d.pvalue.loc["A", "B"]), bool(d.significant.loc["A", "B"])
        (0.317, 0.03125, True)
        >>> constant = pairwise_differences(pd.DataFrame({"A": [0.85, 0.75, 0.6], "B": [0.8, 0.7, 0.55]}))
        >>> float(constant.pvalue.loc["A", "B"]), bool(constant.significant.loc["A", "B"])
        (0.25, False)
    """
    from xaimetrics.stats import holm

    values = _check_wide(scores, "pairwise_differences")
    alpha = check_in_range(alpha, "alpha", "pairwise_differences", 0.0, 1.0)
    methods = scores.columns
    m = len(methods)
    mean = np.full((m, m), np.nan)
    std = np.full((m, m), np.nan)
    pvalue = np.full((m, m), np.nan)
    count = np.zeros((m, m), dtype=int)
    for i in range(m):
        for j in range(m):
            shared = ~np.isnan(values[:, i]) & ~np.isnan(values[:, j])
            diff = values[shared, i] - values[shared, j]
            count[i, j] = diff.size
            if diff.size == 0:
                continue
            mean[i, j] = diff.mean()
            std[i, j] = diff.std(ddof=1) if diff.size > 1 else np.nan
            if i < j:  # the test is symmetric: p(i, j) = p(j, i)
                pvalue[i, j] = pvalue[j, i] = paired_pvalue(diff)

    upper = np.triu_indices(m, k=1)
    adjusted = np.full((m, m), np.nan)
    adjusted[upper] = holm(pvalue[upper], alpha=alpha)
    adjusted.T[upper] = adjusted[upper]

    def frame(array: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame(array, index=methods.copy(), columns=methods.copy())

    return PairwiseDifferences(frame(mean), frame(std), frame(pvalue), frame(count), alpha, frame(adjusted))


def rank_methods(scores: pd.DataFrame) -> pd.DataFrame:
    """One table per ranking: Copeland rank, win share against the field, mean score and settings count.

    Sorted by rank, then by mean score.

    Example:
        >>> s = pd.DataFrame({"A": [0.9, 0.5, 0.7], "B": [0.6, 0.5, 0.8], "C": [0.1, 0.2, 0.3]})
        >>> rank_methods(s)["rank"].to_dict()
        {'A': 1, 'B': 1, 'C': 3}
    """
    wins = win_matrix(scores)
    off_diagonal = wins.where(~np.eye(len(wins), dtype=bool))
    table = pd.DataFrame(
        {
            "rank": copeland_ranks(wins),
            "win_share": off_diagonal.mean(axis=1),
            "mean_score": scores.mean(axis=0),
            "n_settings": scores.notna().sum(axis=0).astype(int),
        }
    )
    table.index.name = "method"
    return table.sort_values(["rank", "mean_score"], ascending=[True, False], kind="stable")
