"""The similarity functions against scipy row by row, and SSIM against scikit-image's published algorithm."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats
from scipy.ndimage import uniform_filter
from scipy.spatial import distance

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.fidelity import (
    correlation_kendall_tau,
    correlation_pearson,
    correlation_spearman,
    distance_chebyshev,
    distance_euclidean,
    distance_manhattan,
    lipschitz_constant,
    mse,
    ssim,
)


@pytest.fixture
def pairs():
    """Asymmetric batches with ties (rounded values) and a 2-D feature layout."""
    rng = np.random.default_rng(3)
    a = np.round(rng.normal(size=(6, 3, 5)), 1)
    b = np.round(a + rng.normal(scale=0.8, size=a.shape), 1)
    b[2] = -a[2]  # a perfectly anti-correlated row
    return a, b


def test_correlations_equal_scipy_row_by_row(pairs):
    a, b = pairs
    fa, fb = a.reshape(6, -1), b.reshape(6, -1)
    pearson = [stats.pearsonr(x, y).statistic for x, y in zip(fa, fb, strict=True)]
    spearman = [stats.spearmanr(x, y).statistic for x, y in zip(fa, fb, strict=True)]
    kendall = [stats.kendalltau(x, y).statistic for x, y in zip(fa, fb, strict=True)]
    np.testing.assert_allclose(correlation_pearson(a, b), pearson, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(correlation_spearman(a, b), spearman, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(correlation_kendall_tau(a, b), kendall, rtol=1e-12, atol=1e-12)
    assert correlation_spearman(a, b)[2] == pytest.approx(-1.0)


def test_distances_equal_scipy_and_torch_inputs(pairs):
    a, b = pairs
    fa, fb = a.reshape(6, -1), b.reshape(6, -1)
    euclid = [distance.euclidean(x, y) for x, y in zip(fa, fb, strict=True)]
    np.testing.assert_allclose(distance_euclidean(torch.tensor(a), torch.tensor(b)), euclid, rtol=1e-12)
    np.testing.assert_allclose(
        distance_manhattan(a, b), [distance.cityblock(x, y) for x, y in zip(fa, fb, strict=True)], rtol=1e-12
    )
    np.testing.assert_allclose(
        distance_chebyshev(a, b), [distance.chebyshev(x, y) for x, y in zip(fa, fb, strict=True)], rtol=1e-12
    )
    np.testing.assert_allclose(mse(a, b), ((fa - fb) ** 2).mean(axis=1), rtol=1e-12)


def test_constant_row_is_undefined_and_nan_propagates():
    a = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, np.nan]])
    b = np.array([[1.0, 2.0, 3.0], [3.0, 1.0, 2.0]])
    for function in (correlation_pearson, correlation_spearman, correlation_kendall_tau):
        assert np.isnan(function(a, b)).all(), function.__name__
    assert np.isnan(distance_euclidean(a, b)[1])


def test_lipschitz_is_quantus_definition():
    # Quantus: manhattan(a, b) / (euclidean(c, d) + 1e-10), by hand for two rows
    a = np.array([[1.0, 2.0, 0.5], [0.0, 0.0, 1.0]])
    b = np.array([[2.0, 0.0, 0.5], [0.0, 3.0, 1.0]])
    c = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    d = np.array([[3.0, 4.0, 0.0], [1.0, 1.0, 3.0]])
    np.testing.assert_allclose(lipschitz_constant(a, b, c, d), [3 / 5, 3 / 2], rtol=1e-9)
    np.testing.assert_allclose(
        lipschitz_constant(a, b, c, d, norm_numerator="euclidean", norm_denominator="chebyshev"),
        [np.sqrt(5) / 4, 3 / 2],
        rtol=1e-9,
    )
    with pytest.raises(InvalidParameterError, match="'norm_numerator' parameter of lipschitz_constant"):
        lipschitz_constant(a, b, c, d, norm_numerator="cosine")


def _skimage_ssim(x, y, data_range, win=7, k1=0.01, k2=0.03):
    """scikit-image's structural_similarity on one 2-D image (uniform window, sample covariance, cropped mean)."""
    ux, uy = uniform_filter(x, win), uniform_filter(y, win)
    factor = win * win / (win * win - 1)
    vx = factor * (uniform_filter(x * x, win) - ux * ux)
    vy = factor * (uniform_filter(y * y, win) - uy * uy)
    vxy = factor * (uniform_filter(x * y, win) - ux * uy)
    c1, c2 = (k1 * data_range) ** 2, (k2 * data_range) ** 2
    index = ((2 * ux * uy + c1) * (2 * vxy + c2)) / ((ux * ux + uy * uy + c1) * (vx + vy + c2))
    pad = (win - 1) // 2
    return index[pad:-pad, pad:-pad].mean()


def test_ssim_equals_skimage_algorithm_and_channels_average():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 2, 12, 9))
    b = a + rng.normal(scale=0.6, size=a.shape)
    b[1] *= 3.0  # a different data range per image
    ranges = [max(a[i].max(), b[i].max()) - min(a[i].min(), b[i].min()) for i in range(3)]
    expected = [np.mean([_skimage_ssim(a[i, c], b[i, c], ranges[i]) for c in range(2)]) for i in range(3)]
    np.testing.assert_allclose(ssim(a, b), expected, atol=1e-12)
    single = [_skimage_ssim(a[i, 0], b[i, 0], 2.0, win=5) for i in range(3)]
    np.testing.assert_allclose(ssim(a[:, 0], b[:, 0], win_size=5, data_range=2.0), single, atol=1e-12)
    assert ssim(np.ones((1, 7, 7)), np.ones((1, 7, 7)))[0] == 1.0


def test_errors_name_the_argument():
    with pytest.raises(InvalidParameterError, match="'b' parameter of distance_euclidean must be the shape"):
        distance_euclidean(np.zeros((2, 3)), np.zeros((2, 4)))
    with pytest.raises(InvalidParameterError, match="'a' parameter of mse must be a batch"):
        mse(np.zeros(3), np.zeros(3))
    with pytest.raises(
        InvalidParameterError, match="'win_size' parameter of ssim must be at most the image side"
    ):
        ssim(np.zeros((1, 5, 5)), np.zeros((1, 5, 5)))
    with pytest.raises(InvalidParameterError, match="'a' parameter of ssim must be images"):
        ssim(np.zeros((2, 5)), np.zeros((2, 5)))
