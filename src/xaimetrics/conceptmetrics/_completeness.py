"""Scorer-based completeness (Yeh et al. 2020, as in PyC): ``score(concept model) / score(black box)``.

Both models are scored against the true labels with one scikit-learn scorer (ROC AUC by default, F1 with
``scorer=f1_score``); the ratio is 1 when the concept-based (white-box) model does as well as the black box.
Unlike :func:`xaimetrics.concepts.completeness`, it is not chance-corrected: a concept model at chance
accuracy keeps a ratio of about 0.5 under ROC AUC. Undefined (``nan``) when the black box scores 0; PyC adds
1e-10 to the denominator instead (a relative difference of 1e-10 elsewhere).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import torch
from numpy.typing import ArrayLike

from xaimetrics._validation import caller, invalid, validate_params

__all__ = ["Scorer", "apply_scorer", "completeness_score"]


class Scorer(Protocol):
    """A scikit-learn style score, ``scorer(y_true, y_pred, **kwargs) -> float`` (higher is better)."""

    def __call__(self, y_true: np.ndarray, y_pred: np.ndarray, /, **kwargs: str) -> float: ...


def apply_scorer(scorer: Scorer | None, y_true: np.ndarray, y_pred: np.ndarray, average: str | None) -> float:
    """``scorer(y_true, y_pred, average=average)`` (``average`` left out when ``None``); default ROC AUC."""
    if scorer is None:
        from sklearn.metrics import roc_auc_score

        scorer = roc_auc_score
    return float(scorer(y_true, y_pred) if average is None else scorer(y_true, y_pred, average=average))


def _numpy(value: ArrayLike, name: str) -> np.ndarray:
    owner = caller()
    array = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise invalid(name, owner, "an array of numbers", f"dtype {array.dtype}")
    if array.ndim not in (1, 2) or array.shape[0] == 0:
        raise invalid(
            name, owner, "a non-empty array of shape (n,) or (n, n_outputs)", f"shape {array.shape}"
        )
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise invalid(name, owner, "finite values", "NaN or infinity")
    return array


@validate_params({})
def completeness_score(
    target: ArrayLike,
    blackbox_preds: ArrayLike,
    whitebox_preds: ArrayLike,
    *,
    scorer: Scorer | None = None,
    average: str | None = "macro",
) -> float:
    """Completeness of a concept-based model: ``scorer(target, whitebox) / scorer(target, blackbox)``.

    Args:
        target: true labels, shape ``(n,)`` (or ``(n, n_outputs)`` indicators for multi-label scorers).
        blackbox_preds: the original model's scores or predictions, in the form ``scorer`` expects.
        whitebox_preds: the concept-based model's, same form.
        scorer: ``scorer(y_true, y_pred, average=average)``, higher better; default scikit-learn's
            ``roc_auc_score`` (PyC's default). ``f1_score`` on class predictions gives PyC's F1 ratio.
        average: passed to the scorer; ``None`` does not pass it (e.g. for ``accuracy_score``).

    Returns:
        A float ≥ 0 (1: as good as the black box; above 1 when better); ``nan`` when the black box scores 0.

    Example:
        >>> from sklearn.metrics import f1_score
        >>> y = [0, 1, 1, 0, 1, 0]
        >>> completeness_score(y, [0, 1, 1, 0, 1, 1], [0, 1, 0, 0, 1, 1], scorer=f1_score)  # macro F1 0.6667 / 0.8286
        0.8045977011494253
    """
    owner = caller()
    y = _numpy(target, "target")
    black = _numpy(blackbox_preds, "blackbox_preds")
    white = _numpy(whitebox_preds, "whitebox_preds")
    for name, array in (("blackbox_preds", black), ("whitebox_preds", white)):
        if array.shape[0] != y.shape[0]:
            raise invalid(name, owner, f"{y.shape[0]} rows (one per label)", f"shape {array.shape}")
    denominator = apply_scorer(scorer, y, black, average)
    return apply_scorer(scorer, y, white, average) / denominator if denominator != 0 else float("nan")
