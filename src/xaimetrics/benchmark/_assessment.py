"""One call from stored results to "what can we conclude, and how sure are we": :func:`assess`.

It picks the score (expected accuracy when every setting has class probabilities, else eq. 5's accuracy) and
uses it for every number; compares each method and control with NoExplanation like with like (within the
same setting, then averaged within each independent unit — a seed of a dataset, whatever model or simulator
read it: :func:`~xaimetrics.benchmark._analysis.unit_differences`) and ranks on the complete blocks; tests the
controls alone in their pre-stated directions (positive: one-sided superiority; negative: equivalence within a
margin) and the methods against NoExplanation with Holm's correction; names a best method only after corrected pairwise tests; keeps every
setting in the primary analysis (degenerate ones are flagged, and dropping their seeds for every method is a
labelled sensitivity analysis); and states what the grid's size can and cannot show (:func:`~xaimetrics.
benchmark.plan`). docs/benchmark.md, "Statistics", gives the rules and the calibration measured for them.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import pandas as pd

from xaimetrics._validation import check_in_range, invalid
from xaimetrics.benchmark._analysis import (
    UNIT_KEYS,
    _unmatched_settings,
    choose_metric,
    complete_blocks,
    ranking_frame,
    unit_differences,
    unit_scores,
)
from xaimetrics.benchmark._gain import NSG_COLUMNS, gain_table, unit_normalised_gains
from xaimetrics.benchmark._grid import BASELINE_METHOD
from xaimetrics.benchmark._ranking import rank_methods
from xaimetrics.benchmark._sentences import conclusion, controls_sentence, p_phrase, planning_sentence
from xaimetrics.consim import PROMPT_TYPES
from xaimetrics.stats import (
    DEFAULT_MARGIN,
    BestMethod,
    ControlVerdict,
    SplitHalfStability,
    baseline_comparison,
    best_method,
    control_verdict,
    minimum_pvalue,
    plan,
    split_half_stability,
    t_interval,
)
from xaimetrics.stats._comparison import COMPARISON_COLUMNS
from xaimetrics.stats._planning import Planning

__all__ = ["Assessment", "assess"]


@dataclass(frozen=True)
class Assessment:
    """What a grid's results support (see :func:`assess`).

    Attributes:
        metric: the score every number uses (``"expected_accuracy"`` or ``"score"``).
        units: independent units × competitors, the mean score of each competitor over its settings within each
            unit (:func:`~xaimetrics.benchmark._analysis.unit_scores`; descriptive: the tests use ``differences``).
        differences: independent units × competitors, each one's difference with NoExplanation like with like
            (:func:`~xaimetrics.benchmark._analysis.unit_differences`); every comparison with the baseline, the controls'
            tests, the planning and the sensitivity analysis use it. Empty without NoExplanation rows.
        unmatched: per competitor, its settings, those without a baseline setting to match
            (``without_baseline``, left out of the comparisons with NoExplanation) and those outside the
            ranking's complete blocks (``outside_blocks``); the summary says when either is not zero.
        ranking: Copeland ranking (over units) of the concept methods and the baseline (controls left out) on
            the complete blocks (the settings every ranked competitor has,
            :func:`~xaimetrics.benchmark._analysis.complete_blocks`), with the mean score, its 95 % t-interval over units,
            the difference with NoExplanation, its unadjusted and Holm-adjusted p-values.
        controls: each control's pre-stated test, its difference, interval, p-value and verdict
            (``"pass"``, ``"fail"`` or ``"undecided"``).
        comparison: every method and control against NoExplanation (:func:`~xaimetrics.benchmark.
            baseline_comparison`; Holm over the concept methods, the controls keep their own two-sided p),
            with the normalised simulatability gain beside the raw difference (``nsg``, its t-interval over
            units ``nsg_low``/``nsg_high``, and ``nsg_units``, the units where it is defined;
            :func:`~xaimetrics.benchmark._gain.normalised_gain`).
        verdict: :func:`~xaimetrics.stats.control_verdict`; ``verdict.detects`` is true only when the
            positive control beats the baseline and the negative control is shown equivalent to it.
        best: :func:`~xaimetrics.stats.best_method` over the concept methods.
        stability: split-half Kendall's τ over units (methods only, :func:`~xaimetrics.stats.split_half_stability`).
        planning: what this size can detect (:func:`~xaimetrics.stats.plan` from this grid's spread): the
            minimum p, the minimum detectable difference of the methods (Holm level) and of the positive
            control, and the seeds needed for a difference of ``margin``.
        degenerate: per simulator × method, settings and degenerate settings (flagged, kept).
        sensitivity: the comparison without the seeds that hold a degenerate setting (every method loses the
            same seeds), or ``None`` when no setting is degenerate. Not the primary analysis.
        empty: per concept method, the share of its explanation settings that showed no concept at all.
        ceiling: the U1 upper bound (mean and t-interval over units) when U1 was run, else ``None``.
        summary: the conclusion in plain sentences.
        long: the ranking frame the numbers were computed on (:func:`ranking_frame`, controls included).
        gains: units × competitors, each unit's NSG (:func:`~xaimetrics.benchmark._gain.unit_normalised_gains`;
            NaN where the matched baseline was perfect). Empty without NoExplanation rows.
    """

    metric: str
    units: pd.DataFrame
    differences: pd.DataFrame
    unmatched: pd.DataFrame
    ranking: pd.DataFrame
    controls: pd.DataFrame
    comparison: pd.DataFrame
    verdict: ControlVerdict
    best: BestMethod
    stability: SplitHalfStability
    planning: Planning
    degenerate: pd.DataFrame
    sensitivity: pd.DataFrame | None
    empty: pd.DataFrame
    ceiling: dict[str, float] | None
    summary: str
    long: pd.DataFrame
    gains: pd.DataFrame = field(default_factory=pd.DataFrame)


def _evaluation(results: pd.DataFrame) -> pd.DataFrame:
    return results[(results["phase"] == "evaluation") & results["score"].notna()]


def _degenerate_table(results: pd.DataFrame) -> pd.DataFrame:
    rows = _evaluation(results)
    if "degenerate" not in rows.columns or rows.empty:
        return pd.DataFrame(columns=["simulator", "method", "settings", "degenerate", "share"])
    flags = rows.assign(degenerate=rows["degenerate"].fillna(0).astype(int))
    table = flags.groupby(["simulator", "method"])["degenerate"].agg(settings="count", degenerate="sum")
    table["share"] = table["degenerate"] / table["settings"]
    return table.reset_index()


def _degenerate_units(results: pd.DataFrame) -> set[tuple[object, ...]]:
    rows = _evaluation(results)
    if "degenerate" not in rows.columns:
        return set()
    flagged = rows[rows["degenerate"].fillna(0).astype(int) == 1]
    return {tuple(v) for v in flagged[list(UNIT_KEYS)].itertuples(index=False)}


def _empty_table(results: pd.DataFrame) -> pd.DataFrame:
    rows = _evaluation(results)
    rows = rows[rows["prompt_type"].isin(PROMPT_TYPES.explanations())]
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
    rows = rows[rows[column].notna()]
    if rows.empty:
        return None
    per_unit = rows.groupby(list(UNIT_KEYS))[column].mean().astype(float)
    mean, low, high = t_interval(per_unit.to_numpy())
    return {"mean": mean, "ci_low": low, "ci_high": high, "n_units": len(per_unit)}


def _planning(
    units: pd.DataFrame,
    methods: list[str],
    roles: dict[str, str],
    *,
    alpha: float,
    power: float,
    margin: float,
) -> Planning:
    """What this grid's size can detect, from the spread of its own unit differences (a pilot of itself)."""
    n = len(units)
    floors = Planning(
        n_units=n, alpha=alpha, power=power, target=margin, min_pvalue_two_sided=minimum_pvalue(n),
        min_pvalue_one_sided=minimum_pvalue(n, "greater"),
    )  # fmt: skip
    if BASELINE_METHOD not in units.columns or n < 2:
        return floors
    competitors = [m for m in units.columns if m != BASELINE_METHOD]
    differences = units[competitors].sub(units[BASELINE_METHOD], axis=0)
    variances = differences.var(ddof=1).dropna()
    if variances.empty:
        return floors
    sd = float(math.sqrt(variances.mean()))  # pooled over the competitors
    methods_plan = (
        plan(sd, n_units=n, target=margin, alpha=alpha, power=power, n_comparisons=len(methods))
        if methods
        else None
    )
    positive = (
        plan(sd, n_units=n, target=margin, alpha=alpha, power=power, alternative="greater")
        if any(r == "positive" for r in roles.values())
        else None
    )
    return dataclasses.replace(floors, sd=sd, methods=methods_plan, positive=positive)


