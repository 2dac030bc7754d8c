"""AUROC, its interval and p-value, balanced accuracy, answer parsing."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from xaimetrics.detection import auroc, balanced_accuracy, score
from xaimetrics.detection._scoring import parse_yes
from xaimetrics.exceptions import InvalidParameterError


def test_auroc_equals_mann_whitney_u_over_n1_n0_with_ties() -> None:
    rng = np.random.default_rng(0)
    active = np.array([1] * 13 + [0] * 9)
    values = np.round(rng.random(22), 1)  # many ties
    u = stats.mannwhitneyu(values[active == 1], values[active == 0]).statistic
    assert auroc(active, values) == pytest.approx(u / (13 * 9))


def test_interval_covers_the_point_and_is_seeded() -> None:
    rng = np.random.default_rng(1)
    active = np.array([1] * 10 + [0] * 10)
    p = np.r_[rng.normal(0.6, 0.2, 10), rng.normal(0.4, 0.2, 10)]
    one, two = score(active, p, seed=3), score(active, p, seed=3)
    assert one.low <= one.value <= one.high and (one.low, one.high) == (two.low, two.high)
    assert one.low >= 0.0 and one.high <= 1.0 and one.high - one.low > 0.1
    assert one.p_value == pytest.approx(stats.mannwhitneyu(p[:10], p[10:], alternative="greater").pvalue)


def test_interval_coverage_under_a_known_auroc() -> None:
    # activating ~ N(1, 1), non-activating ~ N(0, 1): AUROC = Φ(1 / √2) ≈ 0.760
    truth = stats.norm.cdf(1 / np.sqrt(2))
    rng = np.random.default_rng(7)
    active = np.array([1] * 20 + [0] * 20)
    hits = 0
    for seed in range(80):
        p = np.r_[rng.normal(1, 1, 20), rng.normal(0, 1, 20)]
        s = score(active, p, n_resamples=500, seed=seed)
        hits += s.low <= truth <= s.high
    assert hits / 80 >= 0.85  # nominal 0.95; 80 draws: a coverage of 0.85 is > 3 SE below


def test_balanced_accuracy_from_text_when_a_probability_is_missing() -> None:
    s = score([1, 1, 0, 0], [0.9, None, 0.2, 0.7], [True, True, False, True])
    assert s.metric == "balanced_accuracy" and s.value == 0.75 and np.isnan(s.low) and np.isnan(s.auroc)
    assert balanced_accuracy([1, 0], [None, None]) == 0.0


def test_parse_yes() -> None:
    assert [parse_yes(t) for t in ("Sample_0: Yes", "Sample_0:  **no**", "YES.", "nope", "")] == [
        True, False, True, None, None,
    ]  # fmt: skip


def test_errors() -> None:
    with pytest.raises(InvalidParameterError, match="both activating"):
        auroc([1, 1], [0.1, 0.2])
    with pytest.raises(InvalidParameterError, match="0/1 labels"):
        auroc([2, 0], [0.1, 0.2])
    with pytest.raises(InvalidParameterError, match="'p_yes' parameter of score"):
        score([1, 0], [0.5])
