"""How much of a score is the pipeline? Variance components of a grid, and how stable its top-k is across draws.

The ICML 2026 workshop study "Building fast, evaluating slow" found that pipeline choices (sampling, explainer
model, prompt) move scores more than the methods being compared, and that top-k rankings are unstable across
draws while mean scores look stable. Two checks, on any grid's results:

**Variance components** (:func:`variance_components`). Each evaluation setting's score is modelled as a sum of
random effects of the factors the grid varies — the **seed** draw (a dataset's seed: the unit of inference),
**interpretation**, **prompt type** (with its anonymisation), **simulator**, **method** — plus the
**seed × method** interaction (a method's luck with a draw, shared by all its settings of that seed) and a
**residual** (the setting's own noise and every other interaction). The components are the classical ANOVA
(method-of-moments) estimates on a least-squares fit with one dummy per level (``numpy.linalg.lstsq``):

- each factor's sum of squares is the rise of the residual sum of squares when its columns are dropped from the
  main-effects model (type II: adjusted for every other main effect; seed and method are dropped with their
  interaction), ``MS = SS / df``;
- ``σ²_residual = MS_residual``; ``σ²_{seed×method} = (MS_{seed×method} − MS_residual) / n₀``; ``σ²_seed`` and
  ``σ²_method`` subtract ``MS_{seed×method}`` (their expected mean squares hold the interaction), the other
  factors ``MS_residual``; ``n₀ = (N − Σ nᵢ² / N) / (levels − 1)`` is the number of rows per level (exact for a
  balanced grid, the usual approximation otherwise); a negative estimate is set to 0;
- **shares** are each component over their sum, with percentile intervals from a bootstrap over **seeds** (whole
  draws resampled with replacement, a repeated seed counted as a new unit), so the intervals reflect the draws
  the grid did not make. With few seeds the seed component and every interval are rough: they say so by width.

A factor the grid does not vary (one level) has no row. NoExplanation is left out by default: its prompt types
(NE1/NE2) and empty interpretation are aliased with the method, which would split one difference across three
factors. For a fixed factor with few levels (the methods compared) the "variance" is that of its level means
(``Σα²/(levels − 1)``), the quantity the estimator targets; the calibration test (tests/benchmark/
test_variance.py) checks the estimates against known components of :func:`~xaimetrics.benchmark.
simulate_results` grids within Monte-Carlo error. statsmodels' ``MixedLM`` fits crossed random effects only
through one all-encompassing group (slow, and it often fails to converge on grids this small); the moment
estimator is closed-form, unbiased on balanced grids and fast enough to bootstrap.

**Top-k stability** (:func:`xaimetrics.stats.top_k_stability`): over split halves of the seeds (or bootstrap resamples), how often
the top-k *set* of methods by mean score is the same (on both halves; or as on all seeds), and how often each
method is in it, next to its mean score.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from xaimetrics._validation import check_in_range, check_positive_int, check_seed, invalid
from xaimetrics.benchmark._analysis import choose_metric, prompt_labels
from xaimetrics.benchmark._grid import BASELINE_METHOD

__all__ = ["FACTORS", "variance_components"]

#: the factors a grid may vary, in the order of the table
FACTORS: tuple[str, ...] = ("seed", "interpretation", "prompt_type", "simulator", "method")
INTERACTION = "seed × method"


class _Fits:
    """Residual sums of squares of least-squares fits on column subsets of one design (its Gram matrix once).

    ``X = [1, blocks...]``; a subset's RSS is ``y'y − b'G⁺b`` over its columns, from the eigendecomposition of
    its Gram block (rank: eigenvalues above ``1e-10`` of the largest) — the same numbers as ``lstsq`` on the
    columns, without refitting the rows for every subset.
    """

    def __init__(self, y: np.ndarray, blocks: dict[str, np.ndarray]) -> None:
        columns = [np.ones((len(y), 1)), *blocks.values()]
        X = np.hstack(columns)
        self.gram, self.xy, self.yy = X.T @ X, X.T @ y, float(y @ y)
        edges = np.cumsum([0, *(c.shape[1] for c in columns)])
        self.span = {name: np.arange(edges[i + 1], edges[i + 2]) for i, name in enumerate(blocks)}

    def rss(self, names: Sequence[str]) -> tuple[float, int]:
        cols = np.concatenate([np.arange(1), *(self.span[n] for n in names)])
        w, V = np.linalg.eigh(self.gram[np.ix_(cols, cols)])
        keep = w > w.max() * 1e-10
        projected = V[:, keep].T @ self.xy[cols]
        return max(self.yy - float((projected**2 / w[keep]).sum()), 0.0), int(keep.sum())


def _dummies(codes: np.ndarray) -> np.ndarray:
    levels = int(codes.max()) + 1
    return np.eye(levels)[codes][:, 1:]


def _n0(codes: np.ndarray) -> float:
    counts = np.bincount(codes).astype(np.float64)
    counts = counts[counts > 0]
    n = counts.sum()
    return float((n - (counts**2).sum() / n) / (len(counts) - 1)) if len(counts) > 1 else math.nan


def _components(y: np.ndarray, codes: dict[str, np.ndarray]) -> dict[str, tuple[float, int]]:
    """``{component: (variance, df)}`` by the moment estimator of the module docstring."""
    names = list(codes)
    blocks = {name: _dummies(c) for name, c in codes.items()}
    interaction = "seed" in codes and "method" in codes
    if interaction:
        pairs = codes["seed"] * (int(codes["method"].max()) + 1) + codes["method"]
        blocks[INTERACTION] = np.eye(len(np.unique(pairs)))[np.unique(pairs, return_inverse=True)[1]]
    fits = _Fits(y, blocks)
    rss_main, rank_main = fits.rss(names)
    rss_full, rank_full = rss_main, rank_main
    if interaction:
        rss_cell, rank_cell = fits.rss([*names, INTERACTION])
        if len(y) - rank_cell < 1 or rank_cell == rank_main:  # no replicate setting in a cell: no interaction
            interaction = False
        else:
            rss_full, rank_full = rss_cell, rank_cell
    df_residual = len(y) - rank_full
    if df_residual < 1:
        raise invalid(
            "results", "variance_components", "more settings than the levels of the factors (residual df ≥ 1)",
            f"{len(y)} settings for {rank_full} parameters", "Add seeds or drop a factor (factors=...).",
        )  # fmt: skip
    ms_residual = rss_full / df_residual
    out: dict[str, tuple[float, int]] = {}
    ms: dict[str, float] = {}
    if interaction:
        df = rank_full - rank_main
        ms[INTERACTION] = (rss_main - rss_full) / df
        cells = blocks[INTERACTION].shape[1]
        out[INTERACTION] = (max(0.0, (ms[INTERACTION] - ms_residual) / (len(y) / cells)), df)
    for name in names:
        in_interaction = interaction and name in ("seed", "method")
        rss_with, rank_with = rss_main, rank_main
        rss_without, rank_without = fits.rss([o for o in names if o != name])
        df = rank_with - rank_without
        if df < 1:  # aliased with another factor: nothing of its own
            out[name] = (math.nan, 0)
            continue
        mean_square = (rss_without - rss_with) / df
        error = ms[INTERACTION] if in_interaction else ms_residual
        out[name] = (max(0.0, (mean_square - error) / _n0(codes[name])), df)
    out["residual"] = (ms_residual, df_residual)
    order = [*(f for f in FACTORS if f in out), *(k for k in out if k not in FACTORS)]
    return {k: out[k] for k in order}


def _prepare(
    results: pd.DataFrame, metric: str, factors: Sequence[str] | None, include_baseline: bool
) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray, str]:
    owner = "variance_components"
    if not isinstance(results, pd.DataFrame):
        raise invalid("results", owner, "a DataFrame of result rows", type(results).__name__)
    metric = choose_metric(results, metric)
    rows = results
    if "phase" in rows.columns:
        rows = rows[rows["phase"] == "evaluation"]
    if "is_upper_bound" in rows.columns:
        rows = rows[rows["is_upper_bound"].astype(int) == 0]
    if not include_baseline and "method" in rows.columns:
        rows = rows[rows["method"] != BASELINE_METHOD]
    if metric not in rows.columns or "seed" not in rows.columns:
        raise invalid("results", owner, f"rows with 'seed' and '{metric}' columns",
                      sorted(rows.columns))  # fmt: skip
    rows = rows[rows[metric].notna()]
    wanted = FACTORS if factors is None else tuple(factors)
    unknown = [f for f in wanted if f not in FACTORS]
    if unknown:
        raise invalid("factors", owner, f"names among {list(FACTORS)}", unknown)
    if "seed" not in wanted:
        raise invalid(
            "factors", owner, "a list holding 'seed' (the unit every interval resamples)", list(wanted)
        )
    keys = {
        "seed": (rows["dataset"].astype(str) + "/" if "dataset" in rows.columns else "") + rows["seed"].astype(str),
        "prompt_type": prompt_labels(rows) if "anonymized" in rows.columns and "prompt_type" in rows.columns
        else rows.get("prompt_type"),
    }  # fmt: skip
    codes: dict[str, np.ndarray] = {}
    for name in wanted:
        column = keys.get(name, rows.get(name))
        if column is None:
            continue
        values = pd.Series(column).astype(str).to_numpy()
        levels, inverse = np.unique(values, return_inverse=True)
        if len(levels) >= 2 or name == "seed":
            codes[name] = inverse.astype(np.int64)
    if len(np.unique(codes["seed"])) < 2:
        raise invalid(
            "results", owner, "rows of at least two seeds", f"{len(np.unique(codes['seed']))} seed(s)"
        )
    return rows[metric].to_numpy(dtype=np.float64), codes, codes["seed"], metric


def variance_components(
    results: pd.DataFrame,
    *,
    metric: str = "auto",
    factors: Sequence[str] | None = None,
    include_baseline: bool = False,
    n_boot: int = 200,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Variance components of a grid's scores and their shares, with intervals from a bootstrap over seeds.

    Args:
        results: the store's rows (:meth:`~xaimetrics.benchmark.ResultsStore.to_frame`) or any frame with a
            ``seed`` column, the score and some of :data:`FACTORS`.
        metric: ``"auto"`` (:func:`~xaimetrics.benchmark.choose_metric`), ``"score"`` or ``"expected_accuracy"``.
        factors: the factors to model (default: every one of :data:`FACTORS` the grid varies; ``"seed"`` is
            required).
        include_baseline: keep the NoExplanation rows (module docstring: their prompt type and interpretation
            are aliased with the method).
        n_boot: bootstrap resamples of the seeds (0: no intervals).
        confidence: level of the percentile intervals.
        seed: seeds the bootstrap.

    Returns:
        One row per component (the factors present, ``"seed × method"`` when the grid has several settings per
        seed and method, ``"residual"``): ``variance``, ``share``, ``share_low``, ``share_high``, ``df``.

    Example:
        >>> from xaimetrics.benchmark._simulation import simulate_results
        >>> rows = simulate_results(n_seeds=6, methods=("NMF", "PCA"), controls=(), simulators=("a", "b"),
        ...                         effects={"NMF": 0.1}, seed_sd=0.1, method_sd=0.0, setting_sd=0.02)
        >>> table = variance_components(rows, n_boot=0)
        >>> table.index.tolist(), int(table.loc["residual", "df"])
        (['seed', 'simulator', 'method', 'seed × method', 'residual'], 11)
        >>> table["share"].round(2).tolist()  # true: seed 0.01, method 0.005, residual 0.0004, others 0
        [0.36, 0.0, 0.59, 0.04, 0.02]
    """
    owner = "variance_components"
    n_boot = check_positive_int(n_boot, "n_boot", owner, minimum=0)
    check_in_range(confidence, "confidence", owner, 0.0, 1.0)
    y, codes, units, _ = _prepare(results, metric, factors, include_baseline)
    with _one_thread():
        return _table(y, codes, units, n_boot, confidence, check_seed(seed, "seed", owner))


