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


def _tied_scores(rng: np.random.Generator, shift: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """P(Yes) of activating ~ Φ(N(shift, 1)) and non-activating ~ Φ(N(0, 1)) texts, rounded to 0.1 (ties)."""
    return (
        np.round(stats.norm.cdf(rng.normal(shift, 1, n)), 1),
        np.round(stats.norm.cdf(rng.normal(0, 1, n)), 1),
    )


@pytest.mark.parametrize("shift", [1.8124, 2.3262])  # Φ(shift/√2) = 0.90, 0.95 before rounding
def test_interval_covers_near_one_with_ties(shift: float) -> None:
    """Issue #34, item 5: the stratified BCa bootstrap missed 11 % (AUROC 0.90) and 17 % (0.95) of 10 + 10 tied
    sets (nominal 5 %)."""
    rng = np.random.default_rng(int(shift * 100))
    truth = auroc(np.r_[np.ones(3000), np.zeros(3000)], np.concatenate(_tied_scores(rng, shift, 3000)))
    active = np.array([1] * 10 + [0] * 10)
    grids = 300
    misses = 0
    for _ in range(grids):
        s = score(active, np.concatenate(_tied_scores(rng, shift, 10)))
        misses += not s.low <= truth <= s.high
        assert 0.0 < s.low <= s.value <= s.high < 1.0 or s.value in (0.0, 1.0)
    assert misses / grids <= 0.05 + 0.025, misses / grids  # 300 sets: MC SE 0.013
