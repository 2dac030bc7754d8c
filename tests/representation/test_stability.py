"""Stability: ARI / NMI equal scikit-learn; dictionary matching is order- and sign-aware."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation import (
    clustering_stability,
    dictionary_stability,
    match_atoms,
    representation_stability,
)


def test_clustering_stability_equals_sklearn_pairwise_means():
    rng = np.random.default_rng(0)
    base = rng.integers(0, 4, size=200)
    runs = [
        np.where(rng.random(200) < noise, rng.integers(0, 5, size=200), base) for noise in (0.1, 0.3, 0.6)
    ]
    result = clustering_stability(runs)
    pairs = list(itertools.combinations(runs, 2))
    assert result.ari == pytest.approx(np.mean([adjusted_rand_score(a, b) for a, b in pairs]), abs=1e-12)
    assert result.nmi == pytest.approx(
        np.mean([normalized_mutual_info_score(a, b) for a, b in pairs]), abs=1e-12
    )
    assert result.ari_pairs[0, 2] == pytest.approx(adjusted_rand_score(runs[0], runs[2]))
    assert np.allclose(np.diag(result.nmi_pairs), 1.0) and np.allclose(result.ari_pairs, result.ari_pairs.T)


def test_representation_stability_clusters_each_run_like_the_document():
    rng = np.random.default_rng(1)
    centres = rng.normal(scale=6, size=(5, 4))
    runs = [np.repeat(centres, 20, axis=0) + rng.normal(size=(100, 4)) for _ in range(2)]
    result = representation_stability(runs)
    labels = [KMeans(n_clusters=5, random_state=42, n_init=10).fit_predict(r) for r in runs]
    assert result.ari == pytest.approx(adjusted_rand_score(*labels))
    assert result.ari > 0.9 and result.bands["ari"] == "Excellent"


def test_match_atoms_recovers_a_permutation_with_sign_flips():
    rng = np.random.default_rng(2)
    atoms = rng.normal(size=(6, 40))
    permutation = np.array([3, 0, 5, 1, 4, 2])
    signs = np.array([1, -1, 1, -1, -1, 1])[:, None]
    other = signs * atoms[permutation] * rng.uniform(0.5, 2, size=(6, 1))  # rescaled too
    pairs, similarity = match_atoms(atoms, other)
    assert dict(pairs.tolist()) == {int(p): i for i, p in enumerate(permutation)}
    np.testing.assert_allclose(similarity, 1.0)
    _, signed = match_atoms(atoms, other, sign_invariant=False)
    assert signed.mean() < 0.9  # with signs respected, the flipped atoms no longer match


def test_dictionary_stability_against_random_baseline():
    rng = np.random.default_rng(3)
    atoms = np.abs(rng.normal(size=(8, 50)))
    runs = [atoms + 0.01 * rng.normal(size=atoms.shape) for _ in range(3)]
    stable = dictionary_stability(runs, sign_invariant=False)
    assert stable.score > 0.99 and stable.excess > 0.9
    assert stable.pair_scores.shape == (3, 3) and stable.atom_scores.shape == (8,)
    unrelated = dictionary_stability(
        [np.abs(rng.normal(size=(8, 50))) for _ in range(3)], sign_invariant=False
    )
    # non-negative random atoms are far from orthogonal: the permutation baseline captures that chance level
    assert unrelated.baseline > 0.6 and abs(unrelated.excess) < 0.5
    gaussian = dictionary_stability(runs, baseline="gaussian", n_baseline=3)
    assert gaussian.baseline < 0.5 and gaussian.baseline_kind == "gaussian"


def test_stability_errors():
    with pytest.raises(InvalidParameterError, match="at least two runs"):
        clustering_stability([[0, 1, 1]])
    with pytest.raises(InvalidParameterError, match="same length"):
        clustering_stability([[0, 1, 1], [0, 1]])
    with pytest.raises(InvalidParameterError, match="zero atom"):
        dictionary_stability([np.zeros((2, 3)), np.ones((2, 3))])
    with pytest.raises(InvalidParameterError, match="same n_features"):
        dictionary_stability([np.ones((2, 3)), np.ones((2, 4))])
    with pytest.raises(InvalidParameterError, match="at least n_clusters=5 rows"):
        representation_stability([np.ones((3, 2)), np.ones((3, 2))])
