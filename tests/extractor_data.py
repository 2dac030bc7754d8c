"""Shared test data of the concept extractors: a seeded low-rank matrix with noise (asymmetric: n ≠ p)."""

from __future__ import annotations

import numpy as np

N_SAMPLES, N_FEATURES, RANK = 60, 23, 6


def low_rank(seed: int = 0, *, non_negative: bool = False) -> np.ndarray:
    """A seeded rank-6 matrix plus noise, 60 × 23 (asymmetric: n ≠ p)."""
    rng = np.random.default_rng(seed)
    if non_negative:
        return rng.random((N_SAMPLES, RANK)) @ rng.random((RANK, N_FEATURES)) + 0.01 * rng.random(
            (N_SAMPLES, N_FEATURES)
        )
    return (
        rng.normal(size=(N_SAMPLES, RANK)) @ rng.normal(size=(RANK, N_FEATURES))
        + 0.1 * rng.normal(size=(N_SAMPLES, N_FEATURES))
        + rng.normal(size=N_FEATURES)
    )


def relative_error(estimate: np.ndarray, target: np.ndarray) -> float:
    return float(np.linalg.norm(estimate - target) / np.linalg.norm(target))
