"""Regression detection: compare today's metrics with a baseline file, aware of each metric's direction.

A metric where higher is better regresses when ``current < baseline - threshold``; one where lower is
better when ``current > baseline + threshold`` (the document's ``check_interpretability_regression`` covers
the first case only). A metric that became undefined (NaN) while the baseline had a value also regresses.
A baseline that lacks metrics being checked is an error unless ``missing="ignore"``: a silently shorter
comparison would hide regressions.
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from xaimetrics._validation import Options, check_choice, invalid, validate_params
from xaimetrics.exceptions import InvalidParameterError

__all__ = [
    "DEFAULT_DIRECTIONS",
    "Regression",
    "RegressionReport",
    "check_regression",
    "check_threshold",
    "flatten_metrics",
    "load_metrics",
]

Direction = Literal["higher", "lower"]

#: glob pattern → direction; the first matching pattern wins; anything else is "higher is better"
DEFAULT_DIRECTIONS: dict[str, Direction] = {
    "*pct_disagree*": "lower",
    "*std_rating*": "lower",
    "*missing_words*": "lower",
}


def flatten_metrics(values: Mapping[str, object], prefix: str = "") -> dict[str, float]:
    """Flatten nested dicts and lists of numbers into ``{"a.b.0": value}``; ``None`` (an undefined metric in
    JSON) becomes NaN; strings, booleans and lists of non-numbers are skipped.

    Example:
        >>> flatten_metrics({"coherence": {"mean": 0.4, "scores": [0.5, None]}, "alpha": None, "ok": True})
        {'coherence.mean': 0.4, 'coherence.scores.0': 0.5, 'coherence.scores.1': nan, 'alpha': nan}
    """
    flat: dict[str, float] = {}
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten_metrics(value, f"{name}."))
        elif isinstance(value, list | tuple):
            if value and all(
                v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in value
            ):
                for i, v in enumerate(value):
                    flat[f"{name}.{i}"] = math.nan if v is None else float(v)
        elif value is None:
            flat[name] = math.nan
        elif isinstance(value, int | float) and not isinstance(value, bool):
            flat[name] = float(value)
    return flat


def load_metrics(path: str | os.PathLike[str]) -> dict[str, float]:
    """Read a baseline JSON file: a flat ``{metric: value}`` object, or a results file of
    ``xaimetrics interpretability`` (its ``"metrics"`` entry is used)."""
    path = Path(path)
    if not path.is_file():
        raise invalid(
            "baseline",
            "load_metrics",
            "an existing JSON file",
            str(path),
            "Write one first, e.g. with 'xaimetrics interpretability ... --output DIR'.",
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InvalidParameterError(f"The baseline file {path} is not valid JSON: {error}.") from error
    if not isinstance(data, Mapping):
        raise invalid("baseline", "load_metrics", "a JSON object", type(data).__name__)
    if isinstance(data.get("metrics"), Mapping):
        data = data["metrics"]
    return flatten_metrics(data)


@dataclass(frozen=True)
class Regression:
    """One degraded metric."""

    metric: str
    baseline: float
    current: float
    direction: str

    def __str__(self) -> str:
        return f"{self.metric}: {self.baseline:.3f} → {self.current:.3f}"


@dataclass
class RegressionReport:
    """The outcome of :func:`check_regression`.

    Attributes:
        regressions: the degraded metrics.
        checked: the metrics compared.
        missing: metrics checked but absent from the baseline (only with ``missing="ignore"``).
        threshold: the tolerated change.
    """

    regressions: list[Regression]
    checked: list[str]
    missing: list[str] = field(default_factory=list)
    threshold: float | Mapping[str, float] = 0.1

    @property
    def detected(self) -> bool:
        return bool(self.regressions)

    def lines(self) -> list[str]:
        """The document's messages, e.g. ``"coherence.mean: 0.450 → 0.300"``."""
        return [str(r) for r in self.regressions]

    def to_dict(self) -> dict[str, object]:
        return {
            "detected": self.detected,
            "regressions": self.lines(),
            "checked": len(self.checked),
            "missing": self.missing,
            "threshold": dict(self.threshold) if isinstance(self.threshold, Mapping) else self.threshold,
        }


def _direction(metric: str, directions: Mapping[str, Direction]) -> Direction:
    for pattern, direction in directions.items():
        if fnmatch.fnmatchcase(metric, pattern):
            return direction
    return "higher"


