from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xaimetrics.benchmark import rank_methods
from xaimetrics.benchmark._ranking import copeland_ranks, pairwise_differences, pivot_scores, win_matrix
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


def test_differences_use_the_exact_sign_flip_test_and_holm(scores: pd.DataFrame) -> None:
    from statsmodels.stats.multitest import multipletests

    from xaimetrics.stats import sign_flip_test

    d = pairwise_differences(scores)
    shared = scores[["NMF", "SAE"]].dropna()
    diff = shared["NMF"] - shared["SAE"]
    assert d.mean.loc["NMF", "SAE"] == pytest.approx(diff.mean())
    assert d.std.loc["NMF", "SAE"] == pytest.approx(diff.std(ddof=1))
    assert d.pvalue.loc["NMF", "SAE"] == pytest.approx(sign_flip_test(diff))
    assert d.n_settings.loc["NMF", "SAE"] == 4
    assert d.mean.loc["SAE", "NMF"] == pytest.approx(-diff.mean())
    assert d.pvalue.loc["NMF", "PCA"] == pytest.approx(0.0625)  # 5 wins out of 5: the exact floor
    pairs = np.triu_indices(4, k=1)
    np.testing.assert_allclose(
        d.pvalue_adjusted.to_numpy()[pairs], multipletests(d.pvalue.to_numpy()[pairs], method="holm")[1]
    )
    assert not d.significant.loc["NMF", "PCA"] and np.isnan(d.pvalue.loc["NMF", "NMF"])


def test_a_constant_difference_gets_the_exact_floor_not_zero() -> None:
    """W2: p = 0 for two seeds that agree is a claim no data can support; the exact test says 2/2ⁿ."""
    d = pairwise_differences(pd.DataFrame({"A": [0.6, 0.7, 0.8], "B": [0.5, 0.6, 0.7]}))
    assert d.pvalue.loc["A", "B"] == pytest.approx(0.25) and d.pvalue.loc["B", "A"] == pytest.approx(0.25)
    assert not d.significant.loc["A", "B"]


@settings(max_examples=100, deadline=None)
@given(
    base=st.lists(st.integers(0, 16), min_size=2, max_size=12),
    step=st.integers(-8, 8),
)
def test_property_constant_differences_reach_exactly_the_minimum_p(base, step) -> None:
    """Accuracies on a grid of 1/20 (20 EP samples): a constant difference gives 2/2ⁿ (1 when it is 0)."""
    a = np.array(base) / 20 + 0.1
    b = a - step / 20
    d = pairwise_differences(pd.DataFrame({"A": a, "B": b}))
    expected = 1.0 if step == 0 else min(1.0, 2 / 2 ** len(a))
    assert d.pvalue.loc["A", "B"] == pytest.approx(expected)


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
