"""Concept importance (ConSim paper §3.3 eq. 3–4, App. B.2 eq. 9–10, App. B.3 Tab. 4).

- Local importance (eq. 3) is gradient×input in concept space: ``φ(u) = u ⊙ ∇_u f_co(u)[c]`` with
  ``f_co = g∘t⁻¹``. Because the model is split at the penultimate layer, gradient×input is an optimal
  attribution there (Fel et al. 2023, theorem 3.2), and it only needs a backward pass through the head.
- Global importance (eq. 4) of class ``c`` is the mean of ``φ`` over the samples that ``f_co`` predicts as ``c``.
- Normalisation (eq. 9–10) divides by the sum of absolute values over concepts.
- Buckets (Tab. 4) turn a normalised importance into one of ``"--"``, ``"-"``, ``"+"``, ``"++"`` or hide it.
  The reference code tested the buckets in an order that made ``"++"`` unreachable; here each interval of
  Tab. 4 maps to its own sign.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, overload

import numpy as np

from xaimetrics._arrays import is_tensor, to_numpy
from xaimetrics._validation import Interval, caller, invalid, validate_params
from xaimetrics.concepts._concept_model import as_f_co, check_matrix

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from xaimetrics._protocols import ArrayFunction, ConceptCodec, HeadLike

if TYPE_CHECKING:
    import torch

    from xaimetrics._typing import Array

__all__ = [
    "IMPORTANCE_THRESHOLD",
    "global_importance",
    "importance_bucket",
    "important_concepts",
    "local_importance",
    "normalize_importance",
]

#: The paper's display threshold τ on normalised importances (App. B.3, App. D "nb important").
IMPORTANCE_THRESHOLD = 0.05

Bucket = Literal["--", "-", "+", "++"]


@overload
def local_importance(
    model: HeadLike,
    concepts: Array,
    targets: int | Sequence[int] | np.ndarray | torch.Tensor | None = ...,
    *,
    extractor: ConceptCodec | None = ...,
    batch_size: int = ...,
    return_predictions: Literal[False] = ...,
) -> Array: ...
@overload
def local_importance(
    model: HeadLike,
    concepts: Array,
    targets: int | Sequence[int] | np.ndarray | torch.Tensor | None = ...,
    *,
    extractor: ConceptCodec | None = ...,
    batch_size: int = ...,
    return_predictions: Literal[True],
) -> tuple[Array, np.ndarray]: ...
@validate_params({"batch_size": Interval(int, 1)})
def local_importance(
    model: HeadLike,
    concepts: Array,
    targets: int | Sequence[int] | np.ndarray | torch.Tensor | None = None,
    *,
    extractor: ConceptCodec | None = None,
    batch_size: int = 256,
    return_predictions: bool = False,
) -> Array | tuple[Array, np.ndarray]:
    """Local concept importance by gradient×input, ``φ(u) = u ⊙ ∇_u f_co(u)[target]`` (paper eq. 3).

    One forward and one backward per batch: the gradient of the sum of the selected logits gives every
    sample's gradient at once, because ``f_co`` treats samples independently (models in eval mode).

    Args:
        model: ``f_co`` — a callable mapping a concept tensor ``(b, k)`` to logits ``(b, c)``, e.g. a
            :class:`ConceptModel`; or a split classifier (``g`` = ``logits_from_activations``) or a
            callable ``g`` together with ``extractor``.
        concepts: concept activations ``U = f_ic(X)``, array of shape ``(n_samples, n_concepts)``.
        targets: the class explained for each sample: ``None`` (default) for the class predicted by
            ``f_co(u)`` (as in eq. 4), one class index for all samples, or an array of shape ``(n_samples,)``.
        extractor: the fitted extractor whose ``decode`` is ``t⁻¹``, when ``model`` is ``g`` only.
        batch_size: samples per forward/backward pass.
        return_predictions: also return the classes predicted by ``f_co`` (``numpy.ndarray[int64]``).

    Returns:
        ``φ``, same kind (numpy or torch, detached, on the same device) and dtype as ``concepts``, shape
        ``(n_samples, n_concepts)``; with ``return_predictions``, the pair ``(φ, predictions)``.

    Raises:
        InvalidParameterError: bad shapes, a ``targets`` length that differs from the number of samples,
            or a class index outside ``[0, n_classes)``.

    Example:
        >>> import torch
        >>> W = torch.tensor([[1.0, -2.0], [0.5, 3.0], [-1.0, 0.0]])  # g∘t⁻¹ is linear: logits = u @ W
        >>> U = torch.tensor([[2.0, 1.0, 1.0], [1.0, 1.0, 3.0]])
        >>> local_importance(lambda u: u @ W, U).tolist()  # classes 0 then 1 are predicted
        [[2.0, 0.5, -1.0], [-2.0, 3.0, 0.0]]
        >>> local_importance(lambda u: u @ W, U, targets=1).tolist()
        [[-4.0, 3.0, 0.0], [-2.0, 3.0, 0.0]]
    """
    owner = caller()
    f_co = as_f_co(model, extractor)
    concepts = check_matrix(concepts, "concepts", what="(n_samples, n_concepts)")
    n_samples = concepts.shape[0]
    target_array = _check_targets(targets, n_samples, owner)
    phi, logits = gradient_x_input(f_co, concepts, target_array, batch_size, owner)
    result: Array = phi.to(concepts.device) if is_tensor(concepts) else phi.numpy()
    if return_predictions:
        return result, logits.argmax(dim=1).numpy().astype(np.int64)
    return result


def gradient_x_input(
    f_co: ArrayFunction, concepts: Array, targets: np.ndarray | None, batch_size: int, owner: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(φ, logits)`` as CPU tensors; ``φ`` in the dtype of ``concepts``, ``logits = f_co(concepts)`` detached."""
    import torch

    source = concepts if is_tensor(concepts) else torch.from_numpy(np.ascontiguousarray(concepts))
    phis: list[torch.Tensor] = []
    all_logits: list[torch.Tensor] = []
    with torch.inference_mode(False), torch.enable_grad():
        for start in range(0, source.shape[0], batch_size):
            # clone() outside inference mode also turns an inference tensor into a normal one
            u = source[start : start + batch_size].detach().clone().requires_grad_(True)
            logits = f_co(u)
            if not is_tensor(logits) or logits.ndim != 2 or logits.shape[0] != u.shape[0]:
                shape = tuple(logits.shape) if hasattr(logits, "shape") else type(logits).__name__
                raise invalid(
                    "model",
                    owner,
                    f"a function returning a logits tensor of shape ({u.shape[0]}, n_classes) for a batch "
                    f"of {u.shape[0]} concept vectors",
                    shape,
                    "f_co must be written in torch so that importance can take its gradient.",
                )
            if targets is None:
                selected = logits.argmax(dim=1)
            else:
                selected = torch.as_tensor(targets[start : start + batch_size], device=logits.device)
                if int(selected.max()) >= logits.shape[1]:
                    raise invalid(
                        "targets",
                        owner,
                        f"class indices in [0, {logits.shape[1]}) (the model has {logits.shape[1]} classes)",
                        int(selected.max()),
                    )
            chosen = logits.gather(1, selected[:, None]).sum()
            if not chosen.requires_grad:
                raise invalid(
                    "model",
                    owner,
                    "differentiable with respect to the concepts (torch operations from concepts to logits)",
                    "logits that are not connected to the concepts in the autograd graph",
                    "Check that f_co (or the extractor's decode and g) does not detach, leave torch, or run "
                    "under torch.no_grad.",
                )
            (gradient,) = torch.autograd.grad(chosen, u, allow_unused=True)
            if gradient is None:  # the selected logits do not depend on the concepts
                gradient = torch.zeros_like(u)
            phis.append((u * gradient).detach().cpu())
            all_logits.append(logits.detach().cpu())
    return torch.cat(phis), torch.cat(all_logits)


