"""The composite interpretability score of the document: a weighted mean of normalised components.

    score = 0.30 · coherence + 0.25 · consistency + 0.20 · stability + 0.25 · human

with the document's normalisations to [0, 1]: coherence ``mean((NPMI + 1) / 2)`` over dimensions;
consistency the mean consistency; stability the ARI; human ``mean(mean ratings) / 5`` (Likert 1-5, as the
document writes it, so a uniform "1" gives 0.2, not 0). Consistency and ARI can be negative (worse than
chance); their component is clipped at 0 so that every component lies in [0, 1] as the document assumes.
Components that were not measured are left out and the remaining weights are rescaled to sum to 1 (the
document's v0.1 has neither counterfactual consistency nor a human evaluation); the result lists them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.representation._bands import band, status_mark

__all__ = ["DEFAULT_WEIGHTS", "CompositeScore", "composite_score"]

#: the document's weights
DEFAULT_WEIGHTS: dict[str, float] = {"coherence": 0.30, "consistency": 0.25, "stability": 0.20, "human": 0.25}


@dataclass(frozen=True)
class CompositeScore:
    """The composite score and how it was formed.

    Attributes:
        score: weighted mean of the components, in [0, 1].
        components: the normalised value of each measured component.
        weights: the weights actually applied (rescaled over the measured components).
        missing: components that were not measured.
    """

    score: float
    components: dict[str, float]
    weights: dict[str, float]
    missing: list[str] = field(default_factory=list)

    @property
    def band(self) -> str:
        return band("composite", self.score)

    @property
    def status(self) -> str:
        return status_mark("composite", self.score)

    def to_dict(self) -> dict[str, object]:
        return {
            "score": self.score,
            "band": self.band,
            "components": self.components,
            "weights": self.weights,
            "missing": self.missing,
        }


def _finite_mean(values: object) -> float | None:
    if values is None:
        return None
    array = np.asarray(values, dtype=np.float64).ravel()
    array = array[~np.isnan(array)]
    return float(array.mean()) if array.size else None


def composite_score(
    *,
    coherence: Sequence[float] | np.ndarray | None = None,
    consistency: Sequence[float] | np.ndarray | None = None,
    stability: float | None = None,
    human: Sequence[float] | np.ndarray | None = None,
    weights: Mapping[str, float] | None = None,
    likert_max: float = 5.0,
) -> CompositeScore:
    """Combine the metrics into the document's composite interpretability score.

    Args:
        coherence: per-dimension Dim-Coherence (NPMI, in [-1, 1]).
        consistency: per-dimension counterfactual consistency.
        stability: the stability ARI.
        human: per-dimension mean human rating (Likert).
        weights: relative weights per component (default :data:`DEFAULT_WEIGHTS`); any subset of
            ``coherence``, ``consistency``, ``stability``, ``human``; a component without weight is ignored.
        likert_max: top of the rating scale (5).

    Raises:
        InvalidParameterError: no component measured, or negative / unknown weights.

    Example:
        >>> result = composite_score(
        ...     coherence=[0.45, 0.52, 0.38, 0.41, 0.48], consistency=[0.68, 0.75, 0.62, 0.71, 0.69],
        ...     stability=0.82, human=[3.8, 4.2, 3.5, 3.9, 4.0],
        ... )
        >>> round(result.score, 4), result.band
        (0.7477, 'Good')
        >>> round(composite_score(coherence=[0.45, 0.52], stability=0.82).score, 4)  # rescaled weights
        0.7735
    """
    weights = dict(DEFAULT_WEIGHTS if weights is None else weights)
    unknown = set(weights) - set(DEFAULT_WEIGHTS)
    if unknown:
        raise invalid("weights", "composite_score", f"keys among {sorted(DEFAULT_WEIGHTS)}", sorted(unknown))
    if any(not math.isfinite(w) or w < 0 for w in weights.values()):
        raise invalid("weights", "composite_score", "finite non-negative weights", weights)
    if likert_max <= 0:
        raise invalid("likert_max", "composite_score", "a positive number", likert_max)
    raw = {
        "coherence": _finite_mean(None if coherence is None else (np.asarray(coherence, float) + 1) / 2),
        "consistency": _finite_mean(consistency),
        "stability": _finite_mean(None if stability is None else [stability]),
        "human": _finite_mean(human),
    }
    if raw["human"] is not None:
        raw["human"] /= likert_max
    components = {
        k: float(np.clip(v, 0.0, 1.0)) for k, v in raw.items() if v is not None and weights.get(k, 0) > 0
    }
    missing = [k for k in DEFAULT_WEIGHTS if weights.get(k, 0) > 0 and k not in components]
    total = sum(weights[k] for k in components)
    if not components or total == 0:
        raise invalid(
            "metrics",
            "composite_score",
            "at least one measured component with a positive weight",
            "none",
            "Pass coherence, consistency, stability or human scores.",
        )
    used = {k: weights[k] / total for k in components}
    score = float(sum(used[k] * components[k] for k in components))
    return CompositeScore(score, components, used, missing)
