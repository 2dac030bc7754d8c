from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from xaimetrics.benchmark import (
    copeland_ranks,
    pairwise_differences,
    pivot_scores,
    rank_methods,
    win_matrix,
)
from xaimetrics.exceptions import InvalidParameterError


@pytest.fixture
def scores() -> pd.DataFrame:
    # 5 settings × 4 methods, with ties, a unanimous winner (NMF), a missing cell and an asymmetric pattern.
    return pd.DataFrame(
        {
            "NMF": [0.90, 0.80, 0.70, 0.85, 0.75],
            "SAE": [0.60, 0.80, 0.75, 0.50, np.nan],
            "PCA": [0.60, 0.40, 0.50, 0.55, 0.45],
            "NoExplanation": [0.65, 0.40, 0.50, 0.60, 0.40],
        }
    )


def test_win_matrix_by_hand(scores: pd.DataFrame) -> None:
    P = win_matrix(scores)
    # NMF vs SAE: 4 shared settings: win, tie, loss, win -> (2 + 1 + 0 + 2) / 8.
    assert P.loc["NMF", "SAE"] == pytest.approx(100 * 5 / 8)
    assert P.loc["SAE", "NMF"] == pytest.approx(100 * 3 / 8)
    # NMF beats PCA in all 5 settings: unanimous.
    assert P.loc["NMF", "PCA"] == 100 and P.loc["PCA", "NMF"] == 0
    # PCA vs NoExplanation: loss, tie, tie, loss, win -> (0 + 1 + 1 + 0 + 2) / 10.
    assert P.loc["PCA", "NoExplanation"] == pytest.approx(40.0)
    assert np.allclose(np.diag(P), 50.0)
    # Complementarity: P_ij + P_ji = 100 on every pair.
    assert np.allclose(P.to_numpy() + P.to_numpy().T, 100.0)


def test_copeland_ranks_by_hand(scores: pd.DataFrame) -> None:
    ranks = copeland_ranks(win_matrix(scores))
    # Victories (P >= 50, self included): NMF 4; SAE 3 (self, PCA 62.5, NoExplanation 50);
    # NoExplanation 3 (self, SAE 50, PCA 60); PCA 1 (self). SAE and NoExplanation share rank 2.
    assert ranks.to_dict() == {"NMF": 1, "SAE": 2, "PCA": 4, "NoExplanation": 2}


def test_ties_share_a_rank() -> None:
    tied = pd.DataFrame({"A": [0.5, 0.7], "B": [0.7, 0.5], "C": [0.1, 0.1]})
    assert copeland_ranks(win_matrix(tied)).to_dict() == {"A": 1, "B": 1, "C": 3}


def test_pairs_without_shared_settings_are_nan_and_not_victories() -> None:
    sparse = pd.DataFrame({"A": [0.9, np.nan], "B": [np.nan, 0.2], "C": [0.1, 0.1]})
    P = win_matrix(sparse)
    assert np.isnan(P.loc["A", "B"])
    # A and B never met: neither counts the other as a victory; both beat C.
    assert copeland_ranks(P).to_dict() == {"A": 2, "B": 2, "C": 3}


def test_differences_match_scipy_paired_t_test(scores: pd.DataFrame) -> None:
    d = pairwise_differences(scores)
    shared = scores[["NMF", "SAE"]].dropna()
    diff = shared["NMF"] - shared["SAE"]
    assert d.mean.loc["NMF", "SAE"] == pytest.approx(diff.mean())
    assert d.std.loc["NMF", "SAE"] == pytest.approx(diff.std(ddof=1))
    assert d.pvalue.loc["NMF", "SAE"] == pytest.approx(stats.ttest_rel(shared["NMF"], shared["SAE"]).pvalue)
    assert d.n_settings.loc["NMF", "SAE"] == 4
    assert d.mean.loc["SAE", "NMF"] == pytest.approx(-diff.mean())
    expected = stats.ttest_rel(scores["NMF"], scores["PCA"]).pvalue
    assert d.pvalue.loc["NMF", "PCA"] == pytest.approx(expected)
    assert bool(d.significant.loc["NMF", "PCA"]) is bool(expected < 0.05)
    assert np.isnan(d.pvalue.loc["NMF", "NMF"])


