"""Concept Alignment Score (CAS): the mean over binary concepts of each concept's accuracy.

``CAS = (1/K) Σ_k (1/N) Σ_n [ŷ_nk = y_nk]`` with ``ŷ_nk = [p_nk > threshold]``. Every concept is seen
on the same ``N`` samples, so CAS equals the accuracy pooled over all ``N·K`` (sample, concept) pairs; it is
kept per concept (``correct`` has one count per concept) so that the per-concept accuracies stay available
and the states reduce across processes by a plain sum.
"""

from __future__ import annotations

from typing import Literal

import torch
from torchmetrics import Metric

from xaimetrics._validation import Interval, Options, Rule, caller, invalid, validate_params

__all__ = ["ConceptAlignmentScore", "concept_alignment_score"]

InputKind = Literal["probabilities", "logits"]


#: The options shared by the function and the class.
_RULES: dict[str, Rule] = {
    "threshold": Interval(float, 0.0, 1.0, text="a number in [0.0, 1.0]"),
    "inputs": Options(("probabilities", "logits")),
}


def _concept_alignment_update(
    preds: torch.Tensor,
    target: torch.Tensor,
    *,
    n_concepts: int,
    threshold: float,
    inputs: InputKind,
    validate_args: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Check one batch and count it: ``(correct per concept (n_concepts,), number of samples ())``."""
    owner = caller()
    if not isinstance(preds, torch.Tensor) or not isinstance(target, torch.Tensor):
        raise invalid(
            "preds" if not isinstance(preds, torch.Tensor) else "target",
            owner,
            "a torch.Tensor",
            type(preds if not isinstance(preds, torch.Tensor) else target).__name__,
        )
    if preds.ndim == 1 and n_concepts == 1:
        preds = preds.unsqueeze(-1)
    if target.ndim == 1 and n_concepts == 1:
        target = target.unsqueeze(-1)
    if preds.ndim != 2 or preds.shape[1] != n_concepts:
        raise invalid(
            "preds", owner, f"a tensor of shape (batch, {n_concepts})", f"shape {tuple(preds.shape)}"
        )
    if target.shape != preds.shape:
        raise invalid(
            "target",
            owner,
            f"a tensor of the shape of preds {tuple(preds.shape)}",
            f"shape {tuple(target.shape)}",
        )
    preds = preds.detach()
    target = target.detach()
    if validate_args and preds.numel():
        if not torch.isin(target, torch.tensor([0, 1], device=target.device, dtype=target.dtype)).all():
            raise invalid("target", owner, "0/1 labels", "other values", "Binarise the ground truth first.")
        if inputs == "probabilities" and not preds.is_floating_point():
            raise invalid("preds", owner, "floating-point probabilities", f"dtype {preds.dtype}")
        if inputs == "probabilities" and ((preds < 0) | (preds > 1)).any():
            raise invalid(
                "preds",
                owner,
                "probabilities in [0, 1] (inputs='probabilities')",
                f"values in [{preds.min().item():.4g}, {preds.max().item():.4g}]",
                "Pass inputs='logits' for raw scores.",
            )
    probabilities = torch.sigmoid(preds.float()) if inputs == "logits" else preds
    predicted = probabilities > threshold
    correct = (predicted == target.bool()).sum(dim=0)
    return correct, torch.tensor(preds.shape[0], device=preds.device)


def _concept_alignment_compute(correct: torch.Tensor, total: torch.Tensor) -> torch.Tensor:
    """Mean over concepts of ``correct / total`` (0 before any sample)."""
    return (correct.double() / total.clamp(min=1).double()).mean().float()


@validate_params(_RULES)
def concept_alignment_score(
    preds: torch.Tensor,
    target: torch.Tensor,
    *,
    threshold: float = 0.5,
    inputs: InputKind = "probabilities",
) -> torch.Tensor:
    """Concept Alignment Score of one batch: the mean over concepts of the per-concept binary accuracy.

    Args:
        preds: tensor of shape ``(n_samples, n_concepts)`` (or ``(n_samples,)`` for one concept):
            probabilities (default) or logits (``inputs="logits"``, turned into probabilities by a sigmoid).
        target: 0/1 labels of the same shape.
        threshold: a concept is predicted present when its probability is ``> threshold``.
        inputs: ``"probabilities"`` or ``"logits"``; never guessed from the value range.

    Returns:
        A scalar float tensor in ``[0, 1]``.

    Example:
        >>> preds = torch.tensor([[0.9, -0.3, 0.1], [-2.0, 0.4, -0.1]])
        >>> target = torch.tensor([[1, 0, 0], [0, 0, 0]])
        >>> concept_alignment_score(preds, target, inputs="logits")
        tensor(0.6667)
    """
    n_concepts = 1 if preds.ndim == 1 else preds.shape[-1]
    correct, total = _concept_alignment_update(
        preds,
        target,
        n_concepts=n_concepts,
        threshold=threshold,
        inputs=inputs,
        validate_args=True,
    )
    return _concept_alignment_compute(correct, total)


class ConceptAlignmentScore(Metric):
    """Concept Alignment Score accumulated over batches: mean over concepts of the per-concept accuracy.

    States: ``correct`` (one count per concept) and ``total`` (number of samples), both summed across
    processes, so the score is exact under DDP. Inside :class:`ConceptMetrics` (a binary metric) it receives
    probabilities and ``n_concepts`` is filled in from the annotations.

    Args:
        n_concepts: number of binary concepts (columns of ``preds``).
        threshold: a concept is predicted present when its probability is ``> threshold`` (torchmetrics'
            convention, so one concept gives exactly ``BinaryAccuracy``).
        inputs: ``"probabilities"`` (default; what ConceptMetrics passes) or ``"logits"``.
        validate_args: check labels and the probability range on every update.
        kwargs: passed to ``torchmetrics.Metric`` (e.g. ``sync_on_compute``).

    Example:
        >>> cas = ConceptAlignmentScore(n_concepts=3, inputs="logits")
        >>> cas.update(torch.tensor([[0.9, -0.3, 0.1]]), torch.tensor([[1, 0, 0]]))
        >>> cas.update(torch.tensor([[-2.0, 0.4, -0.1]]), torch.tensor([[0, 0, 0]]))
        >>> cas.compute()
        tensor(0.6667)
        >>> cas.per_concept_accuracy()
        tensor([1.0000, 0.5000, 0.5000])
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    correct: torch.Tensor
    total: torch.Tensor

    @validate_params({"n_concepts": Interval(int, 1), **_RULES})
    def __init__(
        self,
        n_concepts: int,
        *,
        threshold: float = 0.5,
        inputs: InputKind = "probabilities",
        validate_args: bool = True,
        **kwargs: object,
    ) -> None:
        super().__init__(**kwargs)
        self.n_concepts = int(n_concepts)
        self.threshold = float(threshold)
        self.inputs: InputKind = inputs
        self.validate_args = bool(validate_args)
        self.add_state(
            "correct", default=torch.zeros(self.n_concepts, dtype=torch.long), dist_reduce_fx="sum"
        )
        self.add_state("total", default=torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")

    @validate_params({})
    def update(self, preds: torch.Tensor, target: torch.Tensor) -> None:
        """Count the correct concepts of a batch.

        Args:
            preds: ``(batch, n_concepts)`` probabilities or logits (see ``inputs``).
            target: ``(batch, n_concepts)`` 0/1 labels.
        """
        correct, total = _concept_alignment_update(
            preds,
            target,
            n_concepts=self.n_concepts,
            threshold=self.threshold,
            inputs=self.inputs,
            validate_args=self.validate_args,
        )
        self.correct += correct
        self.total += total

    def compute(self) -> torch.Tensor:
        """The mean per-concept accuracy (a scalar)."""
        return _concept_alignment_compute(self.correct, self.total)

    def per_concept_accuracy(self) -> torch.Tensor:
        """Accuracy of each concept so far, shape ``(n_concepts,)`` (synchronised across processes like compute)."""
        with self.sync_context(should_sync=self.sync_on_compute):
            return (self.correct.double() / self.total.clamp(min=1).double()).float()
