"""From stored results to the paper's tables: rankings per subset, prompt-type comparison, Spearman (§4.3, §5).

A *ranking setting* is dataset × model × simulator × interpretation × explanation prompt type (E1, E2, E3) ×
anonymisation × seed. Concept methods enter with their own score in that setting; the ``NoExplanation``
baseline enters with the score of its baseline prompt (NE1 for E1, NE2 for E2 and E3) on the same seed,
dataset, model and simulator — one baseline row therefore votes in several settings, as in the paper's
Fig. 4. U1 rows (upper bounds) and validation-phase rows never enter a ranking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from xaimetrics._validation import invalid
from xaimetrics.benchmark._grid import BASELINE_METHOD, ranking_prompt
from xaimetrics.benchmark._ranking import (
    PairwiseDifferences,
    pairwise_differences,
    pivot_scores,
    rank_methods,
)

__all__ = [
    "RANKING_KEYS",
    "choose_metric",
    "prompt_type_comparison",
    "ranking_frame",
    "rankings_by",
    "spearman_with_metrics",
    "subset_rankings",
]

#: the columns that identify a ranking setting
RANKING_KEYS: tuple[str, ...] = (
    "dataset", "model", "simulator", "interpretation", "prompt_type", "anonymized", "seed",
)  # fmt: skip


#: the scores a ranking can use: eq. 5's accuracy, or the probabilistic expected accuracy
METRICS: tuple[str, ...] = ("score", "expected_accuracy")


def choose_metric(results: pd.DataFrame, metric: str = "auto") -> str:
    """The column rankings use: ``expected_accuracy`` when every scored evaluation row has it, else ``score``.

    Example:
        >>> rows = pd.DataFrame({"phase": "evaluation", "is_upper_bound": 0, "score": [0.5, 0.7],
        ...                      "expected_accuracy": [0.52, 0.61]})
        >>> choose_metric(rows), choose_metric(rows.assign(expected_accuracy=[0.52, None]))
        ('expected_accuracy', 'score')
    """
    if metric != "auto":
        if metric not in METRICS:
            raise invalid("metric", "choose_metric", "'auto', 'score' or 'expected_accuracy'", metric)
        return metric
    if "expected_accuracy" not in results.columns:
        return "score"
    rows = results[(results["phase"] == "evaluation") & (results["is_upper_bound"].astype(int) == 0)]
    rows = rows[rows["score"].notna()]
    return "expected_accuracy" if len(rows) and rows["expected_accuracy"].notna().all() else "score"


def ranking_frame(
    results: pd.DataFrame, *, metric: str = "score", exclude_degenerate: bool = False
) -> pd.DataFrame:
    """The long table the rankings take: one row per ranking setting × method, baselines spread out.

    Args:
        results: the store's rows (:meth:`ResultsStore.to_frame`).
        metric: the column that becomes ``score``: ``"score"`` (eq. 5), ``"expected_accuracy"`` or ``"auto"``
            (:func:`choose_metric`).
        exclude_degenerate: leave out the settings whose simulator gave (nearly) one answer to every sample.

    Returns:
        Columns :data:`RANKING_KEYS` + ``method`` + ``score``.

    Example:
        >>> rows = pd.DataFrame({"dataset": "d", "model": "m", "simulator": "s", "seed": 0, "phase": "evaluation",
        ...     "method": ["NMF", "NMF", "NoExplanation"], "interpretation": ["top_words", "top_words", ""],
        ...     "prompt_type": ["E2", "E3", "NE2"], "anonymized": 1, "is_upper_bound": 0, "score": [0.8, 0.7, 0.6]})
        >>> ranking_frame(rows)[["prompt_type", "method", "score"]].values.tolist()
        [['E2', 'NMF', 0.8], ['E3', 'NMF', 0.7], ['E2', 'NoExplanation', 0.6], ['E3', 'NoExplanation', 0.6]]
    """
    needed = {*RANKING_KEYS, "method", "score", "phase", "is_upper_bound"}
    missing = sorted(needed - set(results.columns))
    if missing:
        raise invalid("results", "ranking_frame", "the results store's columns", f"missing {missing}")
    metric = choose_metric(results, metric)
    rows = results[(results["phase"] == "evaluation") & (results["is_upper_bound"].astype(int) == 0)]
    if exclude_degenerate and "degenerate" in rows.columns:
        rows = rows[rows["degenerate"].fillna(0).astype(int) == 0]
    rows = rows[rows["score"].notna() & rows[metric].notna()].copy()
    rows["score"] = rows[metric].astype(float)
    rows["anonymized"] = rows["anonymized"].astype(bool)
    concept = rows[rows["method"] != BASELINE_METHOD]
    concept = concept[concept["prompt_type"].isin(("E1", "E2", "E3"))]
    baseline = rows[rows["method"] == BASELINE_METHOD]
    interpretations = sorted(concept["interpretation"].dropna().unique()) or [""]
    spread = []
    for _, row in baseline.iterrows():
        for target in ranking_prompt(str(row["prompt_type"])):
            for interpretation in interpretations:
                copy = row.copy()
                copy["prompt_type"], copy["interpretation"] = target, interpretation
                spread.append(copy)
    parts = [concept, pd.DataFrame(spread, columns=baseline.columns)] if spread else [concept]
    long = pd.concat(parts, ignore_index=True)
    long = long[[*RANKING_KEYS, "method", "score"]]
    # a setting with a single method (e.g. NE2 spread to an E3 the grid did not run) holds no duel
    duels = long.groupby(list(RANKING_KEYS), dropna=False)["method"].transform("nunique")
    long = long[duels >= 2].reset_index(drop=True)
    long["score"] = long["score"].astype(float)
    return long


def rankings_by(long: pd.DataFrame, by: Sequence[str] = ()) -> dict[tuple[Any, ...], pd.DataFrame]:
    """Copeland rankings (eq. 6–7, :func:`rank_methods`) of every subset defined by the ``by`` columns.

    The key is the tuple of ``by`` values (``()`` for all settings). Subsets with fewer than two methods are
    left out.
    """
    out: dict[tuple[Any, ...], pd.DataFrame] = {}
    groups = [((), long)] if not by else list(long.groupby(list(by), sort=True))
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        wide = pivot_scores(part, setting=list(RANKING_KEYS))
        if wide.shape[1] >= 2:
            out[key] = rank_methods(wide)
    return out


def subset_rankings(long: pd.DataFrame) -> dict[str, dict[tuple[Any, ...], pd.DataFrame]]:
    """Rankings overall and per dataset, model, simulator, interpretation, prompt type and anonymisation."""
    subsets: dict[str, dict[tuple[Any, ...], pd.DataFrame]] = {"all": rankings_by(long)}
    for column in ("dataset", "model", "simulator", "interpretation", "prompt_type", "anonymized"):
        if long[column].nunique() > 1 or column == "prompt_type":
            subsets[column] = rankings_by(long, [column])
    return subsets


def overall_statistics(
    long: pd.DataFrame, *, alpha: float = 0.05
) -> tuple[pd.DataFrame, PairwiseDifferences]:
    """The win matrix (eq. 6, 0–100) and the differences with paired t-tests (eq. 8) over all settings."""
    from xaimetrics.benchmark._ranking import win_matrix

    wide = pivot_scores(long, setting=list(RANKING_KEYS))
    order = rank_methods(wide).index
    wide = wide[order]
    return win_matrix(wide), pairwise_differences(wide, alpha=alpha)


def prompt_type_comparison(results: pd.DataFrame) -> pd.DataFrame:
    """Mean score (± std, count) per method and prompt type label (``E2-a``…), U1 as an upper bound.

    Also the mean gain of each explanation prompt over its baseline on the same seed and setting
    (``gain_vs_baseline``), the quantity the paper's simulatability measures.
    """
    rows = results[(results["phase"] == "evaluation") & results["score"].notna()].copy()
    if rows.empty:
        return pd.DataFrame(columns=["method", "prompt", "mean", "std", "n", "gain_vs_baseline"])
    rows["prompt"] = rows["prompt_type"] + np.where(rows["anonymized"].astype(bool), "-a", "")
    table = rows.groupby(["method", "prompt"])["score"].agg(["mean", "std", "count"]).reset_index()
    table = table.rename(columns={"count": "n"})
    keys = ["dataset", "model", "simulator", "seed", "anonymized"]
    base = rows[rows["method"] == BASELINE_METHOD][[*keys, "prompt_type", "score"]]
    gains = []
    for _, row in table.iterrows():
        kind = row["prompt"].removesuffix("-a")
        baseline = {"E1": "NE1", "E2": "NE2", "E3": "NE2"}.get(kind)
        if baseline is None or row["method"] == BASELINE_METHOD:
            gains.append(np.nan)
            continue
        mine = rows[(rows["method"] == row["method"]) & (rows["prompt"] == row["prompt"])]
        ref = base[base["prompt_type"] == baseline].drop(columns="prompt_type")
        merged = mine.merge(ref, on=keys, suffixes=("", "_baseline"))
        gains.append(float((merged["score"] - merged["score_baseline"]).mean()) if len(merged) else np.nan)
    table["gain_vs_baseline"] = gains
    return table


def spearman_with_metrics(
    ranking: pd.DataFrame, metrics: pd.DataFrame | Mapping[str, Mapping[str, float]]
) -> pd.DataFrame:
    """Spearman's ρ between the simulatability ranking and each concept metric, across methods (paper Fig. 5).

    Simulatability is the Copeland win share (higher is better); a positive ρ means the metric grows with
    simulatability. Methods missing from either side are left out; metrics constant across methods get NaN.

    Args:
        ranking: a table of :func:`rank_methods` (index = method, column ``win_share``).
        metrics: ``methods × metrics`` values (e.g. from :func:`xaimetrics.concepts.concept_metrics`).

    Example:
        >>> r = pd.DataFrame({"win_share": [80.0, 50.0, 20.0]}, index=["NMF", "PCA", "SVD"])
        >>> m = pd.DataFrame({"l0": [3.0, 9.0, 12.0], "logits_kl": [0.1, 0.3, 0.2]}, index=["NMF", "PCA", "SVD"])
        >>> spearman_with_metrics(r, m)["rho"].round(2).tolist()
        [-1.0, -0.5]
    """
    from scipy import stats

    table = pd.DataFrame(metrics) if isinstance(metrics, Mapping) else metrics
    if isinstance(metrics, Mapping):
        table = table.T
    methods = [m for m in ranking.index if m in table.index]
    out = []
    for column in table.columns:
        values = pd.to_numeric(table.loc[methods, column], errors="coerce").astype(float)
        share = ranking.loc[methods, "win_share"].astype(float)
        ok = values.notna() & share.notna()
        if ok.sum() < 3 or values[ok].nunique() < 2 or share[ok].nunique() < 2:
            rho, p = np.nan, np.nan
        else:
            result = stats.spearmanr(share[ok], values[ok])
            rho, p = float(result.statistic), float(result.pvalue)
        out.append({"metric": column, "rho": rho, "pvalue": p, "n_methods": int(ok.sum())})
    return pd.DataFrame(out).set_index("metric")


def parse_statistics(results: pd.DataFrame) -> pd.DataFrame:
    """Parse counts per simulator and prompt type: samples, parsed, missing, invalid and the parse rate."""
    if results.empty:
        return pd.DataFrame()
    rows = results.copy()
    rows["prompt"] = rows["prompt_type"] + np.where(rows["anonymized"].astype(bool), "-a", "")
    table = rows.groupby(["simulator", "prompt"])[["n_samples", "n_parsed", "n_missing", "n_invalid"]].sum()
    table["parse_rate"] = table["n_parsed"] / table["n_samples"].where(table["n_samples"] > 0)
    return table.reset_index()


def totals(results: pd.DataFrame) -> dict[str, Any]:
    """Calls, cached calls, tokens, cost and summed simulator latency over the stored settings."""
    if results.empty:
        return {"settings": 0, "calls": 0, "cached_calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                "cost_usd": 0.0, "latency_s": 0.0}  # fmt: skip
    return {
        "settings": len(results),
        "calls": len(results),
        "cached_calls": int(results["cached"].fillna(0).astype(int).sum()),
        "prompt_tokens": int(results["prompt_tokens"].fillna(0).sum()),
        "completion_tokens": int(results["completion_tokens"].fillna(0).sum()),
        "cost_usd": float(results["cost_usd"].fillna(0).sum()),
        "latency_s": float(results["latency_s"].fillna(0).sum()),
    }
