"""Concept importance per text at any split point: gradient×input through ``g∘t⁻¹`` (ConSim eq. 3), summed over
a text's activation rows.

At the head input a text has one activation row and this is eq. 3 as written. At a named module ``g`` is the
rest of the network and needs the texts (see :class:`~xaimetrics.models.SplitClassifier`); at ``token`` or
``word`` granularity a text has several rows ``u_1 … u_m`` (one concept vector per token or word), and its
importance is the sum over them, ``φ(x) = Σ_t u_t ⊙ ∇_{u_t} f_co(u_1, …, u_m)[c]`` — the gradient×input of the
whole text, which is what the prompt shows for one sample.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import torch

from xaimetrics._validation import check_positive_int, check_texts, invalid

if TYPE_CHECKING:
    from xaimetrics._protocols import ConceptCodec
    from xaimetrics._typing import Array

__all__ = ["RowSplitModel", "concept_importance"]


class RowSplitModel(Protocol):
    """A split classifier at any split point and granularity (e.g. :class:`~xaimetrics.models.SplitClassifier`):
    ``h`` with its activation rows per text, and ``g`` that may re-run the network on the texts."""

    def activations(self, inputs: Sequence[str], /) -> Array: ...

    def rows_per_text(self, inputs: Sequence[str], /) -> np.ndarray: ...

    def logits_from_activations(
        self, activations: torch.Tensor, inputs: Sequence[str] | None = ..., /
    ) -> torch.Tensor: ...


def _as_tensor(value: object) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.detach().float()
    return torch.as_tensor(np.asarray(value), dtype=torch.float32)


def concept_importance(
    model: RowSplitModel,
    extractor: ConceptCodec,
    inputs: Sequence[str],
    targets: int | Sequence[int] | np.ndarray | torch.Tensor | None = None,
    *,
    batch_size: int = 32,
) -> tuple[np.ndarray, np.ndarray]:
    """Local concept importance of each text, for any split point and granularity.

    Args:
        model: a :class:`~xaimetrics.models.SplitClassifier` (``activations``, ``rows_per_text``,
            ``logits_from_activations(A, inputs)``).
        extractor: a fitted concept extractor whose ``encode``/``decode`` accept torch tensors
            (``decode`` differentiable).
        inputs: the texts, ``n`` strings.
        targets: the class explained per text (array of shape ``(n,)`` or one int); ``None``: the class
            ``f_co`` predicts (as in eq. 4).
        batch_size: texts per forward/backward pass of ``g``.

    Returns:
        ``(φ, predictions)``: ``φ`` of shape ``(n, n_concepts)`` (float64 numpy), and the classes ``f_co``
        predicts (``numpy.ndarray[int64]``, shape ``(n,)``).

    Example:
        >>> import torch
        >>> class Linear:  # h: the text length and its count of "a"; g: a fixed linear head
        ...     def activations(self, texts):
        ...         return torch.tensor([[float(len(t)), float(t.count("a"))] for t in texts])
        ...     def rows_per_text(self, texts):
        ...         return np.ones(len(texts), dtype=np.int64)
        ...     def logits_from_activations(self, A, inputs=None):
        ...         return A @ torch.tensor([[1.0, 0.0], [-1.0, 3.0]])
        >>> class Identity:
        ...     def encode(self, A):
        ...         return A
        ...     def decode(self, U):
        ...         return U
        >>> phi, predicted = concept_importance(Linear(), Identity(), ["aab", "bbbb"])
        >>> phi.tolist(), predicted.tolist()
        ([[0.0, 6.0], [4.0, 0.0]], [1, 0])
    """
    owner = "concept_importance"
    texts = check_texts(inputs, "inputs", owner)
    batch_size = check_positive_int(batch_size, "batch_size", owner)
    rows = np.asarray(model.rows_per_text(texts), dtype=np.int64)
    concepts = _as_tensor(extractor.encode(model.activations(texts)))
    if concepts.ndim != 2 or concepts.shape[0] != int(rows.sum()):
        raise invalid(
            "extractor", owner, f"an encoder returning one concept vector per activation row ({int(rows.sum())})",
            f"shape {tuple(concepts.shape)}",
        )  # fmt: skip
    wanted = _targets(targets, len(texts), owner)
    starts = np.concatenate([[0], np.cumsum(rows)])
    phis: list[torch.Tensor] = []
    predictions: list[torch.Tensor] = []
    with torch.inference_mode(False), torch.enable_grad():
        for first in range(0, len(texts), batch_size):
            last = min(first + batch_size, len(texts))
            u = concepts[starts[first] : starts[last]].clone().requires_grad_(True)
            decoded = extractor.decode(u)
            if not isinstance(decoded, torch.Tensor):
                raise invalid(
                    "extractor", owner, "a decode() that returns a torch tensor for a tensor input",
                    type(decoded).__name__, "Use an xaimetrics extractor, or make decode differentiable.",
                )  # fmt: skip
            logits = model.logits_from_activations(decoded.float(), texts[first:last])
            chosen = logits.argmax(dim=1) if wanted is None else torch.as_tensor(wanted[first:last])
            if int(chosen.max()) >= logits.shape[1]:
                raise invalid("targets", owner, f"class indices below {logits.shape[1]}", int(chosen.max()))
            selected = logits.gather(1, chosen[:, None].to(logits.device)).sum()
            (gradient,) = torch.autograd.grad(selected, u, allow_unused=True)
            if gradient is None:
                gradient = torch.zeros_like(u)
            per_row = (u * gradient).detach()
            owners = torch.as_tensor(np.repeat(np.arange(last - first), rows[first:last]))
            phis.append(torch.zeros(last - first, u.shape[1]).index_add(0, owners, per_row))
            predictions.append(logits.detach().argmax(dim=1).cpu())
    return torch.cat(phis).double().numpy(), torch.cat(predictions).numpy().astype(np.int64)


def _targets(targets: object, n: int, owner: str) -> np.ndarray | None:
    if targets is None:
        return None
    if isinstance(targets, int | np.integer) and not isinstance(targets, bool):
        return np.full(n, int(targets), dtype=np.int64)
    array = np.asarray(targets.detach().cpu() if isinstance(targets, torch.Tensor) else targets)
    if array.shape != (n,) or not np.issubdtype(array.dtype, np.integer) or (array.size and array.min() < 0):
        raise invalid(
            "targets",
            owner,
            f"None, a class index or {n} class indices (one per text)",
            f"shape {array.shape}",
        )
    return array.astype(np.int64)
