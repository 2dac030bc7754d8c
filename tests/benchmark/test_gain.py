"""Normalised simulatability gain: hand computations, per-seed units, undefined at a perfect baseline."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from xaimetrics.benchmark import assess
from xaimetrics.benchmark._gain import normalised_gain, unit_normalised_gains
from xaimetrics.benchmark._simulation import simulate_results
from xaimetrics.exceptions import InvalidParameterError


def test_normalised_gain_by_hand_and_undefined_without_headroom() -> None:
    out = normalised_gain([0.95, 0.6, 0.8, 1.0, 0.7], [0.9, 0.5, 0.9, 1.0, 1.0])
    assert out[:3] == pytest.approx([0.5, 0.2, -1.0])
    assert np.isnan(out[3]) and np.isnan(out[4])  # never a silent 0
    with pytest.raises(InvalidParameterError, match="'without' parameter of normalised_gain"):
        normalised_gain([0.5], [1.2])
    with pytest.raises(InvalidParameterError, match="shape"):
        normalised_gain([0.5, 0.6], [0.5])


def test_unit_gains_pair_like_with_like_within_each_seed() -> None:
    long = pd.DataFrame({
        "dataset": "d", "seed": [0, 0, 0, 0, 1, 1, 1, 2, 2],
        "prompt_type": ["E1", "E2", "E1", "E2", "E1", "E2", "E2", "E2", "E2"],
        "method": ["NoExplanation", "NoExplanation", "NMF", "NMF", "NoExplanation", "NoExplanation", "NMF",
                   "NoExplanation", "NMF"],
        "score": [0.4, 0.6, 0.5, 0.8, 0.2, 0.9, 0.95, 1.0, 0.9],
    })  # fmt: skip
    gains = unit_normalised_gains(long)["NMF"].to_numpy()
    # seed 0: D = (0.1 + 0.2) / 2, B = 0.5; seed 1: only E2 is matched: (0.95 - 0.9) / 0.1; seed 2: undefined
    assert gains[:2] == pytest.approx([0.15 / 0.5, 0.5]) and np.isnan(gains[2])


def test_assess_reports_nsg_beside_the_difference_with_a_t_interval_over_seeds() -> None:
    rows = simulate_results(
        n_seeds=8, methods=("NMF", "PCA"), controls=(), effects={"NMF": 0.1}, random_state=3
    )
    result = assess(rows)
    per_unit = result.gains["NMF"].to_numpy()
    base = rows[rows.method == "NoExplanation"].groupby("seed")["score"].mean().to_numpy()
    mine = rows[rows.method == "NMF"].groupby("seed")["score"].mean().to_numpy()
    assert per_unit == pytest.approx((mine - base) / (1 - base))
    line = result.comparison.loc["NMF"]
    low, high = stats.t.interval(0.95, 7, loc=per_unit.mean(), scale=stats.sem(per_unit))
    assert (line["nsg"], line["nsg_low"], line["nsg_high"]) == pytest.approx((per_unit.mean(), low, high))
    assert line["nsg_units"] == line["n_units"] == 8
    assert "undefined" not in result.summary
    # duplicated rows are one measurement: nothing changes
    twice = assess(pd.concat([rows, rows[rows.method == "NMF"]], ignore_index=True))
    assert twice.comparison.loc["NMF", "nsg"] == pytest.approx(line["nsg"])


def test_a_perfect_baseline_seed_is_left_out_of_nsg_and_said() -> None:
    rows = simulate_results(n_seeds=6, methods=("NMF", "PCA"), controls=(), random_state=1)
    rows.loc[(rows.method == "NoExplanation") & (rows.seed == 2), ["score", "expected_accuracy"]] = 1.0
    result = assess(rows)
    assert math.isnan(result.gains.loc[("simulated", 2), "NMF"])
    assert result.comparison.loc["NMF", "nsg_units"] == 5 and result.comparison.loc["NMF", "n_units"] == 6
    assert "NSG) is undefined where NoExplanation was already perfect" in result.summary
