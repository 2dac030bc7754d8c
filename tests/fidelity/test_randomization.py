"""Randomisation sanity checks: Spearman (scipy) between explanations, on tensors, texts and concept importances."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from xaimetrics.concepts import local_importance
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.fidelity import (
    CascadingRandomization,
    ModelRandomization,
    RandomLogit,
    attribute,
    distance_manhattan,
    randomizable_layers,
)


def saliency(model, inputs, targets):
    return attribute(model, inputs, "saliency", targets)


def _spearman_rows(a, b):
    return np.array([spearmanr(np.ravel(x), np.ravel(y)).statistic for x, y in zip(a, b, strict=True)])


def test_model_randomization_is_spearman_with_the_reinitialised_copy(tabular_task):
    model, x = tabular_task
    before = [p.clone() for p in model.parameters()]
    check = ModelRandomization(model, x[:12])
    randomized = check.randomized_model()
    expected = _spearman_rows(
        saliency(model, x[:12], check.targets), saliency(randomized, x[:12], check.targets)
    )
    values = check.evaluate_samples(saliency)
    np.testing.assert_allclose(values, expected, atol=1e-12)
    assert check.evaluate(saliency) == pytest.approx(expected.mean())
    assert all(torch.equal(p, q) for p, q in zip(before, model.parameters(), strict=True))  # untouched
    assert all(not torch.equal(p, q) for p, q in zip(before, randomized.parameters(), strict=True))
    assert ModelRandomization.higher_is_better is False


def test_progressive_fraction_counts_layers_from_the_output():
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(5, 5) for _ in range(4)], torch.nn.Linear(5, 2)).eval()
    assert randomizable_layers(model) == ["0", "1", "2", "3", "4"]
    # Xplique's ProgressiveLayerRandomization(0.25) on 5 layers: int(5 * 0.25) = 1 layer, the last one
    assert ModelRandomization(model, torch.randn(3, 5), layers=0.25).layers == ["4"]
    assert ModelRandomization(model, torch.randn(3, 5), layers=0.5).layers == ["3", "4"]
    check = ModelRandomization(model, torch.randn(3, 5), layers=["1", "3"])
    randomized = check.randomized_model()
    changed = [not torch.equal(a.weight, b.weight) for a, b in zip(model, randomized, strict=True)]
    assert changed == [False, True, False, True, False]


def test_cascade_ends_at_the_full_randomisation_and_starts_at_the_last_layer():
    torch.manual_seed(1)
    model = torch.nn.Sequential(
        torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)
    ).eval()
    x = torch.randn(7, 6)
    steps = CascadingRandomization(model, x, random_state=3).evaluate_samples(saliency)
    assert list(steps) == ["4", "2", "0"]
    full = ModelRandomization(model, x, random_state=3).evaluate_samples(saliency)
    last = ModelRandomization(model, x, layers=["4"], random_state=3).evaluate_samples(saliency)
    np.testing.assert_allclose(steps["0"], full, atol=1e-12)
    np.testing.assert_allclose(steps["4"], last, atol=1e-12)
    means = CascadingRandomization(model, x, random_state=3).evaluate(saliency)
    assert means["0"] == pytest.approx(full.mean())


def test_random_logit_draws_another_class_uniformly_and_compares_by_hand():
    model = torch.nn.Linear(4, 3, bias=False).eval()
    weights = torch.tensor([[1.0, 2.0, 3.0, 4.0], [4.0, 1.0, 3.0, 2.0], [1.0, 2.0, 2.0, 1.0]])
    model.weight.data.copy_(weights)
    x = torch.ones(600, 4)
    targets = torch.arange(600) % 3
    check = RandomLogit(model, x, targets)
    assert (check.other_targets != targets).all()
    counts = np.bincount(check.other_targets[targets == 0].numpy(), minlength=3)
    assert counts[0] == 0 and abs(counts[1] - counts[2]) < 40  # uniform among the two others

    def gradient(m, inputs, y):
        return m.weight[y].detach()

    values = check.evaluate_samples(gradient)
    # by hand: Spearman of the weight rows, e.g. rows 0 and 1: ranks (1,2,3,4) vs (4,1,3,2) -> r = -0.4
    pairs = {(0, 1): -0.4, (0, 2): spearmanr([1, 2, 3, 4], [1, 2, 2, 1]).statistic}
    for i in range(12):
        key = tuple(sorted((int(targets[i]), int(check.other_targets[i]))))
        expected = pairs.get(key, spearmanr(weights[1], weights[2]).statistic)
        assert values[i] == pytest.approx(expected)
    # any similarity of the family replaces Spearman (Xplique's RandomLogitMetric uses SSIM on images)
    by_distance = RandomLogit(model, x, targets, similarity=distance_manhattan).evaluate_samples(gradient)
    np.testing.assert_allclose(
        by_distance, (weights[targets] - weights[check.other_targets]).abs().sum(1).numpy()
    )


def test_texts_and_concept_importances(tiny_bert, tokenizer):
    texts = ["a quiet film about loss", "the plot never moves at all"]

    def text_saliency(model, inputs, targets):
        return attribute(model, inputs, "input_x_gradient", targets, tokenizer=tokenizer)

    check = ModelRandomization(tiny_bert, texts, targets=[0, 2], layers=0.3)
    values = check.evaluate_samples(text_saliency)
    original = text_saliency(tiny_bert, texts, check.targets)
    randomized = text_saliency(check.randomized_model(), texts, check.targets)
    np.testing.assert_allclose(values, _spearman_rows(original, randomized), atol=1e-12)
    logit = RandomLogit(tiny_bert, texts, targets=[0, 2])
    assert logit.n_classes == 3  # from model.config.num_labels
    assert np.isfinite(logit.evaluate_samples(text_saliency)).all()

    torch.manual_seed(2)
    f_co = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).eval()
    concepts = torch.rand(9, 5)

    def importance(model, u, targets):
        return local_importance(model, u, targets.numpy())

    check = ModelRandomization(f_co, concepts)
    expected = _spearman_rows(
        importance(f_co, concepts, check.targets),
        importance(check.randomized_model(), concepts, check.targets),
    )
    np.testing.assert_allclose(check.evaluate_samples(importance), expected, atol=1e-12)


def test_errors_name_the_argument(tabular_task):
    model, x = tabular_task
    with pytest.raises(
        InvalidParameterError, match=r"'model' parameter of ModelRandomization must be a torch\.nn\.Module"
    ):
        ModelRandomization(lambda v: v, x)
    with pytest.raises(
        InvalidParameterError, match="'layers' parameter of ModelRandomization must be names among"
    ):
        ModelRandomization(model, x, layers=["head"])
    with pytest.raises(
        InvalidParameterError, match="'layers' parameter of ModelRandomization must be None, a fraction"
    ):
        ModelRandomization(model, x, layers=1.5)
    with pytest.raises(
        InvalidParameterError, match="'targets' parameter of RandomLogit must be class indices"
    ):
        RandomLogit(model, x, targets=np.full(len(x), 5))
    with pytest.raises(
        InvalidParameterError, match="'targets' parameter of ModelRandomization must be class indices"
    ):
        ModelRandomization(model, ["a text"])
    with pytest.raises(
        InvalidParameterError,
        match="'explain' parameter of ModelRandomization must be a function returning one",
    ):
        ModelRandomization(model, x).evaluate(lambda m, inputs, y: torch.zeros(2, 12))
