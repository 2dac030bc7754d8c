"""TCAV score (Kim et al. 2018): the fraction of inputs whose target output rises along a concept's direction.

The conceptual sensitivity of concept ``c`` at input ``x`` is the directional derivative
``S_c(x) = ∇_a f_target(a) · v_c`` of the target output with respect to the activations ``a = h(x)``, along the
concept activation vector ``v_c``; TCAV is ``#{x : S_c(x) > 0} / N`` (a zero derivative does not count).
One backward pass gives every sample's gradient, so the head must treat samples independently (BatchNorm in
eval mode). Same numbers as PyC's ``tcav_score``; the significance test against random CAVs is the caller's.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from numpy.typing import ArrayLike

from xaimetrics._validation import Kind, caller, check_positive_int, invalid, validate_params
from xaimetrics.conceptmetrics._annotations import Annotations
from xaimetrics.conceptmetrics._checks import check_2d

__all__ = ["tcav_score"]


def _target_column(target: int | str | tuple[str, int], annotations: Annotations | None) -> int:
    """The output column named by ``target``: an index, a one-column concept, or ``(concept, state index)``."""
    owner = caller()
    if annotations is None or (isinstance(target, int) and not isinstance(target, bool)):
        return check_positive_int(target, "target", owner, minimum=0)
    annotations = Annotations.coerce(annotations, owner)
    concept: object = target
    state: object = None
    if isinstance(target, tuple) and len(target) == 2:
        concept, state = target
    if not isinstance(concept, str) or concept not in annotations:
        expected = f"an output index, a concept among {list(annotations.labels)}, or (concept, state index)"
        raise invalid("target", owner, expected, target)
    block = annotations.concept(concept).slice
    width = block.stop - block.start
    if state is None:
        if width > 1:
            raise invalid("target", owner, "a one-column concept", f"{concept!r} with {width} states",
                          f"Name one state: target=({concept!r}, state index).")  # fmt: skip
        return block.start
    if isinstance(state, bool) or not isinstance(state, int) or not 0 <= state < width:
        raise invalid("target", owner, f"a state index in 0..{width - 1} of {concept!r}", state)
    return block.start + state


@validate_params({"head": Kind(callable, "a callable mapping activations to outputs")})
def tcav_score(
    embeddings: ArrayLike,
    head: Callable[[torch.Tensor], torch.Tensor],
    cavs: ArrayLike,
    *,
    target: int | str | tuple[str, int] = 0,
    annotations: Annotations | None = None,
) -> torch.Tensor:
    """TCAV score of each concept for output ``target``.

    Args:
        embeddings: activations at the layer where the CAVs were fit, shape ``(n_samples, n_features)``.
        head: the model downstream of that layer, ``(n, n_features) → (n, n_outputs)`` or ``(n,)``.
        cavs: concept activation vectors, shape ``(n_concepts, n_features)``.
        target: the output column differentiated (ignored for a 1-D output); with ``annotations``, also a
            one-column concept's name or ``(concept, state index)`` of a categorical one.
        annotations: the layout of the head's outputs (:class:`Annotations`, or PyC's), to name ``target``.

    Returns:
        A tensor of shape ``(n_concepts,)`` in ``[0, 1]``; no better direction: 0.5 means no systematic
        influence, values far from 0.5 a relevant concept (1 positive, 0 negative).

    Example:
        >>> head = lambda a: torch.stack([a[:, 0] ** 2 - a[:, 1], a[:, 1]], dim=1)
        >>> a = torch.tensor([[1.0, 0.0], [-1.0, 2.0], [0.5, 1.0]])
        >>> tcav_score(a, head, torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
        tensor([0.6667, 0.0000, 0.3333])
    """
    owner = caller()
    x = check_2d(embeddings, "embeddings")
    v = check_2d(cavs, "cavs", columns=x.shape[1])
    column = _target_column(target, annotations)
    x = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        outputs = head(x)
        if (
            not isinstance(outputs, torch.Tensor)
            or outputs.ndim not in (1, 2)
            or outputs.shape[0] != x.shape[0]
        ):
            shape = tuple(outputs.shape) if isinstance(outputs, torch.Tensor) else type(outputs).__name__
            raise invalid(
                "head", owner, f"a callable returning ({x.shape[0]}, n_outputs) or ({x.shape[0]},)", shape
            )
        if outputs.ndim == 2:
            if column >= outputs.shape[1]:
                raise invalid("target", owner, f"an output index < {outputs.shape[1]}", target)
            outputs = outputs[:, column]
        (gradients,) = torch.autograd.grad(outputs.sum(), x)
    sensitivity = gradients @ v.to(gradients).T
    return (sensitivity > 0).float().mean(dim=0)
