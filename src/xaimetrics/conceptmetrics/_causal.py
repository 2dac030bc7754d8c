"""Causal concept effect (CaCE, Goyal et al. 2019) and the residual effect left after a mediator is fixed.

``CaCE_k = E[f_k(x) | do(C=1)] − E[f_k(x) | do(C=0)]``: the mean change of output ``k`` when a concept is
switched on by intervention. The functional core sums predictions per output, so batches accumulate exactly
(:class:`CausalConceptEffect` sums the states across processes). Same numbers as PyC's ``cace_score`` and
``residual_concept_causal_effect`` (``torch_concepts.nn.functional``), except that a residual whose
denominator is 0 is ``nan`` here (PyC divides and returns ``±inf``). :func:`concept_effect` makes the two
interventions on a concept-based head itself (in :class:`Annotations`' layout where given).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from numpy.typing import ArrayLike
from torchmetrics import Metric

from xaimetrics._validation import Interval, Kind, caller, invalid, validate_params
from xaimetrics.conceptmetrics._annotations import Annotations
from xaimetrics.conceptmetrics._checks import as_tensor, check_2d

__all__ = ["CausalConceptEffect", "cace_score", "concept_effect", "residual_concept_causal_effect"]


def _cace_update(
    preds_low: ArrayLike, preds_high: ArrayLike, n_outputs: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Check one batch: ``(sum under do(C=0), sum under do(C=1), number of samples)``."""
    owner = caller()
    low = as_tensor(preds_low, "preds_low")
    high = as_tensor(preds_high, "preds_high")
    if low.ndim not in (1, 2) or low.shape[0] == 0:
        raise invalid("preds_low", owner, "a non-empty tensor of shape (batch,) or (batch, n_outputs)",
                      f"shape {tuple(low.shape)}")  # fmt: skip
    if high.shape != low.shape:
        raise invalid(
            "preds_high", owner, f"a tensor of the shape of preds_low {tuple(low.shape)}",
            f"shape {tuple(high.shape)}", "Predict the same samples under both interventions.",
        )  # fmt: skip
    if n_outputs is not None and (1 if low.ndim == 1 else low.shape[1]) != n_outputs:
        raise invalid(
            "preds_low", owner, f"a tensor with {n_outputs} outputs per sample", f"shape {tuple(low.shape)}"
        )
    low, high = low.detach().double(), high.detach().double()
    return low.sum(dim=0), high.sum(dim=0), torch.tensor(low.shape[0], device=low.device)


@validate_params({})
def cace_score(preds_low: ArrayLike, preds_high: ArrayLike) -> torch.Tensor:
    """Causal concept effect: ``mean(preds_high) − mean(preds_low)`` per output.

    Args:
        preds_low: model outputs (probabilities, logits or values) with the concept set off, ``do(C=0)``,
            shape ``(n_samples, n_outputs)`` or ``(n_samples,)``.
        preds_high: outputs on the same samples with the concept set on, ``do(C=1)``, same shape.

    Returns:
        A float tensor of shape ``(n_outputs,)`` (or a scalar for 1-D inputs) in ``[−1, 1]`` for probabilities:
        positive where switching the concept on raises the output. No better direction: it is an effect size.

    Example:
        >>> low = torch.tensor([[0.2, 0.8], [0.4, 0.6], [0.3, 0.7]])
        >>> high = torch.tensor([[0.9, 0.1], [0.5, 0.5], [0.6, 0.4]])
        >>> cace_score(low, high)
        tensor([ 0.3667, -0.3667])
    """
    low, high, n = _cace_update(preds_low, preds_high)
    return ((high - low) / n).float()


@validate_params({})
def residual_concept_causal_effect(cace_before: ArrayLike, cace_after: ArrayLike) -> torch.Tensor:
    """Share of a concept's causal effect left after intervening on a mediating concept: ``after / before``.

    1 means the mediator carried none of the effect, 0 all of it. Undefined (``nan``) where ``cace_before``
    is 0.

    Args:
        cace_before: CaCE of the concept, shape ``(n_outputs,)`` or a scalar.
        cace_after: CaCE of the same concept with the mediator fixed by intervention, same shape.

    Example:
        >>> residual_concept_causal_effect(torch.tensor([0.5, -0.4, 0.0]), torch.tensor([0.1, -0.3, 0.2]))
        tensor([0.2000, 0.7500,    nan])
    """
    owner = caller()
    before = as_tensor(cace_before, "cace_before")
    after = as_tensor(cace_after, "cace_after")
    if after.shape != before.shape:
        raise invalid("cace_after", owner, f"a tensor of the shape of cace_before {tuple(before.shape)}",
                      f"shape {tuple(after.shape)}")  # fmt: skip
    ratio = after / before
    return torch.where(before == 0, torch.full_like(ratio, float("nan")), ratio)


