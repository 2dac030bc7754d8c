"""How sure is a simulatability ranking? Intervals, paired tests against the baseline, power, stability, controls.

Every number the report prints comes with one of these:

- :func:`bootstrap_intervals` — per method, the mean score with a 95 % percentile bootstrap interval over
  settings (resampling whole settings, so the methods' scores stay paired);
- :func:`baseline_comparison` — per method, the mean paired difference with ``NoExplanation``, its bootstrap
  interval, the paired Student t-test p-value and the *minimum detectable difference* of this grid
  (:func:`minimum_detectable_difference`: the true mean difference a two-sided paired t-test at ``alpha`` would
  detect with probability ``power``, given the observed spread of the differences);
- :func:`split_half_stability` — Kendall's τ between the method orders computed on disjoint halves of the
  seeds (1: the same order on both halves; 0: unrelated);
- :func:`control_verdict` — whether the positive control beats the baseline and the negative control does not:
  only then can the grid tell a good explanation from an empty one; :func:`conclusion` says it in words.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from xaimetrics._validation import invalid
from xaimetrics.benchmark._grid import BASELINE_METHOD
from xaimetrics.benchmark._ranking import paired_pvalue, pivot_scores

__all__ = [
    "baseline_comparison",
    "bootstrap_intervals",
    "conclusion",
    "control_verdict",
    "minimum_detectable_difference",
    "split_half_stability",
]


def bootstrap_intervals(
    scores: pd.DataFrame, *, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> pd.DataFrame:
    """Mean score per method with a percentile bootstrap interval over the settings (rows of ``scores``).

    Example:
        >>> s = pd.DataFrame({"A": [0.9, 0.8, 0.7, 0.9], "B": [0.5, 0.6, 0.4, 0.5]})
        >>> table = bootstrap_intervals(s)
        >>> round(float(table.loc["A", "mean"]), 3), bool(table.loc["A", "ci_low"] > table.loc["B", "ci_high"])
        (0.825, True)
    """
    values = scores.to_numpy(dtype=float)
    n = len(values)
    if n == 0:
        raise invalid("scores", "bootstrap_intervals", "at least one setting (row)", "none")
    rng = np.random.default_rng(seed)
    draws = values[rng.integers(0, n, size=(n_resamples, n))]
    with warnings.catch_warnings():  # a method absent from a resample gives NaN, not a warning
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(draws, axis=1)
    tail = (1.0 - confidence) / 2.0
    return pd.DataFrame(
        {
            "mean": np.nanmean(values, axis=0),
            "ci_low": np.nanquantile(means, tail, axis=0),
            "ci_high": np.nanquantile(means, 1.0 - tail, axis=0),
            "n_settings": np.isfinite(values).sum(axis=0).astype(int),
        },
        index=pd.Index(scores.columns, name="method"),
    )


def minimum_detectable_difference(differences: Any, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """``(t_{1−α/2, n−1} + t_{power, n−1}) · sd(d) / √n``: the smallest true mean of the paired differences ``d``
    that a two-sided paired t-test at ``alpha`` detects with probability ``power`` (normal approximation of the
    non-central t). ``nan`` with fewer than two differences.

    Example:
        >>> round(minimum_detectable_difference([0.1, -0.1, 0.05, 0.0, 0.02, -0.04]), 3)
        0.099
    """
    from scipy import stats

    d = np.asarray(differences, dtype=float)
    d = d[np.isfinite(d)]
    if d.size < 2:
        return math.nan
    df = d.size - 1
    factor = stats.t.ppf(1.0 - alpha / 2.0, df) + stats.t.ppf(power, df)
    return float(factor * d.std(ddof=1) / math.sqrt(d.size))


def baseline_comparison(
    scores: pd.DataFrame,
    baseline: str = BASELINE_METHOD,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Every method against ``baseline`` on their shared settings: the paired difference and how sure it is.

    Columns: ``difference`` (mean of method − baseline), ``ci_low``/``ci_high`` (bootstrap), ``pvalue``
    (paired t-test; constant non-zero differences give 0, as :func:`scipy.stats.ttest_rel` does),
    ``significant`` (``pvalue < alpha``), ``mdd`` (:func:`minimum_detectable_difference`), ``n_settings``.

    Example:
        >>> s = pd.DataFrame({"NoExplanation": [0.5, 0.6, 0.5, 0.55], "A": [0.7, 0.75, 0.68, 0.72]})
        >>> row = baseline_comparison(s).loc["A"]
        >>> round(float(row["difference"]), 3), bool(row["significant"])
        (0.175, True)
    """
    if baseline not in scores.columns:
        raise invalid(
            "baseline", "baseline_comparison", f"a column of scores {list(scores.columns)}", baseline
        )
    rng = np.random.default_rng(seed)
    tail = (1.0 - confidence) / 2.0
    rows = {}
    base = scores[baseline].to_numpy(dtype=float)
    for method in scores.columns:
        if method == baseline:
            continue
        mine = scores[method].to_numpy(dtype=float)
        shared = np.isfinite(mine) & np.isfinite(base)
        d = mine[shared] - base[shared]
        if d.size == 0:
            rows[method] = {"difference": math.nan, "ci_low": math.nan, "ci_high": math.nan,
                            "pvalue": math.nan, "significant": False, "mdd": math.nan, "n_settings": 0}  # fmt: skip
            continue
        boot = d[rng.integers(0, d.size, size=(n_resamples, d.size))].mean(axis=1)
        pvalue = paired_pvalue(d)
        rows[method] = {
            "difference": float(d.mean()),
            "ci_low": float(np.quantile(boot, tail)),
            "ci_high": float(np.quantile(boot, 1.0 - tail)),
            "pvalue": pvalue,
            "significant": bool(pvalue < alpha) if math.isfinite(pvalue) else False,
            "mdd": minimum_detectable_difference(d, alpha=alpha, power=power),
            "n_settings": int(d.size),
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "method"
    return table


def split_half_stability(
    long: pd.DataFrame, *, setting: list[str] | None = None, max_splits: int = 50, seed: int = 0
) -> dict[str, Any]:
    """Kendall's τ between the method orders (by mean score) on two disjoint halves of the seeds.

    Every split of the seeds into two halves (or ``max_splits`` random ones) gives one τ; returns their mean,
    min and max, the number of splits and of seeds. Fewer than two seeds: ``tau_mean`` is ``nan``.

    Example:
        >>> long = pd.DataFrame({"seed": [0, 0, 1, 1, 2, 2, 3, 3], "method": ["A", "B"] * 4,
        ...                      "score": [0.9, 0.5, 0.8, 0.6, 0.7, 0.4, 0.9, 0.5]})
        >>> split_half_stability(long, setting=["seed"])["tau_mean"]
        1.0
    """
    from scipy import stats

    keys = setting if setting is not None else [c for c in long.columns if c not in ("method", "score")]
    seeds = sorted(long["seed"].unique().tolist())
    out: dict[str, Any] = {"tau_mean": math.nan, "tau_min": math.nan, "tau_max": math.nan,
                           "n_splits": 0, "n_seeds": len(seeds)}  # fmt: skip
    if len(seeds) < 2 or long["method"].nunique() < 2:
        return out
    half = len(seeds) // 2
    splits = [c for c in itertools.combinations(seeds, half) if seeds[0] in c or 2 * half != len(seeds)]
    if len(splits) > max_splits:
        rng = np.random.default_rng(seed)
        splits = [splits[i] for i in sorted(rng.choice(len(splits), size=max_splits, replace=False))]
    wide = pivot_scores(long, setting=keys)
    seed_of = wide.index.get_level_values("seed") if "seed" in wide.index.names else None
    if seed_of is None:
        raise invalid("setting", "split_half_stability", "columns including 'seed'", keys)
    taus = []
    for first in splits:
        mask = np.isin(seed_of, first)
        a, b = wide[mask].mean(axis=0), wide[~mask].mean(axis=0)
        ok = a.notna() & b.notna()
        if ok.sum() < 2:
            continue
        tau = stats.kendalltau(a[ok], b[ok]).statistic
        taus.append(0.0 if math.isnan(tau) else float(tau))
    if taus:
        out.update(tau_mean=float(np.mean(taus)), tau_min=float(np.min(taus)), tau_max=float(np.max(taus)),
                   n_splits=len(taus))  # fmt: skip
    return out


def control_verdict(
    comparison: pd.DataFrame, roles: Mapping[str, str], *, alpha: float = 0.05
) -> dict[str, Any]:
    """Did the instrument pass its controls? Positive controls must beat the baseline (significantly, with a
    positive difference), negative controls must not.

    Returns ``{"ran": bool, "detects": bool | None, "positive": {...}, "negative": {...}, "sentence": str}``;
    ``detects`` is ``None`` when no positive control was run.

    Example:
        >>> comparison = pd.DataFrame({"difference": [0.1, 0.0], "pvalue": [0.001, 0.9]},
        ...                           index=["SurrogateWords", "RandomWords"])
        >>> control_verdict(comparison, {"SurrogateWords": "positive", "RandomWords": "negative"})["detects"]
        True
    """
    positive = {m: comparison.loc[m] for m, r in roles.items() if r == "positive" and m in comparison.index}
    negative = {m: comparison.loc[m] for m, r in roles.items() if r == "negative" and m in comparison.index}

    def beats(row: Any) -> bool:
        return bool(math.isfinite(row["pvalue"]) and row["pvalue"] < alpha and row["difference"] > 0)

    out: dict[str, Any] = {
        "ran": bool(positive or negative),
        "positive": {m: beats(r) for m, r in positive.items()},
        "negative": {m: beats(r) for m, r in negative.items()},
    }
    if not positive:
        out["detects"] = None
        out["sentence"] = (
            "No positive control was run, so nothing shows that this grid can detect a helpful explanation; "
            "run it with controls (Grid(controls=True)) before reading the ranking as a finding."
        )
        return out
    detects = all(out["positive"].values()) and not any(out["negative"].values())
    out["detects"] = detects
    parts = [_describe(m, r, "beats" if beats(r) else "does not beat") for m, r in positive.items()]
    parts += [_describe(m, r, "beats" if beats(r) else "does not beat") for m, r in negative.items()]
    if detects:
        out["sentence"] = (
            "The controls pass: "
            + "; ".join(parts)
            + ". This grid can tell an informative explanation from an "
            "uninformative one."
        )
    elif not all(out["positive"].values()):
        out["sentence"] = (
            "The controls fail: " + "; ".join(parts) + ". This simulator and grid cannot detect explanation "
            "quality, so the ranking below is not evidence about the methods."
        )
    else:
        out["sentence"] = (
            "The controls fail: "
            + "; ".join(parts)
            + ". An explanation that carries no information about the "
            "model beats the baseline, so gains over the baseline may come from the prompt's form, not its content."
        )
    return out


def _describe(method: str, row: Any, verb: str) -> str:
    return (
        f"{method} {verb} NoExplanation ({row['difference']:+.3f}, "
        f"95% CI [{row.get('ci_low', math.nan):+.3f}, {row.get('ci_high', math.nan):+.3f}], p = {_p(row['pvalue'])})"
    )


def _p(value: float) -> str:
    if not math.isfinite(value):
        return "n/a"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def conclusion(
    comparison: pd.DataFrame,
    verdict: Mapping[str, Any],
    stability: Mapping[str, Any],
    *,
    metric: str,
    roles: Mapping[str, str],
) -> str:
    """The report's answer in two or three plain sentences: controls, what beat the baseline, how stable.

    Example:
        >>> comparison = pd.DataFrame({"difference": [0.1, 0.02], "ci_low": [0.05, -0.01], "ci_high": [0.15, 0.05],
        ...     "pvalue": [0.001, 0.3], "significant": [True, False], "mdd": [0.04, 0.04]}, index=["SurrogateWords", "NMF"])
        >>> verdict = control_verdict(comparison, {"SurrogateWords": "positive"})
        >>> print(conclusion(comparison, verdict, {"tau_mean": 0.5, "n_splits": 3}, metric="expected_accuracy",  # doctest: +NORMALIZE_WHITESPACE
        ...                  roles={"SurrogateWords": "positive"}))
        The controls pass: SurrogateWords beats NoExplanation (+0.100, 95% CI [+0.050, +0.150], p = 0.001). This
        grid can tell an informative explanation from an uninformative one. No concept method beats NoExplanation
        significantly (scored by expected_accuracy; this grid detects differences of about 0.040 and larger).
        NMF: +0.020 (p = 0.300). Ranking stability across halves of the seeds: Kendall's τ = 0.50 (3 splits).
    """
    methods = comparison[[m not in roles for m in comparison.index]]
    winners = methods[methods["significant"] & (methods["difference"] > 0)]
    losers = methods[methods["significant"] & (methods["difference"] < 0)]
    finite = comparison["mdd"].to_numpy(dtype=float) if len(comparison) else np.array([])
    finite = finite[np.isfinite(finite)]
    mdd = float(np.median(finite)) if finite.size else math.nan
    sentences = [verdict.get("sentence", "")]
    if len(winners):
        listed = ", ".join(
            f"{m} ({r['difference']:+.3f}, p = {_p(r['pvalue'])})" for m, r in winners.iterrows()
        )
        sentences.append(f"Beating NoExplanation significantly (scored by {metric}): {listed}.")
    else:
        power = (
            f"this grid detects differences of about {mdd:.3f} and larger"
            if math.isfinite(mdd)
            else "too few shared settings to estimate what this grid can detect"
        )
        sentences.append(
            f"No concept method beats NoExplanation significantly (scored by {metric}; {power})."
        )
    if len(losers):
        sentences.append(
            "Significantly below NoExplanation: "
            + ", ".join(f"{m} ({r['difference']:+.3f}, p = {_p(r['pvalue'])})" for m, r in losers.iterrows())
            + "."
        )
    rest = methods.drop(index=[*winners.index, *losers.index])
    if len(rest) and len(winners):
        sentences.append("Not distinguishable from NoExplanation: " + ", ".join(rest.index) + ".")
    elif len(rest):
        sentences.append(
            " ".join(f"{m}: {r['difference']:+.3f} (p = {_p(r['pvalue'])})." for m, r in rest.iterrows())
        )
    tau = stability.get("tau_mean", math.nan)
    if isinstance(tau, float) and math.isfinite(tau):
        sentences.append(
            f"Ranking stability across halves of the seeds: Kendall's τ = {tau:.2f} ({stability.get('n_splits')} splits)."
        )
    else:
        sentences.append("Ranking stability not measurable (fewer than two seeds).")
    return " ".join(s for s in sentences if s)