def test_constant_difference_is_the_most_significant_win() -> None:
    """Issue #11, class 5: differences equal up to floating-point noise (0.6-0.5 != 0.7-0.6 in binary)."""
    d = pairwise_differences(pd.DataFrame({"A": [0.6, 0.7, 0.8], "B": [0.5, 0.6, 0.7]}))
    assert d.pvalue.loc["A", "B"] == 0.0 and d.pvalue.loc["B", "A"] == 0.0
    assert d.significant.loc["A", "B"] and d.significant.loc["B", "A"]


@settings(max_examples=200, deadline=None)
@given(
    base=st.lists(st.integers(0, 16), min_size=2, max_size=30),
    step=st.integers(-8, 8),
    noise=st.lists(st.integers(-1, 1), min_size=30, max_size=30),
)
def test_property_p_value_of_constant_and_near_constant_differences(base, step, noise) -> None:
    """Accuracies on a grid of 1/20 (20 EP samples): a constant difference gives p = 0 (or 1 when it is 0),
    and it is the limit of the t-test as the variance of the differences goes to 0."""
    a = np.array(base) / 20 + 0.1
    b = a - step / 20
    d = pairwise_differences(pd.DataFrame({"A": a, "B": b}))
    assert d.pvalue.loc["A", "B"] == (1.0 if step == 0 else 0.0)
    assert bool(d.significant.loc["A", "B"]) is (step != 0)
    jitter = np.array(noise[: len(a)]) * 1e-4
    if step != 0 and np.ptp(jitter) > 0:  # the t-test on nearly constant differences: p close to 0
        p = pairwise_differences(pd.DataFrame({"A": a + jitter, "B": b})).pvalue.loc["A", "B"]
        assert p == pytest.approx(stats.ttest_rel(a + jitter, b).pvalue) and p < 0.05
    if len(a) > 2 and np.ptp(jitter) > 0:  # non-constant differences: exactly scipy's paired t-test
        p = pairwise_differences(pd.DataFrame({"A": a + 100 * jitter, "B": b})).pvalue.loc["A", "B"]
        assert p == pytest.approx(stats.ttest_rel(a + 100 * jitter, b).pvalue)


def test_rank_methods_table(scores: pd.DataFrame) -> None:
    table = rank_methods(scores)
    assert table.index.tolist() == ["NMF", "SAE", "NoExplanation", "PCA"]
    assert table.loc["SAE", "n_settings"] == 4
    assert table.loc["NMF", "win_share"] == pytest.approx((62.5 + 100 + 100) / 3)


def test_pivot_scores_round_trip_and_duplicate_error() -> None:
    long = pd.DataFrame(
        {
            "dataset": ["rt", "rt", "rt", "rt"],
            "seed": [0, 0, 1, 1],
            "method": ["NMF", "PCA", "NMF", "PCA"],
            "score": [0.9, 0.6, 0.7, 0.8],
        }
    )
    wide = pivot_scores(long)
    assert wide.loc[("rt", 1), "PCA"] == 0.8
    with pytest.raises(InvalidParameterError, match="one row per setting and method"):
        pivot_scores(pd.concat([long, long.iloc[:1]]))
    with pytest.raises(InvalidParameterError, match="'method' parameter of pivot_scores"):
        pivot_scores(long, method="extractor")


def test_bad_inputs() -> None:
    with pytest.raises(InvalidParameterError, match="at least two methods"):
        win_matrix(pd.DataFrame({"A": [0.1]}))
    with pytest.raises(InvalidParameterError, match="Build it with pivot_scores"):
        win_matrix(np.zeros((2, 2)))  # type: ignore[arg-type]
