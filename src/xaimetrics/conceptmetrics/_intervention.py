"""Concept interventions (Koh et al. 2020): task performance after replacing predicted concepts by the truth.

For each intervention group ``G``, the predicted concepts of ``G`` are replaced by their ground truth, the task
head is re-run and its predictions scored against the task labels (ROC AUC by default). The curve over groups
(usually growing: ``[c0]``, ``[c0, c1]``, …) and its mean, PyC's "AUC" of the intervention curve (the area
with unit spacing between groups, normalised by their number), match PyC's ``intervention_score``. With
:class:`Annotations`, groups name concepts and the ground truth comes in :class:`ConceptMetrics`' layout
(one column per concept, class indices for categorical ones, one-hot encoded here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypedDict

import numpy as np
import torch
from numpy.typing import ArrayLike

from xaimetrics._validation import Kind, caller, invalid, validate_params
from xaimetrics.conceptmetrics._annotations import Annotations
from xaimetrics.conceptmetrics._checks import as_tensor, check_2d
from xaimetrics.conceptmetrics._completeness import Scorer, apply_scorer

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["InterventionOptions", "intervention_curve", "intervention_score"]

Group = Sequence[int | str]


def _in_head_layout(truth: torch.Tensor, annotations: Annotations) -> torch.Tensor:
    """Ground truth in concept space ``(n, n_concepts)`` → the head's input layout ``(n, annotations.size)``."""
    owner = caller()
    columns = []
    for concept in annotations:
        values = truth[:, concept.index]
        if concept.type == "categorical":
            states = values.round().long()
            if ((states < 0) | (states >= concept.cardinality) | (states != values)).any():
                raise invalid(
                    "concept_target", owner,
                    f"class indices in 0..{concept.cardinality - 1} for the categorical concept {concept.name!r}",
                    "other values", "Pass the class index (not one-hot) in the concept's column.",
                )  # fmt: skip
            columns.append(torch.nn.functional.one_hot(states, concept.cardinality).to(truth.dtype))
        else:
            columns.append(values[:, None])
    return torch.cat(columns, dim=1)


def _group_columns(group: Group, annotations: Annotations | None, width: int) -> list[int]:
    owner = caller()
    if isinstance(group, str) or not isinstance(group, Sequence):
        raise invalid(
            "groups", owner, "a list of groups, each a list of concepts", group, "Write [[0], [0, 1]]."
        )
    columns: list[int] = []
    for item in group:
        if annotations is None:
            if isinstance(item, bool) or not isinstance(item, int | np.integer) or not 0 <= item < width:
                raise invalid("groups", owner, f"column indices in 0..{width - 1}", item,
                              "Pass annotations to name concepts.")  # fmt: skip
            columns.append(int(item))
        else:
            if isinstance(item, str):
                if item not in annotations:
                    raise invalid("groups", owner, f"concept names among {list(annotations.labels)}", item)
                block = annotations.concept(item).slice
            elif (
                isinstance(item, int | np.integer)
                and not isinstance(item, bool)
                and 0 <= item < len(annotations)
            ):
                block = annotations.concepts[int(item)].slice
            else:
                raise invalid("groups", owner, f"concept names or indices in 0..{len(annotations) - 1}", item)
            columns.extend(range(block.start, block.stop))
    return columns


class InterventionOptions(TypedDict, total=False):
    """The keyword-only options of :func:`intervention_curve`, passed on unchanged by :func:`intervention_score`."""

    annotations: Annotations | None
    activation: Callable[[torch.Tensor], torch.Tensor] | None
    scorer: Scorer | None
    average: str | None