@validate_params({"missing": Options(("raise", "ignore"))})
def check_regression(
    current: Mapping[str, object],
    baseline: Mapping[str, object] | str | os.PathLike[str],
    *,
    threshold: float | Mapping[str, float] = 0.1,
    directions: Mapping[str, Direction] | None = None,
    metrics: list[str] | None = None,
    missing: Literal["raise", "ignore"] = "raise",
) -> RegressionReport:
    """Find the metrics that degraded by more than ``threshold`` since the baseline.

    Args:
        current: today's metrics (nested dicts are flattened with :func:`flatten_metrics`).
        baseline: the baseline metrics, or the path of a JSON file (:func:`load_metrics`).
        threshold: tolerated change (absolute), one for all or ``{glob pattern: threshold}`` (first match;
            unmatched metrics use 0.1).
        directions: ``{glob pattern: "higher" | "lower"}`` (default :data:`DEFAULT_DIRECTIONS`).
        metrics: the metrics to check (default every current metric).
        missing: ``"raise"`` (default) when the baseline lacks a checked metric, or ``"ignore"``.

    Raises:
        InvalidParameterError: the baseline file is missing or unreadable, or lacks checked metrics; a
            threshold that is negative, NaN or infinite (:func:`check_threshold`).

    Example:
        >>> report = check_regression(
        ...     {"coherence.mean": 0.30, "stability.ari": 0.85, "human.pct_disagree": 0.40},
        ...     {"coherence.mean": 0.45, "stability.ari": 0.80, "human.pct_disagree": 0.20},
        ... )
        >>> report.detected, report.lines()
        (True, ['coherence.mean: 0.450 → 0.300', 'human.pct_disagree: 0.200 → 0.400'])
    """
    check_threshold(threshold)
    directions = DEFAULT_DIRECTIONS if directions is None else directions
    for direction in directions.values():
        check_choice(direction, "directions", "check_regression", ("higher", "lower"))
    flat_current = flatten_metrics(current)
    flat_baseline = (
        load_metrics(baseline) if isinstance(baseline, str | os.PathLike) else flatten_metrics(baseline)
    )
    names = list(flat_current) if metrics is None else list(metrics)
    unknown = [m for m in names if m not in flat_current]
    if unknown:
        raise invalid("metrics", "check_regression", "names of current metrics", unknown[:10])
    absent = [m for m in names if m not in flat_baseline]
    if absent and missing == "raise":
        raise invalid(
            "baseline",
            "check_regression",
            "a value for every checked metric",
            f"{len(absent)} metric(s) missing, e.g. {absent[:5]}",
            "Regenerate the baseline with the same settings, restrict 'metrics', or pass missing='ignore'.",
        )
    regressions, checked = [], []
    for name in names:
        if name not in flat_baseline:
            continue
        before, now = flat_baseline[name], flat_current[name]
        if math.isnan(before):
            continue
        checked.append(name)
        limit = _threshold(name, threshold)
        direction = _direction(name, directions)
        worse = now < before - limit if direction == "higher" else now > before + limit
        if math.isnan(now) or worse:
            regressions.append(Regression(name, before, now, direction))
    return RegressionReport(regressions, checked, absent, threshold)


def check_threshold(threshold: object, name: str = "threshold", owner: str = "check_regression") -> None:
    """Raise unless ``threshold`` is a finite number ≥ 0, or a mapping of patterns to such numbers.

    NaN would disable the gate (every comparison with NaN is false: no regression is ever found) and
    ``inf`` tolerates any change: neither is a threshold.

    Example:
        >>> check_threshold({"coherence.*": 0.05})
        >>> check_threshold(float("nan"))
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'threshold' parameter of check_regression must be a finite number ≥ 0, or {pattern: number}. Got nan. A NaN or infinite threshold would let every regression pass.
    """
    values = list(threshold.values()) if isinstance(threshold, Mapping) else [threshold]
    for value in values:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            raise invalid(
                name, owner, "a finite number ≥ 0, or {pattern: number}", threshold,
                "A NaN or infinite threshold would let every regression pass.",
            )  # fmt: skip


def _threshold(metric: str, threshold: float | Mapping[str, float]) -> float:
    if isinstance(threshold, Mapping):
        for pattern, value in threshold.items():
            if fnmatch.fnmatchcase(metric, pattern):
                return float(value)
        return 0.1
    return float(threshold)