def _check_targets(targets: object, n_samples: int, owner: str) -> np.ndarray | None:
    if targets is None:
        return None
    if isinstance(targets, int | np.integer) and not isinstance(targets, bool):
        array = np.full(n_samples, int(targets), dtype=np.int64)
    else:
        array = to_numpy(targets)
        if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
            raise invalid(
                "targets",
                owner,
                "None, a class index or an integer array of shape (n_samples,)",
                _shape(array),
            )
        if len(array) != n_samples:
            raise invalid(
                "targets",
                owner,
                f"one class index per sample ({n_samples})",
                f"{len(array)} targets",
                "Pass one target per row of 'concepts'.",
            )
        array = array.astype(np.int64)
    if array.min() < 0:
        raise invalid("targets", owner, "non-negative class indices", int(array.min()))
    return array


def _shape(array: np.ndarray) -> str:
    return f"an array of dtype {array.dtype} and shape {tuple(array.shape)}"


@validate_params(
    {"n_classes": (Interval(int, 1, text="an integer ≥ 1 (or None: 1 + the largest class)"), None)}
)
def global_importance(importance: Array, predictions: ArrayLike, n_classes: int | None = None) -> Array:
    """Global concept importance per class (paper eq. 4): ``Φ_c = mean of φ(u) over samples predicted as c``.

    A class that no sample is predicted as gets a row of zeros (not NaN): after normalisation no concept is
    shown for it, and the result stays usable in prompts and metrics.

    Args:
        importance: local importances ``φ``, array of shape ``(n_samples, n_concepts)``.
        predictions: the class predicted for each sample (by ``f_co``, eq. 4), integers of shape ``(n_samples,)``.
        n_classes: number of classes; default ``max(predictions) + 1``.

    Returns:
        ``Φ``, same kind and dtype as ``importance``, shape ``(n_classes, n_concepts)``.

    Example:
        >>> import numpy as np
        >>> phi = np.array([[1.0, -2.0], [3.0, 0.0], [0.5, 0.5]])
        >>> global_importance(phi, [1, 1, 0], n_classes=3).tolist()
        [[0.5, 0.5], [2.0, -1.0], [0.0, 0.0]]
    """
    owner = caller()
    importance = check_matrix(importance, "importance", what="(n_samples, n_concepts)")
    labels = to_numpy(predictions)
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer):
        raise invalid("predictions", owner, "an integer array of shape (n_samples,)", _shape(labels))
    if len(labels) != importance.shape[0]:
        raise invalid(
            "predictions",
            owner,
            f"one class per row of 'importance' ({importance.shape[0]})",
            f"{len(labels)} predictions",
        )
    if labels.min() < 0:
        raise invalid("predictions", owner, "non-negative class indices", int(labels.min()))
    if n_classes is None:
        n_classes = int(labels.max()) + 1
    n_classes = int(n_classes)
    if labels.max() >= n_classes:
        raise invalid("predictions", owner, f"class indices < n_classes ({n_classes})", int(labels.max()))
    values = to_numpy(importance)
    totals = np.zeros((n_classes, values.shape[1]), dtype=np.float64)
    np.add.at(totals, labels.astype(np.int64), values.astype(np.float64))
    counts = np.bincount(labels, minlength=n_classes).astype(np.float64)
    means = (totals / np.maximum(counts, 1.0)[:, None]).astype(values.dtype)
    return _like(means, importance)


