"""Dimension purity: does each dimension follow a single labelled factor?

For dimension ``d`` and labelled factors ``f_1 … f_m`` (Pearson correlations ``r_dj``):

    purity(d) = max_j |r_dj| / Σ_j |r_dj|          (1: one factor only; 1/m: all factors alike)

A constant factor has no correlation with anything: it is rejected (or dropped on request). A constant
dimension, or one uncorrelated with every factor, has no purity: NaN, with the reason recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from xaimetrics._validation import Options, invalid, validate_params
from xaimetrics.representation._bands import DimensionScores

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["PurityResult", "dimension_purity"]


@dataclass
class PurityResult(DimensionScores):
    """Purity of every dimension.

    Attributes:
        purity: array of shape ``(n_dimensions,)``, NaN where undefined (see ``undefined``).
        correlations: array of shape ``(n_dimensions, n_factors)``, Pearson correlations (signed).
        dominant_factor: per dimension, the name of its most correlated factor (``None`` if undefined).
        factor_names, dimension_names: labels.
        undefined: ``{dimension index: reason}``.
        dropped_factors: constant factors left out (``constant_factors="drop"``).
    """

    purity: np.ndarray
    correlations: np.ndarray
    dominant_factor: list[str | None]
    factor_names: list[str]
    dimension_names: list[str]
    undefined: dict[int, str] = field(default_factory=dict)
    dropped_factors: list[str] = field(default_factory=list)

    _band_metric = "purity"
    _scores_attribute = "purity"

    def to_dict(self) -> dict[str, object]:
        """JSON-ready summary (NaN becomes ``None``)."""
        return {
            **self._score_summary(),
            "dominant_factor": self.dominant_factor,
            "factor_names": self.factor_names,
            "dimension_names": self.dimension_names,
            "undefined": {str(k): v for k, v in self.undefined.items()},
            "dropped_factors": self.dropped_factors,
        }


def _factors_from(targets: object, n: int, names: Sequence[str] | None) -> tuple[np.ndarray, list[str]]:
    if hasattr(targets, "detach"):
        targets = targets.detach().cpu().numpy()
    if hasattr(targets, "columns") and names is None:
        names = [str(c) for c in targets.columns]
    array = np.asarray(targets)
    if array.ndim == 1:  # class labels: one indicator factor per class (a single one for two classes)
        classes = np.unique(array)
        indicators = classes[1:] if len(classes) == 2 else classes
        array = np.stack([(array == c).astype(np.float64) for c in indicators], axis=1)
        names = names or [f"class={c}" for c in indicators]
    array = array.astype(np.float64)
    if array.ndim != 2 or array.shape[0] != n:
        raise invalid(
            "factors",
            "dimension_purity",
            f"an array of shape (n_samples={n}, n_factors) or labels",
            f"shape {array.shape}",
        )
    names = list(names) if names is not None else [str(j) for j in range(array.shape[1])]
    if len(names) != array.shape[1]:
        raise invalid("factor_names", "dimension_purity", f"{array.shape[1]} names", len(names))
    return array, names


@validate_params({"constant_factors": Options(("raise", "drop"))})
def dimension_purity(
    representations: ArrayLike,
    factors: ArrayLike,
    *,
    factor_names: Sequence[str] | None = None,
    dimension_names: Sequence[str] | None = None,
    constant_factors: Literal["raise", "drop"] = "raise",
) -> PurityResult:
    """Purity of each dimension against labelled semantic factors (the document's ``dimension_purity``).

    Args:
        representations: array of shape ``(n_samples, n_dimensions)``.
        factors: array of shape ``(n_samples, n_factors)`` of factor values (a DataFrame names them), or
            class labels of shape ``(n_samples,)`` (one indicator per class; one for two classes).
        factor_names, dimension_names: labels for the result.
        constant_factors: ``"raise"`` (default) or ``"drop"`` constant factor columns.

    Raises:
        InvalidParameterError: shapes disagree, fewer than 2 samples, a constant factor (with "raise"), or
            no factor left.

    Example:
        >>> z = np.array([[1.0, 0.2], [2.0, 0.1], [3.0, 0.4], [4.0, 0.3]])
        >>> factors = np.array([[0, 1], [1, 0], [2, 1], [3, 1]])
        >>> dimension_purity(z, factors).purity.round(3).tolist()
        [0.795, 0.564]
    """
    if hasattr(representations, "detach"):
        representations = representations.detach().cpu().numpy()
    z = np.asarray(representations, dtype=np.float64)
    if z.ndim != 2 or z.shape[0] < 2:
        raise invalid(
            "representations", "dimension_purity", "a 2-D array with at least 2 samples", f"shape {z.shape}"
        )
    if not np.isfinite(z).all():
        raise invalid("representations", "dimension_purity", "finite values", "NaN or infinite entries")
    y, names = _factors_from(factors, z.shape[0], factor_names)
    if not np.isfinite(y).all():
        raise invalid("factors", "dimension_purity", "finite values", "NaN or infinite entries")
    constant = np.ptp(y, axis=0) == 0
    dropped = [names[j] for j in np.flatnonzero(constant)]
    if dropped and constant_factors == "raise":
        raise invalid(
            "factors",
            "dimension_purity",
            "factors that vary across samples",
            f"constant factor(s) {dropped}",
            "A constant factor has no correlation; remove it or pass constant_factors='drop'.",
        )
    y, names = y[:, ~constant], [n for n, c in zip(names, constant, strict=True) if not c]
    if not names:
        raise invalid("factors", "dimension_purity", "at least one varying factor", "none")
    if dimension_names is None:
        dimension_names = [str(d) for d in range(z.shape[1])]
    elif len(dimension_names) != z.shape[1]:
        raise invalid("dimension_names", "dimension_purity", f"{z.shape[1]} names", len(dimension_names))

    y_std = (y - y.mean(axis=0)) / y.std(axis=0)
    z_spread = z.std(axis=0)
    dead = z_spread == 0
    z_std = (z - z.mean(axis=0)) / np.where(dead, 1.0, z_spread)
    correlations = np.clip(z_std.T @ y_std / z.shape[0], -1.0, 1.0)
    correlations[dead] = np.nan
    magnitude = np.abs(correlations)
    totals = magnitude.sum(axis=1)
    undefined: dict[int, str] = {}
    purity = np.full(z.shape[1], np.nan)
    dominant: list[str | None] = [None] * z.shape[1]
    for d in range(z.shape[1]):
        if dead[d]:
            undefined[d] = "constant dimension (no correlation with any factor)"
        elif totals[d] == 0:
            undefined[d] = "uncorrelated with every factor"
        else:
            purity[d] = magnitude[d].max() / totals[d]
            dominant[d] = names[int(magnitude[d].argmax())]
    return PurityResult(purity, correlations, dominant, names, list(dimension_names), undefined, dropped)
