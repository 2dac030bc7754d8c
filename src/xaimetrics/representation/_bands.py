"""Interpretation bands, status marks and version targets of the Atlas interpretability-metrics document.

Band boundaries follow the document's tables read literally: the top band is strictly above its threshold
("> 0.5"), the middle bands include their lower bound ("0.3 - 0.5"), the bottom band is everything below
("< 0.1"). So a coherence of exactly 0.5 is "Good" and exactly 0.3 is also "Good". NaN is "Undefined".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from xaimetrics._validation import invalid

__all__ = [
    "BANDS",
    "DEFAULT_TARGETS",
    "Target",
    "TargetCheck",
    "band",
    "check_targets",
    "status_mark",
]

Metric = Literal["coherence", "consistency", "stability", "purity", "agreement", "composite"]

#: per metric: three thresholds (top, second, third) and the four band names, best first
BANDS: dict[str, tuple[tuple[float, float, float], tuple[str, str, str, str]]] = {
    "coherence": ((0.5, 0.3, 0.1), ("Excellent", "Good", "Fair", "Poor")),
    "consistency": ((0.8, 0.6, 0.4), ("Excellent", "Good", "Fair", "Poor")),
    "stability": ((0.8, 0.6, 0.4), ("Excellent", "Good", "Fair", "Poor")),
    "purity": ((0.7, 0.5, 0.3), ("High", "Moderate", "Low", "Very low")),
    "agreement": ((0.8, 0.67, 0.4), ("Excellent", "Good", "Tentative", "Poor")),
    "composite": ((0.8, 0.7, 0.6), ("Excellent", "Good", "Acceptable", "Poor")),
}

_MARKS = ("✓", "✓", "○", "✗")


def defined_mean(scores: np.ndarray) -> float:
    """Mean over the scores that are defined (not NaN); NaN when none is.

    Example:
        >>> defined_mean(np.array([0.2, np.nan, 0.6]))
        0.4
    """
    finite = scores[~np.isnan(scores)]
    return float(finite.mean()) if finite.size else float("nan")


def none_if_nan(value: float | None) -> float | None:
    """``value`` as a float, or ``None`` when it is NaN (or ``None``): JSON has no NaN."""
    return None if value is None or math.isnan(value) else float(value)


class DimensionScores:
    """The mean and bands of a result holding one score per dimension (coherence, consistency, purity).

    A subclass (a dataclass) names its metric of :data:`BANDS` in ``_band_metric`` and the attribute that
    holds its scores, an array of shape ``(n_dimensions,)``, in ``_scores_attribute``.
    """

    _band_metric: ClassVar[str]
    _scores_attribute: ClassVar[str] = "scores"

    @property
    def mean(self) -> float:
        """Mean over the dimensions with a defined score (NaN if none)."""
        return defined_mean(getattr(self, self._scores_attribute))

    @property
    def bands(self) -> list[str]:
        """The band of each dimension's score."""
        return [band(self._band_metric, s) for s in getattr(self, self._scores_attribute)]

    def _score_summary(self) -> dict[str, object]:
        """The JSON-ready ``mean``, scores (under the attribute's name) and ``bands``, NaN as ``None``."""
        scores = [none_if_nan(s) for s in getattr(self, self._scores_attribute)]
        return {"mean": none_if_nan(self.mean), self._scores_attribute: scores, "bands": self.bands}


def _band_index(metric: str, value: float) -> int | None:
    if metric not in BANDS:
        raise invalid("metric", "band", "one of " + ", ".join(map(repr, BANDS)), metric)
    if value is None or math.isnan(value):
        return None
    (top, second, third), _ = BANDS[metric]
    if value > top:
        return 0
    if value >= second:
        return 1
    if value >= third:
        return 2
    return 3


def band(metric: str, value: float) -> str:
    """The document's interpretation band of ``value`` for ``metric`` (``"Undefined"`` for NaN).

    Example:
        >>> band("coherence", 0.52), band("coherence", 0.3), band("agreement", 0.5), band("purity", 0.2)
        ('Excellent', 'Good', 'Tentative', 'Very low')
    """
    index = _band_index(metric, value)
    return "Undefined" if index is None else BANDS[metric][1][index]


def status_mark(metric: str, value: float) -> str:
    """The report's status cell: ``✓`` for the two best bands, ``○`` for the third, ``✗`` for the worst.

    Example:
        >>> status_mark("coherence", 0.45), status_mark("coherence", 0.2), status_mark("coherence", float("nan"))
        ('✓ Good', '○ Fair', '– Undefined')
    """
    index = _band_index(metric, value)
    if index is None:
        return "– Undefined"
    return f"{_MARKS[index]} {BANDS[metric][1][index]}"


