"""MuFidelity (Bhatt et al., 2020)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import pearsonr

from fidelity.fidelity_reference import make_linear
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.fidelity import MuFidelity


def test_exact_contributions_correlate_perfectly_and_their_opposite_negatively():
    weights = [6.0, -5.0, 4.0, 3.0, -2.0, 1.0, 0.5, 0.25]
    model = make_linear(weights, bias=0.3)
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(0))
    contributions = x * torch.tensor(weights)
    metric = MuFidelity(model, x, subset_percent=0.4, nb_samples=30)
    np.testing.assert_allclose(metric.evaluate_samples(contributions), 1.0, atol=1e-9)
    np.testing.assert_allclose(metric.evaluate_samples(-contributions), -1.0, atol=1e-9)
    # Pearson correlation is invariant to a positive affine map of the subset sums
    np.testing.assert_allclose(metric.evaluate_samples(3 * contributions + 1), 1.0, atol=1e-9)


def test_matches_pearson_on_the_drawn_subsets(tabular_task):
    model, x = tabular_task
    x = x[:5]
    e = torch.randn(x.shape, generator=torch.Generator().manual_seed(1))
    metric = MuFidelity(model, x, subset_percent=0.25, nb_samples=25, activation="softmax", random_state=7)
    values = metric.evaluate_samples(e)
    predicted = model(x).argmax(1)
    for i in range(5):
        drawn = metric._subsets(np.full(5, 12))[i].numpy()  # the seeded subsets of sample i, (25, 3)
        subsets = np.zeros((25, 12), dtype=bool)
        np.put_along_axis(subsets, drawn, True, axis=1)
        assert (subsets.sum(1) == 3).all()
        perturbed = x[i].repeat(25, 1) * torch.from_numpy(~subsets)
        with torch.no_grad():
            clean = model(x[i : i + 1]).softmax(-1)[0, predicted[i]]
            drops = clean - model(perturbed).softmax(-1)[:, predicted[i]]
        sums = subsets @ e[i].double().numpy()
        assert values[i] == pytest.approx(pearsonr(sums, drops.double().numpy()).statistic, abs=1e-5)


def test_seeded_batch_size_independent_and_drops_reused(tabular_task):
    model, x = tabular_task
    e = torch.randn(x.shape, generator=torch.Generator().manual_seed(2))
    a = MuFidelity(model, x, nb_samples=20, batch_size=7, random_state=1)
    b = MuFidelity(model, x, nb_samples=20, batch_size=None, random_state=1)
    c = MuFidelity(model, x, nb_samples=20, random_state=2)
    np.testing.assert_allclose(a.evaluate_samples(e), b.evaluate_samples(e), atol=1e-6)
    assert not np.allclose(a.evaluate_samples(e), c.evaluate_samples(e))
    assert len(a._drop_cache) == 1
    a.evaluate(-e)
    assert len(a._drop_cache) == 1


def test_too_many_subsets_are_refused_with_advice():
    metric = MuFidelity(make_linear([1.0] * 4), torch.ones(2, 4), nb_samples=2**26, subset_percent=0.5)
    with pytest.raises(InvalidParameterError, match=r"Pass grid_size \(images\), fewer nb_samples"):
        metric.evaluate(torch.randn(2, 4))


def test_grid_cells_on_images(small_cnn):
    x = torch.rand(2, 3, 8, 8, generator=torch.Generator().manual_seed(0))
    e = torch.rand(2, 8, 8, generator=torch.Generator().manual_seed(1))
    metric = MuFidelity(small_cnn, x, grid_size=4, nb_samples=12)
    values = metric.evaluate_samples(e)
    assert values.shape == (2,) and np.all(np.abs(values) <= 1)
    # an explanation constant inside each 2x2 cell is equivalent to its cell sums
    blocky = e.reshape(2, 4, 2, 4, 2).mean((2, 4)).repeat_interleave(2, 1).repeat_interleave(2, 2)
    cells = MuFidelity(small_cnn, x, grid_size=4, nb_samples=12).evaluate_samples(blocky)
    assert np.all(np.isfinite(cells))


def test_constant_explanation_is_undefined():
    metric = MuFidelity(
        make_linear([1.0, 2.0, 3.0, 4.0]), torch.ones(2, 4), nb_samples=10, subset_percent=0.5
    )
    with pytest.raises(
        InvalidParameterError, match=r"a constant attribution sum or output drop for every input"
    ):
        metric.evaluate(torch.ones(2, 4))
    mixed = torch.tensor([[1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0]])
    with pytest.warns(UserWarning, match=r"undefined .* for 1 of 2 inputs"):
        assert metric.evaluate(mixed) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"subset_percent": 1.0}, r"'subset_percent' parameter of MuFidelity must be a number in \]0, 1\["),
        ({"nb_samples": 1}, r"'nb_samples' parameter of MuFidelity must be an integer ≥ 2"),
        ({"grid_size": 3}, r"'grid_size' parameter of MuFidelity must be None unless the inputs are images"),
        ({"random_state": -1}, r"'random_state' parameter of MuFidelity must be an integer ≥ 0"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        MuFidelity(make_linear([1.0, 2.0]), torch.ones(2, 2), **kwargs)


def test_random_state_seeds_the_subsets():
    model, x = make_linear([1.0, 2.0, 3.0, 4.0]), torch.rand(3, 4, generator=torch.Generator().manual_seed(0))
    explanation = torch.tensor([[4.0, 1.0, 3.0, 2.0]]).repeat(3, 1)
    first = MuFidelity(model, x, nb_samples=10, random_state=5).evaluate_samples(explanation)
    again = MuFidelity(model, x, nb_samples=10, random_state=5).evaluate_samples(explanation)
    other = MuFidelity(model, x, nb_samples=10, random_state=6).evaluate_samples(explanation)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    with pytest.raises(TypeError, match="seed"):
        MuFidelity(model, x, seed=5)
