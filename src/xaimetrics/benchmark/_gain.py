"""Normalised simulatability gain (NSG; Mayne et al., 2026): the share of the baseline's headroom an explanation wins.

``NSG = (acc_with − acc_without) / (1 − acc_without)``: 0 no gain, 1 every sample the baseline missed is now
predicted, negative a loss (unbounded below). It makes gains comparable across tasks whose baselines differ (a
gain of 0.05 over a baseline of 0.90 closes half the headroom; over 0.50, a tenth). **Undefined when
``acc_without = 1``** (no headroom): NaN, never 0.

**Unit of inference** (docs/benchmark.md, "Statistics"): the seed of a dataset, as for the raw difference. Per
unit and competitor, ``D`` is the like-with-like difference with NoExplanation
(:func:`~xaimetrics.benchmark._analysis.unit_differences`) and ``B`` the baseline's mean score over *the same matched
settings*; the unit's NSG is ``D / (1 − B)`` (a ratio of the unit's means, so one setting whose baseline is
perfect does not make the unit undefined — only a unit whose matched baseline is perfect everywhere is).
The reported NSG is the mean of the units' NSG with its Student-t interval (:func:`~xaimetrics.stats.
t_interval`) over the units where it is defined; ``nsg_units`` says how many those are, and the
report says when it is fewer than the units of the raw difference.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from xaimetrics._validation import invalid
from xaimetrics.benchmark._analysis import _axis_of, _settings_wide, _unit_keys
from xaimetrics.benchmark._grid import BASELINE_METHOD
from xaimetrics.stats import t_interval

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["NSG_COLUMNS", "gain_table", "normalised_gain", "unit_normalised_gains"]

#: the columns :func:`gain_table` adds beside the raw difference
NSG_COLUMNS = ["nsg", "nsg_low", "nsg_high", "nsg_units"]


def normalised_gain(with_explanation: ArrayLike, without: ArrayLike) -> np.ndarray:
    """``(with − without) / (1 − without)`` elementwise; NaN where ``without = 1`` (no headroom to gain).

    Example:
        >>> normalised_gain([0.95, 0.6, 0.8, 1.0], [0.9, 0.5, 0.9, 1.0]).round(3).tolist()
        [0.5, 0.2, -1.0, nan]
    """
    w = np.asarray(with_explanation, dtype=np.float64)
    wo = np.asarray(without, dtype=np.float64)
    if w.shape != wo.shape:
        raise invalid(
            "without", "normalised_gain", f"an array of the shape of with_explanation {w.shape}", wo.shape
        )
    if np.any(wo[np.isfinite(wo)] > 1):
        raise invalid("without", "normalised_gain", "accuracies ≤ 1", float(np.nanmax(wo)))
    headroom = 1.0 - wo
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(headroom > 0, (w - wo) / np.where(headroom > 0, headroom, 1.0), np.nan)


def unit_normalised_gains(
    long: pd.DataFrame, baseline: str = BASELINE_METHOD, *, axis: str | None = None
) -> pd.DataFrame:
    """Units × competitors: each unit's NSG over the settings matched with ``baseline`` (module docstring).

    Example:
        >>> long = pd.DataFrame({"dataset": "d", "seed": [0, 0, 0, 0, 1, 1],
        ...     "prompt_type": ["E1", "E2", "E1", "E2", "E2", "E2"],
        ...     "method": ["NoExplanation", "NoExplanation", "NMF", "NMF", "NoExplanation", "NMF"],
        ...     "score": [0.4, 0.6, 0.5, 0.8, 1.0, 0.9]})
        >>> unit_normalised_gains(long).round(3)["NMF"].tolist()  # seed 0: 0.15 / (1 − 0.5); seed 1: none
        [0.3, nan]
    """
    axis = _axis_of(long, axis)
    units = _unit_keys(long, axis, "unit_normalised_gains")
    wide = _settings_wide(long, axis)
    if baseline not in wide.columns:
        raise invalid("baseline", "unit_normalised_gains", "a competitor of the ranking table", baseline)
    out = {}
    base = wide[baseline]
    for competitor in (c for c in wide.columns if c != baseline):
        matched = wide[competitor].notna() & base.notna()
        pairs = pd.DataFrame({"with": wide[competitor].where(matched), "without": base.where(matched)})
        means = pairs.groupby(level=units, sort=True, dropna=False).mean()
        out[competitor] = normalised_gain(means["with"].to_numpy(), means["without"].to_numpy())
        index = means.index
    frame = pd.DataFrame(out, index=index if out else None)
    frame.columns.name = axis
    return frame


def gain_table(gains: pd.DataFrame, *, confidence: float = 0.95) -> pd.DataFrame:
    """Per competitor (rows), the mean of the units' NSG, its t interval and the units where it is defined.

    Example:
        >>> g = pd.DataFrame({"NMF": [0.2, 0.4, np.nan], "PCA": [0.1, 0.1, 0.1]})
        >>> gain_table(g).round(3).to_dict("index")["NMF"]
        {'nsg': 0.3, 'nsg_low': -0.971, 'nsg_high': 1.571, 'nsg_units': 2}
    """
    rows = {}
    for competitor in gains.columns:
        values = gains[competitor].to_numpy(dtype=np.float64)
        values = values[np.isfinite(values)]
        mean, low, high = t_interval(values, confidence=confidence) if values.size else (math.nan,) * 3
        rows[competitor] = {"nsg": mean, "nsg_low": low, "nsg_high": high, "nsg_units": int(values.size)}
    table = pd.DataFrame.from_dict(rows, orient="index", columns=NSG_COLUMNS)
    table["nsg_units"] = table["nsg_units"].astype(int)
    return table