@validate_params({"head": Kind(callable, "a callable mapping concepts to task outputs")})
def intervention_curve(
    head: Callable[[torch.Tensor], torch.Tensor],
    concept_preds: ArrayLike,
    concept_target: ArrayLike,
    target: ArrayLike,
    groups: Sequence[Group],
    *,
    annotations: Annotations | None = None,
    activation: Callable[[torch.Tensor], torch.Tensor] | None = torch.sigmoid,
    scorer: Scorer | None = None,
    average: str | None = "macro",
) -> np.ndarray:
    """Task score after intervening on each group of concepts (one value per group).

    Args:
        head: the task predictor on concepts, ``(n, n_columns) → (n, n_outputs)``; run without gradients.
        concept_preds: the head's inputs (predicted concepts, usually probabilities), ``(n, n_columns)``.
        concept_target: ground-truth concepts in the same layout, or with ``annotations`` in
            :class:`ConceptMetrics`' layout ``(n, len(annotations))``.
        target: task labels as the scorer expects them (``(n,)`` classes or ``(n, n_outputs)`` indicators).
        groups: the interventions, each a list of column indices (of concepts, by name or index, with
            ``annotations``).
        annotations: the concepts' layout (categorical blocks intervened as a whole).
        activation: applied to the head's output before scoring (``None``: the raw output).
        scorer: ``scorer(y_true, y_score, average=average)`` (default scikit-learn's ``roc_auc_score``);
            higher must be better.
        average: passed to the scorer; ``None`` does not pass it (e.g. for ``accuracy_score``).

    Returns:
        An array of shape ``(len(groups),)``.

    Example:
        >>> head = lambda c: 3.0 * c[:, :1] - 2.0 * c[:, 1:2] + c[:, 2:3] - 0.5
        >>> c_pred = torch.tensor([[.2, .8, .1], [.6, .1, .6], [.7, .3, .2], [.4, .9, .8], [.3, .2, .9]])
        >>> c_true = torch.tensor([[1.0, 0, 0], [0, 1, 1], [1, 0, 1], [0, 1, 0], [0, 0, 1]])
        >>> intervention_curve(head, c_pred, c_true, torch.tensor([1, 0, 1, 0, 1]), [[2], [2, 1], [2, 1, 0]])
        array([0.33333333, 0.83333333, 1.        ])
    """
    owner = caller()
    preds = check_2d(concept_preds, "concept_preds")
    truth = as_tensor(concept_target, "concept_target")
    if annotations is not None:
        annotations = Annotations.coerce(annotations, owner)
        if preds.shape[1] != annotations.size:
            raise invalid("concept_preds", owner, f"a tensor of shape (n, {annotations.size}) (annotations.size)",
                          f"shape {tuple(preds.shape)}")  # fmt: skip
        if truth.shape != (preds.shape[0], len(annotations)):
            raise invalid("concept_target", owner, f"a tensor of shape ({preds.shape[0]}, {len(annotations)})",
                          f"shape {tuple(truth.shape)}", "One column per concept, as for ConceptMetrics.")  # fmt: skip
        truth = _in_head_layout(truth, annotations)
    elif truth.shape != preds.shape:
        raise invalid("concept_target", owner, f"a tensor of the shape of concept_preds {tuple(preds.shape)}",
                      f"shape {tuple(truth.shape)}")  # fmt: skip
    if isinstance(groups, str) or not isinstance(groups, Sequence) or not groups:
        raise invalid("groups", owner, "a non-empty list of groups", groups, "Write [[0], [0, 1]].")
    y_true = as_tensor(target, "target").detach().cpu().numpy()
    if y_true.shape[0] != preds.shape[0]:
        raise invalid(
            "target", owner, f"{preds.shape[0]} labels (one per row of concept_preds)", y_true.shape[0]
        )
    truth = truth.to(preds)
    scores = []
    with torch.no_grad():
        for group in groups:
            columns = _group_columns(group, annotations, preds.shape[1])
            intervened = preds.clone()
            intervened[:, columns] = truth[:, columns]
            outputs = head(intervened)
            if activation is not None:
                outputs = activation(outputs)
            scores.append(apply_scorer(scorer, y_true, outputs.detach().cpu().numpy(), average))
    return np.asarray(scores, dtype=np.float64)


def intervention_score(
    head: Callable[[torch.Tensor], torch.Tensor],
    concept_preds: ArrayLike,
    concept_target: ArrayLike,
    target: ArrayLike,
    groups: Sequence[Group],
    **options: Unpack[InterventionOptions],
) -> float:
    """Area under the intervention curve: the mean of :func:`intervention_curve` over the groups.

    Same arguments as :func:`intervention_curve` (its keyword-only options: ``annotations``, ``activation``,
    ``scorer``, ``average``). In the scorer's range (``[0, 1]`` for ROC AUC); higher means
    interventions on the concepts fix more of the task.

    Example:
        >>> head = lambda c: 3.0 * c[:, :1] - 2.0 * c[:, 1:2] + c[:, 2:3] - 0.5
        >>> c_pred = torch.tensor([[.2, .8, .1], [.6, .1, .6], [.7, .3, .2], [.4, .9, .8], [.3, .2, .9]])
        >>> c_true = torch.tensor([[1.0, 0, 0], [0, 1, 1], [1, 0, 1], [0, 1, 0], [0, 0, 1]])
        >>> intervention_score(head, c_pred, c_true, torch.tensor([1, 0, 1, 0, 1]), [[2], [2, 1], [2, 1, 0]])
        0.7222222222222222
    """
    return float(intervention_curve(head, concept_preds, concept_target, target, groups, **options).mean())
