"""sample_texts: counts, thresholds, strata, hard negatives, seeding and errors."""

from __future__ import annotations

import numpy as np
import pytest

from xaimetrics.detection._sampling import sample_texts
from xaimetrics.exceptions import InvalidParameterError


def test_counts_kinds_and_thresholds() -> None:
    rng = np.random.default_rng(0)
    U = rng.random((300, 2))
    s = sample_texts(U, 1, n_top=5, n_quantile=7, n_random=6, n_hard=4, embeddings=rng.normal(size=(300, 5)))
    assert s.counts() == {"top": 5, "quantile": 7, "random": 6, "hard": 4}
    assert len(set(s.indices.tolist())) == len(s.indices)  # never the same text twice
    high, low = s.thresholds
    assert high == pytest.approx(np.quantile(U[:, 1], 0.8)) and low == pytest.approx(
        np.quantile(U[:, 1], 0.5)
    )
    u = U[s.indices, 1]
    assert (u[s.active == 1] > high).all() and (u[s.active == 0] <= low).all()
    assert sorted(u[:5], reverse=True) == list(u[:5]) and u[:5].min() == np.sort(U[U[:, 1] > high, 1])[-5]


def test_quantile_draws_cover_the_strata() -> None:
    U = np.arange(1000, dtype=float)[:, None]
    s = sample_texts(U, 0, n_top=0, n_quantile=5, n_random=1, n_hard=0, n_strata=5)
    active = np.sort(U[U[:, 0] > np.quantile(U[:, 0], 0.8), 0])
    strata = np.array_split(active[::-1], 5)
    assert sorted(int(np.flatnonzero([v in st for st in strata])[0]) for v in s.activations[:5]) == [
        0,
        1,
        2,
        3,
        4,
    ]


def test_hard_negatives_are_the_nearest_inactive_texts() -> None:
    # activating texts near (1, 0); inactive texts at (1, 0.1) (near) and (-1, 0) (far)
    U = np.array([[5.0]] * 4 + [[0.0]] * 8)
    E = np.array([[1.0, 0.0]] * 4 + [[1.0, 0.1]] * 4 + [[-1.0, 0.0]] * 4)
    s = sample_texts(U, 0, n_top=4, n_quantile=0, n_random=0, n_hard=4, embeddings=E, active_quantile=0.5)
    assert sorted(s.indices[s.active == 0].tolist()) == [4, 5, 6, 7]


def test_seeded() -> None:
    U = np.random.default_rng(1).random((200, 3))
    one = sample_texts(U, 0, n_hard=0, seed=3).indices
    assert (one == sample_texts(U, 0, n_hard=0, seed=3).indices).all()
    assert (one != sample_texts(U, 0, n_hard=0, seed=4).indices).any()


def test_errors_name_the_counts() -> None:
    U = np.array([[1.0], [0.0], [0.0], [0.0]])
    with pytest.raises(InvalidParameterError, match="at most the 1 activating texts of concept 0"):
        sample_texts(U, 0, n_top=2, n_quantile=0, n_random=1, n_hard=0)
    with pytest.raises(InvalidParameterError, match="non-activating texts"):
        sample_texts(U, 0, n_top=1, n_quantile=0, n_random=5, n_hard=0)
    with pytest.raises(InvalidParameterError, match="'embeddings' parameter"):
        sample_texts(U, 0, n_top=1, n_quantile=0, n_random=1, n_hard=1)
    with pytest.raises(InvalidParameterError, match="'concept' parameter"):
        sample_texts(U, 1)
    with pytest.raises(InvalidParameterError, match="'inactive_quantile' parameter"):
        sample_texts(U, 0, active_quantile=0.3, inactive_quantile=0.6)
