"""Insertion and Deletion on tensors: exact values, invariances, and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from fidelity.fidelity_reference import make_linear, reference_curve
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.fidelity import Deletion, Insertion


def test_linear_model_curve_and_auc_computed_by_hand():
    # f(x) = 5 x0 + 1 x1 + 3 x2 + 2 x3 + 1, x = 1, baseline 0, explanation = true contributions
    model = make_linear([5.0, 1.0, 3.0, 2.0], bias=1.0)
    x = torch.ones(1, 4)
    e = torch.tensor([[5.0, 1.0, 3.0, 2.0]])
    deletion = Deletion(model, x, steps=-1).curves(e)
    assert deletion.n_perturbed[0].tolist() == [0, 1, 2, 3, 4]
    assert deletion.fractions[0].tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert deletion.scores[0].tolist() == [12.0, 7.0, 4.0, 2.0, 1.0]
    # trapezoid: 0.25 * (9.5 + 5.5 + 3 + 1.5) = 4.875
    assert deletion.auc[0] == pytest.approx(4.875)
    insertion = Insertion(model, x, steps=2).curves(e)
    assert insertion.n_perturbed[0].tolist() == [0, 2, 4]
    assert insertion.scores[0].tolist() == [1.0, 9.0, 12.0]
    assert insertion.auc[0] == pytest.approx(0.5 * (5.0 + 10.5))


def test_max_percentage_perturbed_normalises_over_the_perturbed_range():
    model = make_linear([5.0, 1.0, 3.0, 2.0])
    e = torch.tensor([[5.0, 1.0, 3.0, 2.0]])
    curves = Deletion(model, torch.ones(1, 4), steps=-1, max_percentage_perturbed=0.5).curves(e)
    assert curves.fractions[0].tolist() == [0.0, 0.25, 0.5]
    assert curves.scores[0].tolist() == [11.0, 6.0, 3.0]
    assert curves.auc[0] == pytest.approx((8.5 + 4.5) / 2)


@pytest.mark.parametrize("kind", ["deletion", "insertion"])
@pytest.mark.parametrize(("steps", "pct"), [(5, 1.0), (-1, 0.6), (3, 0.35), (40, 1.0)])
def test_matches_the_naive_reference_on_an_mlp(tabular_task, kind, steps, pct):
    model, x = tabular_task
    x = x[:6]
    generator = torch.Generator().manual_seed(1)
    e = torch.randint(0, 3, x.shape, generator=generator).double()  # many ties
    baseline = torch.linspace(-1, 1, 12)
    targets = torch.tensor([0, 1, 1, 0, 1, 0])
    cls = Deletion if kind == "deletion" else Insertion
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metric = cls(
            model,
            x,
            targets,
            batch_size=4,
            baseline_mode=baseline,
            steps=steps,
            max_percentage_perturbed=pct,
            activation="softmax",
        )
        curves = metric.curves(e)
        evaluated = metric.evaluate(e)

    def score(i):
        def f(point):
            with torch.no_grad():
                out = model(torch.tensor(point, dtype=torch.float32)[None]).softmax(-1)
            return float(out[0, targets[i]])

        return f

    for i in range(6):
        counts, scores, auc = reference_curve(score(i), x[i], e[i], baseline, steps, pct, kind)
        assert curves.n_perturbed[i].tolist() == counts.tolist()
        np.testing.assert_allclose(curves.scores[i], scores, atol=1e-6)
        assert curves.auc[i] == pytest.approx(auc, abs=1e-6)
    assert evaluated == pytest.approx(curves.auc.mean())


def test_results_do_not_depend_on_batch_size(tabular_task):
    model, x = tabular_task
    x = x[:20]
    e = torch.randn(x.shape, generator=torch.Generator().manual_seed(0))
    results = [
        Deletion(model, x, batch_size=b, steps=7, activation="softmax").curves(e) for b in (1, 5, 64, None)
    ]
    for other in results[1:]:
        for a, b in zip(results[0].scores, other.scores, strict=True):
            np.testing.assert_allclose(a, b, atol=1e-6)


def test_faithful_beats_random_beats_inverted(tabular_task):
    model, x = tabular_task
    # occlusion-style faithful attribution: each feature's contribution to the predicted logit margin
    faithful = x * torch.tensor([3.0, -2.0, 1.5, 1.0] + [0.0] * 8)
    predicted = model(x).argmax(1)
    faithful = torch.where(predicted[:, None] == 1, faithful, -faithful)
    random = torch.randn(x.shape, generator=torch.Generator().manual_seed(5))
    deletion = Deletion(model, x, steps=-1, activation="softmax")
    insertion = Insertion(model, x, steps=-1, activation="softmax")
    d = [deletion.evaluate(a) for a in (faithful, random, -faithful)]
    i = [insertion.evaluate(a) for a in (faithful, random, -faithful)]
    assert d[0] < d[1] < d[2]
    assert i[0] > i[1] > i[2]
    assert Deletion.higher_is_better is False and Insertion.higher_is_better is True


def test_images_move_channels_together(small_cnn):
    x = torch.rand(3, 3, 6, 6, generator=torch.Generator().manual_seed(0))
    pixel_scores = torch.rand(3, 6, 6, generator=torch.Generator().manual_seed(1))
    metric = Deletion(small_cnn, x, steps=9, baseline_mode=0.5)
    by_hw = metric.curves(pixel_scores)
    by_1hw = metric.curves(pixel_scores[:, None])
    for a, b in zip(by_hw.scores, by_1hw.scores, strict=True):
        np.testing.assert_array_equal(a, b)
    assert by_hw.n_perturbed[0][-1] == 36
    # the same as a per-element explanation with the 3 channels of a pixel consecutive in the order:
    # replicate the pixel score on every channel and compare against the reference on flat elements
    target = small_cnn(x).argmax(1)

    def f(i):
        def score(point):
            with torch.no_grad():
                image = torch.tensor(point, dtype=torch.float32).reshape(6, 6, 3).permute(2, 0, 1)
                return float(small_cnn(image[None])[0, target[i]])

        return score

    _, scores, _ = reference_curve(
        f(0),
        x[0].permute(1, 2, 0),
        pixel_scores[0][..., None].expand(6, 6, 3),
        torch.full((6, 6, 3), 0.5),
        108,
        1.0,
        "deletion",
    )
    # the per-pixel curve visits every third point of the per-element curve
    np.testing.assert_allclose(by_hw.scores[0], scores[[0, 12, 24, 36, 48, 60, 72, 84, 96, 108]], atol=1e-5)


def test_time_series_explanation_without_the_variable_axis():
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(10, 2)).eval()
    x = torch.randn(4, 5, 2, generator=torch.Generator().manual_seed(0))
    e = torch.randn(4, 5, generator=torch.Generator().manual_seed(1))
    per_step = Insertion(model, x, steps=-1).curves(e)
    repeated = Insertion(model, x, steps=-1).curves(e[..., None].expand(4, 5, 2).contiguous())
    assert per_step.n_perturbed[0].tolist() == [0, 1, 2, 3, 4, 5]
    np.testing.assert_allclose(per_step.scores[1], repeated.scores[1][::2], atol=1e-6)


def test_targets_one_hot_and_indices_agree_and_default_is_the_prediction(tabular_task):
    model, x = tabular_task
    e = torch.randn(x.shape, generator=torch.Generator().manual_seed(2))
    predicted = model(x).argmax(1)
    by_index = Deletion(model, x, predicted, steps=4).evaluate(e)
    by_one_hot = Deletion(model, x, torch.nn.functional.one_hot(predicted, 2).numpy(), steps=4).evaluate(e)
    default = Deletion(model, x, steps=4).evaluate(e)
    other = Deletion(model, x, 1 - predicted, steps=4).evaluate(e)
    assert by_index == pytest.approx(by_one_hot) == pytest.approx(default)
    assert other != pytest.approx(default)


def test_operator_activation_and_callable_baseline(tabular_task):
    model, x = tabular_task
    e = torch.randn(x.shape, generator=torch.Generator().manual_seed(2))

    def margin(f, inputs, y):
        out = f(inputs)
        return (out * y).sum(-1) - (out * (1 - y)).sum(-1)

    with_operator = Deletion(
        model, x, steps=3, operator=margin, baseline_mode=lambda v: v.mean(0, keepdim=True)
    )
    curves = with_operator.curves(e)
    mean = x.mean(0)
    with torch.no_grad():
        logits = model(mean[None].expand_as(x))
    predicted = model(x).argmax(1)
    expected_end = logits.gather(1, predicted[:, None])[:, 0] - logits.gather(1, 1 - predicted[:, None])[:, 0]
    np.testing.assert_allclose([s[-1] for s in curves.scores], expected_end.numpy(), atol=1e-5)
    sigmoid = Deletion(model, x, steps=3, activation="sigmoid").curves(e)
    with torch.no_grad():
        expected_start = model(x).max(1).values.sigmoid()
    np.testing.assert_allclose([s[0] for s in sigmoid.scores], expected_start.numpy(), atol=1e-6)


def test_detailed_evaluate_keys_are_steps_with_mean_scores():
    model = make_linear([5.0, 1.0, 3.0, 2.0])
    x = torch.tensor([[1.0, 1.0, 1.0, 1.0], [2.0, 0.0, 1.0, 1.0]])
    e = torch.tensor([[5.0, 1.0, 3.0, 2.0], [0.0, 1.0, 2.0, 3.0]])
    detailed = Deletion(model, x, steps=2).detailed_evaluate(e)
    # sample 0: 11, 11-8=3, 0 ; sample 1: 15, 15-5=10, 0
    assert detailed == {0: 13.0, 1: 6.5, 2: 0.0}


def test_clamping_warns_and_uses_every_feature():
    model = make_linear([1.0, 2.0, 3.0])
    metric = Deletion(model, torch.ones(2, 3), steps=10)
    with pytest.warns(
        UserWarning, match=r"steps=10 is larger than the number of features perturbed for 2 of 2"
    ):
        curves = metric.curves(torch.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]))
    assert curves.n_perturbed[0].tolist() == [0, 1, 2, 3]
    with pytest.warns(UserWarning, match=r"steps=10"):
        detailed = metric.detailed_evaluate(torch.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]))
    assert sorted(detailed) == list(range(11))


class CountingModel(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.rows = 0

    def forward(self, x):
        self.rows += x.shape[0]
        return self.inner(x)


def test_endpoints_are_computed_once_and_reused():
    model = CountingModel(make_linear([1.0, 2.0, 3.0, 4.0]))
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(0))
    metric = Deletion(model, x, steps=-1, batch_size=3)
    metric.evaluate(torch.randn(5, 4))
    first = model.rows
    assert first == 5 * 3 + 5 + 5  # 3 interior counts per sample, then f(x) and f(baseline) once each
    metric.evaluate(torch.randn(5, 4))
    assert model.rows - first == 5 * 3


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"activation": "relu"}, r"'activation' parameter of Deletion must be one of 'sigmoid', 'softmax'"),
        ({"steps": 0}, r"'steps' parameter of Deletion must be an integer ≥ 1, or -1"),
        ({"steps": 2.5}, r"'steps' parameter"),
        (
            {"max_percentage_perturbed": 0},
            r"'max_percentage_perturbed' parameter of Deletion must be a number in \]0, 1\]",
        ),
        ({"batch_size": 0}, r"'batch_size' parameter of Deletion must be an integer ≥ 1 or None"),
        ({"operator": 3}, r"'operator' parameter of Deletion must be a callable"),
        ({"baseline_mode": "mask"}, r"'baseline_mode' parameter of Deletion must be a number"),
        ({"baseline_mode": torch.zeros(3)}, r"'baseline_mode' parameter of Deletion must be broadcastable"),
    ],
)
def test_bad_parameters_are_rejected(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        Deletion(make_linear([1.0, 2.0]), torch.ones(2, 2), **kwargs)


def test_bad_explanations_and_targets_are_rejected():
    metric = Insertion(make_linear([1.0, 2.0, 3.0]), torch.ones(2, 3))
    with pytest.raises(InvalidParameterError, match=r"must have the inputs' shape \(3,\) per sample"):
        metric.evaluate(torch.ones(2, 4))
    with pytest.raises(InvalidParameterError, match=r"one explanation per input \(2\)"):
        metric.evaluate(torch.ones(3, 3))
    with pytest.raises(InvalidParameterError, match=r"finite numbers\. Got NaN or inf in sample 1"):
        metric.evaluate(torch.tensor([[1.0, 2.0, 3.0], [1.0, float("nan"), 0.0]]))
    two_class = torch.nn.Linear(3, 2).eval()
    with pytest.raises(InvalidParameterError, match=r"class indices in \[0, 1\]"):
        Deletion(two_class, torch.ones(2, 3), targets=[0, 2]).evaluate(torch.ones(2, 3))
    with pytest.raises(InvalidParameterError, match=r"one row per input of width 2"):
        Deletion(two_class, torch.ones(2, 3), targets=np.ones((2, 3))).evaluate(torch.ones(2, 3))
    with pytest.raises(
        InvalidParameterError, match=r"'inputs' parameter of Deletion must be an array of shape"
    ):
        Deletion(two_class, torch.ones(3))


def test_training_mode_with_dropout_warns():
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Dropout(0.5))
    with pytest.warns(UserWarning, match=r"training mode"):
        Deletion(model, torch.ones(2, 3))
