"""Complexity and Sparseness against their published definitions (Xplique's formulas, scipy's entropy)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import entropy

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.fidelity import Complexity, Sparseness, complexity, sparseness


def _xplique_entropy(x, eps=1e-8):
    p = np.abs(x) / (np.abs(x).sum() + eps)
    return -(p * np.log(p + eps)).sum()


def _xplique_gini(x, eps=1e-8):
    x = np.sort(np.abs(x) / (np.abs(x).sum() + eps))
    n = x.size
    return 2 * (np.arange(1, n + 1) * x).sum() / (n * x.sum() + eps) - (n + 1) / n


@pytest.fixture
def explanations():
    rng = np.random.default_rng(1)
    e = np.round(rng.normal(size=(5, 3, 4, 6)), 1)  # images (n, C, H, W) with ties and signs
    e[2] = 0.0
    e[2, :, 1, 2] = 2.0  # one pixel only
    return e


def test_complexity_is_entropy_of_channel_mean_abs(explanations):
    maps = np.abs(explanations).mean(axis=1).reshape(5, -1)
    expected = [entropy(m) for m in maps]
    np.testing.assert_allclose(complexity(explanations), expected, rtol=1e-12)
    np.testing.assert_allclose(
        complexity(torch.tensor(explanations)), [_xplique_entropy(m) for m in maps], atol=1e-6
    )
    assert complexity(explanations)[2] == 0.0
    assert Complexity().evaluate(explanations) == pytest.approx(np.mean(expected))
    assert Complexity.higher_is_better is False


def test_sparseness_is_gini_by_hand(explanations):
    maps = np.abs(explanations).mean(axis=1).reshape(5, -1)
    np.testing.assert_allclose(sparseness(explanations), [_xplique_gini(m) for m in maps], atol=1e-6)
    # one non-zero feature out of 24: the maximum 1 - 1/n
    assert sparseness(explanations)[2] == pytest.approx(1 - 1 / 24)
    # by hand: |e| = (0, 1, 1, 2) sorted, G = 2 (2 + 3 + 8) / (4 * 4) - 5/4 = 0.375
    assert sparseness([[1.0, 0.0, -2.0, 1.0]])[0] == pytest.approx(0.375)
    assert Sparseness().evaluate(explanations) == pytest.approx(sparseness(explanations).mean())


def test_texts_of_different_lengths_and_concept_importances():
    texts = [np.array([0.5, -0.5]), np.array([1.0, 0.0, 0.0]), np.array([0.2, 0.3, 0.1, 0.4])]
    np.testing.assert_allclose(complexity(texts), [np.log(2), 0.0, entropy([0.2, 0.3, 0.1, 0.4])], rtol=1e-12)
    np.testing.assert_allclose(sparseness(texts), [0.0, 2 / 3, _xplique_gini(texts[2])], atol=1e-6)
    importances = np.array([[0.6, -0.3, 0.1], [0.0, 0.0, 0.0]])  # concept importances (n, k)
    values = complexity(importances)
    assert values[0] == pytest.approx(entropy([0.6, 0.3, 0.1]))
    assert np.isnan(values[1])  # undefined for an all-zero explanation
    assert Complexity().evaluate(importances) == pytest.approx(values[0])


def test_errors():
    with pytest.raises(InvalidParameterError, match="'explanations' parameter of complexity must be finite"):
        complexity([[1.0, np.nan]])
    with pytest.raises(
        InvalidParameterError, match="'explanations' parameter of sparseness must be an array"
    ):
        sparseness([1.0, 2.0])