def normalize_importance(importance: Array) -> Array:
    """Divide importances by their sum of absolute values over concepts (paper eq. 9–10).

    Works on one vector ``(n_concepts,)`` or on rows ``(n_rows, n_concepts)`` (samples for ``φ``, classes for
    ``Φ``). A row of zeros stays zero. Each non-zero row then has ``Σ|x| = 1``.

    Example:
        >>> import numpy as np
        >>> normalize_importance(np.array([[2.0, -1.0, 1.0], [0.0, 0.0, 0.0]])).tolist()
        [[0.5, -0.25, 0.25], [0.0, 0.0, 0.0]]
    """
    owner = "normalize_importance"
    if is_tensor(importance):
        if importance.ndim not in (1, 2) or importance.numel() == 0:
            raise invalid(
                "importance", owner, "a non-empty 1-D or 2-D array", f"shape {tuple(importance.shape)}"
            )
        total = importance.abs().sum(dim=-1, keepdim=True)
        return importance / total.where(total > 0, total.new_ones(()))
    values = np.asarray(importance)
    if values.ndim not in (1, 2) or values.size == 0 or not np.issubdtype(values.dtype, np.number):
        raise invalid("importance", owner, "a non-empty numeric 1-D or 2-D array", _shape(values))
    values = values.astype(np.result_type(values.dtype, np.float32))
    total = np.abs(values).sum(axis=-1, keepdims=True)
    return np.divide(values, total, out=np.zeros_like(values), where=total > 0)


