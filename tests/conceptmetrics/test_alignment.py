"""ConceptAlignmentScore: the mean per-concept binary accuracy, as counts."""

from __future__ import annotations

import pytest
import torch
from torchmetrics.classification import BinaryAccuracy

from xaimetrics.conceptmetrics import ConceptAlignmentScore, concept_alignment_score
from xaimetrics.exceptions import InvalidParameterError


def batch(n: int = 23, k: int = 4, seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    probabilities = torch.rand(n, k, generator=g)
    target = (torch.rand(n, k, generator=g) < torch.tensor([0.2, 0.5, 0.8, 0.6])[:k]).long()
    return probabilities, target


def test_equals_mean_of_per_concept_accuracies() -> None:
    p, t = batch()
    per_concept = ((p > 0.5).long() == t).float().mean(dim=0)
    assert concept_alignment_score(p, t).item() == pytest.approx(per_concept.mean().item(), abs=1e-6)
    cas = ConceptAlignmentScore(4)
    cas.update(p, t)
    assert cas.compute().item() == pytest.approx(per_concept.mean().item(), abs=1e-6)
    assert torch.allclose(cas.per_concept_accuracy(), per_concept)
    # Each concept's accuracy is torchmetrics' BinaryAccuracy on that column.
    for j in range(4):
        assert cas.per_concept_accuracy()[j].item() == pytest.approx(
            BinaryAccuracy()(p[:, j], t[:, j]).item()
        )


def test_threshold_and_logit_inputs() -> None:
    p, t = batch()
    expected = ((p > 0.7).long() == t).float().mean().item()
    assert concept_alignment_score(p, t, threshold=0.7).item() == pytest.approx(expected, abs=1e-6)
    logits = torch.logit(p.double()).float()
    assert concept_alignment_score(logits, t, inputs="logits").item() == pytest.approx(
        concept_alignment_score(p, t).item(), abs=1e-6
    )
    # Logits inside [0, 1] stay logits: sigmoid(0.2) > 0.5.
    assert concept_alignment_score(torch.tensor([[0.2]]), torch.tensor([[1]]), inputs="logits").item() == 1.0


def test_batched_equals_one_shot_and_reset() -> None:
    p, t = batch(n=31)
    one_shot = ConceptAlignmentScore(4)
    one_shot.update(p, t)
    batched = ConceptAlignmentScore(4)
    for rows in (slice(0, 3), slice(3, 17), slice(17, 31)):
        batched.update(p[rows], t[rows])
    assert batched.compute().item() == pytest.approx(one_shot.compute().item(), abs=1e-7)
    assert batched.total.item() == 31 and batched.correct.dtype == torch.long
    batched.reset()
    assert batched.total.item() == 0 and int(batched.correct.sum()) == 0


def test_single_concept_accepts_vectors() -> None:
    cas = ConceptAlignmentScore(1)
    cas.update(torch.tensor([0.9, 0.2, 0.6]), torch.tensor([1, 1, 0]))
    assert cas.compute().item() == pytest.approx(1 / 3)


def test_states_reduce_by_sum() -> None:
    cas = ConceptAlignmentScore(3)
    assert cas._reductions["correct"].__name__ == cas._reductions["total"].__name__ == "dim_zero_sum"
    assert ConceptAlignmentScore.higher_is_better is True


def test_errors() -> None:
    cas = ConceptAlignmentScore(3)
    with pytest.raises(
        InvalidParameterError, match=r"'preds' .* must be a tensor of shape \(batch, 3\). Got shape \(2, 2\)"
    ):
        cas.update(torch.rand(2, 2), torch.zeros(2, 2))
    with pytest.raises(
        InvalidParameterError, match=r"'target' .* shape of preds \(2, 3\). Got shape \(2, 1\)"
    ):
        cas.update(torch.rand(2, 3), torch.zeros(2, 1))
    with pytest.raises(InvalidParameterError, match="0/1 labels"):
        cas.update(torch.rand(2, 3), torch.full((2, 3), 2))
    with pytest.raises(InvalidParameterError, match=r"probabilities in \[0, 1\].*Pass inputs='logits'"):
        cas.update(torch.tensor([[0.9, -0.3, 0.1]]), torch.tensor([[1, 0, 0]]))
    with pytest.raises(InvalidParameterError, match="'n_concepts' parameter of ConceptAlignmentScore"):
        ConceptAlignmentScore(0)
    with pytest.raises(InvalidParameterError, match="'inputs' parameter"):
        ConceptAlignmentScore(2, inputs="scores")
    with pytest.raises(InvalidParameterError, match="'threshold' parameter"):
        ConceptAlignmentScore(2, threshold=1.5)
