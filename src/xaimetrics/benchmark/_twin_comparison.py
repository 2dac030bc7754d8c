"""Does each concept method beat its randomised twin? The one-sided test over seeds the report and the ranking
read (the twins themselves are named and drawn in :mod:`xaimetrics.benchmark._twins`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xaimetrics.benchmark._twins import split_twin

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["twin_comparison"]


def twin_comparison(long: pd.DataFrame, *, confidence: float = 0.95, alpha: float = 0.05) -> pd.DataFrame:
    """Each concept method's gain over ``NoExplanation`` beside its gain over each randomised twin.

    ``long`` is a :func:`~xaimetrics.benchmark.ranking_frame` table (axis ``"method"``). Both gains are matched
    like with like within each setting and averaged within each independent unit
    (:func:`~xaimetrics.benchmark._analysis.unit_differences`); intervals are Student t over the units. ``p_twin`` is the
    pre-stated one-sided sign-flip test (:func:`~xaimetrics.stats.sign_flip_test`, ``"greater"``) that the
    method beats its twin. The methods × twin kinds tested form one pre-stated family: ``p_twin_holm`` is Holm's
    adjustment over all of them and ``beats_twin`` is ``p_twin_holm < alpha``,
    so the chance that any method is said to beat a twin it does not beat stays at most ``alpha``. With ``n``
    units the exact test cannot go below ``1/2ⁿ``, so Holm's first level ``alpha / m`` over ``m`` comparisons
    needs ``2ⁿ > m / alpha`` (8 units for 6 comparisons at 0.05).

    Returns:
        One row per method × twin: ``method``, ``twin``, ``n_units``, ``gain`` (over NoExplanation, NaN without
        the baseline) with ``gain_low``/``gain_high``, ``twin_gain`` (gain of the twin over NoExplanation),
        ``over_twin`` with ``over_twin_low``/``over_twin_high``, ``p_twin``, ``p_twin_holm`` and ``beats_twin``.

    Example:
        >>> import pandas as pd
        >>> long = pd.DataFrame({"dataset": "d", "seed": [0, 0, 0, 1, 1, 1, 2, 2, 2],
        ...     "prompt_type": "E2", "method": ["NoExplanation", "PCA", "PCA@random-all"] * 3,
        ...     "score": [0.5, 0.8, 0.6, 0.4, 0.7, 0.6, 0.5, 0.9, 0.55]})
        >>> row = twin_comparison(long).iloc[0]
        >>> row["method"], row["twin"], round(float(row["gain"]), 3), round(float(row["over_twin"]), 3), float(row["p_twin"])
        ('PCA', 'all', 0.333, 0.217, 0.125)
        >>> float(row["p_twin_holm"]), bool(row["beats_twin"])  # one comparison: Holm changes nothing
        (0.125, False)
    """
    import numpy as np
    import pandas as pd

    from xaimetrics.benchmark._analysis import unit_differences
    from xaimetrics.benchmark._grid import BASELINE_METHOD
    from xaimetrics.stats import holm, sign_flip_test, t_interval

    methods = [str(m) for m in long["method"].unique()]
    # one row per method and twin, in a fixed order whatever the order of the rows (store order is not an order)
    twins = sorted((split_twin(m), m) for m in methods if split_twin(m)[1] is not None)
    gains = unit_differences(long) if BASELINE_METHOD in methods else None
    rows = []
    for (base, twin), name in twins:
        if base not in methods:
            continue
        over = unit_differences(long[long["method"].isin([base, name])], baseline=name)[base].dropna()
        mean, low, high = t_interval(over.to_numpy(), confidence=confidence)
        gain = gain_low = gain_high = twin_gain = np.nan
        if gains is not None:
            gain, gain_low, gain_high = t_interval(gains[base].dropna().to_numpy(), confidence=confidence)
            twin_gain = float(gains[name].mean())
        p = sign_flip_test(over.to_numpy(), alternative="greater")
        rows.append({
            "method": base, "twin": twin, "n_units": int(over.size), "gain": gain, "gain_low": gain_low,
            "gain_high": gain_high, "twin_gain": twin_gain, "over_twin": mean, "over_twin_low": low,
            "over_twin_high": high, "p_twin": p,
        })  # fmt: skip
    columns = ["method", "twin", "n_units", "gain", "gain_low", "gain_high", "twin_gain", "over_twin",
               "over_twin_low", "over_twin_high", "p_twin", "p_twin_holm", "beats_twin"]  # fmt: skip
    table = pd.DataFrame(rows, columns=columns)
    table["p_twin_holm"] = holm(table["p_twin"].to_numpy(dtype=float)) if len(table) else []
    # a NaN p (no unit shared with the twin) never counts as beating it
    table["beats_twin"] = (table["p_twin_holm"] < alpha).astype(bool)
    return table
