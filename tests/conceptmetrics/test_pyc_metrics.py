"""PyC's model-level concept metrics (CaCE, interventions, TCAV, NEC/NCC, completeness): the same numbers as the
installed ``torch_concepts.nn.functional`` on asymmetric inputs with ties, and our own edge policies."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score

from xaimetrics.conceptmetrics import (
    Annotations,
    CausalConceptEffect,
    cace_score,
    completeness_score,
    concept_effect,
    intervention_curve,
    intervention_score,
    number_of_contributing_concepts,
    number_of_effective_concepts,
    residual_concept_causal_effect,
    tcav_score,
)
from xaimetrics.exceptions import InvalidParameterError

F = pytest.importorskip("torch_concepts.nn.functional")


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# -- CaCE ------------------------------------------------------------------------------------------------------
def test_cace_equals_pyc_and_batches_accumulate_exactly() -> None:
    g = generator(3)
    low = torch.softmax(torch.randn(41, 3, generator=g) * 2.0, dim=1)
    high = torch.softmax(torch.randn(41, 3, generator=g) * 2.0 + torch.tensor([1.0, 0.0, -0.5]), dim=1)
    ours = cace_score(low, high)
    theirs = F.cace_score(low, high)
    assert torch.allclose(ours, theirs, atol=1e-6)
    assert ours.shape == (3,)
    metric = CausalConceptEffect(n_outputs=3)
    for rows in (slice(0, 7), slice(7, 30), slice(30, 41)):
        metric.update(low[rows], high[rows])
    assert torch.allclose(metric.compute(), theirs, atol=1e-6)
    metric.reset()
    with pytest.warns(UserWarning, match="before the ``update``"):
        assert torch.isnan(metric.compute()).all()


def test_cace_of_one_output_is_a_scalar() -> None:
    low, high = torch.tensor([0.1, 0.4, 0.4]), torch.tensor([0.7, 0.4, 0.9])
    assert cace_score(low, high).item() == pytest.approx(F.cace_score(low, high).item(), abs=1e-7)


def test_cace_errors_name_the_argument() -> None:
    with pytest.raises(
        InvalidParameterError, match="'preds_high' parameter of cace_score must be a tensor of the shape"
    ):
        cace_score(torch.zeros(4, 2), torch.zeros(4, 3))
    with pytest.raises(
        InvalidParameterError,
        match=r"'preds_low' parameter of CausalConceptEffect\.update must be a tensor with 2",
    ):
        CausalConceptEffect(n_outputs=2).update(torch.zeros(4, 3), torch.zeros(4, 3))


def test_residual_effect_equals_pyc_and_is_nan_without_an_effect() -> None:
    before = torch.tensor([0.5, -0.4, 0.0, 0.25, 0.0])
    after = torch.tensor([0.1, -0.3, 0.2, -0.05, 0.0])
    ours = residual_concept_causal_effect(before, after)
    theirs = F.residual_concept_causal_effect(before, after)
    defined = before != 0
    assert torch.allclose(ours[defined], theirs[defined])
    assert torch.isnan(ours[~defined]).all()  # PyC: inf and nan
    assert torch.isinf(theirs[2])


def test_concept_effect_makes_the_interventions_on_the_annotated_layout() -> None:
    g = generator(4)
    ann = Annotations(["wing", "colour", "size"], cardinalities=[1, 3, 1])
    preds = torch.rand(29, 5, generator=g)
    head = torch.nn.Sequential(torch.nn.Linear(5, 6), torch.nn.Tanh(), torch.nn.Linear(6, 2))
    with torch.no_grad():
        for p in head.parameters():
            p.copy_(torch.randn(p.shape, generator=g))

    def do(columns, value):
        out = preds.clone()
        out[:, columns] = torch.tensor(value)
        return torch.sigmoid(head(out)).detach()

    ours = concept_effect(head, preds, "size", annotations=ann, activation=torch.sigmoid)
    assert torch.allclose(ours, F.cace_score(do([4], 0.0), do([4], 1.0)), atol=1e-6)
    assert torch.allclose(concept_effect(head, preds, 4, activation=torch.sigmoid), ours)
    colour = concept_effect(
        head,
        preds,
        "colour",
        annotations=ann,
        low=[1.0, 0.0, 0.0],
        high=[0.0, 0.2, 0.8],
        activation=torch.sigmoid,
    )
    expected = F.cace_score(do([1, 2, 3], [1.0, 0.0, 0.0]), do([1, 2, 3], [0.0, 0.2, 0.8]))
    assert torch.allclose(colour, expected, atol=1e-6) and (colour.abs() > 1e-3).all()
    with pytest.raises(
        InvalidParameterError, match=r"'high' parameter of concept_effect must be a number or 3 values"
    ):
        concept_effect(head, preds, "colour", annotations=ann, high=[0.0, 1.0])
    with pytest.raises(
        InvalidParameterError, match=r"'concept' parameter of concept_effect must be a concept name"
    ):
        concept_effect(head, preds, "color", annotations=ann)
    with pytest.raises(
        InvalidParameterError, match=r"'concept' parameter of concept_effect must be a column index in 0\.\.4"
    ):
        concept_effect(head, preds, "size")


# -- interventions ---------------------------------------------------------------------------------------------
def intervention_inputs():
    g = generator(5)
    n, k = 64, 6
    c_true = (torch.rand(n, k, generator=g) < torch.tensor([0.3, 0.5, 0.7, 0.4, 0.6, 0.2])).float()
    c_pred = (0.55 * c_true + 0.45 * torch.rand(n, k, generator=g)).round(decimals=1)  # ties in the scores
    head = torch.nn.Linear(k, 3)
    with torch.no_grad():
        head.weight.copy_(torch.randn(3, k, generator=g))
        head.bias.copy_(torch.tensor([0.2, -0.1, 0.0]))
    y = (torch.sigmoid(head(c_true)) > torch.rand(n, 3, generator=g)).long()
    return head, c_pred, c_true, y


GROUPS = [[4], [4, 0], [4, 0, 2], [4, 0, 2, 1, 5, 3]]


def test_intervention_curve_and_auc_equal_pyc() -> None:
    head, c_pred, c_true, y = intervention_inputs()
    curve = intervention_curve(head, c_pred, c_true, y, GROUPS)
    theirs = F.intervention_score(head, c_pred, c_true, y, GROUPS, auc=False)
    np.testing.assert_allclose(curve, theirs, atol=1e-12)
    assert len(set(np.round(curve, 6))) > 1  # the groups change the score
    auc = intervention_score(head, c_pred, c_true, y, GROUPS)
    assert auc == pytest.approx(F.intervention_score(head, c_pred, c_true, y, GROUPS), abs=1e-12)
    micro = intervention_score(head, c_pred, c_true, y, GROUPS, average="micro")
    assert micro == pytest.approx(
        F.intervention_score(head, c_pred, c_true, y, GROUPS, average="micro"), abs=1e-12
    )


def test_intervention_with_annotations_names_concepts_and_one_hot_encodes_categoricals() -> None:
    g = generator(9)
    ann = Annotations(["wing", "colour", "size"], cardinalities=[1, 3, 2])  # layout: 1 + 3 + 2 columns
    n = 48
    truth = torch.stack(
        [(torch.rand(n, generator=g) < 0.4).float(), torch.randint(0, 3, (n,), generator=g).float(),
         torch.randint(0, 2, (n,), generator=g).float()],
        dim=1,
    )  # fmt: skip
    one_hot = torch.cat(
        [
            truth[:, :1],
            torch.nn.functional.one_hot(truth[:, 1].long(), 3),
            torch.nn.functional.one_hot(truth[:, 2].long(), 2),
        ],
        dim=1,
    ).float()
    preds = (0.5 * one_hot + 0.5 * torch.rand(n, 6, generator=g)).round(decimals=2)
    head = torch.nn.Linear(6, 2)
    with torch.no_grad():
        head.weight.copy_(torch.randn(2, 6, generator=g))
    y = (torch.sigmoid(head(one_hot)) > torch.rand(n, 2, generator=g)).long()
    ours = intervention_curve(
        head, preds, truth, y, [["colour"], ["colour", 0], ["size", "wing", "colour"]], annotations=ann
    )
    theirs = F.intervention_score(
        head, preds, one_hot, y, [[1, 2, 3], [1, 2, 3, 0], [4, 5, 0, 1, 2, 3]], auc=False
    )
    np.testing.assert_allclose(ours, theirs, atol=1e-12)
    with pytest.raises(InvalidParameterError, match="concept names among"):
        intervention_curve(head, preds, truth, y, [["color"]], annotations=ann)
    with pytest.raises(
        InvalidParameterError, match=r"class indices in 0\.\.2 for the categorical concept 'colour'"
    ):
        intervention_curve(
            head, preds, truth + torch.tensor([0.0, 3.0, 0.0]), y, [["colour"]], annotations=ann
        )


def test_intervention_with_another_scorer() -> None:
    head, c_pred, c_true, y = intervention_inputs()
    ours = intervention_curve(
        lambda c: head(c)[:, 0], c_pred, c_true, y[:, 0], GROUPS, activation=lambda z: (z > 0).long(),
        scorer=accuracy_score, average=None,
    )  # fmt: skip
    expected = [
        accuracy_score(y[:, 0], (head(_intervene(c_pred, c_true, grp))[:, 0] > 0).long()) for grp in GROUPS
    ]
    np.testing.assert_allclose(ours, expected)


def _intervene(c_pred, c_true, group):
    out = c_pred.clone()
    out[:, group] = c_true[:, group]
    return out.detach()


def test_intervention_errors() -> None:
    head, c_pred, c_true, y = intervention_inputs()
    with pytest.raises(
        InvalidParameterError,
        match=r"'groups' parameter of intervention_curve must be column indices in 0..5",
    ):
        intervention_curve(head, c_pred, c_true, y, [[6]])
    with pytest.raises(
        InvalidParameterError,
        match="'concept_target' parameter of intervention_curve must be a tensor of the shape",
    ):
        intervention_curve(head, c_pred, c_true[:, :5], y, GROUPS)
    with pytest.raises(InvalidParameterError, match=r"'groups' parameter .* must be a non-empty list"):
        intervention_curve(head, c_pred, c_true, y, [])


# -- TCAV ------------------------------------------------------------------------------------------------------
def test_tcav_equals_pyc_with_ties_at_zero_sensitivity() -> None:
    g = generator(13)
    head = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3))
    with torch.no_grad():
        for p in head.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    x = torch.randn(37, 5, generator=g)
    cavs = torch.randn(4, 5, generator=g)
    cavs[2] = 0.0  # zero sensitivity everywhere: not positive, score 0 on both sides
    for target in (0, 2):
        ours = tcav_score(x, head, cavs, target=target)
        theirs = F.tcav_score(x, head, cavs, target=target)
        assert torch.equal(ours, theirs), target
    assert ours[2] == 0 and 0 < ours[0] < 1
    ann = Annotations(["task", "colour"], cardinalities=[1, 2])  # the head's 3 outputs
    assert torch.equal(
        tcav_score(x, head, cavs, target=("colour", 1), annotations=ann), F.tcav_score(x, head, cavs, 2)
    )
    assert torch.equal(
        tcav_score(x, head, cavs, target="task", annotations=ann), F.tcav_score(x, head, cavs, 0)
    )
    with pytest.raises(InvalidParameterError, match=r"Name one state: target=\('colour', state index\)"):
        tcav_score(x, head, cavs, target="colour", annotations=ann)
    with pytest.raises(InvalidParameterError, match=r"must be a state index in 0\.\.1 of 'colour'"):
        tcav_score(x, head, cavs, target=("colour", 2), annotations=ann)
    one_output = tcav_score(x, lambda a: head(a)[:, 1], cavs)
    assert torch.equal(one_output, F.tcav_score(x, lambda a: head(a)[:, 1], cavs))
    with pytest.raises(
        InvalidParameterError, match="'target' parameter of tcav_score must be an output index < 3"
    ):
        tcav_score(x, head, cavs, target=3)
    with pytest.raises(
        InvalidParameterError,
        match=r"'cavs' parameter of tcav_score must be a non-empty 2-D tensor of shape \(rows, 5\)",
    ):
        tcav_score(x, head, cavs[:, :4])


# -- NEC / NCC -------------------------------------------------------------------------------------------------
def sparse_head():
    g = generator(17)
    W = torch.randn(4, 9, generator=g)
    W[W.abs() < 0.6] = 0.0
    W[1, 3] = 1e-8  # below a 1e-6 threshold
    W[3] = 0.0  # a class that uses nothing
    a = torch.randn(23, 9, generator=g)
    a[5] = 0.0  # a sample with no contribution at all
    a[:, 7] = a[:, 6]  # tied contributions
    return W, a


CARDINALITIES = [1, 3, 1, 2, 1, 1]


@pytest.mark.parametrize("threshold", [0.0, 1e-6, 0.9])
@pytest.mark.parametrize("cardinalities", [None, CARDINALITIES])
def test_nec_equals_pyc(threshold, cardinalities) -> None:
    W, _ = sparse_head()
    ours = number_of_effective_concepts(W, threshold=threshold, cardinalities=cardinalities)
    assert ours == pytest.approx(F.number_of_effective_concepts(W, threshold, cardinalities), rel=1e-6)


def test_nec_reads_annotations() -> None:
    W, _ = sparse_head()
    ann = Annotations(["a", "b", "c", "d", "e", "f"], cardinalities=CARDINALITIES)
    assert number_of_effective_concepts(W, cardinalities=ann) == number_of_effective_concepts(
        W, cardinalities=CARDINALITIES
    )
    with pytest.raises(InvalidParameterError, match="counts summing to the 9 weight columns"):
        number_of_effective_concepts(W, cardinalities=[1, 3, 1])


@pytest.mark.parametrize("coverage", [0.0, 0.5, 0.95, 1.0])
@pytest.mark.parametrize("predicted_class_only", [False, True])
@pytest.mark.parametrize("cardinalities", [None, CARDINALITIES])
def test_ncc_equals_pyc(coverage, predicted_class_only, cardinalities) -> None:
    W, a = sparse_head()
    ours = number_of_contributing_concepts(
        W, a, coverage=coverage, predicted_class_only=predicted_class_only, cardinalities=cardinalities
    )
    theirs = F.number_of_contributing_concepts(
        W.double(), a.double(), coverage, predicted_class_only, cardinalities
    )
    assert ours == pytest.approx(theirs, rel=1e-6)  # sums in float64 (ours always); PyC means in float32


def test_ncc_at_full_coverage_is_nec_on_dense_activations() -> None:
    W, a = sparse_head()
    dense = a[[i for i in range(a.shape[0]) if i != 5]] + 10.0
    assert number_of_contributing_concepts(W, dense, coverage=1.0) == pytest.approx(
        number_of_effective_concepts(W)
    )
    # PyC sums float32 inputs in float32: the 1e-8 weight's contribution is lost in the total
    assert F.number_of_contributing_concepts(W, dense, 1.0) < number_of_effective_concepts(W) - 0.1
    with pytest.raises(
        InvalidParameterError,
        match=r"'coverage' parameter of number_of_contributing_concepts must be a number in \[0.0, 1.0\]",
    ):
        number_of_contributing_concepts(W, a, coverage=95)


# -- completeness ----------------------------------------------------------------------------------------------
def test_completeness_score_equals_pyc_with_auc_and_f1() -> None:
    g = generator(21)
    y = torch.randint(0, 2, (80,), generator=g)
    black = (0.6 * y + 0.5 * torch.rand(80, generator=g)).round(decimals=1)  # ties
    white = (0.3 * y + 0.7 * torch.rand(80, generator=g)).round(decimals=1)
    ours = completeness_score(y, black, white)
    assert ours == pytest.approx(F.completeness_score(y, black, white), rel=1e-9)
    assert ours == pytest.approx(roc_auc_score(y, white) / roc_auc_score(y, black), rel=1e-12)
    y3 = torch.randint(0, 3, (80,), generator=g)
    black3 = torch.where(torch.rand(80, generator=g) < 0.8, y3, (y3 + 1) % 3)
    white3 = torch.where(torch.rand(80, generator=g) < 0.55, y3, (y3 + 2) % 3)
    for average in ("macro", "micro", "weighted"):
        ours = completeness_score(y3, black3, white3, scorer=f1_score, average=average)
        theirs = F.completeness_score(y3, black3, white3, scorer=f1_score, average=average)
        assert ours == pytest.approx(theirs, rel=1e-9), average
    assert completeness_score(
        y3.numpy(), black3.tolist(), white3.numpy(), scorer=accuracy_score, average=None
    ) == pytest.approx(accuracy_score(y3, white3) / accuracy_score(y3, black3))


def test_nan_inputs_are_refused_where_they_would_be_read_silently() -> None:
    W, a = sparse_head()
    W_nan = W.clone()
    W_nan[2, 1] = float("nan")  # |nan| > 0 is False: NEC would count it as a zero weight
    with pytest.raises(
        InvalidParameterError,
        match=r"'weight' parameter of number_of_effective_concepts must be finite values\. Got NaN or infinity in row 2",
    ):
        number_of_effective_concepts(W_nan)
    a_nan = a.clone()
    a_nan[4, 0] = float("inf")
    with pytest.raises(InvalidParameterError, match=r"'concept_activations' parameter .* row 4"):
        number_of_contributing_concepts(W, a_nan)
    x = torch.randn(6, 2)
    x[3, 1] = float("nan")  # a NaN gradient is "not positive": TCAV would read 0
    with pytest.raises(InvalidParameterError, match="'embeddings' parameter of tcav_score must be finite"):
        tcav_score(x, lambda e: e.sum(dim=1), torch.eye(2))
    with pytest.raises(
        InvalidParameterError, match="'blackbox_preds' parameter of completeness_score must be finite"
    ):
        completeness_score([0, 1, 1], [0.2, float("nan"), 0.9], [0.1, 0.8, 0.7])
    # CaCE propagates NaN predictions (a visible nan, not a silent number), as PyC does
    low, high = torch.tensor([[0.2], [float("nan")]]), torch.tensor([[0.5], [0.4]])
    assert torch.isnan(cace_score(low, high)).all() and torch.isnan(F.cace_score(low, high)).all()


def test_completeness_score_is_nan_when_the_black_box_scores_zero() -> None:
    y = [0, 1, 1, 0]
    assert math.isnan(completeness_score(y, [1, 0, 0, 1], [0, 1, 0, 0], scorer=accuracy_score, average=None))
    with pytest.raises(
        InvalidParameterError, match="'whitebox_preds' parameter of completeness_score must be 4 rows"
    ):
        completeness_score(y, [1, 0, 0, 1], [0, 1, 0], scorer=accuracy_score, average=None)
