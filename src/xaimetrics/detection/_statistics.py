"""Statistics of detection scores: which concepts are legible, and comparisons on independent units.

- **Which concepts are legible** (:func:`legibility_table`): per concept, its words, the AUROC against
  random and hard negatives with their intervals, the shuffled control, and the one-sided Mann–Whitney
  p-value Holm-corrected over the concepts of one fit (the benchmark's ``holm``, equal to statsmodels'). A
  concept is *legible* when its corrected p is below ``alpha``.
- **Units** (docs/detection.md): the concepts of one extractor fit share that fit and its texts' pool, so
  they are not independent replicates of a *method*; the seed is (it refits the extractor and redraws the
  texts). :func:`summarise` and :func:`compare_groups` first average the concepts within each seed, then
  compare seeds — a paired t-test per pair of levels (methods, readers, descriptions), Holm-corrected over
  the comparisons. With one seed there is one unit: comparisons then pair the *concepts* (Wilcoxon
  signed-rank), which speaks about these concepts of this fit only, and the table says so.
- **Trained − random** (:func:`random_baseline`; Heap et al., ICLR 2026): the same pipeline run on a randomised
  copy of the classifier (:func:`~xaimetrics.models.randomized_copy`) gives the score that needs no training;
  the table reports trained − random per metric with an interval and a one-sided test, and
  :func:`legibility_table` (``random_rows=``) shows each concept's margin over the random model's mean.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.stats import holm

if TYPE_CHECKING:
    import pandas as pd

    from xaimetrics.detection._prompts import Interpretation

__all__ = ["compare_groups", "legibility_table", "random_baseline", "summarise"]


def _frame(rows: pd.DataFrame | Iterable[Mapping[str, object]], owner: str) -> pd.DataFrame:
    import pandas as pd

    frame = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    missing = {"concept", "description", "negatives", "value"} - set(frame.columns)
    if missing:
        raise invalid(
            "rows", owner, "detection rows with concept, description, negatives and value", sorted(missing)
        )
    return frame


def _words(interpretation: Interpretation | None) -> str:
    if interpretation is None:
        return ""
    from xaimetrics.detection._detection import describe_or_none

    described = describe_or_none(interpretation)
    if described is None:
        return ""
    words, label = described
    return ", ".join(([label] if label else []) + list(words))


def legibility_table(
    rows: pd.DataFrame | Iterable[Mapping[str, object]],
    interpretations: Mapping[int, Interpretation] | None = None,
    *,
    alpha: float = 0.05,
    groups: Sequence[str] = (),
    random_rows: pd.DataFrame | Iterable[Mapping[str, object]] | None = None,
) -> pd.DataFrame:
    """One line per concept (and per level of ``groups``, e.g. reader or seed): words, scores, Holm p, legible.

    Args:
        rows: detection rows (:attr:`DetectionResult.rows` or its frame).
        interpretations: ``{concept: interpretation}`` for the words column.
        alpha: the family-wise level of the Holm correction over concepts (within each group).
        groups: columns that split the table (each group is one family of tests).
        random_rows: the same pipeline's rows on a randomised copy of the classifier: adds ``over_random``, the
            concept's score minus the mean score of the random model's concepts (own description, the same
            metric and negatives), with ``over_random_low``/``over_random_high`` from the t interval of that mean
            (:func:`random_baseline` compares the whole fits).

    Example:
        >>> rows = [{"concept": c, "description": d, "negatives": "random", "value": v, "low": v - .1,
        ...          "high": min(v + .1, 1.0), "p_value": p, "metric": "auroc"}
        ...         for c, d, v, p in [(0, "own", .95, .001), (0, "shuffled", .5, .5), (1, "own", .6, .2),
        ...                            (1, "shuffled", .45, .7)]]
        >>> table = legibility_table(rows, {0: ["goal"], 1: ["chip"]})
        >>> table[["concept", "words", "auroc", "shuffled", "legible"]].values.tolist()
        [[0, 'goal', 0.95, 0.5, True], [1, 'chip', 0.6, 0.45, False]]
    """
    import pandas as pd

    frame = _frame(rows, "legibility_table")
    groups = [g for g in groups if g in frame.columns]
    out = []
    for key, part in frame.groupby(groups, sort=True, dropna=False) if groups else [((), frame)]:
        own = part[part.description.isin(("own", "none"))]  # "none": scorers without a description
        lines = []
        for concept, block in own.groupby("concept", sort=True):
            line: dict[str, object] = dict(
                zip(groups, key if isinstance(key, tuple) else (key,), strict=True)
            )
            line["concept"] = int(concept)
            if interpretations is not None:
                line["words"] = _words(interpretations.get(int(concept)))
            random = block[block.negatives == "random"]
            hard = block[block.negatives == "hard"]
            main = random if len(random) else block.iloc[:1]
            line["metric"] = main["metric"].iloc[0] if "metric" in main else "auroc"
            line["auroc"] = float(main["value"].iloc[0])
            line["low"] = float(main["low"].iloc[0]) if "low" in main else np.nan
            line["high"] = float(main["high"].iloc[0]) if "high" in main else np.nan
            line["p_value"] = float(main["p_value"].iloc[0]) if "p_value" in main else np.nan
            line["auroc_hard"] = float(hard["value"].iloc[0]) if len(hard) else np.nan
            shuffled = part[
                (part.description == "shuffled") & (part.concept == concept) & (part.negatives == "random")
            ]
            line["shuffled"] = float(shuffled["value"].iloc[0]) if len(shuffled) else np.nan
            lines.append(line)
        table = pd.DataFrame(lines)
        if len(table):
            adjusted = holm(table["p_value"].to_numpy(dtype=np.float64))
            table["p_holm"] = adjusted
            table["legible"] = np.isfinite(adjusted) & (adjusted < alpha)
        out.append(table)
    result = pd.concat(out, ignore_index=True) if out else pd.DataFrame()
    if random_rows is not None and len(result):
        random = _own(_frame(random_rows, "legibility_table"))
        random = (
            random[random["negatives"] == "random"] if (random["negatives"] == "random").any() else random
        )
        for metric, part in random.groupby("metric" if "metric" in random else "negatives"):
            values = part["value"].to_numpy(dtype=np.float64)
            mean, (low, high) = float(values.mean()), _t_interval(values, 0.95, clip=False)
            mask = result["metric"] == metric if "metric" in random else np.ones(len(result), bool)
            result.loc[mask, "over_random"] = result.loc[mask, "auroc"] - mean
            result.loc[mask, "over_random_low"] = result.loc[mask, "auroc"] - high
            result.loc[mask, "over_random_high"] = result.loc[mask, "auroc"] - low
    return result


def _own(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows that score a concept's own description (``"none"``: scorers without one)."""
    return frame[frame["description"].isin(("own", "none"))]


