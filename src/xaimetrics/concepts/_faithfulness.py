"""Faithfulness metrics of a concept space (ConSim paper, App. D.2): how much of the model survives the
concept bottleneck ``f_c = g∘t⁻¹∘t∘h``.

Every function takes numpy arrays or tensors and returns a Python ``float`` computed in float64.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._arrays import to_numpy
from xaimetrics._validation import Interval, caller, invalid, validate_params
from xaimetrics.concepts._concept_model import check_matrix

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from xaimetrics._typing import Array

__all__ = ["completeness", "latent_l2", "latent_wasserstein", "logits_kl", "logits_l2"]


def _pair(first: Array, second: Array, names: tuple[str, str]) -> tuple[np.ndarray, np.ndarray]:
    owner = caller()
    a = to_numpy(check_matrix(first, names[0])).astype(np.float64)
    b = to_numpy(check_matrix(second, names[1])).astype(np.float64)
    if a.shape != b.shape:
        raise invalid(
            names[1],
            owner,
            f"an array of the same shape as '{names[0]}' {a.shape}",
            f"shape {b.shape}",
            f"Pass '{names[1]}' computed from the same samples as '{names[0]}'.",
        )
    return a, b


@validate_params({})
def latent_l2(activations: Array, reconstructed: Array, *, relative: bool = False) -> float:
    """Reconstruction error of the activations, ``mean_x ‖h(x) − t⁻¹(f_ic(x))‖²`` (App. D.2 "latents L2").

    Args:
        activations: ``A = h(X)``, shape ``(n_samples, n_features)``.
        reconstructed: ``Â = t⁻¹(t(A))`` (``extractor.decode(extractor.encode(A))``), same shape.
        relative: return ``‖A − Â‖²_F / ‖A‖²_F`` instead (0 for a perfect reconstruction, scale-free;
            ``nan`` if ``A`` is all zeros).

    Example:
        >>> import numpy as np
        >>> A = np.array([[1.0, 2.0], [3.0, 0.0]])
        >>> latent_l2(A, np.array([[1.0, 1.0], [1.0, 0.0]]))
        2.5
        >>> latent_l2(A, np.array([[1.0, 1.0], [1.0, 0.0]]), relative=True)
        0.35714285714285715
    """
    a, b = _pair(activations, reconstructed, ("activations", "reconstructed"))
    squared = ((a - b) ** 2).sum(axis=1)
    if relative:
        total = float((a**2).sum())
        return float(squared.sum() / total) if total > 0 else float("nan")
    return float(squared.mean())


@validate_params({})
def latent_wasserstein(activations: Array, reconstructed: Array) -> float:
    """Distribution error of the reconstruction: the 1-Wasserstein distance between the values of each
    feature in ``A`` and in ``Â``, averaged over features (Interpreto's ``FID`` reconstruction metric, after
    Fel et al. 2023: it asks whether the reconstructed *distribution* matches, not each sample).

    ``W1`` of two samples of equal size with equal weights is the mean absolute difference of their sorted
    values, so the whole metric is one sort per column: ``mean_d mean_i |sort(A[:, d])_i − sort(Â[:, d])_i|``,
    equal to the mean over features of ``scipy.stats.wasserstein_distance(A[:, d], Â[:, d])``. Lower is better;
    0 when every feature's values are a permutation of the originals (even if the samples are shuffled), in
    the units of the activations, unbounded above.

    Args:
        activations: ``A = h(X)``, shape ``(n_samples, n_features)``.
        reconstructed: ``Â = t⁻¹(t(A))``, same shape.

    Example:
        >>> import numpy as np
        >>> A = np.array([[1.0, 2.0], [3.0, 0.0], [0.0, 1.0]])
        >>> latent_wasserstein(A, np.array([[3.0, 1.0], [0.0, 2.0], [1.0, 0.0]]))  # rows shuffled: 0
        0.0
        >>> round(latent_wasserstein(A, np.array([[1.0, 1.0], [2.0, 0.0], [0.0, 3.0]])), 4)
        0.3333
    """
    a, b = _pair(activations, reconstructed, ("activations", "reconstructed"))
    return float(np.abs(np.sort(a, axis=0) - np.sort(b, axis=0)).mean())


@validate_params({})
def logits_l2(logits: Array, concept_logits: Array) -> float:
    """Reconstruction error of the logits, ``mean_x ‖f(x) − f_c(x)‖²`` (App. D.2 "logits L2").

    Example:
        >>> import numpy as np
        >>> logits_l2(np.array([[2.0, -1.0], [0.0, 1.0]]), np.array([[1.0, -1.0], [0.0, 3.0]]))
        2.5
    """
    a, b = _pair(logits, concept_logits, ("logits", "concept_logits"))
    return float(((a - b) ** 2).sum(axis=1).mean())


@validate_params({})
def logits_kl(logits: Array, concept_logits: Array) -> float:
    """Mean Kullback–Leibler divergence ``KL(softmax f(x) ‖ softmax f_c(x))`` over samples (App. D.2 "logits KL").

    The model's distribution ``p = softmax(f(x))`` is the reference: ``KL = Σ_c p_c (log p_c − log q_c)``
    with ``q = softmax(f_c(x))``, natural logarithm (nats), computed from log-softmax for stability. Equal to
    ``torch.nn.functional.kl_div(log q, p, reduction="batchmean")``.

    Example:
        >>> import numpy as np
        >>> round(logits_kl(np.array([[2.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 0.0], [0.0, 3.0]])), 6)
        0.300511
    """
    from scipy.special import log_softmax

    a, b = _pair(logits, concept_logits, ("logits", "concept_logits"))
    log_p = log_softmax(a, axis=1)
    log_q = log_softmax(b, axis=1)
    return float((np.exp(log_p) * (log_p - log_q)).sum(axis=1).mean())


@validate_params({"n_classes": (Interval(int, 2, text="an integer ≥ 2 (or None: from the data)"), None)})
def completeness(
    predictions: ArrayLike,
    concept_predictions: ArrayLike,
    labels: ArrayLike | None = None,
    *,
    n_classes: int | None = None,
) -> float:
    """Completeness of the concept model (Yeh et al. 2020, App. D.2): ``(acc(f_c) − a_r) / (acc(f) − a_r)``.

    ``acc`` is accuracy against ``labels`` and ``a_r = 1 / n_classes`` the expected accuracy of uniform
    random guessing. As the concept model is fixed (``f_c = g∘t⁻¹∘t∘h``, no head retrained), no
    optimisation over ``g`` is done, unlike Yeh et al.'s supremum. 1 means ``f_c`` is as accurate as ``f``;
    0 means chance. It can exceed 1 when ``f_c`` beats ``f``.

    Without ``labels``, the model's own predictions are the reference (``acc(f) = 1``) and the score is the
    chance-corrected agreement ``(agreement(f_c, f) − a_r) / (1 − a_r)``.

    Args:
        predictions: classes predicted by ``f``, integers of shape ``(n_samples,)``.
        concept_predictions: classes predicted by ``f_c``, same shape.
        labels: true classes, same shape, or ``None``.
        n_classes: number of classes (≥ 2); default ``1 + the largest class index seen`` (pass it when a
            class may be absent from the data).

    Returns:
        The completeness, or ``nan`` when ``f`` is no better than chance (``acc(f) <= a_r``).

    Example:
        >>> completeness([0, 1, 1, 0], [0, 1, 0, 0], labels=[0, 1, 1, 1])  # (0.5 − 0.5) / (0.75 − 0.5)
        0.0
        >>> completeness([0, 1, 1, 0], [0, 1, 0, 0])  # agreement 0.75
        0.5
    """
    owner = caller()
    f = _classes(predictions, "predictions")
    fc = _classes(concept_predictions, "concept_predictions")
    _same_length(f, fc, "concept_predictions")
    y = f if labels is None else _classes(labels, "labels")
    _same_length(f, y, "labels")
    largest = int(max(f.max(), fc.max(), y.max())) + 1
    n_classes = max(largest, 2) if n_classes is None else int(n_classes)
    if largest > n_classes:
        raise invalid("n_classes", owner, f"larger than every class index (≥ {largest})", n_classes)
    chance = 1.0 / n_classes
    accuracy_f = float((f == y).mean())
    if accuracy_f <= chance:
        return float("nan")
    return (float((fc == y).mean()) - chance) / (accuracy_f - chance)


def _classes(values: object, name: str) -> np.ndarray:
    owner = caller()
    array = to_numpy(values)
    if array.ndim != 1 or array.size == 0 or not np.issubdtype(array.dtype, np.integer):
        raise invalid(
            name,
            owner,
            "a non-empty integer array of shape (n_samples,)",
            f"an array of dtype {array.dtype} and shape {tuple(array.shape)}",
        )
    if array.min() < 0:
        raise invalid(name, owner, "non-negative class indices", int(array.min()))
    return array


def _same_length(first: np.ndarray, second: np.ndarray, name: str) -> None:
    owner = caller()
    if len(first) != len(second):
        raise invalid(
            name,
            owner,
            f"one class per sample ({len(first)}, the length of 'predictions')",
            f"{len(second)} values",
        )
