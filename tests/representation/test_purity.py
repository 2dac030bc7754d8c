"""Dimension purity against np.corrcoef; constant factors and dimensions."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation import dimension_purity


def test_purity_is_max_over_sum_of_absolute_pearson_correlations():
    rng = np.random.default_rng(0)
    factors = rng.normal(size=(60, 3))
    z = np.stack([factors[:, 0] + 0.1 * rng.normal(size=60), factors @ [0.5, -0.5, 0.4]], axis=1)
    result = dimension_purity(z, pd.DataFrame(factors, columns=["tone", "tense", "topic"]))
    for d in range(2):
        corr = np.array([np.corrcoef(z[:, d], factors[:, j])[0, 1] for j in range(3)])
        assert result.purity[d] == pytest.approx(np.abs(corr).max() / np.abs(corr).sum(), abs=1e-12)
        np.testing.assert_allclose(result.correlations[d], corr, atol=1e-12)
    assert result.dominant_factor[0] == "tone" and result.purity[0] > 0.7 and result.bands[0] == "High"


def test_class_labels_become_indicator_factors():
    z = np.array([[0.1], [0.9], [0.2], [0.8]])
    binary = dimension_purity(z, np.array([0, 1, 0, 1]))
    assert binary.factor_names == ["class=1"] and binary.purity[0] == 1.0
    multi = dimension_purity(
        np.array([[0.0], [1.0], [2.0], [0.1], [1.1], [2.1]]), np.array([0, 1, 2, 0, 1, 2])
    )
    assert multi.factor_names == ["class=0", "class=1", "class=2"]


def test_constant_factor_is_an_error_unless_dropped():
    z = np.array([[1.0], [2.0], [3.0]])
    factors = np.array([[1, 5], [2, 5], [4, 5]])
    with pytest.raises(InvalidParameterError, match=r"constant factor\(s\) \['1'\]"):
        dimension_purity(z, factors)
    dropped = dimension_purity(z, factors, constant_factors="drop")
    assert dropped.dropped_factors == ["1"] and dropped.purity[0] == 1.0
    with pytest.raises(InvalidParameterError, match="at least one varying factor"):
        dimension_purity(z, np.ones((3, 2)), constant_factors="drop")


def test_constant_dimension_has_no_purity():
    z = np.array([[1.0, 0.5], [2.0, 0.5], [3.0, 0.5]])
    result = dimension_purity(z, np.array([[1.0], [3.0], [2.0]]))
    assert math.isnan(result.purity[1]) and "constant dimension" in result.undefined[1]
    assert result.dominant_factor[1] is None and result.to_dict()["purity"][1] is None


def test_purity_shape_errors():
    with pytest.raises(InvalidParameterError, match=r"shape \(n_samples=3, n_factors\)"):
        dimension_purity(np.ones((3, 2)), np.ones((4, 2)))
    with pytest.raises(InvalidParameterError, match="at least 2 samples"):
        dimension_purity(np.ones((1, 2)), np.ones((1, 1)))
