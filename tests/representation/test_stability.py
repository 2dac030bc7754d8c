"""Stability: ARI / NMI equal scikit-learn; dictionary matching is order- and sign-aware."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation import clustering_stability, dictionary_stability, representation_stability
from xaimetrics.representation._stability import match_atoms


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


def _noisy_runs(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 4, size=150)
    runs = [np.where(rng.random(150) < noise, rng.integers(0, 6, size=150), base) for noise in (0.2, 0.5)]
    return [base, *runs, np.repeat(np.arange(3), 50)]  # different numbers of clusters, one unrelated run


@pytest.mark.parametrize("average_method", ["arithmetic", "geometric", "min", "max"])
def test_every_clustering_score_equals_sklearn_over_ordered_pairs(average_method):
    from sklearn import metrics

    runs = _noisy_runs()
    result = clustering_stability(runs, average_method=average_method)
    reference = {
        "ari": metrics.adjusted_rand_score,
        "nmi": lambda a, b: metrics.normalized_mutual_info_score(a, b, average_method=average_method),
        "ami": lambda a, b: metrics.adjusted_mutual_info_score(a, b, average_method=average_method),
        "mi": metrics.mutual_info_score,
        "homogeneity": metrics.homogeneity_score,
        "completeness": metrics.completeness_score,
        "v_measure": metrics.v_measure_score,
        "fowlkes_mallows": metrics.fowlkes_mallows_score,
    }
    assert set(result.scores) == set(reference)
    for name, scorer in reference.items():
        expected = np.array([[scorer(a, b) for b in runs] for a in runs])
        np.testing.assert_allclose(result.pairs[name], expected, rtol=0, atol=1e-12, err_msg=name)
        off = ~np.eye(len(runs), dtype=bool)
        assert result.scores[name] == pytest.approx(expected[off].mean(), abs=1e-12), name
    # the headline fields are the same numbers; homogeneity is not symmetric, its transpose is completeness
    assert result.nmi == result.scores["nmi"] and result.ari == result.scores["ari"]
    assert not np.allclose(result.pairs["homogeneity"], result.pairs["homogeneity"].T)
    np.testing.assert_allclose(result.pairs["homogeneity"], result.pairs["completeness"].T, atol=1e-12)
    assert result.to_dict()["average_method"] == average_method


def test_average_method_changes_nmi_but_not_ari():
    runs = _noisy_runs(1)
    low, high = (clustering_stability(runs, average_method=m) for m in ("max", "min"))
    assert low.nmi < high.nmi and low.ari == high.ari


def test_clustering_stability_refuses_two_dimensional_labelings():
    # flattened, [[0, 1], [1, 0]] and [[1, 0], [0, 1]] would look like the same partition (ARI 1.0)
    with pytest.raises(
        InvalidParameterError, match=r"one 1-D array of labels per run.*run 0 of shape \(2, 2\)"
    ):
        clustering_stability([[[0, 1], [1, 0]], [[1, 0], [0, 1]]])
    with pytest.raises(InvalidParameterError, match="argmax"):
        clustering_stability([np.eye(3), np.eye(3)])
    with pytest.raises(InvalidParameterError, match="'average_method' parameter of clustering_stability"):
        clustering_stability([[0, 1], [1, 0]], average_method="harmonic")


def _interpreto_stability(dictionaries, matching):
    """Interpreto's Stability from its published definition: 1 − mean over pairs (i < j) of the matching
    distance; Hungarian: mean of 1 − cos over an optimal one-to-one assignment (found here by brute force);
    maximum: 1 − mean over the atoms of i of their maximal cosine with the atoms of j. Signed cosines."""
    scores = []
    for x1, x2 in itertools.combinations(dictionaries, 2):
        u = x1 / np.linalg.norm(x1, axis=1, keepdims=True)
        v = x2 / np.linalg.norm(x2, axis=1, keepdims=True)
        cosine = u @ v.T
        if matching == "hungarian":
            best = max(
                sum(cosine[r, c] for r, c in enumerate(perm))
                for perm in itertools.permutations(range(len(x2)))
            )
            distance = 1 - best / len(x1)
        else:
            distance = 1 - cosine.max(axis=1).mean()
        scores.append(1 - distance)
    return float(np.mean(scores))


@pytest.mark.parametrize("matching", ["hungarian", "max_cosine"])
def test_dictionary_stability_equals_interpretos_definition(matching):
    rng = np.random.default_rng(3)
    atoms = rng.normal(size=(5, 8))
    runs = [atoms, atoms[[1, 0, 4, 2, 3]] + 0.4 * rng.normal(size=(5, 8)), rng.normal(size=(5, 8))]
    runs[2][0] = runs[2][1] + 0.01  # two near-identical atoms: the maximum may pick one twice
    result = dictionary_stability(runs, sign_invariant=False, matching=matching)
    assert result.score == pytest.approx(_interpreto_stability(runs, matching), abs=1e-12)
    if matching == "max_cosine":
        hungarian = dictionary_stability(runs, sign_invariant=False).score
        assert result.score > hungarian  # atoms may share their best match
        pairs, similarity = match_atoms(runs[2], runs[0], sign_invariant=False, matching="max_cosine")
        assert pairs[:, 0].tolist() == [0, 1, 2, 3, 4] and similarity.shape == (5,)
    with pytest.raises(InvalidParameterError, match="'matching' parameter of dictionary_stability"):
        dictionary_stability(runs, matching="greedy")


@pytest.mark.parametrize("matching", ["hungarian", "max_cosine"])
def test_interpretos_published_stability_cases(matching):
    # Interpreto's tests/concepts/metrics/test_dictionary_metrics.py: identical → 1, a reversed transposed
    # range → strictly between 0 and 1, orthogonal halves of the identity → 0
    range_up = np.arange(2500, dtype=np.float64).reshape(50, 50)
    range_down_t = np.arange(2500, 0, -1, dtype=np.float64).reshape(50, 50).T
    eye = np.eye(50)

    def score(first, second):
        return dictionary_stability([first, second], sign_invariant=False, matching=matching).score

    assert score(range_up, range_up) == pytest.approx(1.0, abs=1e-4)
    assert 0 < score(range_up, range_down_t) < 1
    assert score(eye[:25], eye[25:]) < 1e-4
