"""A deliberately naive reference of the definitions (Python loops, exact fractions) to test against."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import torch


def reference_counts(n_features: int, steps: int, max_percentage: float) -> list[int]:
    end = max(1, math.floor(Fraction(max_percentage) * n_features + Fraction(1, 10**9)))
    if steps == -1 or steps >= end:
        return list(range(end + 1))
    return sorted({math.floor(Fraction(j * end, steps) + Fraction(1, 2)) for j in range(steps + 1)})


def reference_curve(f, x, e, baseline, steps, max_percentage, kind):
    """Curve of one sample: ``f`` maps a flat feature vector to a score; ``x``, ``e``, ``baseline`` are flat."""
    x, e, baseline = (np.asarray(v, dtype=np.float64).ravel() for v in (x, e, baseline))
    n = e.size
    order = sorted(range(n), key=lambda j: (-e[j], j))
    counts = reference_counts(n, steps, max_percentage)
    scores = []
    for k in counts:
        top = set(order[:k])
        if kind == "deletion":
            point = [baseline[j] if j in top else x[j] for j in range(n)]
        else:
            point = [x[j] if j in top else baseline[j] for j in range(n)]
        scores.append(f(np.array(point)))
    fractions = np.array(counts) / n
    auc = np.trapezoid(scores, fractions) / (fractions[-1] - fractions[0])
    return np.array(counts), np.array(scores), float(auc)


def make_linear(weights: list[float], bias: float = 0.0) -> torch.nn.Linear:
    """``f(x) = w · x + b`` as a one-output ``nn.Linear`` in eval mode."""
    model = torch.nn.Linear(len(weights), 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([weights]))
        model.bias.fill_(bias)
    return model.eval()
