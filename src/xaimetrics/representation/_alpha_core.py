"""Krippendorff's α from value counts: coincidences, difference functions δ², and α against reference data.

The ``krippendorff`` package (0.9) computes α for the nominal, ordinal, interval and ratio levels and accepts
a callable difference; :func:`~xaimetrics.representation.krippendorff_alpha` calls it for every level, passing
the circular, bipolar and user-given differences of this module as callables. What the package lacks is α of
a **subsample against reference data**: the expected disagreement taken from a larger reliability data set
the subsample comes from (fast-krippendorff's later ``all_reliability_data`` option, whose published tests
define it: the subsample's observed coincidences ``o`` against the reference's expected coincidences ``e``,
ordinal differences from the reference's value frequencies). It is computed here:

    α = 1 − (Σ o·δ² / Σ o) / (Σ e·δ² / Σ e)

with ``o = Σ_u (n_u n_uᵀ − diag n_u) / (m_u − 1)`` over the units ``u`` with ``m_u ≥ 2`` ratings (``n_u`` the
value counts of unit ``u``), ``n_v`` the column sums of the reference's ``o``, ``e = (n_v n_vᵀ − diag n_v) /
(n − 1)`` (Krippendorff 2011). With the reference equal to the data it is the ordinary α.

Difference functions (Krippendorff 2011; levels "polar" and "circular"):

- circular: ``δ² = sin²(π (c − k) / U)``, ``U`` the circumference (``period``; default ``max − min + 1`` for
  an integer scale, e.g. 12 for months 1–12);
- bipolar: ``δ² = (c − k)² / ((c + k − 2 v_min)(2 v_max − c − k))``, 0 for ``c = k``, with ``v_min`` /
  ``v_max`` the ends of the value domain.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xaimetrics._validation import invalid

__all__: list[str] = []

Distance = Callable[[np.ndarray, np.ndarray], "np.ndarray | float"]


def value_counts(data: np.ndarray, domain: np.ndarray) -> np.ndarray:
    """Array of shape ``(n_units, n_values)`` from coders × units ``data`` (NaN: no rating)."""
    return (data.T[:, :, None] == domain[None, None, :]).sum(axis=1)


def coincidences(counts: np.ndarray) -> np.ndarray:
    """Krippendorff's coincidence matrix ``o`` of shape ``(V, V)`` from units × values counts."""
    counts = counts.astype(np.float64)
    m = counts.sum(axis=1)
    pairable = m >= 2
    weighted = counts[pairable] / (m[pairable] - 1)[:, None]
    return weighted.T @ counts[pairable] - np.diag(weighted.sum(axis=0))


def expected_coincidences(n_v: np.ndarray) -> np.ndarray:
    n = n_v.sum()
    return (np.outer(n_v, n_v) - np.diag(n_v)) / (n - 1)


def circular_period(domain: np.ndarray, period: float | None, owner: str) -> float:
    if period is not None:
        if not np.isfinite(period) or period <= 0:
            raise invalid("period", owner, "a finite positive number (the circle's circumference)", period)
        return float(period)
    if not np.all(domain == np.round(domain)):
        raise invalid(
            "period",
            owner,
            "given for a circular level with non-integer values",
            None,
            "Pass the circumference, e.g. period=360 for degrees or period=24 for hours.",
        )
    return float(domain.max() - domain.min() + 1)


def difference_matrix(
    level: str | Distance, domain: np.ndarray, n_v: np.ndarray, period: float | None, owner: str
) -> np.ndarray:
    """δ² between every pair of values of ``domain`` (ordinal: from the value frequencies ``n_v``)."""
    c, k = domain[:, None], domain[None, :]
    if callable(level):
        return checked_distance(level, domain, owner)
    if level == "nominal":
        return (c != k).astype(np.float64)
    if level == "ordinal":
        cumulative = np.concatenate([[0.0], np.cumsum(n_v)])
        i = np.arange(len(domain))
        low, high = np.minimum(i[:, None], i[None, :]), np.maximum(i[:, None], i[None, :])
        between = cumulative[high + 1] - cumulative[low]  # Σ n_g for g from low to high inclusive
        return np.asarray((between - (n_v[low] + n_v[high]) / 2) ** 2, dtype=np.float64)
    if level == "interval":
        return np.asarray((c - k) ** 2, dtype=np.float64)
    if level == "ratio":
        total = c + k
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(total != 0, ((c - k) / np.where(total != 0, total, 1)) ** 2, 0.0)
    if level == "circular":
        return np.sin(np.pi * (c - k) / circular_period(domain, period, owner)) ** 2
    if level == "bipolar":
        low, high = domain.min(), domain.max()
        denominator = (c + k - 2 * low) * (2 * high - c - k)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(c == k, 0.0, (c - k) ** 2 / np.where(denominator != 0, denominator, 1))
    raise AssertionError(level)  # unreachable: the level was checked


def checked_distance(distance: Distance, domain: np.ndarray, owner: str) -> np.ndarray:
    """A user's difference function evaluated on every pair of values, with its contract checked."""
    try:
        values = np.asarray(distance(domain[:, None], domain[None, :]), dtype=np.float64)
        values = np.broadcast_to(values, (len(domain), len(domain))).copy()
    except (TypeError, ValueError) as error:
        raise invalid(
            "level",
            owner,
            "a difference function d(c, k) that takes two broadcastable arrays of values and returns δ²",
            f"{getattr(distance, '__name__', distance)!r}, which failed with {type(error).__name__}: {error}",
        ) from error
    if not np.isfinite(values).all() or (values < 0).any() or np.diag(values).any():
        raise invalid(
            "level",
            owner,
            "a difference function with finite, non-negative values and d(c, c) = 0",
            f"{getattr(distance, '__name__', distance)!r} giving {np.round(values, 4).tolist()[:4]}",
            "Return squared differences, e.g. lambda c, k: abs(c - k) ** 2.",
        )
    return values


def alpha_against(
    counts: np.ndarray,
    reference_counts: np.ndarray,
    level: str | Distance,
    domain: np.ndarray,
    period: float | None,
    owner: str,
) -> tuple[float, str | None]:
    """α of ``counts`` with the expected disagreement of ``reference_counts`` (both units × values)."""
    observed = coincidences(counts)
    n_v = coincidences(reference_counts).sum(axis=0)
    expected = expected_coincidences(n_v)
    delta = difference_matrix(level, domain, n_v, period, owner)
    d_expected = float((expected * delta).sum() / expected.sum())
    if d_expected == 0:
        return float(
            "nan"
        ), "the reference data have no expected disagreement (one value only): α is undefined"
    d_observed = float((observed * delta).sum() / observed.sum())
    return 1.0 - d_observed / d_expected, None