def assess(
    results: pd.DataFrame,
    *,
    metric: str = "auto",
    alpha: float = 0.05,
    margin: float = DEFAULT_MARGIN,
    power: float = 0.8,
) -> Assessment:
    """Everything the report says about a grid's results, with how sure each number is.

    Args:
        results: the store's rows (:meth:`~xaimetrics.benchmark.ResultsStore.to_frame`).
        metric: ``"auto"`` (:func:`~xaimetrics.benchmark.choose_metric`), ``"score"`` or ``"expected_accuracy"``.
        alpha: the level of every test (family-wise for the methods, per control).
        margin: the negative control's equivalence margin, and the target difference of the planning.
        power: the power the minimum detectable differences and the seed counts are computed for.

    Raises:
        InvalidParameterError: fewer than two competitors with scores, or bad levels.

    Example:
        >>> rows = [{"dataset": "d", "model": "m", "simulator": "s", "seed": seed, "phase": "evaluation",
        ...          "is_upper_bound": 0, "anonymized": 1, "interpretation": "" if m == "NoExplanation" else "w",
        ...          "method": m, "prompt_type": "NE2" if m == "NoExplanation" else "E2",
        ...          "score": 0.5 + 0.1 * (m == "NMF") + 0.01 * seed}
        ...         for seed in range(6) for m in ("NoExplanation", "NMF", "PCA")]
        >>> result = assess(pd.DataFrame(rows))
        >>> result.comparison.loc["NMF", ["pvalue", "pvalue_adjusted", "n_units"]].tolist()
        [0.03125, 0.0625, 6.0]
    """
    alpha = check_in_range(alpha, "alpha", "assess", 0.0, 1.0)
    power = check_in_range(power, "power", "assess", 0.0, 1.0)
    if not margin > 0:
        raise invalid("margin", "assess", "a number > 0 (the equivalence margin, in score units)", margin)
    metric = choose_metric(results, metric)
    long = ranking_frame(results, metric=metric)
    competitors = sorted(map(str, long["method"].unique()))
    if len(competitors) < 2:
        raise invalid(
            "results", "assess", "scores of at least two methods in shared settings",
            f"{len(competitors)} method(s) ({', '.join(competitors) or 'none'})", "Run more of the grid first.",
        )  # fmt: skip
    units = unit_scores(long, axis="method")
    roles = {m: role for m, role in _roles().items() if m in competitors}
    methods = [m for m in units.columns if m not in roles and m != BASELINE_METHOD]
    has_baseline = BASELINE_METHOD in competitors
    if not has_baseline and len(methods) < 2:
        raise invalid(
            "results", "assess",
            "NoExplanation rows (every method and control is compared with them), or at least two concept "
            "methods to rank", f"{', '.join(competitors)} without NoExplanation",
            "Add the baseline's settings (method 'NoExplanation', prompt types NE1/NE2) to the results.",
        )  # fmt: skip
    ranked = [*methods, *([BASELINE_METHOD] if has_baseline else [])]
    unmatched = _unmatched_settings(long, BASELINE_METHOD if has_baseline else None, ranked, axis="method")
    if has_baseline:
        differences = unit_differences(long, axis="method")
        # the tests take units × scores and compare each column with the baseline's: a zero baseline beside
        # the like-with-like differences makes their ``method − baseline`` the matched difference
        paired = differences.assign(**{BASELINE_METHOD: 0.0})
        comparison = baseline_comparison(paired, BASELINE_METHOD, alpha=alpha, power=power, family=methods)
        gains = unit_normalised_gains(long, axis="method")
        comparison = comparison.join(gain_table(gains))
    else:
        differences = pd.DataFrame(index=units.index, columns=pd.Index([], name="method"), dtype=float)
        paired = differences
        gains = differences
        comparison = pd.DataFrame(columns=[*COMPARISON_COLUMNS, *NSG_COLUMNS]).rename_axis("method")
    comparison.insert(
        0, "role", ["method" if m in methods else f"{roles[m]} control" for m in comparison.index]
    )
    # the ranking compares like with like too: the settings every ranked competitor has (complete blocks)
    blocks = complete_blocks(long, ranked, axis="method") if len(ranked) >= 2 else long.iloc[:0]
    block_units = unit_scores(blocks, axis="method") if len(blocks) else pd.DataFrame(columns=ranked)
    ranking = rank_methods(block_units[ranked]) if len(ranked) >= 2 and len(block_units) else pd.DataFrame()
    if len(ranking):
        bounds = {m: t_interval(block_units[m].to_numpy()) for m in ranking.index}
        ranking["ci_low"] = [bounds[m][1] for m in ranking.index]
        ranking["ci_high"] = [bounds[m][2] for m in ranking.index]
        ranking = ranking.rename(columns={"n_settings": "n_units"})
        ranking = ranking.join(
            comparison[["difference", "pvalue", "pvalue_adjusted"]].rename(
                columns={"difference": "vs_baseline"}
            )
        )
    verdict = control_verdict(paired, roles, baseline=BASELINE_METHOD, alpha=alpha, margin=margin)
    scored = block_units[methods] if len(methods) >= 2 and len(block_units) else units[[]]
    best = best_method(scored, alpha=alpha)
    stability = split_half_stability(scored)
    planning = _planning(paired, methods, roles, alpha=alpha, power=power, margin=margin)
    if has_baseline:
        summary = conclusion(
            comparison, controls_sentence(verdict), stability, metric=metric, roles=roles, best=best, alpha=alpha,
        )  # fmt: skip
    else:
        summary = _no_baseline_summary(
            ranking, best, metric=metric, n_units=len(block_units), controls=bool(roles)
        )
    summary += " " + planning_sentence(planning)  # each clause states only its own numbers
    degenerate = _degenerate_table(results)
    sensitivity = None
    flagged = _degenerate_units(results)
    if flagged:
        total = int(degenerate["settings"].sum())
        share = int(degenerate["degenerate"].sum()) / max(1, total)
        if share > 0.9:
            summary = (
                "Nearly every setting is degenerate: the simulator gave the same answer (or the same class "
                "probabilities) to every sample, so it did not use the prompt and nothing below is evidence. "
                "Use a stronger simulator. " + summary
            )
        summary += (
            f" {int(degenerate['degenerate'].sum())} of {total} settings had degenerate answers (one class for "
            "nearly every sample); they are kept in the analysis above."
        )
        sensitivity = _sensitivity(paired, flagged, methods, alpha=alpha, power=power)
        if sensitivity is not None:
            summary += " " + _sensitivity_sentence(sensitivity, len(paired), len(flagged & set(paired.index)))
    if unmatched[["without_baseline", "outside_blocks"]].to_numpy().any():
        summary += " " + _unmatched_sentence(unmatched)
    if has_baseline and len(comparison):
        summary += _nsg_sentence(comparison)
    empty = _empty_table(results)
    if len(empty) and empty["empty"].sum():
        names = ", ".join(empty.loc[empty["empty"] > 0, "method"])
        summary += (
            f" Some explanations showed no concept at all ({names}): their prompts only differ in wording."
        )
    return Assessment(
        metric=metric, units=units, differences=differences, unmatched=unmatched, ranking=ranking, controls=verdict.table, comparison=comparison,
        verdict=verdict, best=best, stability=stability, planning=planning, degenerate=degenerate,
        sensitivity=sensitivity, empty=empty, ceiling=_ceiling(results, metric), summary=summary, long=long,
        gains=gains,
    )  # fmt: skip


