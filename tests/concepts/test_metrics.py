"""Concept metrics of the ConSim paper, App. D: complexity and faithfulness, standalone and all at once."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.spatial.distance import cosine as cosine_distance
from scipy.stats import entropy

from xaimetrics.concepts import (
    completeness,
    concept_activation_ratio,
    concept_l0,
    concept_metrics,
    decoder_cosine_similarity,
    decoder_covariance,
    global_importance,
    important_concept_ratio,
    latent_l2,
    latent_wasserstein,
    local_importance,
    logits_kl,
    logits_l2,
    n_important_concepts,
    normalize_importance,
)
from xaimetrics.concepts._metrics import ConceptSpaceMetrics
from xaimetrics.exceptions import InvalidParameterError

RNG = np.random.default_rng(7)

# --------------------------------------------------------------------------- complexity


def test_l0_and_activation_ratio_by_hand() -> None:
    U = np.array([[0.0, 2.0, 0.0, 1e-9], [1.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    assert concept_l0(U) == pytest.approx((2 + 2 + 0) / 3)
    assert concept_l0(U, atol=1e-6) == pytest.approx((1 + 2 + 0) / 3)
    assert concept_activation_ratio(U) == pytest.approx(4 / 12)
    assert concept_activation_ratio(torch.as_tensor(U), atol=1e-6) == pytest.approx(3 / 12)
    with pytest.raises(InvalidParameterError, match=r"'atol' parameter of concept_l0 must be a non-negative"):
        concept_l0(U, atol=-1.0)
    with pytest.raises(InvalidParameterError, match=r"'concepts' parameter of concept_l0 must be a 2-D"):
        concept_l0(np.ones(3))


def test_cosine_similarity_matches_scipy_pairwise_mean_with_diagonal() -> None:
    W = RNG.normal(size=(5, 7))
    expected = np.mean([[1 - cosine_distance(W[i], W[j]) for j in range(5)] for i in range(5)])
    assert decoder_cosine_similarity(W) == pytest.approx(expected, rel=1e-12)
    assert decoder_cosine_similarity(torch.as_tensor(W, dtype=torch.float32)) == pytest.approx(
        expected, rel=1e-5
    )
    assert decoder_cosine_similarity(np.eye(4)) == pytest.approx(1 / 4)  # orthogonal atoms: diagonal only
    assert decoder_cosine_similarity(np.ones((3, 2))) == pytest.approx(1.0)


def test_cosine_similarity_dead_atom_counts_as_zero() -> None:
    W = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    s = 1 / math.sqrt(2)
    expected = (1 + 0 + s + 0 + 0 + 0 + s + 0 + 1) / 9
    assert decoder_cosine_similarity(W) == pytest.approx(expected)


def test_covariance_matches_explicit_formula_and_accepts_an_extractor() -> None:
    W = RNG.normal(size=(4, 6))
    centred = W - W.mean(axis=1, keepdims=True)
    cov = np.array([[(centred[i] * centred[j]).sum() / 5 for j in range(4)] for i in range(4)])
    assert decoder_covariance(W) == pytest.approx(cov.mean(), rel=1e-12)

    from xaimetrics.concepts import PCA

    pca = PCA(n_concepts=3).fit(RNG.normal(size=(20, 6)))
    assert decoder_covariance(pca) == pytest.approx(np.cov(pca.components_).mean())
    assert decoder_cosine_similarity(pca) == pytest.approx(1 / 3)  # orthonormal principal directions
    with pytest.raises(InvalidParameterError, match=r"'components' .* unfitted PCA. Call fit first"):
        decoder_covariance(PCA())
    with pytest.raises(InvalidParameterError, match=r"at least 2 features"):
        decoder_covariance(np.ones((3, 1)))


def test_important_concepts_count_and_ratio() -> None:
    Phi_hat = np.array([[0.6, 0.01, -0.34, 0.05, 0.0], [0.02, 0.9, 0.04, -0.04, 0.0]])
    assert n_important_concepts(Phi_hat) == 3  # 0, 1, 2 (|−0.34|); 0.05 is not > τ
    assert important_concept_ratio(Phi_hat) == pytest.approx(3 / 5)
    assert n_important_concepts(Phi_hat, threshold=0.5) == 2
    assert n_important_concepts(torch.as_tensor(Phi_hat), threshold=0.0) == 4


# --------------------------------------------------------------------------- faithfulness


def test_latent_and_logits_l2_by_hand() -> None:
    A = RNG.normal(size=(6, 4))
    A_hat = A + RNG.normal(scale=0.1, size=(6, 4))
    expected = np.mean([np.sum((A[i] - A_hat[i]) ** 2) for i in range(6)])
    assert latent_l2(A, A_hat) == pytest.approx(expected)
    assert latent_l2(torch.as_tensor(A), torch.as_tensor(A_hat)) == pytest.approx(expected)
    assert latent_l2(A, A_hat, relative=True) == pytest.approx(np.sum((A - A_hat) ** 2) / np.sum(A**2))
    assert latent_l2(A, A) == 0.0
    assert math.isnan(latent_l2(np.zeros((2, 2)), np.ones((2, 2)), relative=True))
    assert logits_l2(A, A_hat) == pytest.approx(expected)


def test_logits_kl_matches_torch_and_scipy() -> None:
    logits = RNG.normal(size=(5, 3)) * 3
    concept_logits = logits + RNG.normal(size=(5, 3))
    reference = torch.nn.functional.kl_div(
        torch.as_tensor(concept_logits).log_softmax(dim=1),
        torch.as_tensor(logits).softmax(dim=1),
        reduction="batchmean",
    ).item()
    assert logits_kl(logits, concept_logits) == pytest.approx(reference, rel=1e-10)
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    q = np.exp(concept_logits) / np.exp(concept_logits).sum(axis=1, keepdims=True)
    assert logits_kl(logits, concept_logits) == pytest.approx(
        np.mean([entropy(p[i], q[i]) for i in range(5)])
    )
    assert logits_kl(logits, logits + 4.0) == pytest.approx(0.0, abs=1e-12)  # softmax is shift-invariant
    assert logits_kl(np.array([[1000.0, -1000.0]]), np.array([[999.0, -1000.0]])) == pytest.approx(
        0.0, abs=1e-12
    )


def test_faithfulness_errors() -> None:
    with pytest.raises(
        InvalidParameterError, match=r"'reconstructed' parameter of latent_l2 .* same shape .* \(3, 2\)"
    ):
        latent_l2(np.ones((3, 2)), np.ones((2, 2)))
    with pytest.raises(InvalidParameterError, match=r"'logits' parameter of logits_kl .* non-empty"):
        logits_kl(np.ones((0, 2)), np.ones((0, 2)))
    with pytest.raises(InvalidParameterError, match=r"'concept_logits' .* 2-D"):
        logits_l2(np.ones((3, 2)), np.ones(6))


def test_completeness_by_hand() -> None:
    labels = [0, 1, 2, 2, 1, 0]
    f = [0, 1, 2, 2, 0, 1]  # acc 4/6
    f_c = [0, 1, 1, 2, 0, 1]  # acc 3/6
    expected = (3 / 6 - 1 / 3) / (4 / 6 - 1 / 3)
    assert completeness(f, f_c, labels) == pytest.approx(expected)
    assert completeness(f, f_c, labels, n_classes=4) == pytest.approx((3 / 6 - 1 / 4) / (4 / 6 - 1 / 4))
    assert completeness(f, f, labels) == pytest.approx(1.0)
    # without labels: chance-corrected agreement with f (5 of 6 agree)
    assert completeness(f, f_c) == pytest.approx((5 / 6 - 1 / 3) / (1 - 1 / 3))
    assert completeness(np.array(f), torch.as_tensor(f)) == pytest.approx(1.0)
    # f no better than chance: undefined
    assert math.isnan(completeness([1, 0], [1, 1], labels=[0, 1]))


def test_completeness_errors() -> None:
    with pytest.raises(InvalidParameterError, match=r"'concept_predictions' .* one class per sample \(3"):
        completeness([0, 1, 1], [0, 1])
    with pytest.raises(InvalidParameterError, match=r"'labels' .* one class per sample"):
        completeness([0, 1, 1], [0, 1, 1], labels=[0, 1])
    with pytest.raises(InvalidParameterError, match=r"'predictions' .* non-empty integer array"):
        completeness([], [])
    with pytest.raises(InvalidParameterError, match=r"'predictions' .* integer array"):
        completeness([0.5, 1.0], [0, 1])
    with pytest.raises(InvalidParameterError, match=r"'n_classes' .* larger than every class index \(≥ 3\)"):
        completeness([0, 2], [0, 1], n_classes=2)
    with pytest.raises(InvalidParameterError, match=r"'n_classes' .* integer ≥ 2"):
        completeness([0, 0], [0, 0], n_classes=1)


# --------------------------------------------------------------------------- concept_metrics


@pytest.fixture(scope="module")
def classifier(tiny_split_classifier):
    return tiny_split_classifier(hidden_size=10, seed=1, positive=True, batch_size=8)


TEXTS = [
    "a fine film",
    "dull and far too long",
    "the actors shine in every scene",
    "I want my money back",
    "a quiet, moving story about a family",
    "nothing happens for two hours",
    "funny, sharp and kind",
    "the plot makes no sense at all",
    "beautiful music and a great cast",
    "worst sequel ever",
    "an honest look at grief",
    "it is fine, I guess",
]


def test_concept_metrics_equals_the_standalone_functions(classifier) -> None:
    from xaimetrics.concepts import NMF

    A = classifier.activations(TEXTS)
    extractor = NMF(n_concepts=4, random_state=0, max_iter=500).fit(A)
    labels = np.array([1, 0, 2, 0, 1, 0, 2, 0, 1, 0, 2, 1])
    metrics = concept_metrics(classifier, extractor, TEXTS, labels=labels, batch_size=5)

    U = extractor.encode(A)
    A_hat = extractor.decode(U)
    logits = classifier.logits(TEXTS)
    concept_logits = classifier.logits_from_activations(A_hat)
    phi = local_importance(classifier, U, extractor=extractor)
    predictions_c = concept_logits.argmax(dim=1).numpy()
    Phi_hat = normalize_importance(global_importance(phi, predictions_c, n_classes=3))
    expected = {
        "n_concepts": 4.0,
        "l0": concept_l0(U),
        "activation_ratio": concept_activation_ratio(U),
        "cosine_similarity": decoder_cosine_similarity(extractor.components_),
        "covariance": decoder_covariance(extractor.components_),
        "n_important": float(n_important_concepts(Phi_hat)),
        "important_ratio": important_concept_ratio(Phi_hat),
        "latent_l2": latent_l2(A, A_hat),
        "latent_relative_l2": latent_l2(A, A_hat, relative=True),
        "logits_l2": logits_l2(logits, concept_logits),
        "logits_kl": logits_kl(logits, concept_logits),
        "completeness": completeness(logits.argmax(dim=1).numpy(), predictions_c, labels, n_classes=3),
    }
    result = metrics.to_dict()
    assert list(result) == list(expected)
    for name, value in expected.items():
        assert result[name] == pytest.approx(value, rel=1e-4, abs=1e-6), name
    assert (U == 0).any()  # NMF has exact zeros, so L0 < k is really exercised
    assert metrics.l0 < 4
    # same numbers from precomputed activations (numpy) and with a bare callable g
    from_activations = concept_metrics(
        classifier.logits_from_activations, extractor, A.numpy(), labels=labels
    )
    for name, value in result.items():
        assert from_activations.to_dict()[name] == pytest.approx(value, rel=1e-4, abs=1e-6), name


def test_full_rank_pca_is_perfectly_faithful(classifier) -> None:
    from xaimetrics.concepts import PCA

    A = classifier.activations(TEXTS)
    extractor = PCA().fit(A)
    metrics = concept_metrics(classifier, extractor, A)
    assert isinstance(metrics, ConceptSpaceMetrics)
    assert metrics.n_concepts == extractor.n_concepts_
    assert metrics.latent_relative_l2 < 1e-10
    assert metrics.logits_l2 < 1e-10 and metrics.logits_kl < 1e-10
    assert metrics.completeness == pytest.approx(1.0)  # no labels: agreement with f
    assert metrics.cosine_similarity == pytest.approx(1 / extractor.n_concepts_, rel=1e-5)
    assert metrics.activation_ratio == pytest.approx(1.0)  # dense concepts
    assert 1 <= metrics.n_important <= metrics.n_concepts
    assert metrics.important_ratio == pytest.approx(metrics.n_important / metrics.n_concepts)


def test_concept_metrics_errors(classifier) -> None:
    from xaimetrics.concepts import PCA

    A = classifier.activations(TEXTS)
    extractor = PCA(n_concepts=3).fit(A)
    with pytest.raises(
        InvalidParameterError, match=r"'labels' parameter of concept_metrics .* \(12\). Got 3 labels"
    ):
        concept_metrics(classifier, extractor, A, labels=[0, 1, 1])
    with pytest.raises(
        InvalidParameterError, match=r"'model' .* activations\(texts\) when 'inputs' are texts"
    ):
        concept_metrics(classifier.logits_from_activations, extractor, TEXTS)
    with pytest.raises(InvalidParameterError, match=r"'inputs' parameter of concept_metrics .* non-empty"):
        concept_metrics(classifier, extractor, [])
    with pytest.raises(InvalidParameterError, match=r"'inputs' parameter of concept_metrics .* 2-D"):
        concept_metrics(classifier, extractor, np.ones(10))


def test_latent_wasserstein_equals_scipy_per_feature_mean() -> None:
    from scipy.stats import wasserstein_distance

    A = RNG.normal(size=(40, 5))
    A[:10, 0] = 0.0  # ties
    A_hat = np.round(A * 0.8 + RNG.normal(scale=0.3, size=(40, 5)), 1)  # ties in the reconstruction too
    expected = np.mean([wasserstein_distance(A[:, d], A_hat[:, d]) for d in range(5)])
    assert latent_wasserstein(A, A_hat) == pytest.approx(expected, abs=1e-12)
    assert latent_wasserstein(torch.as_tensor(A), torch.as_tensor(A_hat)) == pytest.approx(
        expected, abs=1e-12
    )
    assert latent_wasserstein(A, A[::-1]) == 0.0  # a distribution metric: the order of samples is irrelevant
    assert latent_wasserstein(A, A + 2.0) == pytest.approx(2.0)
    with pytest.raises(InvalidParameterError, match=r"'reconstructed' parameter of latent_wasserstein"):
        latent_wasserstein(np.ones((3, 2)), np.ones((2, 2)))
