"""How many concepts a concept-bottleneck head uses: effective (NEC) and contributing (NCC) concepts.

- NEC (Srivastava et al. 2024, VLG-CBM): the mean over classes of the number of concepts with a non-zero
  weight, ``(1/C) Σ_r #{j : |W_rj| > threshold}``.
- NCC (M-CBM, ICLR 2026): for each sample and class, the fewest concepts whose largest absolute contributions
  ``|a_j · W_rj|`` reach a fraction ``coverage`` of the total; averaged over samples and classes (or over each
  sample's predicted class). ``coverage=1`` gives NEC on the samples' non-zero activations.

A categorical concept spans several columns: with ``cardinalities`` (or the :class:`Annotations` of the logit
layout) it counts once, used when any of its columns is, its contributions summed. Same numbers as PyC's
``number_of_effective_concepts`` / ``number_of_contributing_concepts``; lower is sparser. NCC sums in float64:
in float32 (PyC on float32 inputs) a contribution below ~1e-7 of the total is lost to rounding, so that
``coverage=1`` can count fewer concepts than NEC.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from numpy.typing import ArrayLike

from xaimetrics._validation import Interval, Kind, validate_params
from xaimetrics.conceptmetrics._annotations import Annotations
from xaimetrics.conceptmetrics._checks import check_2d, concept_groups

__all__ = ["number_of_contributing_concepts", "number_of_effective_concepts"]


def _per_concept(values: torch.Tensor, groups: torch.Tensor | None) -> torch.Tensor:
    """Sum the last dimension's columns of each concept (identity when every column is a concept)."""
    if groups is None:
        return values
    groups = groups.to(values.device)
    out = torch.zeros(*values.shape[:-1], int(groups.max()) + 1, dtype=values.dtype, device=values.device)
    return out.index_add(values.ndim - 1, groups, values)


@validate_params({"threshold": Interval(float, 0.0, float("inf"), text="a number in [0.0, inf]")})
def number_of_effective_concepts(
    weight: ArrayLike, *, threshold: float = 0.0, cardinalities: Sequence[int] | Annotations | None = None
) -> float:
    """Number of effective concepts (NEC): mean over classes of the concepts with a weight ``|W| > threshold``.

    Args:
        weight: the head's weight matrix, shape ``(n_classes, n_columns)``.
        threshold: weights with ``|W| <= threshold`` count as zero (0 for pruned heads; e.g. 1e-6 after plain
            ℓ1 training).
        cardinalities: columns per concept in column order, or the :class:`Annotations` of the layout;
            ``None``: one concept per column.

    Returns:
        A float in ``[0, n_concepts]``; lower is sparser.

    Example:
        >>> W = torch.tensor([[0.5, 0.0, -0.2, 0.0], [0.0, 1e-8, 0.0, 0.7], [0.1, 0.2, 0.3, 0.0]])
        >>> number_of_effective_concepts(W)  # (2 + 2 + 3) / 3
        2.3333333333333335
        >>> number_of_effective_concepts(W, threshold=1e-6, cardinalities=[1, 2, 1])  # (2 + 1 + 2) / 3
        1.6666666666666667
    """
    W = check_2d(weight, "weight")
    used = _per_concept((W.detach().abs() > threshold).double(), concept_groups(cardinalities, W.shape[1]))
    return float((used > 0).double().sum(dim=1).mean())


@validate_params(
    {
        "coverage": Interval(float, 0.0, 1.0, text="a number in [0.0, 1.0]"),
        "predicted_class_only": Kind(bool, "True or False"),
    }
)
def number_of_contributing_concepts(
    weight: ArrayLike,
    concept_activations: ArrayLike,
    *,
    coverage: float = 0.95,
    predicted_class_only: bool = False,
    cardinalities: Sequence[int] | Annotations | None = None,
) -> float:
    """Number of contributing concepts (NCC): concepts needed to cover ``coverage`` of each decision.

    For sample ``i`` and class ``r``, ``u_j = |a_ij · W_rj|``; NCC counts the fewest largest ``u_j`` whose sum
    reaches ``coverage · Σ_j u_j`` (0 when every contribution is 0), averaged over samples and classes.

    Args:
        weight: the head's weight matrix, shape ``(n_classes, n_columns)``.
        concept_activations: the head's inputs, shape ``(n_samples, n_columns)``.
        coverage: the fraction ``τ`` in ``[0, 1]`` of the total absolute contribution to cover.
        predicted_class_only: average over each sample's predicted class (argmax of ``a @ Wᵀ``) only.
        cardinalities: columns per concept in column order, or the :class:`Annotations` of the layout.

    Returns:
        A float in ``[0, n_concepts]``; lower means shorter explanations.

    Example:
        >>> W = torch.tensor([[1.0, -2.0, 0.5], [0.0, 0.3, 3.0]])
        >>> a = torch.tensor([[1.0, 1.0, 1.0], [2.0, 0.0, -1.0]])
        >>> number_of_contributing_concepts(W, a, coverage=0.8)  # (2 + 1 + 1 + 1) / 4
        1.25
        >>> number_of_contributing_concepts(W, a, coverage=0.8, predicted_class_only=True)  # (1 + 1) / 2
        1.0
    """
    W = check_2d(weight, "weight")
    a = check_2d(concept_activations, "concept_activations", columns=W.shape[1])
    W, a = W.detach().double(), a.detach().double()  # float32 sums can reach the total before the last term
    contributions = _per_concept(
        (a[:, None, :] * W[None, :, :]).abs(), concept_groups(cardinalities, W.shape[1])
    )  # (n_samples, n_classes, n_concepts)
    cumulative = contributions.sort(dim=-1, descending=True).values.cumsum(dim=-1)
    total = cumulative[..., -1:]  # the same summation order as the cumulative sums: τ = 1 is exact
    needed = (cumulative < coverage * total).sum(dim=-1) + 1
    needed = torch.where(total[..., 0] > 0, needed, torch.zeros_like(needed))
    if predicted_class_only:
        needed = needed.gather(1, (a @ W.T).argmax(dim=1, keepdim=True))
    return float(needed.double().mean())
