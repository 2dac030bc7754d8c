"""AOPC comprehensiveness and sufficiency (ERASER) on tensors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fidelity.fidelity_reference import make_linear
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.fidelity import AOPCComprehensiveness, AOPCSufficiency, Deletion


def test_hand_computed_values_with_eraser_bins():
    # 20 features, weights 20..1, x = 1, baseline 0: removing the top k removes sum(20..21-k)
    weights = [float(w) for w in range(20, 0, -1)]
    model = make_linear(weights, bias=0.5)
    e = torch.tensor([weights])
    # ERASER bins 1, 5, 10, 20, 50 % of 20 features -> k = ceil: 1, 1, 2, 4, 10
    k = [1, 1, 2, 4, 10]
    top = [sum(weights[:kk]) for kk in k]
    total = sum(weights)
    comprehensiveness = AOPCComprehensiveness(model, torch.ones(1, 20))
    assert comprehensiveness.thresholds == (0.01, 0.05, 0.1, 0.2, 0.5)
    assert comprehensiveness.evaluate(e) == pytest.approx(np.mean(top))
    assert comprehensiveness.detailed_evaluate(e) == pytest.approx(
        dict(zip((0.01, 0.05, 0.1, 0.2, 0.5), top, strict=True))
    )
    sufficiency = AOPCSufficiency(model, torch.ones(1, 20))
    assert sufficiency.evaluate(e) == pytest.approx(np.mean([total - t for t in top]))


def test_agrees_with_the_deletion_curve_and_faithfulness_order(tabular_task):
    model, x = tabular_task
    faithful = x * torch.tensor([3.0, -2.0, 1.5, 1.0] + [0.0] * 8)
    faithful = torch.where(model(x).argmax(1)[:, None] == 1, faithful, -faithful)
    comprehensiveness = AOPCComprehensiveness(model, x, activation="softmax", thresholds=(0.1, 0.25, 0.5))
    curves = Deletion(model, x, activation="softmax", steps=-1).curves(faithful)
    k = [math.ceil(t * 12) for t in (0.1, 0.25, 0.5)]
    expected = [np.mean([s[0] - s[kk] for kk in k]) for s in curves.scores]
    np.testing.assert_allclose(comprehensiveness.evaluate_samples(faithful), expected, atol=1e-6)
    random = torch.randn(x.shape, generator=torch.Generator().manual_seed(0))
    c = [comprehensiveness.evaluate(a) for a in (faithful, random, -faithful)]
    sufficiency = AOPCSufficiency(model, x, activation="softmax", thresholds=(0.1, 0.25, 0.5))
    s = [sufficiency.evaluate(a) for a in (faithful, random, -faithful)]
    assert c[0] > c[1] > c[2]
    assert s[0] < s[1] < s[2]


def test_batch_size_does_not_change_aopc(tabular_task):
    model, x = tabular_task
    e = torch.randn(x.shape, generator=torch.Generator().manual_seed(1))
    a = AOPCSufficiency(model, x, batch_size=1).evaluate_samples(e)
    b = AOPCSufficiency(model, x, batch_size=None).evaluate_samples(e)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)  # float32 sums differ with the batch shape


@pytest.mark.parametrize("thresholds", [(), (0.0, 0.5), (0.5, 1.5), "0.1", (True,)])
def test_bad_thresholds_are_rejected(thresholds):
    with pytest.raises(
        InvalidParameterError, match=r"'thresholds' parameter of AOPCComprehensiveness must be"
    ):
        AOPCComprehensiveness(make_linear([1.0, 2.0]), torch.ones(1, 2), thresholds=thresholds)
