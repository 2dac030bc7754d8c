"""Complexity (entropy) and Sparseness (Gini index) of attributions, as in Xplique and Quantus.

Both look at the explanation alone (no model). For one explanation with features ``e_1..e_n``:

- **Complexity** (Bhatt et al., 2020): the Shannon entropy (natural log) of ``p_j = |e_j| / Σ_k |e_k|``, with
  ``0 log 0 = 0``. Range ``[0, log n]``; lower is better (a concentrated explanation).
- **Sparseness** (Chalasani et al., 2020): the Gini index of ``|e|`` sorted ascending,
  ``G = 2 Σ_i i |e|_(i) / (n Σ_i |e|_(i)) − (n + 1) / n``. Range ``[0, 1 − 1/n]``; higher is better.

Both are undefined (NaN) for an explanation that is zero everywhere; Xplique adds ``1e-8`` inside its logs and
denominators (so its values differ from these by less than ``1e-6`` and it returns 0 for an all-zero map).
Image explanations ``(n, C, H, W)`` are averaged over channels (of ``|e|``) first, as Xplique does; text
explanations are one 1-D array per text (features of different counts) and concept importances ``(n, k)``
are plain rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.fidelity._outputs import check_finite_explanation

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from numpy.typing import ArrayLike

__all__ = ["Complexity", "Sparseness", "attribution_rows", "complexity", "sparseness"]


def attribution_rows(explanations: ArrayLike | Sequence[ArrayLike], owner: str) -> list[np.ndarray]:
    """One flat float64 array per sample (images averaged over channels); raise on NaN, inf or empty rows."""
    detach = getattr(explanations, "detach", None)
    if callable(detach):
        explanations = detach().cpu().numpy()
    rows: list[np.ndarray]
    if isinstance(explanations, list | tuple):
        rows = []
        for row in explanations:
            row_detach = getattr(row, "detach", None)
            value = row_detach().cpu().numpy() if callable(row_detach) else row
            if np.ndim(value) == 0:
                raise invalid(
                    "explanations",
                    owner,
                    "an array of shape (n_samples, *features) or a list of 1-D arrays (texts)",
                    "a list of numbers",
                    "Wrap a single explanation in a list: [explanation].",
                )
            rows.append(np.asarray(value, dtype=np.float64).reshape(-1))
    else:
        array = np.asarray(explanations, dtype=np.float64)
        if array.ndim < 2:
            raise invalid(
                "explanations",
                owner,
                "an array of shape (n_samples, *features) or a list of 1-D arrays (texts)",
                f"shape {array.shape}",
            )
        if array.ndim == 4:
            array = np.abs(array).mean(axis=1)
        rows = list(array.reshape(array.shape[0], -1))
    if not rows:
        raise invalid("explanations", owner, "at least one explanation", "none")
    for i, row in enumerate(rows):
        if row.size == 0:
            raise invalid(
                "explanations", owner, "explanations with at least one feature", f"an empty row {i}"
            )
        check_finite_explanation(row, f"in sample {i}", owner)
    return rows


def _by_rows(rows: list[np.ndarray], function: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Apply a row-wise function to equal-length rows at once, or length group by length group."""
    out = np.empty(len(rows))
    lengths = np.array([row.size for row in rows])
    for length in np.unique(lengths):
        chosen = np.flatnonzero(lengths == length)
        out[chosen] = function(np.abs(np.stack([rows[i] for i in chosen])))
    return out


def _entropy(magnitudes: np.ndarray) -> np.ndarray:
    total = magnitudes.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = magnitudes / total
        terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return np.where(total[:, 0] > 0, terms.sum(axis=1), np.nan)


def _gini(magnitudes: np.ndarray) -> np.ndarray:
    n = magnitudes.shape[1]
    ordered = np.sort(magnitudes, axis=1)
    total = ordered.sum(axis=1)
    rank = np.arange(1, n + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        gini = 2 * (ordered * rank).sum(axis=1) / (n * total) - (n + 1) / n
    return np.where(total > 0, gini, np.nan)


def complexity(explanations: ArrayLike | Sequence[ArrayLike]) -> np.ndarray:
    """Entropy of the normalised absolute attributions of each sample: shape ``(n_samples,)``, lower is better.

    Args:
        explanations: array ``(n, *features)`` (images ``(n, C, H, W)`` are averaged over channels), concept
            importances ``(n, k)``, or one 1-D array per text.

    Returns:
        float64 array ``(n_samples,)`` in ``[0, log n_features]``; NaN for an all-zero explanation.

    Example:
        >>> complexity([[1.0, 0.0, 0.0, 0.0], [1.0, -1.0, 1.0, -1.0], [3.0, 1.0, 0.0, 0.0]]).round(4)
        array([0.    , 1.3863, 0.5623])
    """
    return _by_rows(attribution_rows(explanations, "complexity"), _entropy)


def sparseness(explanations: ArrayLike | Sequence[ArrayLike]) -> np.ndarray:
    """Gini index of the absolute attributions of each sample: shape ``(n_samples,)``, higher is better.

    Args:
        explanations: as :func:`complexity`.

    Returns:
        float64 array ``(n_samples,)`` in ``[0, 1 − 1/n_features]``; NaN for an all-zero explanation.

    Example:
        >>> sparseness([[1.0, 0.0, 0.0, 0.0], [1.0, -1.0, 1.0, -1.0], [3.0, 1.0, 0.0, 0.0]]).round(4)
        array([0.75 , 0.   , 0.625])
    """
    return _by_rows(attribution_rows(explanations, "sparseness"), _gini)


class _ExplanationOnly:
    """``evaluate`` (mean over samples that are defined) over a per-sample function of the explanations."""

    _function: Callable[[ArrayLike | Sequence[ArrayLike]], np.ndarray]
    higher_is_better: bool

    def evaluate_samples(self, explanations: ArrayLike | Sequence[ArrayLike]) -> np.ndarray:
        """One value per sample, shape ``(n_samples,)`` (NaN for an all-zero explanation)."""
        return type(self)._function(explanations)

    def evaluate(self, explanations: ArrayLike | Sequence[ArrayLike]) -> float:
        """Mean over the samples whose value is defined (NaN if none is)."""
        values = self.evaluate_samples(explanations)
        return float(np.nanmean(values)) if not np.isnan(values).all() else float("nan")


class Complexity(_ExplanationOnly):
    """Xplique's ``Complexity``: mean entropy of the normalised absolute attributions (lower is better).

    Example:
        >>> round(Complexity().evaluate([[1.0, 0.0, 0.0, 0.0], [3.0, 1.0, 0.0, 0.0]]), 4)
        0.2812
    """

    _function = staticmethod(complexity)
    higher_is_better = False


class Sparseness(_ExplanationOnly):
    """Xplique's ``Sparseness``: mean Gini index of the absolute attributions (higher is better).

    Example:
        >>> Sparseness().evaluate([[1.0, 0.0, 0.0, 0.0], [3.0, 1.0, 0.0, 0.0]])
        0.6875
    """

    _function = staticmethod(sparseness)
    higher_is_better = True
