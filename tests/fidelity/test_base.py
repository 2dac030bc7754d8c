"""The exact definitions shared by the metrics: order and ties, step counts, normalised area."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import xaimetrics.fidelity as fidelity
from fidelity.fidelity_reference import reference_counts
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.fidelity._base import feature_ranks, n_perturbed, step_counts, trapezoid_auc


def test_all_is_complete_and_sorted():
    public = {name for name in dir(fidelity) if not name.startswith("_") and name != "annotations"}
    assert fidelity.__all__ == sorted(fidelity.__all__)
    assert public == set(fidelity.__all__)


def test_ties_are_broken_by_feature_index_even_for_long_runs_of_ties():
    # numpy's default quicksort and torch's default sort reorder long runs of equal values
    scores = torch.zeros(1, 300, dtype=torch.float64)
    scores[0, 250] = 1.0
    scores[0, 7] = -1.0
    ranks = feature_ranks(scores)[0]
    expected_order = [250] + [j for j in range(300) if j not in (250, 7)] + [7]
    assert torch.argsort(ranks).tolist() == expected_order


def test_ranks_are_a_permutation_and_follow_descending_scores():
    generator = torch.Generator().manual_seed(3)
    scores = torch.randint(0, 4, (5, 40), generator=generator).double()
    ranks = feature_ranks(scores)
    for row, rank in zip(scores, ranks, strict=True):
        order = torch.argsort(rank)
        assert sorted(rank.tolist()) == list(range(40))
        expected = sorted(range(40), key=lambda j: (-row[j].item(), j))
        assert order.tolist() == expected


@settings(max_examples=200, deadline=None)
@given(n_end=st.integers(1, 400), steps=st.integers(1, 500))
def test_step_counts_are_distinct_include_both_ends_and_match_the_reference(n_end, steps):
    counts = step_counts(n_end, steps)
    assert counts[0] == 0 and counts[-1] == n_end
    assert (np.diff(counts) > 0).all()
    assert len(counts) == min(steps, n_end) + 1
    assert counts.tolist() == reference_counts(n_end, steps, 1.0)


def test_step_counts_avoid_the_duplicates_of_integer_linspace():
    # int(linspace(0, 5, 11)) repeats counts (0, 0, 1, 1, ...): here every count appears once
    assert step_counts(5, 10).tolist() == [0, 1, 2, 3, 4, 5]
    assert step_counts(10, 3).tolist() == [0, 3, 7, 10]
    assert step_counts(7, -1).tolist() == list(range(8))


@pytest.mark.parametrize(
    ("n", "pct", "expected"), [(100, 0.29, 29), (100, 0.3, 30), (10, 0.7, 7), (5, 0.1, 1)]
)
def test_n_perturbed_is_floor_with_float_tolerance(n, pct, expected):
    assert n_perturbed(n, pct) == expected


def test_normalised_area_is_the_mean_height():
    assert trapezoid_auc(np.array([0.0, 0.1, 0.3]), np.array([0.7, 0.7, 0.7])) == pytest.approx(0.7)
    # uneven x: trapezoid over the true fractions, not over indices
    assert trapezoid_auc(np.array([0.0, 0.1, 1.0]), np.array([1.0, 0.0, 0.0])) == pytest.approx(0.05)


# -- non-finite inputs, baselines and model scores (issue #11, class 13) ---------------------------------------
TENSOR_METRICS = {
    "Insertion": lambda model, x, **kw: fidelity.Insertion(model, x, steps=4, **kw),
    "Deletion": lambda model, x, **kw: fidelity.Deletion(model, x, steps=4, **kw),
    "AOPCComprehensiveness": lambda model, x, **kw: fidelity.AOPCComprehensiveness(model, x, **kw),
    "AOPCSufficiency": lambda model, x, **kw: fidelity.AOPCSufficiency(model, x, **kw),
    "MuFidelity": lambda model, x, **kw: fidelity.MuFidelity(model, x, nb_samples=8, **kw),
}


class _Sum(torch.nn.Module):
    """``f(x) = [sum(x), -sum(x)]``, NaN where feature 0 equals ``poison`` (a model that breaks on some inputs)."""

    def __init__(self, poison: float | None = None) -> None:
        super().__init__()
        self.poison = poison

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        total = x.sum(dim=1, keepdim=True)
        out = torch.cat([total, -total], dim=1)
        if self.poison is not None:
            out = torch.where(x[:, :1] == self.poison, torch.full_like(out, float("nan")), out)
        return out


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(TENSOR_METRICS)),
    bad=st.sampled_from([float("nan"), float("inf"), float("-inf")]),
    where=st.sampled_from(["inputs", "baseline_mode"]),
    row=st.integers(0, 3),
    column=st.integers(0, 5),
)
def test_property_non_finite_inputs_or_baselines_are_rejected(name, bad, where, row, column) -> None:
    x = torch.arange(24, dtype=torch.float32).reshape(4, 6) / 10 + 0.5
    baseline = torch.zeros(4, 6)
    (x if where == "inputs" else baseline)[row, column] = bad
    with pytest.raises(
        InvalidParameterError, match=rf"The '{where}' parameter of {name} must be finite numbers"
    ):
        TENSOR_METRICS[name](_Sum(), x, baseline_mode=baseline)


@pytest.mark.parametrize("name", sorted(TENSOR_METRICS))
@pytest.mark.parametrize(
    ("poison", "where"), [(-7.0, "the perturbed inputs|the baseline"), (0.5, "the inputs")]
)
def test_non_finite_model_scores_are_an_error_not_a_nan_score(name, poison, where) -> None:
    x = torch.arange(24, dtype=torch.float32).reshape(4, 6) / 10 + 0.5  # x[0, 0] == 0.5
    metric = TENSOR_METRICS[name](_Sum(poison), x, baseline_mode=-7.0)
    with pytest.raises(
        InvalidParameterError,
        match=rf"'model' parameter of {name} must be a model whose scores .* finite on ({where})",
    ):
        metric.evaluate(torch.rand(4, 6))
    healthy = TENSOR_METRICS[name](_Sum(), x, baseline_mode=-7.0).evaluate(torch.rand(4, 6))
    assert np.isfinite(healthy)
