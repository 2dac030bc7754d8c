"""How sure one setting's score is: intervals over its evaluation samples.

A single ConSim setting scores 10–20 EP samples, so its accuracy moves by about ±0.2 from one selection to the
next. These intervals say so beside every single-setting score (the benchmark's comparisons, over seeds and
settings, are in :mod:`xaimetrics.benchmark`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["mean_interval", "wilson_interval"]


def wilson_interval(n_correct: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``n_correct / n`` (eq. 5's accuracy), as scipy computes it.

    Example:
        >>> tuple(round(v, 3) for v in wilson_interval(8, 10))
        (0.49, 0.943)
    """
    from scipy.stats import binomtest

    if n <= 0:
        return (float("nan"), float("nan"))
    ci = binomtest(int(n_correct), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(ci.low), float(ci.high))


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """Student-t interval of the mean of per-sample values in ``[0, 1]`` (expected accuracy), clipped to ``[0, 1]``.

    Example:
        >>> tuple(round(v, 3) for v in mean_interval([0.9, 0.7, 0.8, 0.6]))
        (0.545, 0.955)
    """
    from scipy.stats import t

    array = np.asarray(values, dtype=np.float64)
    if array.size < 2:
        return (float("nan"), float("nan"))
    half = t.ppf(0.5 + confidence / 2, array.size - 1) * array.std(ddof=1) / np.sqrt(array.size)
    mean = float(array.mean())
    return (max(0.0, mean - float(half)), min(1.0, mean + float(half)))
