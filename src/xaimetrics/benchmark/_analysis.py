"""From stored results to the paper's tables: rankings per subset, prompt-type comparison, Spearman (§4.3, §5).

A *ranking setting* is dataset × model × simulator × interpretation × explanation prompt type (E1, E2, E3) ×
anonymisation × seed. Concept methods enter with their own score in that setting; the ``NoExplanation``
baseline enters with the score of its baseline prompt (NE1 for E1, NE2 for E2 and E3) on the same seed,
dataset, model and simulator — one baseline row therefore votes in several settings, as in the paper's
Fig. 4. U1 rows (upper bounds) and validation-phase rows never enter a ranking.

**Every grid axis can be ranked** with the same Copeland / sign-flip machinery (``axis=``): ``"method"`` (concept
extraction, the default), ``"interpretation"`` (CMAW vs o1CA, paper Tab. 2 right and Tab. 3) or any other
column of the results, such as an ``"importance"`` column in results that carry one. The competitors are the
axis values plus ``NoExplanation``; a ranking setting is then every other axis, the extraction method
included (:func:`setting_columns`). The baseline row is spread over every value of the axes it does not
have (its prompt type's targets, the methods, the interpretations), so it meets each competitor in each
setting once.

**Statistics run on independent units** (:func:`unit_scores`): a seed of a dataset draws the samples that all
its settings share — whatever the model, simulator, interpretation or prompt type that reads them — so the
settings are averaged within each unit (:data:`UNIT_KEYS`) before any test, interval or ranking statistic; the
baseline spread over several settings and a control repeated per interpretation then count once, and copies
of a measurement never change a p-value.

**Like with like** (:func:`unit_differences`): a competitor is compared with the baseline within each setting
(the same unit, model, simulator, prompt type, anonymisation and interpretation), and these differences are
averaged within the unit. A setting missing for one competitor (a failed setting, a prompt type that does not
apply) then leaves out one matched difference instead of changing the mix of prompt types in its unit mean.
Rankings use the complete blocks (:func:`complete_blocks`): the settings every competitor has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from xaimetrics._validation import invalid
from xaimetrics.benchmark._grid import BASELINE_METHOD, ranking_prompt
from xaimetrics.benchmark._ranking import (
    PairwiseDifferences,
    pairwise_differences,
    rank_methods,
)
from xaimetrics.consim import PROMPT_TYPES, prompt_label

__all__ = [
    "RANKING_KEYS",
    "UNIT_KEYS",
    "choose_metric",
    "complete_blocks",
    "prompt_labels",
    "prompt_type_comparison",
    "ranking_frame",
    "rankings_by",
    "setting_columns",
    "spearman_with_metrics",
    "subset_rankings",
    "unit_differences",
    "unit_scores",
]

#: the columns that identify a ranking setting
RANKING_KEYS: tuple[str, ...] = (
    "dataset", "model", "simulator", "interpretation", "prompt_type", "anonymized", "seed",
)  # fmt: skip


#: the columns that identify an independent unit: one draw of a dataset's samples (its seed), shared by every
#: arm of that seed — models, simulators, interpretations and prompt types are factors inside the unit
UNIT_KEYS: tuple[str, ...] = ("dataset", "seed")


def unit_scores(long: pd.DataFrame, *, axis: str | None = None) -> pd.DataFrame:
    """Units × competitors: the mean score of each competitor over the settings of each independent unit.

    ``long`` is a :func:`ranking_frame` table; its settings are averaged within :data:`UNIT_KEYS` (the keys
    it has), so any number of copies of a setting (a baseline spread over prompt types, a control repeated per
    interpretation) weighs as one measurement of its unit.

    Example:
        >>> long = pd.DataFrame({"seed": [0, 0, 0, 0, 1, 1], "prompt_type": ["E2", "E3"] * 3,
        ...     "method": ["NMF", "NMF", "NoExplanation", "NoExplanation", "NMF", "NoExplanation"],
        ...     "score": [0.8, 0.6, 0.5, 0.5, 0.9, 0.4]})
        >>> unit_scores(long).round(2).values.tolist()
        [[0.7, 0.5], [0.9, 0.4]]
    """
    axis = _axis_of(long, axis)
    keys = _unit_keys(long, axis, "unit_scores")
    wide = long.groupby([*keys, axis], dropna=False)["score"].mean().unstack(axis)
    wide.columns.name = axis
    return wide.astype(float)


def _unit_keys(long: pd.DataFrame, axis: str, caller: str) -> list[str]:
    keys = [k for k in UNIT_KEYS if k in long.columns and k != axis]
    if not keys:
        raise invalid(
            "long", caller, f"a ranking table (ranking_frame) with the columns {list(UNIT_KEYS)}",
            f"the columns {list(long.columns)}",
        )  # fmt: skip
    return keys


def _setting_keys(long: pd.DataFrame, axis: str) -> list[str]:
    """The columns of a ranking table that identify its setting: all but the competing axis and the score."""
    return [c for c in long.columns if c not in (axis, "score")]


def unit_differences(
    long: pd.DataFrame, baseline: str = BASELINE_METHOD, *, axis: str | None = None
) -> pd.DataFrame:
    """Units × competitors: each competitor's difference with ``baseline``, like with like.

    Within every setting of ``long`` (a :func:`ranking_frame` table: the same unit, model, simulator, prompt
    type, anonymisation and interpretation) the competitor's score minus the baseline's; these differences are
    then averaged within each independent unit (:data:`UNIT_KEYS`). A competitor missing from some settings of
    a unit, or a setting without a baseline, leaves those settings out instead of changing the mix of prompt
    types (or simulators) behind one side's unit mean. Copies of a setting weigh as one measurement.

    Args:
        long: the ranking table (:func:`ranking_frame`).
        baseline: the competitor everything is compared with.
        axis: the competing column (default: the one :func:`ranking_frame` ranked).

    Returns:
        One row per independent unit (sorted by dataset, then seed), one column per competitor other than
        ``baseline``; NaN where the competitor has no setting matched with the baseline in that unit.

    Raises:
        InvalidParameterError: ``baseline`` is not a competitor of ``long``, or the unit columns are missing.

    Example:
        >>> long = pd.DataFrame({"dataset": "d", "seed": [0, 0, 0, 0, 1, 1, 1],
        ...     "prompt_type": ["E1", "E2", "E1", "E2", "E1", "E2", "E2"],
        ...     "method": ["NoExplanation", "NoExplanation", "NMF", "NMF", "NoExplanation", "NoExplanation", "NMF"],
        ...     "score": [0.4, 0.6, 0.5, 0.6, 0.3, 0.5, 0.55]})
        >>> unit_differences(long).round(3)["NMF"].tolist()
        [0.05, 0.05]
    """
    axis = _axis_of(long, axis)
    units = _unit_keys(long, axis, "unit_differences")
    competitors = long[axis].unique().tolist()
    if baseline not in competitors:
        raise invalid(
            "baseline", "unit_differences", "a competitor of the ranking table ("
            + ", ".join(map(repr, sorted(map(str, competitors)))) + ")", baseline,
            "Include the baseline's settings (NoExplanation with NE1/NE2), or rank without it (rankings_by).",
        )  # fmt: skip
    wide = _settings_wide(long, axis)
    rest = [c for c in wide.columns if c != baseline]
    differences = wide[rest].sub(wide[baseline], axis=0)
    out = differences.groupby(level=units, sort=True, dropna=False).mean()
    out.columns.name = axis
    return out.astype(float)


def _settings_wide(long: pd.DataFrame, axis: str) -> pd.DataFrame:
    """Settings × competitors, copies of a setting averaged (one measurement)."""
    keys = _setting_keys(long, axis)
    return long.groupby([*keys, axis], sort=True, dropna=False)["score"].mean().unstack(axis)


def _unmatched_settings(
    long: pd.DataFrame, baseline: str | None, ranked: Sequence[str], *, axis: str | None = None
) -> pd.DataFrame:
    """Per competitor: its settings (``settings``), those without a baseline setting to match
    (``without_baseline``: left out of every comparison with the baseline, :func:`unit_differences`), and, for
    the ``ranked`` competitors, those outside the complete blocks (``outside_blocks``: left out of the ranking,
    :func:`complete_blocks`). Nothing is dropped silently: :func:`~xaimetrics.benchmark.assess` reports it."""
    axis = _axis_of(long, axis)
    wide = _settings_wide(long, axis)
    present = wide.notna()
    table = pd.DataFrame(0, index=wide.columns, columns=["settings", "without_baseline", "outside_blocks"])
    table["settings"] = present.sum(axis=0)
    if baseline is not None and baseline in wide.columns:
        lone = present & ~present[[baseline]].to_numpy()
        table["without_baseline"] = lone.sum(axis=0)
    names = [c for c in ranked if c in wide.columns]
    if len(names) >= 2:
        complete = present[names].all(axis=1).to_numpy()
        table.loc[names, "outside_blocks"] = (present[names] & ~complete[:, None]).sum(axis=0)
    table.index.name = axis
    return table.astype(int)


def complete_blocks(
    long: pd.DataFrame, competitors: Sequence[str] | None = None, *, axis: str | None = None
) -> pd.DataFrame:
    """The rows of ``long`` (a :func:`ranking_frame` table) in the settings where every one of ``competitors``
    (default: all) has a score, restricted to those competitors: the complete blocks a ranking compares like
    with like on.

    Example:
        >>> long = pd.DataFrame({"dataset": "d", "seed": 0, "prompt_type": ["E1", "E1", "E2"],
        ...                      "method": ["A", "B", "A"], "score": [0.5, 0.6, 0.9]})
        >>> complete_blocks(long)["prompt_type"].tolist()
        ['E1', 'E1']
    """
    axis = _axis_of(long, axis)
    names = list(dict.fromkeys(long[axis])) if competitors is None else list(competitors)
    part = long[long[axis].isin(names)]
    keys = _setting_keys(long, axis)
    if not keys:
        return part
    present = part.groupby(keys, dropna=False)[axis].transform("nunique")
    return part[present == len(names)].reset_index(drop=True)


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


def prompt_labels(results: pd.DataFrame) -> pd.Series:
    """The prompt label (``E2-a``…) of each row, from its ``prompt_type`` and ``anonymized`` columns.

    Example:
        >>> prompt_labels(pd.DataFrame({"prompt_type": ["E2", "NE1"], "anonymized": [1, 0]})).tolist()
        ['E2-a', 'NE1']
    """
    labels = [
        prompt_label(str(kind), bool(anonymized))
        for kind, anonymized in zip(results["prompt_type"], results["anonymized"], strict=True)
    ]
    return pd.Series(labels, index=results.index, dtype=object)


def setting_columns(axis: str = "method") -> list[str]:
    """The columns that identify a ranking setting when ``axis`` is ranked: every other axis.

    Example:
        >>> setting_columns("interpretation")
        ['dataset', 'model', 'simulator', 'prompt_type', 'anonymized', 'seed', 'method']
    """
    return [c for c in (*RANKING_KEYS, "method") if c != axis]


def ranking_frame(results: pd.DataFrame, *, axis: str = "method", metric: str = "score") -> pd.DataFrame:
    """The long table the rankings take: one row per ranking setting × competitor, baselines spread out.

    Args:
        results: the store's rows (:meth:`ResultsStore.to_frame`).
        axis: the column whose values compete (module docstring): ``"method"`` (default),
            ``"interpretation"``, or another column of ``results`` (e.g. ``"importance"``).
        metric: the column that becomes ``score``: ``"score"`` (eq. 5), ``"expected_accuracy"`` or ``"auto"``
            (:func:`choose_metric`).

    Returns:
        Columns :func:`setting_columns` + ``axis`` + ``score``.

    Raises:
        InvalidParameterError: missing columns, or an ``axis`` that is not a column of ``results``.

    Example:
        >>> rows = pd.DataFrame({"dataset": "d", "model": "m", "simulator": "s", "seed": 0, "phase": "evaluation",
        ...     "method": ["NMF", "NMF", "NoExplanation"], "interpretation": ["top_words", "top_words", ""],
        ...     "prompt_type": ["E2", "E3", "NE2"], "anonymized": 1, "is_upper_bound": 0, "score": [0.8, 0.7, 0.6]})
        >>> ranking_frame(rows)[["prompt_type", "method", "score"]].values.tolist()
        [['E2', 'NMF', 0.8], ['E3', 'NMF', 0.7], ['E2', 'NoExplanation', 0.6], ['E3', 'NoExplanation', 0.6]]
        >>> ranking_frame(rows, axis="interpretation")[["prompt_type", "interpretation"]].values.tolist()
        [['E2', 'top_words'], ['E3', 'top_words'], ['E2', 'NoExplanation'], ['E3', 'NoExplanation']]
    """
    needed = {*RANKING_KEYS, "method", "score", "phase", "is_upper_bound"}
    missing = sorted(needed - set(results.columns))
    if missing:
        raise invalid("results", "ranking_frame", "the results store's columns", f"missing {missing}")
    metric = choose_metric(results, metric)
    rankable = ["method", "interpretation"]
    rankable += sorted(str(c) for c in results.columns if c not in needed and c not in _NOT_AXES)
    if axis not in rankable:
        raise invalid(
            "axis", "ranking_frame", "a grid axis among " + ", ".join(repr(c) for c in rankable), axis,
            "Rank 'method' (extraction), 'interpretation', or a column your results add (e.g. 'importance').",
        )  # fmt: skip
    keys = setting_columns(axis)
    rows = results[(results["phase"] == "evaluation") & (results["is_upper_bound"].astype(int) == 0)]
    # degenerate settings are kept: leaving out settings chosen from a method's own answers selects on the
    # outcome; assess(...).sensitivity drops whole seeds for every method instead
    rows = rows[rows["score"].notna() & rows[metric].notna()].copy()
    rows["score"] = rows[metric].astype(float)
    rows["anonymized"] = rows["anonymized"].astype(bool)
    concept = rows[rows["method"] != BASELINE_METHOD]
    concept = concept[concept["prompt_type"].isin(PROMPT_TYPES.explanations())]
    baseline = rows[rows["method"] == BASELINE_METHOD]
    spread_values = {
        column: sorted(concept[column].dropna().unique()) or [""]
        for column in ("interpretation", "method")
        if column in keys
    }
    # each baseline row, once per prompt type it is ranked in and per value of the axes it lacks
    spread = baseline.assign(prompt_type=[ranking_prompt(str(k)) for k in baseline["prompt_type"]])
    spread = spread.explode("prompt_type")
    spread = spread[spread["prompt_type"].notna()]
    for column, values in spread_values.items():
        spread = spread.drop(columns=column).merge(pd.DataFrame({column: values}), how="cross")
    spread = spread.assign(**{axis: BASELINE_METHOD})
    parts = [concept, spread[list(baseline.columns)]] if len(spread) else [concept]
    long = pd.concat(parts, ignore_index=True)
    long = long[[*keys, axis, "score"]]
    # a setting with a single competitor (e.g. NE2 spread to an E3 the grid did not run) holds no duel
    duels = long.groupby(keys, dropna=False)[axis].transform("nunique")
    long = long[duels >= 2].reset_index(drop=True)
    long["score"] = long["score"].astype(float)
    return long


#: columns of the results store that are measurements or bookkeeping, never a rankable axis
_NOT_AXES = frozenset({
    "key", "n_samples", "n_parsed", "n_missing", "n_invalid", "prompt_tokens", "completion_tokens",
    "cost_usd", "latency_s", "cached", "error", "created_at", "n_concepts", "expected_accuracy", "log_loss",
    "brier", "majority_share", "degenerate", "n_concepts_shown", "scoring",
    "cached_prompt_tokens", "class_counts",
})  # fmt: skip


def _axis_of(long: pd.DataFrame, axis: str | None) -> str:
    """The competing column of a :func:`ranking_frame` table: ``axis``, or the column before ``score``."""
    if axis is None:
        columns = list(long.columns)
        axis = columns[-2] if len(columns) >= 2 and columns[-1] == "score" else "method"
    if axis not in long.columns:
        raise invalid("axis", "rankings_by", f"a column of the ranking table {list(long.columns)}", axis)
    return axis


def rankings_by(
    long: pd.DataFrame, by: Sequence[str] = (), *, axis: str | None = None
) -> dict[tuple[object, ...], pd.DataFrame]:
    """Copeland rankings (eq. 6–7, :func:`rank_methods`) of every subset defined by the ``by`` columns, over
    the subset's independent units (:func:`unit_scores`; ``n_settings`` then counts units).

    The key is the tuple of ``by`` values (``()`` for all settings). Subsets with fewer than two competitors
    are left out. ``axis`` is the competing column of ``long`` (default: the one :func:`ranking_frame` ranked,
    the column before ``score``).
    """
    axis = _axis_of(long, axis)
    out: dict[tuple[object, ...], pd.DataFrame] = {}
    groups = [((), long)] if not by else list(long.groupby(list(by), sort=True))
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        wide = unit_scores(part, axis=axis)
        if wide.shape[1] >= 2:
            table = rank_methods(wide)
            table.index.name = axis
            out[key] = table
    return out


def subset_rankings(
    long: pd.DataFrame, *, axis: str | None = None
) -> dict[str, dict[tuple[object, ...], pd.DataFrame]]:
    """Rankings overall and per dataset, model, simulator, interpretation (or method), prompt type and
    anonymisation — every setting column but the ranked ``axis``."""
    axis = _axis_of(long, axis)
    subsets: dict[str, dict[tuple[object, ...], pd.DataFrame]] = {"all": rankings_by(long, axis=axis)}
    for column in ("dataset", "model", "simulator", "interpretation", "method", "prompt_type", "anonymized"):
        if column == axis or column not in long.columns:
            continue
        if long[column].nunique() > 1 or column == "prompt_type":
            subsets[column] = rankings_by(long, [column], axis=axis)
    return subsets


def overall_statistics(
    long: pd.DataFrame, *, alpha: float = 0.05, axis: str | None = None
) -> tuple[pd.DataFrame, PairwiseDifferences]:
    """The win matrix (eq. 6, 0–100) and the differences with sign-flip tests, Holm-adjusted (eq. 8), over the
    independent units (:func:`unit_scores`)."""
    from xaimetrics.benchmark._ranking import win_matrix

    axis = _axis_of(long, axis)
    wide = unit_scores(long, axis=axis)
    order = rank_methods(wide).index
    wide = wide[order]
    return win_matrix(wide), pairwise_differences(wide, alpha=alpha)


def prompt_type_comparison(results: pd.DataFrame, *, metric: str = "score") -> pd.DataFrame:
    """Mean score (± std, count) per method and prompt type label (``E2-a``…), U1 as an upper bound.

    Also the mean gain of each explanation prompt over its baseline on the same seed and setting
    (``gain_vs_baseline``), the quantity the paper's simulatability measures. ``metric`` is the score shown
    (``"score"``, ``"expected_accuracy"`` or ``"auto"``, :func:`choose_metric`): the report passes the one its
    other tables use, so that one report never mixes two scores.
    """
    metric = choose_metric(results, metric)
    rows = results[(results["phase"] == "evaluation") & results["score"].notna()].copy()
    if rows.empty:
        return pd.DataFrame(columns=["method", "prompt", "mean", "std", "n", "gain_vs_baseline"])
    rows["score"] = pd.to_numeric(rows[metric], errors="coerce")
    rows["prompt"] = prompt_labels(rows)
    table = rows.groupby(["method", "prompt"])["score"].agg(["mean", "std", "count"]).reset_index()
    table = table.rename(columns={"count": "n"})
    keys = ["dataset", "model", "simulator", "seed", "anonymized"]
    base = rows[rows["method"] == BASELINE_METHOD][[*keys, "prompt_type", "score"]]
    gains = []
    kinds = rows.groupby(["method", "prompt"])["prompt_type"].first()
    for _, row in table.iterrows():
        baseline = PROMPT_TYPES.baseline_of(kinds[(row["method"], row["prompt"])])
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
    ``pvalue_adjusted`` is Holm's correction over the metrics (``significant`` uses it): with a dozen metrics,
    one uncorrected ``p < 0.05`` is expected by chance.

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

    from xaimetrics.stats import holm

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
    table = pd.DataFrame(out, columns=["metric", "rho", "pvalue", "n_methods"]).set_index("metric")
    table["pvalue_adjusted"] = holm(table["pvalue"].tolist()) if len(table) else []
    table["significant"] = (table["pvalue_adjusted"] < 0.05).fillna(False).astype(bool)
    return table


def parse_statistics(results: pd.DataFrame) -> pd.DataFrame:
    """Parse counts per simulator and prompt type: samples, parsed, missing, invalid and the parse rate."""
    if results.empty:
        return pd.DataFrame()
    rows = results.copy()
    rows["prompt"] = prompt_labels(rows)
    table = rows.groupby(["simulator", "prompt"])[["n_samples", "n_parsed", "n_missing", "n_invalid"]].sum()
    table["parse_rate"] = table["n_parsed"] / table["n_samples"].where(table["n_samples"] > 0)
    return table.reset_index()


def totals(results: pd.DataFrame) -> dict[str, int | float]:
    """Calls, cached calls, tokens, cost and summed simulator latency over the stored settings."""
    if results.empty:
        return {"settings": 0, "calls": 0, "cached_calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                "cost_usd": 0.0, "latency_s": 0.0, "cached_prompt_tokens": 0}  # fmt: skip
    return {
        "settings": len(results),
        "calls": len(results),
        "cached_calls": int(results["cached"].fillna(0).astype(int).sum()),
        "prompt_tokens": int(results["prompt_tokens"].fillna(0).sum()),
        "completion_tokens": int(results["completion_tokens"].fillna(0).sum()),
        "cost_usd": float(results["cost_usd"].fillna(0).sum()),
        "latency_s": float(results["latency_s"].fillna(0).sum()),
        "cached_prompt_tokens": int(
            results.get("cached_prompt_tokens", pd.Series(dtype=float)).fillna(0).sum()
        ),
    }