@dataclass(frozen=True)
class Target:
    """One release target: ``metric`` must exceed ``threshold``.

    Attributes:
        metric: ``"coherence"`` and ``"consistency"`` (per dimension), ``"ari"``, ``"nmi"``, ``"alpha"`` or
            ``"composite"`` (single values).
        threshold: the value to exceed (strictly, as the document writes "> 0.4").
        min_fraction: for per-dimension metrics, the share of dimensions that must pass (the document's
            "at least 3/5 dimensions" is ``0.6``; "all dimensions" is ``1.0``).
        dimensions: for per-dimension metrics, the dimensions concerned (``None``: all of them; the
            document's "primary dimensions (1, 2, 4)" would be ``(1, 2, 4)``).
    """

    metric: str
    threshold: float
    min_fraction: float = 1.0
    dimensions: tuple[int, ...] | None = None

    def describe(self) -> str:
        """A human sentence, e.g. ``coherence > 0.3 for at least 60% of dimensions``."""
        if self.metric not in ("coherence", "consistency"):
            return f"{self.metric} > {self.threshold:g}"
        scope = "all dimensions" if self.dimensions is None else f"dimensions {list(self.dimensions)}"
        if self.min_fraction >= 1.0:
            return f"{self.metric} > {self.threshold:g} for {scope}"
        return f"{self.metric} > {self.threshold:g} for at least {self.min_fraction:.0%} of {scope}"


#: the document's targets per version ("Not implemented" / "Not conducted" entries have no target)
DEFAULT_TARGETS: dict[str, tuple[Target, ...]] = {
    "v0.1": (Target("coherence", 0.3, min_fraction=0.6), Target("ari", 0.95), Target("nmi", 0.95)),
    "v0.2": (
        Target("coherence", 0.4),
        Target("consistency", 0.6),
        Target("ari", 0.7),
        Target("nmi", 0.7),
        Target("alpha", 0.6),
    ),
    "v0.3": (
        Target("coherence", 0.5),
        Target("consistency", 0.7),
        Target("ari", 0.8),
        Target("nmi", 0.8),
        Target("alpha", 0.7),
    ),
}


@dataclass(frozen=True)
class TargetCheck:
    """The outcome of one :class:`Target`: ``passed`` is ``None`` when the metric was not measured."""

    target: Target
    value: float | None
    passed: bool | None

    @property
    def mark(self) -> str:
        return {True: "✓", False: "✗", None: "–"}[self.passed]


def check_targets(
    metrics: Mapping[str, float | Sequence[float] | np.ndarray],
    version: str = "v0.2",
    targets: Mapping[str, Sequence[Target]] | None = None,
) -> list[TargetCheck]:
    """Check measured metrics against the targets of one version.

    Args:
        metrics: ``{"coherence": per-dimension scores, "consistency": per-dimension scores, "ari": value,
            "nmi": value, "alpha": value, "composite": value}``; missing keys give ``passed=None``.
        version: a key of ``targets``.
        targets: per version, the :class:`Target` list (default :data:`DEFAULT_TARGETS`).

    Returns:
        One :class:`TargetCheck` per target; ``value`` is the share of passing dimensions for per-dimension
        metrics and the measured value otherwise. NaN dimensions count as failing.

    Example:
        >>> checks = check_targets({"coherence": [0.45, 0.2, 0.35, 0.5, 0.31], "ari": 0.97}, "v0.1")
        >>> [(c.target.metric, c.value, c.passed) for c in checks]
        [('coherence', 0.8, True), ('ari', 0.97, True), ('nmi', None, None)]
    """
    targets = DEFAULT_TARGETS if targets is None else targets
    if version not in targets:
        raise invalid("version", "check_targets", "one of " + ", ".join(map(repr, targets)), version)
    checks = []
    for target in targets[version]:
        measured = metrics.get(target.metric)
        if measured is None:
            checks.append(TargetCheck(target, None, None))
            continue
        if target.metric in ("coherence", "consistency"):
            values = [float(v) for v in measured]  # type: ignore[union-attr]
            if target.dimensions is not None:
                values = [values[d] for d in target.dimensions if d < len(values)]
            if not values:
                checks.append(TargetCheck(target, None, None))
                continue
            share = sum(v > target.threshold for v in values) / len(values)
            checks.append(TargetCheck(target, share, share >= target.min_fraction - 1e-12))
        else:
            value = float(measured)  # type: ignore[arg-type]
            passed = None if math.isnan(value) else value > target.threshold
            checks.append(TargetCheck(target, value, passed))
    return checks
