"""Counterfactual consistency: the document's loop written literally, and the concept-space instance."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation import concept_counterfactual_consistency, counterfactual_consistency

DELTAS = (-0.5, -0.25, 0.25, 0.5)


def doc_reference(texts, dimension, encoder, decoder, scorers, expected_shift):
    """The document's pseudocode, one text and one delta at a time."""
    consistency_scores = []
    for text in texts:
        z_orig = np.asarray(encoder([text])[0], dtype=float)
        orig = decoder(z_orig[None, :])
        score = 0.0
        for delta in DELTAS:
            z_mod = z_orig.copy()
            z_mod[dimension] += delta
            z_mod = np.clip(z_mod, -1, 1)
            mod = decoder(z_mod[None, :])
            expected = expected_shift(dimension, delta)
            actual = {p: float(f(mod)[0] - f(orig)[0]) for p, f in scorers.items()}
            e = np.array([expected.get(p, 0.0) for p in scorers])
            a = np.array([actual[p] for p in scorers])
            score += 0.0 if not a.any() else float(e @ a / (np.linalg.norm(e) * np.linalg.norm(a)))
        consistency_scores.append(score / 4)
    return float(np.mean(consistency_scores))


def test_generic_consistency_equals_the_documents_loop():
    rng = np.random.default_rng(0)
    codes = {f"t{i}": rng.uniform(-0.9, 0.9, size=3) for i in range(6)}
    texts = list(codes)

    def encoder(batch):
        return np.stack([codes[t] for t in batch])

    def decoder(z):
        return np.tanh(z @ np.array([[1.0, 0.2], [0.3, -1.0], [0.0, 0.5]]))

    def expected(dim, delta):
        return {"sentiment": delta, "formality": abs(delta)} if dim == 0 else {"formality": -delta}

    scorers = {"sentiment": lambda out: out[:, 0], "formality": lambda out: out[:, 1] ** 2}
    result = counterfactual_consistency(
        texts, encoder=encoder, decoder=decoder, scorers=scorers, expected_shift=expected
    )
    for dim in range(3):
        assert result.scores[dim] == pytest.approx(
            doc_reference(texts, dim, encoder, decoder, scorers, expected)
        )
    assert result.per_sample.shape == (3, 6) and result.per_delta.shape == (3, 4)
    assert result.scores[0] == pytest.approx(result.per_sample[0].mean())


def test_no_change_scores_zero_and_no_expectation_is_undefined():
    def encoder(batch):  # already at the clip bound
        return np.array([[1.0, 0.0]] * len(batch))

    scorers = {"p": lambda z: z[:, 0]}
    result = counterfactual_consistency(
        ["x"],
        encoder=encoder,
        decoder=lambda z: z,
        scorers=scorers,
        expected_shift=lambda dim, delta: {"p": delta} if dim == 0 else {},
        deltas=(0.25, 0.5),
    )
    assert result.scores[0] == 0.0  # z stays at 1 after clipping: no effect
    assert math.isnan(result.scores[1]) and 1 in result.undefined


def test_generic_errors():
    kwargs = {
        "encoder": lambda b: np.zeros((len(b), 2)),
        "decoder": lambda z: z,
        "scorers": {"p": lambda z: z[:, 0]},
        "expected_shift": lambda d, s: {"q": s},
    }
    with pytest.raises(InvalidParameterError, match=r"properties among the scorers \['p'\]"):
        counterfactual_consistency(["a"], **kwargs)
    with pytest.raises(InvalidParameterError, match="non-zero shifts"):
        counterfactual_consistency(["a"], **{**kwargs, "deltas": (0.0, 0.5)})
    with pytest.raises(InvalidParameterError, match=r"indices in \[0, 2\)"):
        counterfactual_consistency(["a"], **kwargs, dimensions=[2])
    with pytest.raises(InvalidParameterError, match="non-empty sequence of inputs"):
        counterfactual_consistency([], **kwargs)


class LinearExtractor:
    """t(a) = a @ P⁺, t⁻¹(u) = u @ P, for numpy arrays and torch tensors."""

    def __init__(self, components: np.ndarray) -> None:
        self.components_ = components

    def encode(self, A):
        return np.asarray(A) @ np.linalg.pinv(self.components_)

    def decode(self, U):
        if isinstance(U, torch.Tensor):
            return U @ torch.as_tensor(self.components_, dtype=U.dtype)
        return np.asarray(U) @ self.components_


def test_concept_instance_compares_logit_changes_with_the_sign_of_global_importance():
    rng = np.random.default_rng(1)
    components = rng.normal(size=(3, 5))  # 3 concepts, 5 features
    head = rng.normal(size=(5, 3))  # 3 classes
    head_t = torch.as_tensor(head, dtype=torch.float64)

    def g(A):
        return torch.as_tensor(A, dtype=torch.float64) @ head_t

    U = rng.uniform(0.5, 2.0, size=(40, 3))  # positive concepts, so sign(Φ) = sign(M) for predicted classes
    A = U @ components
    extractor = LinearExtractor(components)
    result = concept_counterfactual_consistency(g, extractor, A)

    M = components @ head  # g∘t⁻¹ is u ↦ u @ M
    predicted = (U @ M).argmax(axis=1)
    for j in range(3):
        phi = np.array(
            [(U[predicted == c, j] * M[j, c]).mean() if (predicted == c).any() else 0.0 for c in range(3)]
        )
        expected = np.sign(phi)
        cosine = M[j] @ expected / (np.linalg.norm(M[j]) * np.linalg.norm(expected))
        assert result.scores[j] == pytest.approx(cosine, abs=1e-9)  # the same for every sample and delta
    np.testing.assert_allclose(result.scales, U.std(axis=0), rtol=1e-9)

    Phi = np.array([[1.0, 0.0, -2.0], [-1.0, 0.0, 1.0], [0.5, 0.0, 0.0]])
    explicit = concept_counterfactual_consistency(g, extractor, A, importance=Phi, expected="importance")
    for j in (0, 2):
        cosine = M[j] @ Phi[:, j] / (np.linalg.norm(M[j]) * np.linalg.norm(Phi[:, j]))
        assert explicit.scores[j] == pytest.approx(cosine, abs=1e-9)
    assert math.isnan(explicit.scores[1]) and 1 in explicit.undefined


def test_concept_instance_errors():
    extractor = LinearExtractor(np.eye(2))
    with pytest.raises(InvalidParameterError, match=r"shape \(n_classes, n_concepts=2\)"):
        concept_counterfactual_consistency(
            lambda A: A, extractor, np.ones((3, 2)), importance=np.ones((2, 3))
        )
    with pytest.raises(InvalidParameterError, match="'delta_scale' parameter"):
        concept_counterfactual_consistency(lambda A: A, extractor, np.ones((3, 2)), delta_scale="big")
