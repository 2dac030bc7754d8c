"""Randomised twins of concept methods: the model-randomisation control applied to ConSim (issue #30).

Adebayo et al. (2018) ask of a saliency method that it change when the model's weights are re-drawn; Heap et al.
(ICLR 2026) find that concepts of randomly initialised transformers score nearly as well as trained ones. A
*randomised twin* of a concept method runs the same extractor and interpretation on a copy of the classifier with
re-initialised weights (:func:`~xaimetrics.models.randomized_copy`, drawn with the setting's seed), while the
simulator still predicts the **trained** classifier: the LP samples, f's predictions shown and the EP references
are the trained model's, only the concepts, their words and their importances come from the twin.

A grid lists its twins in ``randomized_twins``: ``"all"`` (every weight re-drawn), ``"top"`` (the head only) or
``"top<N>"`` (the ``N`` topmost units of the cascade: head, then blocks from the last). Each concept method ``M``
then gets the methods ``M@random-all``, ``M@random-top`` … (:func:`twin_method`), ranked like any competitor.
:func:`twin_comparison` reports, per method and twin, the gain over ``NoExplanation`` beside the gain over the
twin, with t intervals over the independent units (seeds) and the pre-stated one-sided sign-flip test that the
method beats its twin: a method that does not is what Heap et al. warn of — a score the training did not earn.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from xaimetrics._validation import invalid

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TWIN_SEPARATOR", "parse_twin", "split_twin", "twin_comparison", "twin_method"]

#: what separates a concept method's name from its twin's specification (``"PCA@random-all"``)
TWIN_SEPARATOR = "@random-"
_TWIN = re.compile(r"all|top([1-9][0-9]*)?")


def parse_twin(twin: object, *, owner: str = "Grid", argument: str = "randomized_twins") -> tuple[str, int]:
    """``(layers, n_top)`` of :func:`~xaimetrics.models.randomized_copy` for a twin's specification.

    Example:
        >>> parse_twin("all"), parse_twin("top"), parse_twin("top3")
        (('all', 1), ('top', 1), ('top', 3))
        >>> parse_twin("bottom")
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'randomized_twins' parameter of Grid must be ...
    """
    match = _TWIN.fullmatch(twin) if isinstance(twin, str) else None
    if match is None:
        raise invalid(
            argument, owner, "'all', 'top' or 'top<N>' (every weight re-drawn, the head only, or the N topmost "
            "units: head, then blocks from the last)", repr(twin), "Use e.g. randomized_twins = [\"all\", \"top\"].",
        )  # fmt: skip
    if twin == "all":
        return "all", 1
    return "top", int(match.group(1) or 1)


def twin_method(method: str, twin: str) -> str:
    """The method name of ``method``'s randomised twin.

    Example:
        >>> twin_method("PCA", "all")
        'PCA@random-all'
    """
    return f"{method}{TWIN_SEPARATOR}{twin}"


def split_twin(method: str) -> tuple[str, str | None]:
    """``(concept method, twin or None)`` of a method name.

    Example:
        >>> split_twin("NMF@random-top2"), split_twin("NMF")
        (('NMF', 'top2'), ('NMF', None))
    """
    base, separator, twin = str(method).partition(TWIN_SEPARATOR)
    return (base, twin) if separator else (base, None)


def twin_comparison(long: pd.DataFrame, *, confidence: float = 0.95, alpha: float = 0.05) -> pd.DataFrame:
    """Each concept method's gain over ``NoExplanation`` beside its gain over each randomised twin.

    ``long`` is a :func:`~xaimetrics.benchmark.ranking_frame` table (axis ``"method"``). Both gains are matched
    like with like within each setting and averaged within each independent unit
    (:func:`~xaimetrics.benchmark.unit_differences`); intervals are Student t over the units. ``p_twin`` is the
    pre-stated one-sided sign-flip test (:func:`~xaimetrics.benchmark.sign_flip_test`, ``"greater"``) that the
    method beats its twin; ``beats_twin`` is ``p_twin < alpha`` (with ``n`` units it cannot go below ``1/2ⁿ``).

    Returns:
        One row per method × twin: ``method``, ``twin``, ``n_units``, ``gain`` (over NoExplanation, NaN without
        the baseline) with ``gain_low``/``gain_high``, ``twin_gain`` (gain of the twin over NoExplanation),
        ``over_twin`` with ``over_twin_low``/``over_twin_high``, ``p_twin`` and ``beats_twin``.

    Example:
        >>> import pandas as pd
        >>> long = pd.DataFrame({"dataset": "d", "seed": [0, 0, 0, 1, 1, 1, 2, 2, 2],
        ...     "prompt_type": "E2", "method": ["NoExplanation", "PCA", "PCA@random-all"] * 3,
        ...     "score": [0.5, 0.8, 0.6, 0.4, 0.7, 0.6, 0.5, 0.9, 0.55]})
        >>> row = twin_comparison(long).iloc[0]
        >>> row["method"], row["twin"], round(float(row["gain"]), 3), round(float(row["over_twin"]), 3), float(row["p_twin"])
        ('PCA', 'all', 0.333, 0.217, 0.125)
    """
    import numpy as np
    import pandas as pd

    from xaimetrics.benchmark._analysis import unit_differences
    from xaimetrics.benchmark._grid import BASELINE_METHOD
    from xaimetrics.benchmark._uncertainty import sign_flip_test, t_interval

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
            "over_twin_high": high, "p_twin": p, "beats_twin": bool(p < alpha),
        })  # fmt: skip
    columns = ["method", "twin", "n_units", "gain", "gain_low", "gain_high", "twin_gain", "over_twin",
               "over_twin_low", "over_twin_high", "p_twin", "beats_twin"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)
