"""Intervals of one setting's score: Wilson for accuracy, Student-t for expected accuracy."""

from __future__ import annotations

import pytest
from scipy import stats

from xaimetrics.consim._intervals import mean_interval, wilson_interval


def test_single_setting_intervals_match_their_closed_forms() -> None:
    # Wilson (1927): (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n), on an asymmetric 3 of 11
    n, k, z = 11, 3, stats.norm.ppf(0.975)
    p = k / n
    centre, half = p + z**2 / (2 * n), z * (p * (1 - p) / n + z**2 / (4 * n**2)) ** 0.5
    expected = ((centre - half) / (1 + z**2 / n), (centre + half) / (1 + z**2 / n))
    assert wilson_interval(k, n) == pytest.approx(expected, rel=1e-9)
    assert wilson_interval(k, n, confidence=0.8)[1] < expected[1]
    values = [0.05, 0.2, 0.9, 0.35, 0.6]
    mean, sem = sum(values) / 5, stats.sem(values)
    half = stats.t.ppf(0.975, 4) * sem
    assert mean_interval(values) == pytest.approx((mean - half, mean + half))
    assert mean_interval([0.99, 0.97, 0.2])[1] == 1.0  # clipped to [0, 1]
    assert all(v != v for v in mean_interval([0.5]))  # one sample: no interval


def test_no_samples_give_no_wilson_interval() -> None:
    assert all(v != v for v in wilson_interval(0, 0))