class CausalConceptEffect(Metric):
    """CaCE accumulated over batches (see :func:`cace_score`); states summed across processes.

    Args:
        n_outputs: number of model outputs (columns of the predictions; 1 for 1-D predictions).
        kwargs: passed to ``torchmetrics.Metric``.

    Example:
        >>> metric = CausalConceptEffect(n_outputs=2)
        >>> metric.update(torch.tensor([[0.2, 0.8]]), torch.tensor([[0.9, 0.1]]))
        >>> metric.update(torch.tensor([[0.4, 0.6], [0.3, 0.7]]), torch.tensor([[0.5, 0.5], [0.6, 0.4]]))
        >>> metric.compute()
        tensor([ 0.3667, -0.3667])
    """

    is_differentiable = False
    higher_is_better = None
    full_state_update = False

    sum_low: torch.Tensor
    sum_high: torch.Tensor
    total: torch.Tensor

    @validate_params({"n_outputs": Interval(int, 1)})
    def __init__(self, n_outputs: int, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.n_outputs = int(n_outputs)
        zeros = torch.zeros(self.n_outputs, dtype=torch.float64)
        self.add_state("sum_low", default=zeros.clone(), dist_reduce_fx="sum")
        self.add_state("sum_high", default=zeros.clone(), dist_reduce_fx="sum")
        self.add_state("total", default=torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")

    @validate_params({})
    def update(self, preds_low: ArrayLike, preds_high: ArrayLike) -> None:
        """Add a batch of predictions under ``do(C=0)`` and ``do(C=1)`` (same samples, same shape)."""
        low, high, n = _cace_update(preds_low, preds_high, self.n_outputs)
        self.sum_low += low.reshape(-1)
        self.sum_high += high.reshape(-1)
        self.total += n

    def compute(self) -> torch.Tensor:
        """CaCE per output, shape ``(n_outputs,)`` (``nan`` before any sample)."""
        return ((self.sum_high - self.sum_low) / self.total).float()


@validate_params({"head": Kind(callable, "a callable mapping concepts to outputs")})
def concept_effect(
    head: Callable[[torch.Tensor], torch.Tensor],
    concept_preds: ArrayLike,
    concept: int | str,
    *,
    annotations: Annotations | None = None,
    low: float | Sequence[float] = 0.0,
    high: float | Sequence[float] = 1.0,
    activation: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> torch.Tensor:
    """CaCE of one concept on a concept-based head: :func:`cace_score` of ``head`` under ``do(C=low)`` and
    ``do(C=high)``, the other concepts left as predicted (what PyC's unimplemented ``compute_cace`` describes).

    Args:
        head: the model on concepts, ``(n, n_columns) → (n, n_outputs)`` or ``(n,)``; run without gradients.
        concept_preds: the head's inputs (predicted concepts, usually probabilities), ``(n, n_columns)``.
        concept: a column index, or with ``annotations`` a concept name or index (its whole block is set).
        annotations: the layout of the columns (:class:`Annotations`, or PyC's).
        low: the value set for ``do(C=low)``: a number, or for a categorical concept a distribution over its
            states (e.g. ``[1, 0, 0]``).
        high: the value for ``do(C=high)``, likewise.
        activation: applied to the head's output (e.g. ``torch.sigmoid``); ``None``: the raw output.

    Returns:
        A float tensor of shape ``(n_outputs,)`` (a scalar for a 1-D head).

    Example:
        >>> head = lambda c: torch.stack([2 * c[:, 0] - c[:, 1], c[:, 1] * c[:, 2]], dim=1)
        >>> c = torch.tensor([[0.2, 0.9, 0.5], [0.7, 0.1, 1.0], [0.4, 0.6, 0.0]])
        >>> concept_effect(head, c, 1)  # d/dc1: −1 on output 0, mean c2 = 0.5 on output 1
        tensor([-1.0000,  0.5000])
    """
    owner = caller()
    preds = check_2d(concept_preds, "concept_preds")
    if annotations is None:
        if isinstance(concept, bool) or not isinstance(concept, int) or not 0 <= concept < preds.shape[1]:
            raise invalid("concept", owner, f"a column index in 0..{preds.shape[1] - 1}", concept,
                          "Pass annotations to name concepts.")  # fmt: skip
        columns = slice(concept, concept + 1)
    else:
        annotations = Annotations.coerce(annotations, owner)
        if preds.shape[1] != annotations.size:
            raise invalid("concept_preds", owner, f"a tensor of shape (n, {annotations.size}) (annotations.size)",
                          f"shape {tuple(preds.shape)}")  # fmt: skip
        if isinstance(concept, str) and concept in annotations:
            columns = annotations.concept(concept).slice
        elif isinstance(concept, int) and not isinstance(concept, bool) and 0 <= concept < len(annotations):
            columns = annotations.concepts[concept].slice
        else:
            raise invalid(
                "concept", owner, f"a concept name among {list(annotations.labels)} or an index", concept
            )
    width = columns.stop - columns.start
    outputs = []
    with torch.no_grad():
        for name, value in (("low", low), ("high", high)):
            block = as_tensor(value, name).to(preds).reshape(-1)
            if block.numel() not in (1, width):
                raise invalid(name, owner, f"a number or {width} values (the concept's columns)", value)
            intervened = preds.clone()
            intervened[:, columns] = block
            out = head(intervened)
            outputs.append(activation(out) if activation is not None else out)
    return cace_score(outputs[0], outputs[1])