def _nsg_sentence(comparison: pd.DataFrame) -> str:
    """Say when the NSG rests on fewer units than the raw difference (a perfect baseline has no headroom)."""
    short = comparison[comparison["nsg_units"] < comparison["n_units"]]
    if not len(short):
        return ""
    worst = short.iloc[int((short["n_units"] - short["nsg_units"]).to_numpy().argmax())]
    return (
        f" The normalised gain (NSG) is undefined where NoExplanation was already perfect (no headroom): "
        f"{int(worst['n_units'] - worst['nsg_units'])} of {int(worst['n_units'])} units at most; its mean and "
        "interval use the others."
    )


def _no_baseline_summary(
    ranking: pd.DataFrame,
    best: BestMethod,
    *,
    metric: str,
    n_units: int,
    controls: bool,
) -> str:
    """The summary of results without NoExplanation rows: a ranking of the methods, nothing against a baseline."""
    order = ", ".join(map(str, ranking.index)) if len(ranking) else "none (no setting holds every method)"
    parts = [
        (
            "The results hold no NoExplanation rows: no method is compared with the baseline, so nothing here "
            "says whether an explanation helps."
        ),
        (
            "The controls cannot be tested: the results hold no NoExplanation rows, and each control is "
            "compared with them. Run the baseline's settings before reading the ranking as a finding."
        )
        if controls
        else "",
        (
            f"Score: {metric}, averaged within each seed ({n_units} independent units). Copeland ranking of "
            f"the methods: {order}."
        ),
    ]
    if best.method is not None:
        parts.append(
            f"{best.method} beats every other method in Holm-corrected pairwise tests."
            if best.established
            else f"No method is established as the best ({best.method} has the highest mean, but does not "
            "beat every other one in Holm-corrected pairwise tests)."
        )
    return " ".join(p for p in parts if p)


