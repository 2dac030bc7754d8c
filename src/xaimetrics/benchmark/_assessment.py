"""One call from stored results to "what can we conclude, and how sure are we": :func:`assess`.

It picks the score (expected accuracy when every setting has class probabilities, else eq. 5's accuracy),
leaves degenerate settings out of the comparisons (and counts them), splits the controls from the methods,
and gathers the intervals, baseline tests, power, split-half stability, control verdict, the U1 ceiling, the
empty-explanation flags and the plain-language conclusion that the report and the demo print.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from xaimetrics._validation import invalid
from xaimetrics.benchmark._analysis import RANKING_KEYS, choose_metric, ranking_frame
from xaimetrics.benchmark._grid import BASELINE_METHOD, CONTROL_METHODS
from xaimetrics.benchmark._ranking import pivot_scores, rank_methods
from xaimetrics.benchmark._uncertainty import (
    baseline_comparison,
    bootstrap_intervals,
    conclusion,
    control_verdict,
    split_half_stability,
)
from xaimetrics.consim import PROMPT_TYPES

__all__ = ["Assessment", "assess"]


@dataclass(frozen=True)
class Assessment:
    """What a grid's results support (see :func:`assess`).

    Attributes:
        metric: the score compared (``"expected_accuracy"`` or ``"score"``).
        ranking: Copeland ranking of the concept methods and the baseline (controls left out), with the
            mean score, its 95 % bootstrap interval, and the difference with NoExplanation and its p-value.
        controls: the controls' rows of the baseline comparison, with their role.
        comparison: every method and control against NoExplanation (:func:`baseline_comparison`).
        verdict: :func:`control_verdict`; stability: :func:`split_half_stability` (methods only).
        degenerate: per simulator × method, settings and degenerate settings (left out of the comparisons).
        empty: per concept method, the share of its explanation settings that showed no concept at all.
        ceiling: the U1 upper bound (mean and interval) when U1 was run, else ``None``.
        summary: the conclusion in plain sentences.
        long: the ranking frame the numbers were computed on (:func:`ranking_frame`, controls included).
    """

    metric: str
    ranking: pd.DataFrame
    controls: pd.DataFrame
    comparison: pd.DataFrame
    verdict: dict[str, Any]
    stability: dict[str, Any]
    degenerate: pd.DataFrame
    empty: pd.DataFrame
    ceiling: dict[str, float] | None
    summary: str
    long: pd.DataFrame


def _degenerate_table(results: pd.DataFrame) -> pd.DataFrame:
    rows = results[(results["phase"] == "evaluation") & results["score"].notna()]
    if "degenerate" not in rows.columns or rows.empty:
        return pd.DataFrame(columns=["simulator", "method", "settings", "degenerate", "share"])
    flags = rows.assign(degenerate=rows["degenerate"].fillna(0).astype(int))
    table = flags.groupby(["simulator", "method"])["degenerate"].agg(settings="count", degenerate="sum")
    table["share"] = table["degenerate"] / table["settings"]
    return table.reset_index()


def _empty_table(results: pd.DataFrame) -> pd.DataFrame:
    rows = results[
        (results["phase"] == "evaluation")
        & results["score"].notna()
        & results["prompt_type"].isin(PROMPT_TYPES.explanations())
    ]
    if "n_concepts_shown" not in rows.columns or rows.empty:
        return pd.DataFrame(columns=["method", "settings", "empty", "share"])
    shown = pd.to_numeric(rows["n_concepts_shown"], errors="coerce")
    flags = rows.assign(empty=(shown == 0).astype(int))
    table = flags.groupby("method")["empty"].agg(settings="count", empty="sum")
    table["share"] = table["empty"] / table["settings"]
    return table.reset_index()


def _ceiling(results: pd.DataFrame, metric: str) -> dict[str, float] | None:
    rows = results[(results["phase"] == "evaluation") & (results["is_upper_bound"].astype(int) == 1)]
    column = metric if metric in rows.columns and rows[metric].notna().any() else "score"
    values = rows[column].dropna().astype(float)
    if values.empty:
        return None
    interval = bootstrap_intervals(pd.DataFrame({"U1": values.to_numpy()})).loc["U1"]
    return {"mean": float(interval["mean"]), "ci_low": float(interval["ci_low"]),
            "ci_high": float(interval["ci_high"]), "n_settings": int(interval["n_settings"])}  # fmt: skip


def assess(
    results: pd.DataFrame, *, metric: str = "auto", alpha: float = 0.05, exclude_degenerate: bool = True
) -> Assessment:
    """Everything the report says about a grid's results, with how sure each number is.

    Args:
        results: the store's rows (:meth:`~xaimetrics.benchmark.ResultsStore.to_frame`).
        metric: ``"auto"`` (:func:`~xaimetrics.benchmark.choose_metric`), ``"score"`` or ``"expected_accuracy"``.
        alpha: the significance level of the paired tests.
        exclude_degenerate: leave settings with degenerate answers out of the comparisons.
    """
    metric = choose_metric(results, metric)
    long = ranking_frame(results, metric=metric, exclude_degenerate=exclude_degenerate)
    all_degenerate = exclude_degenerate and long["method"].nunique() < 2
    if all_degenerate:  # nothing left to compare: keep them, and say so in the summary
        long = ranking_frame(results, metric=metric, exclude_degenerate=False)
    if long["method"].nunique() < 2:
        raise invalid(
            "results", "assess", "scores of at least two methods in shared settings",
            f"{long['method'].nunique()} method(s)", "Run more of the grid first.",
        )  # fmt: skip
    wide = pivot_scores(long, setting=list(RANKING_KEYS))
    roles = {m: role for m, role in _roles().items() if m in wide.columns}
    methods = [m for m in wide.columns if m not in roles]
    intervals = bootstrap_intervals(wide)
    if BASELINE_METHOD in wide.columns:
        comparison = baseline_comparison(wide, alpha=alpha)
    else:
        comparison = pd.DataFrame(
            columns=["difference", "ci_low", "ci_high", "pvalue", "significant", "mdd", "n_settings"]
        )
    ranking = rank_methods(wide[methods]) if len(methods) >= 2 else pd.DataFrame()
    if len(ranking):
        ranking = ranking.join(intervals[["ci_low", "ci_high"]])
        ranking = ranking.join(
            comparison[["difference", "pvalue"]].rename(columns={"difference": "vs_baseline"})
        )
    controls = comparison.loc[[m for m in comparison.index if m in roles]].copy()
    controls.insert(0, "role", [roles[m] for m in controls.index])
    verdict = control_verdict(comparison, roles, alpha=alpha)
    stability = split_half_stability(long[long["method"].isin(methods)], setting=list(RANKING_KEYS))
    summary = conclusion(comparison, verdict, stability, metric=metric, roles=roles)
    degenerate = _degenerate_table(results)
    if all_degenerate:
        summary = (
            "Nearly every setting is degenerate: the simulator gave the same answer (or the same class "
            "probabilities) to every sample, so it did not use the prompt and nothing below is evidence. Use a "
            "stronger simulator. " + summary
        )
    elif exclude_degenerate and len(degenerate) and degenerate["degenerate"].sum():
        summary += (
            f" {int(degenerate['degenerate'].sum())} of {int(degenerate['settings'].sum())} settings had degenerate "
            "answers (one class for nearly every sample) and were left out."
        )
    empty = _empty_table(results)
    if len(empty) and empty["empty"].sum():
        names = ", ".join(empty.loc[empty["empty"] > 0, "method"])
        summary += (
            f" Some explanations showed no concept at all ({names}): their prompts only differ in wording."
        )
    return Assessment(
        metric=metric, ranking=ranking, controls=controls, comparison=comparison, verdict=verdict,
        stability=stability, degenerate=degenerate, empty=empty, ceiling=_ceiling(results, metric),
        summary=summary, long=long,
    )  # fmt: skip


def _roles() -> dict[str, str]:
    from xaimetrics.consim import CONTROL_ROLES

    return {m: CONTROL_ROLES[m] for m in CONTROL_METHODS}
