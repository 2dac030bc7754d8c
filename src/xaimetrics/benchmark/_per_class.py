"""Per-class ConSim scores over a grid: for each method and class of f's predictions, the reader's recall and
precision of f, and the recall's gain over NoExplanation matched by seed (issue #35).

Each stored row keeps its per-class counts (``class_counts``, :mod:`xaimetrics.consim._per_class`), so the
pooled **recall** ``Σ hits / Σ n`` and **precision** ``Σ hits / Σ answered`` over a method's rows are exact. The
interval and the gain follow the grid's statistics rules (docs/benchmark.md, "Statistics"): a row's recall of
class ``c`` becomes its score, the rows go through :func:`~xaimetrics.benchmark.ranking_frame` (baselines spread
over the prompt types they are compared in), and :func:`~xaimetrics.benchmark._analysis.unit_scores` /
:func:`~xaimetrics.benchmark._analysis.unit_differences` average within each seed — the gain is the like-with-like
difference with NoExplanation in the same seed and prompt setting. Intervals are Student-t over those seeds,
clipped to the range of the quantity (``[0, 1]`` for the recall, ``[−1, 1]`` for the gain).

A class f predicted for fewer than ``min_samples`` EP samples (counted once per seed: a seed's settings share
their samples) or in fewer than two seeds has **too few samples**: its row is kept, with the counts, but no
interval or gain, and ``note`` says so. A setting without the class (f predicted none of its EP samples in it)
leaves that setting out of the class's recall, never counts it as zero.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from xaimetrics._class_counts import ClassCounts, add_class_counts, read_class_counts
from xaimetrics._validation import check_positive_int, invalid
from xaimetrics.benchmark._analysis import ranking_frame, unit_differences, unit_scores
from xaimetrics.benchmark._grid import BASELINE_METHOD
from xaimetrics.stats import t_interval

__all__ = ["MIN_CLASS_SAMPLES", "PER_CLASS_COLUMNS", "per_class_table"]

#: fewer EP samples of a class than this (over the seeds) are too few to say anything about it
MIN_CLASS_SAMPLES = 10
#: the columns of :func:`per_class_table`
PER_CLASS_COLUMNS = [
    "n_samples", "n_seeds", "recall", "recall_low", "recall_high", "precision", "gain", "gain_low",
    "gain_high", "note",
]  # fmt: skip
_TOO_FEW = "too few samples"


def per_class_table(
    results: pd.DataFrame, *, min_samples: int = MIN_CLASS_SAMPLES, confidence: float = 0.95
) -> pd.DataFrame:
    """Per method and class of f's predictions: the reader's recall and precision of f, with intervals over seeds.

    Args:
        results: the store's rows (:meth:`~xaimetrics.benchmark.ResultsStore.to_frame`), with ``class_counts``.
        min_samples: classes with fewer EP samples (once per seed) are marked ``too few samples``.
        confidence: the level of the Student-t intervals over seeds.

    Returns:
        Index ``(method, class)``; columns :data:`PER_CLASS_COLUMNS`: ``n_samples`` (f's EP samples in the class,
        once per seed), ``n_seeds``, ``recall`` (pooled) with its interval over seeds, ``precision`` (pooled;
        NaN where the reader never answered the class), ``gain`` (recall minus NoExplanation's, like with like,
        averaged over seeds; NaN for NoExplanation itself) with its interval, and ``note``. Empty without
        counts (a store written before the column).

    Example:
        >>> import json
        >>> def counts(a, b):  # class "a": f's 3 samples, the reader got `a` of them; class "b": 2 samples
        ...     return json.dumps({"a": {"n": 3, "hits": a, "answered": a + 1}, "b": {"n": 2, "hits": b, "answered": b}})
        >>> rows = pd.DataFrame({"dataset": "d", "model": "m", "simulator": "s", "interpretation": "",
        ...     "anonymized": 0, "phase": "evaluation", "is_upper_bound": 0, "score": 0.5,
        ...     "seed": [0, 0, 1, 1, 2, 2, 3, 3], "method": ["NoExplanation", "NMF"] * 4,
        ...     "prompt_type": ["NE2", "E2"] * 4,
        ...     "class_counts": [counts(1, 1), counts(3, 0), counts(2, 1), counts(3, 1), counts(1, 0),
        ...                      counts(2, 0), counts(1, 2), counts(3, 2)]})
        >>> table = per_class_table(rows)
        >>> table.loc["NMF", ["n_samples", "recall", "gain", "note"]].round(3).values.tolist()
        [[12, 0.917, 0.5, ''], [8, 0.375, nan, 'too few samples']]
    """
    owner = "per_class_table"
    min_samples = check_positive_int(min_samples, "min_samples", owner)
    if "class_counts" not in results.columns:
        raise invalid(
            "results", owner, "the results store's rows with a 'class_counts' column", list(results.columns),
            "Read them with ResultsStore.to_frame() from a store this version wrote.",
        )  # fmt: skip
    rows = results[(results["phase"] == "evaluation") & (results["is_upper_bound"].astype(int) == 0)]
    rows = rows[rows["score"].notna()].reset_index(drop=True)
    counts = [read_class_counts(value, owner) for value in rows["class_counts"]]
    classes = sorted({name for part in counts for name, values in part.items() if values["n"] > 0})
    index = pd.MultiIndex.from_tuples([], names=["method", "class"])
    if not classes:
        return pd.DataFrame(columns=PER_CLASS_COLUMNS, index=index)
    records: dict[tuple[str, str], dict[str, object]] = {}
    for name in classes:
        empty: ClassCounts = {"n": 0, "hits": 0, "answered": 0}
        n = np.array([part.get(name, empty)["n"] for part in counts], dtype=np.float64)
        hits = np.array([part.get(name, empty)["hits"] for part in counts], dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            recall = np.where(n > 0, hits / np.where(n > 0, n, 1.0), np.nan)
        # the recall as the score, through the grid's own matching (ranking_frame drops the rows without it)
        long = ranking_frame(rows.assign(score=recall), metric="score")
        means = unit_scores(long) if len(long) else pd.DataFrame()
        gains = (
            unit_differences(long) if len(long) and BASELINE_METHOD in set(long["method"]) else pd.DataFrame()
        )
        for method, part in rows.groupby("method", sort=True):
            totals: ClassCounts = add_class_counts(counts[i] for i in part.index).get(
                name, {"n": 0, "hits": 0, "answered": 0}
            )
            if totals["n"] == 0:
                continue
            present = part[n[part.index] > 0]
            per_seed = present.assign(n=n[present.index]).groupby(["dataset", "model", "seed"])["n"].max()
            n_samples, n_seeds = int(per_seed.sum()), int(per_seed.index.droplevel("model").nunique())
            too_few = n_samples < min_samples or n_seeds < 2
            low = high = gain = gain_low = gain_high = math.nan
            if not too_few:
                # t-intervals over 3–5 seeds can leave the range of a share: shown clipped to it
                if method in means.columns:
                    _, low, high = t_interval(means[method].dropna().to_numpy(), confidence=confidence)
                    low, high = max(low, 0.0), min(high, 1.0)
                if method in gains.columns:
                    gain, gain_low, gain_high = t_interval(
                        gains[method].dropna().to_numpy(), confidence=confidence
                    )
                    gain_low, gain_high = max(gain_low, -1.0), min(gain_high, 1.0)
            records[(str(method), name)] = {
                "n_samples": n_samples,
                "n_seeds": n_seeds,
                "recall": totals["hits"] / totals["n"],
                "recall_low": low,
                "recall_high": high,
                "precision": totals["hits"] / totals["answered"] if totals["answered"] else math.nan,
                "gain": gain,
                "gain_low": gain_low,
                "gain_high": gain_high,
                "note": _TOO_FEW if too_few else "",
            }
    table = pd.DataFrame.from_dict(records, orient="index", columns=PER_CLASS_COLUMNS)
    table.index = pd.MultiIndex.from_tuples(list(records), names=["method", "class"])
    return table.sort_index()