def random_baseline(
    trained: pd.DataFrame | Iterable[Mapping[str, object]],
    random: pd.DataFrame | Iterable[Mapping[str, object]],
    *,
    by: Sequence[str] = ("metric", "negatives"),
    unit: str = "seed",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Trained − random per level of ``by``: the same detection pipeline on the trained classifier and on a
    randomised copy of it (Heap et al., ICLR 2026; own descriptions only).

    With at least two ``unit`` values (seeds) shared by both: concepts are averaged within each seed, the seeds
    are paired (the seed draws the texts and refits both extractors), and the difference gets a Student t
    interval over seeds and the one-sided exact sign-flip p that trained > random. With one seed, the two
    fits' concepts are compared unpaired: Welch's t interval and one-sided p over concepts, labelled
    ``"concept (one fit)"`` (it speaks about these two fits only).

    Returns:
        One row per level of ``by``: ``trained``, ``random`` (mean scores), ``difference``, ``low``, ``high``,
        ``p_value``, ``n_units`` and ``units``.

    Raises:
        InvalidParameterError: rows without the detection columns, or no level of ``by`` in both.

    Example:
        >>> trained = [{"concept": c, "description": "own", "negatives": "random", "value": v, "seed": s,
        ...             "metric": "auroc"} for s, c, v in [(0, 0, .9), (0, 1, .8), (1, 0, .85), (1, 1, .95),
        ...                                                (2, 0, .7), (2, 1, .9)]]
        >>> random = [{**r, "value": r["value"] - d} for r, d in zip(trained, [.3, .2, .1, .3, .15, .2])]
        >>> row = random_baseline(trained, random).iloc[0]
        >>> round(float(row["difference"]), 3), float(row["p_value"]), row["units"]
        (0.208, 0.125, 'seed')
    """
    import pandas as pd
    from scipy import stats

    from xaimetrics.stats import sign_flip_test, t_interval

    frames = {
        "trained": _own(_frame(trained, "random_baseline")),
        "random": _own(_frame(random, "random_baseline")),
    }
    by = [b for b in by if b in frames["trained"].columns and b in frames["random"].columns]
    grouped = {name: dict(iter(f.groupby(by, sort=True))) if by else {(): f} for name, f in frames.items()}
    levels = [k for k in grouped["trained"] if k in grouped["random"]]
    if not levels:
        raise invalid(
            "random", "random_baseline", f"rows with a level of {by} that the trained rows have",
            sorted(map(str, grouped["random"])), "Score the random model with the same metrics and negatives.",
        )  # fmt: skip
    lines = []
    for key in levels:
        a, b = grouped["trained"][key], grouped["random"][key]
        line: dict[str, object] = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        shared = sorted(set(a[unit]) & set(b[unit])) if unit in a and unit in b else []
        if len(shared) >= 2:
            x = a[a[unit].isin(shared)].groupby(unit)["value"].mean()
            y = b[b[unit].isin(shared)].groupby(unit)["value"].mean()
            diff = (x - y).to_numpy(dtype=np.float64)
            _, low, high = t_interval(diff, confidence=confidence)
            p, n, units = sign_flip_test(diff, alternative="greater"), len(diff), unit
            trained_mean, random_mean = float(x.mean()), float(y.mean())
        else:
            x_values, y_values = a["value"].to_numpy(np.float64), b["value"].to_numpy(np.float64)
            test = stats.ttest_ind(x_values, y_values, equal_var=False, alternative="greater")
            interval = stats.ttest_ind(x_values, y_values, equal_var=False).confidence_interval(confidence)
            low, high, p = float(interval.low), float(interval.high), float(test.pvalue)
            n, units = len(x_values) + len(y_values), "concept (one fit)"
            trained_mean, random_mean = float(x_values.mean()), float(y_values.mean())
        line.update(trained=trained_mean, random=random_mean, difference=trained_mean - random_mean, low=low,
                    high=high, p_value=p, n_units=n, units=units)  # fmt: skip
        lines.append(line)
    return pd.DataFrame(lines)


def _t_interval(values: np.ndarray, confidence: float, *, clip: bool = True) -> tuple[float, float]:
    from scipy import stats

    if len(values) < 2 or np.ptp(values) == 0:
        mean = float(values.mean()) if len(values) else np.nan
        return (mean, mean) if len(values) >= 2 else (np.nan, np.nan)
    interval = stats.t.interval(confidence, len(values) - 1, loc=values.mean(), scale=stats.sem(values))
    if not clip:
        return float(interval[0]), float(interval[1])
    return max(float(interval[0]), 0.0), min(float(interval[1]), 1.0)  # scores live in [0, 1]


def summarise(
    rows: pd.DataFrame | Iterable[Mapping[str, object]],
    *,
    by: Sequence[str] = ("description", "negatives"),
    unit: str = "seed",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Mean score per level of ``by``: concepts averaged within each ``unit`` first, then a t interval on the
    unit means (with one unit, over the concepts, flagged in the ``units`` column), clipped to [0, 1].

    Example:
        >>> rows = [{"concept": c, "description": "own", "negatives": "random", "value": v, "seed": s}
        ...         for s, c, v in [(0, 0, .9), (0, 1, .7), (1, 0, .8), (1, 1, .6)]]
        >>> summarise(rows)[["mean", "n_units", "units"]].to_dict("records")
        [{'mean': 0.75, 'n_units': 2, 'units': 'seed'}]
    """
    import pandas as pd

    frame = _frame(rows, "summarise")
    by = [b for b in by if b in frame.columns]
    lines = []
    for key, part in frame.groupby(by, sort=True):
        line = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        if unit in part.columns and part[unit].nunique() >= 2:
            values, units = part.groupby(unit)["value"].mean().to_numpy(), unit
        else:
            values, units = part["value"].to_numpy(dtype=np.float64), "concept (one fit)"
        low, high = _t_interval(values, confidence)
        line.update(mean=float(values.mean()), low=low, high=high, n_units=len(values), units=units,
                    n_concepts=int(part["concept"].nunique()))  # fmt: skip
        lines.append(line)
    return pd.DataFrame(lines)


def compare_groups(
    rows: pd.DataFrame | Iterable[Mapping[str, object]],
    column: str,
    *,
    baseline: str | None = None,
    unit: str = "seed",
    alpha: float = 0.05,
    where: Mapping[str, object] | None = None,
) -> pd.DataFrame:
    """Paired comparisons of the levels of ``column`` (methods, readers, descriptions), Holm-corrected.

    Concepts are averaged within each ``unit`` (seed) and level first; levels are paired by unit (paired
    t-test). With one unit the levels are paired by concept instead (Wilcoxon signed-rank; ``units`` says
    so). ``baseline``: compare every other level with it (default: every pair). ``where`` filters rows first
    (e.g. ``{"negatives": "random"}``).

    Example:
        >>> rows = [{"concept": c, "description": d, "negatives": "random", "value": v, "seed": 0}
        ...         for c in range(8) for d, v in [("own", 0.8 + c / 100), ("shuffled", 0.5 - c / 200)]]
        >>> out = compare_groups(rows, "description", baseline="shuffled")
        >>> out[["level", "baseline", "difference", "units"]].round(4).to_dict("records")
        [{'level': 'own', 'baseline': 'shuffled', 'difference': 0.3525, 'units': 'concept (one fit)'}]
    """
    import pandas as pd
    from scipy import stats

    frame = _frame(rows, "compare_groups")
    for name, value in (where or {}).items():
        frame = frame[frame[name] == value]
    if column not in frame.columns:
        raise invalid(
            "column", "compare_groups", f"a column of the rows ({', '.join(frame.columns)})", column
        )
    levels = sorted(frame[column].unique(), key=str)
    if baseline is not None and baseline not in levels:
        raise invalid("baseline", "compare_groups", f"one of {levels}", baseline)
    by_unit = unit in frame.columns and frame[unit].nunique() >= 2
    pair_on = unit if by_unit else "concept"
    means = frame.groupby([column, pair_on])["value"].mean().unstack(pair_on)
    pairs = (
        [(a, baseline) for a in levels if a != baseline]
        if baseline is not None
        else [(a, b) for i, a in enumerate(levels) for b in levels[i + 1 :]]
    )
    lines = []
    for a, b in pairs:
        x, y = means.loc[a], means.loc[b]
        keep = x.notna() & y.notna()
        x, y = x[keep].to_numpy(dtype=np.float64), y[keep].to_numpy(dtype=np.float64)
        diff = x - y
        if len(diff) < 2 or np.ptp(diff) == 0:  # no variance: a t statistic does not exist
            p = np.nan
        elif by_unit:
            p = float(stats.ttest_rel(x, y).pvalue)
        else:
            p = float(stats.wilcoxon(x, y).pvalue)
        lines.append({"level": a, "baseline": b, "difference": float(diff.mean()) if len(diff) else np.nan,
                      "n_units": len(diff), "units": unit if by_unit else "concept (one fit)", "p_value": p})  # fmt: skip
    table = pd.DataFrame(lines)
    if len(table):
        adjusted = holm(table["p_value"].to_numpy(dtype=np.float64))
        table["p_holm"] = adjusted
        table["significant"] = np.isfinite(adjusted) & (adjusted < alpha)
    return table