def _unmatched_sentence(unmatched: pd.DataFrame) -> str:
    parts = []
    lone = unmatched[unmatched["without_baseline"] > 0]
    if len(lone):
        listed = ", ".join(f"{m} {int(r['without_baseline'])}" for m, r in lone.iterrows())
        parts.append(
            f"Settings without a NoExplanation setting to match ({listed}) are left out of the comparisons with "
            "the baseline"
        )
    outside = unmatched[unmatched["outside_blocks"] > 0]
    if len(outside):
        listed = ", ".join(f"{m} {int(r['outside_blocks'])}" for m, r in outside.iterrows())
        parts.append(
            f"settings that not every ranked method has ({listed}) are left out of the ranking (complete blocks)"
        )
    sentence = "; ".join(parts)
    reason = ": methods are compared like with like, within the same seed and setting (Assessment.unmatched)."
    return sentence[0].upper() + sentence[1:] + reason


def _sensitivity(
    units: pd.DataFrame, flagged: set[tuple[object, ...]], methods: list[str], *, alpha: float, power: float
) -> pd.DataFrame | None:
    """The methods' comparison without every seed that holds a degenerate setting (for every method alike)."""
    keep = [i for i in units.index if (i if isinstance(i, tuple) else (i,)) not in flagged]
    if len(keep) < 2 or BASELINE_METHOD not in units.columns or not methods:
        return None
    table = baseline_comparison(units.loc[keep], BASELINE_METHOD, alpha=alpha, power=power, family=methods)
    return table.loc[[m for m in methods if m in table.index]]


def _sensitivity_sentence(table: pd.DataFrame, n_units: int, n_dropped: int) -> str:
    winners = table[table["significant"] & (table["difference"] > 0)]
    listed = (
        ", ".join(
            f"{m} ({r['difference']:+.3f}, Holm-adjusted {p_phrase(r['pvalue_adjusted'])})"
            for m, r in winners.iterrows()
        )
        or "none"
    )
    return (
        f"Sensitivity analysis (not the primary result): without the {n_dropped} of {n_units} seeds that hold a "
        f"degenerate setting, dropped for every method alike, the methods beating NoExplanation are: {listed}."
    )


def _roles() -> dict[str, str]:
    from xaimetrics.consim import CONTROL_ROLES, CONTROLS

    return {m: CONTROL_ROLES[m] for m in CONTROLS.names()}