def importance_bucket(value: float) -> Bucket | None:
    """The sign shown for a normalised importance (paper Tab. 4), or ``None`` when it is hidden.

    ========================  ==========
    normalised importance     shown as
    ========================  ==========
    ``[-1, -0.3]``            ``"--"``
    ``]-0.3, -0.05]``         ``"-"``
    ``]-0.05, 0.05[``         hidden (``None``)
    ``[0.05, 0.3[``           ``"+"``
    ``[0.3, 1]``              ``"++"``
    ========================  ==========

    Normalised values lie in ``[-1, 1]``; values beyond (rounding, or an unnormalised input) go to the outer
    buckets (``> 1`` → ``"++"``, ``< -1`` → ``"--"``). Note that ±0.05 exactly gets a sign here while
    :func:`important_concepts` keeps ``|x| > 0.05`` strictly, as in the paper.

    Raises:
        InvalidParameterError: ``value`` is not a finite real number.

    Example:
        >>> [importance_bucket(v) for v in (-0.3, -0.05, 0.0499, 0.05, 0.3)]
        ['--', '-', None, '+', '++']
    """
    if (is_tensor(value) or isinstance(value, np.ndarray)) and value.ndim == 0:
        value = value.item()  # a 0-d array or tensor holds one number
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise invalid("value", "importance_bucket", "one real number", type(value).__name__)
    value = float(value)
    if not math.isfinite(value):
        raise invalid(
            "value", "importance_bucket", "a finite number", value, "Check the importances for NaN."
        )
    if value <= -0.3:
        return "--"
    if value <= -0.05:
        return "-"
    if value >= 0.3:
        return "++"
    if value >= 0.05:
        return "+"
    return None


@validate_params({"threshold": Interval(float, 0, text="a non-negative number")})
def important_concepts(
    importance: Array, threshold: float = IMPORTANCE_THRESHOLD, *, per_row: bool = False
) -> np.ndarray | list[np.ndarray]:
    """Concept ids whose normalised importance exceeds ``threshold`` in absolute value.

    - For global importances ``Φ̂`` of shape ``(n_classes, n_concepts)``: the concepts shown in prompts, i.e.
      those with ``|Φ̂_c,i| > τ`` for at least one class (App. D "nb important" takes the union over classes).
      The paper's formula writes ``Φ̂ > τ`` without the absolute value, but its prompts show strongly
      negative concepts too (bucket ``"--"``), so the absolute value is used.
    - With ``per_row=True``: one array per row, e.g. the concepts shown in each local explanation (``|φ̂| > τ``).
    - For a 1-D vector: the ids of its entries above the threshold.

    Args:
        importance: normalised importances, shape ``(n_concepts,)`` or ``(n_rows, n_concepts)``.
        threshold: ``τ``, default 0.05 (the paper's).
        per_row: return one id array per row instead of the union.

    Returns:
        Sorted ``numpy.ndarray[int64]`` of concept ids, or a list of them with ``per_row``.

    Example:
        >>> import numpy as np
        >>> Phi_hat = np.array([[0.6, -0.02, -0.38], [0.01, 0.04, -0.95]])
        >>> important_concepts(Phi_hat).tolist()
        [0, 2]
        >>> [ids.tolist() for ids in important_concepts(Phi_hat, per_row=True)]
        [[0, 2], [2]]
    """
    values = to_numpy(importance)
    if values.ndim not in (1, 2) or values.size == 0 or not np.issubdtype(values.dtype, np.number):
        raise invalid("importance", caller(), "a non-empty numeric 1-D or 2-D array", _shape(values))
    above = np.abs(values) > threshold
    if values.ndim == 1:
        return np.flatnonzero(above).astype(np.int64)
    if per_row:
        return [np.flatnonzero(row).astype(np.int64) for row in above]
    return np.flatnonzero(above.any(axis=0)).astype(np.int64)


def _like(values: np.ndarray, reference: object) -> Array:
    """``values`` as the same kind (and device) as ``reference``."""
    if is_tensor(reference):
        import torch

        return torch.from_numpy(values).to(reference.device)
    return values