def _one_thread() -> contextlib.AbstractContextManager[object]:
    """Small dense algebra in one BLAS thread: threads only oversubscribe shared cores at these sizes."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn installs it
        return contextlib.nullcontext()
    limits: contextlib.AbstractContextManager[object] = threadpool_limits(1)
    return limits


def _table(
    y: np.ndarray, codes: dict[str, np.ndarray], units: np.ndarray, n_boot: int, confidence: float, seed: int
) -> pd.DataFrame:
    point = _components(y, codes)
    total = sum(v for v, _ in point.values() if math.isfinite(v))
    table = pd.DataFrame(
        {"variance": [v for v, _ in point.values()], "df": [d for _, d in point.values()]}, index=list(point)
    )
    # rounding leaves components of ~1e-33 where the scores do not vary at all: no shares, not shares of noise
    floor = 1e-12 * max(1.0, float(np.mean(np.square(y))))
    table["share"] = table["variance"] / total if total > floor else math.nan
    table["share_low"] = math.nan
    table["share_high"] = math.nan
    if n_boot:
        rng = np.random.default_rng(seed)
        ids = np.unique(units)
        members = [np.flatnonzero(units == u) for u in ids]
        draws = []
        for _ in range(n_boot):
            chosen = rng.integers(len(ids), size=len(ids))
            rows = np.concatenate([members[c] for c in chosen])
            relabel = np.concatenate([np.full(len(members[c]), k) for k, c in enumerate(chosen)])
            sample = {
                name: (relabel if name == "seed" else np.unique(c[rows], return_inverse=True)[1])
                for name, c in codes.items()
            }
            try:
                estimate = _components(y[rows], sample)
            except ValueError:
                continue
            values = {k: v for k, (v, _) in estimate.items()}
            whole = sum(v for v in values.values() if math.isfinite(v))
            draws.append(
                [values.get(k, math.nan) / whole if whole > floor else math.nan for k in table.index]
            )
        if draws:
            shares = np.asarray(draws)
            tail = (1 - confidence) / 2 * 100
            with warnings.catch_warnings():  # a component no draw could estimate: NaN, said by the NaN itself
                warnings.simplefilter("ignore", RuntimeWarning)
                table["share_low"] = np.nanpercentile(shares, tail, axis=0)
                table["share_high"] = np.nanpercentile(shares, 100 - tail, axis=0)
    table.index.name = "component"
    table["df"] = table["df"].astype(int)
    return table[["variance", "share", "share_low", "share_high", "df"]]
