"""Human ratings: Krippendorff's α (inter-annotator agreement) and the per-dimension rating summary.

α is computed by the ``krippendorff`` package (extra ``agreement``) with the level of measurement always
passed explicitly (the package's own default is ``"interval"``; ours is ``"ordinal"``, the document's choice
for Likert ratings) and with the input orientation declared by the caller (the package expects coders ×
units; passing units × coders silently gives a different number). Missing ratings are NaN (or ``None``).
The circular and bipolar levels and user-given difference functions are passed to the package as callables;
α of a subsample against reference data, which the package lacks, is computed in :mod:`._alpha_core`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from xaimetrics._optional import import_optional
from xaimetrics._validation import Kind, Options, caller, invalid, validate_params
from xaimetrics.representation._alpha_core import (
    Distance,
    alpha_against,
    difference_matrix,
    value_counts,
)
from xaimetrics.representation._bands import band

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike

__all__ = ["AlphaResult", "HumanEvaluation", "analyze_ratings", "krippendorff_alpha"]

Level = Literal["nominal", "ordinal", "interval", "ratio", "circular", "bipolar"]
Orientation = Literal["coders_units", "units_coders", "value_counts"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio", "circular", "bipolar")
ORIENTATIONS: tuple[Orientation, ...] = ("coders_units", "units_coders", "value_counts")


@dataclass(frozen=True)
class AlphaResult:
    """Krippendorff's α and what it rests on.

    Attributes:
        alpha: α in [-1, 1] (1: perfect agreement, 0: chance); NaN when undefined, with ``reason`` set.
        level: the level of measurement used (a difference function's name for a custom one).
        n_coders: coders with at least one rating (value counts: the most ratings any unit received).
        n_units: units (items) in the data.
        n_pairable: ratings in units rated by at least two coders (the only ones α uses).
        reason: why α is undefined, else ``None``.
    """

    alpha: float
    level: str
    n_coders: int
    n_units: int
    n_pairable: int
    reason: str | None = None

    @property
    def band(self) -> str:
        return band("agreement", self.alpha)

    def to_dict(self) -> dict[str, object]:
        alpha = None if math.isnan(self.alpha) else self.alpha
        return {
            "alpha": alpha,
            "band": self.band,
            "level": self.level,
            "n_coders": self.n_coders,
            "n_units": self.n_units,
            "n_pairable": self.n_pairable,
            "reason": self.reason,
        }


def _as_float_array(ratings: object, ndim: int, owner: str, name: str = "ratings") -> np.ndarray:
    if hasattr(ratings, "to_numpy"):
        ratings = ratings.to_numpy()
    try:
        array = np.array(ratings, dtype=np.float64)  # None becomes NaN
    except (TypeError, ValueError) as error:
        raise invalid(
            name,
            owner,
            "numbers (NaN or None for a missing rating)",
            "non-numeric values",
            "Encode categories as integers.",
        ) from error
    if array.ndim != ndim:
        raise invalid(name, owner, f"a {ndim}-D array", f"shape {array.shape}")
    if np.isinf(array).any():
        raise invalid(name, owner, "finite ratings or NaN", "infinite values")
    return array


@validate_params(
    {"orientation": Options(ORIENTATIONS), "level": (Options(LEVELS), Kind(callable, "a callable distance"))}
)
def krippendorff_alpha(
    ratings: ArrayLike | pd.DataFrame,
    *,
    orientation: Orientation,
    level: Level | Distance = "ordinal",
    value_domain: Sequence[float] | None = None,
    reference: ArrayLike | pd.DataFrame | None = None,
    period: float | None = None,
) -> AlphaResult:
    """Krippendorff's α of a reliability matrix (Krippendorff 2011), via the ``krippendorff`` package.

    Args:
        ratings: 2-D array of ratings, NaN (or ``None``) where a coder did not rate a unit; or, with
            ``orientation="value_counts"``, the units × values count matrix (the package's ``value_counts``:
            entry ``[u, v]`` is how many coders gave unit ``u`` the value ``value_domain[v]``).
        orientation: how ``ratings`` is laid out, required: ``"coders_units"`` (one row per coder, the
            package's layout), ``"units_coders"`` (one row per rated item, one column per coder) or
            ``"value_counts"``.
        level: ``"nominal"``, ``"ordinal"`` (default, Likert scales), ``"interval"``, ``"ratio"``,
            ``"circular"`` (``sin²(π (c − k) / period)``), ``"bipolar"`` (``(c − k)² / ((c + k − 2 min)
            (2 max − c − k))`` over the value domain's ends), or a difference function ``d(c, k) → δ²`` taking
            two broadcastable arrays of values (finite, ≥ 0, ``d(c, c) = 0``).
        value_domain: the possible values (ordinal scales: in order); default the values present (in
            ``ratings`` and ``reference``); with value counts, the value of each column (default 0, 1, …).
            For ``"bipolar"`` its ends are the scale's ends.
        reference: reliability data the ``ratings`` are a subsample of, in the same layout: α then uses
            the reference's expected disagreement (and value frequencies for the ordinal level) with the
            subsample's observed disagreement, as fast-krippendorff's ``all_reliability_data`` (not in the
            installed ``krippendorff`` 0.9; computed in :mod:`._alpha_core`).
        period: circumference of a circular scale (default ``max − min + 1`` of an integer domain, e.g. 12
            for months 1–12; required for non-integer values, e.g. 360 for degrees).

    Returns:
        :class:`AlphaResult`; ``alpha`` is NaN with a ``reason`` when no unit has two ratings or when all
        pairable ratings are the same value (α is 0/0: there is no disagreement to expect; with a
        ``reference``, when the reference has no variation).

    Raises:
        InvalidParameterError: fewer than two coders, non-numeric ratings, a bad orientation or level, a
            ``value_domain`` that repeats a value or misses a rating present in the data, negative or
            fractional value counts, a difference function that breaks its contract, a reference without a
            pairable unit.

    Example:
        >>> ratings = [[1, 2, 3, 3, None], [1, 2, 3, 4, 4], [None, 3, 3, 4, 4]]  # 3 coders × 5 units
        >>> round(krippendorff_alpha(ratings, orientation="coders_units", level="ordinal").alpha, 4)
        0.8193
        >>> hours = [[23, 1, 12, 6], [0, 2, 12, 7]]  # a 24-hour clock: 23 and 0 are one hour apart
        >>> round(krippendorff_alpha(hours, orientation="coders_units", level="circular", period=24).alpha, 4)
        0.9742
    """
    owner = caller()
    level_name = level if isinstance(level, str) else getattr(level, "__name__", "custom")
    if orientation == "value_counts":
        counts, domain = _value_counts_input(ratings, value_domain, "ratings", owner)
        reference_counts = None
        if reference is not None:
            reference_counts = _value_counts_input(reference, list(domain), "reference", owner)[0]
        m = counts.sum(axis=1)
        n_coders, n_units = int(m.max()) if len(m) else 0, counts.shape[0]
        pairable_counts = counts[m >= 2]
        n_pairable = int(pairable_counts.sum())
        present = domain[pairable_counts.sum(axis=0) > 0]
    else:
        data = _reliability_data(ratings, orientation, owner, "ratings")
        reference_data = (
            None if reference is None else _reliability_data(reference, orientation, owner, "reference")
        )
        if value_domain is not None:
            domain = np.array(_check_value_domain(value_domain, data))
            if reference_data is not None:
                _check_value_domain(value_domain, reference_data)
        else:
            everything = (
                data if reference_data is None else np.concatenate([data.ravel(), reference_data.ravel()])
            )
            domain = np.unique(everything[~np.isnan(everything)])
        counts = value_counts(data, domain)
        reference_counts = None if reference_data is None else value_counts(reference_data, domain)
        n_coders, n_units = data.shape
        rated = ~np.isnan(data)
        pairable = rated.sum(axis=0) >= 2
        n_pairable = int(rated[:, pairable].sum())
        present = np.unique(data[:, pairable][~np.isnan(data[:, pairable])])
    common = {"level": level_name, "n_coders": n_coders, "n_units": n_units, "n_pairable": n_pairable}
    if n_pairable == 0:
        return AlphaResult(float("nan"), reason="no unit was rated by two or more coders", **common)
    if reference_counts is not None:
        if not (reference_counts.sum(axis=1) >= 2).any():
            raise invalid(
                "reference", owner, "reliability data with at least one unit rated by two or more coders",
                "no pairable unit", "Pass the full data set the ratings were drawn from.",
            )  # fmt: skip
        alpha, reason = alpha_against(counts, reference_counts, level, domain, period, owner)
        return AlphaResult(alpha, reason=reason, **common)
    if len(present) < 2:
        return AlphaResult(
            float("nan"),
            reason=f"every pairable rating is {present[0]:g}: with no variation, α is 0/0 (agreement is total "
            "but not distinguishable from chance)",
            **common,
        )
    krippendorff = import_optional("krippendorff", extra="agreement", caller="krippendorff_alpha")
    metric: object = level  # the package's own difference for its four levels
    if callable(level) or level in ("circular", "bipolar"):
        metric = _table_metric(difference_matrix(level, domain, np.zeros(len(domain)), period, owner))
    alpha = krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=metric)
    return AlphaResult(float(alpha), **common)


def _table_metric(delta: np.ndarray) -> Callable[..., np.ndarray]:
    """The package's difference-function protocol ``(v1, v2, i1, i2, n_v, dtype)`` over a precomputed δ²
    table of the value domain (the package calls it with the domain's indices)."""

    def metric(
        v1: object, v2: object, i1: np.ndarray, i2: np.ndarray, n_v: object, dtype: object = None
    ) -> np.ndarray:
        return delta[i1, i2]

    return metric


def _reliability_data(ratings: object, orientation: str, owner: str, name: str) -> np.ndarray:
    """Coders × units float data (NaN: missing) of the coders with at least one rating."""
    data = _as_float_array(ratings, 2, owner, name)
    if orientation == "units_coders":
        data = data.T
    active = (~np.isnan(data)).any(axis=1)
    n_coders = int(active.sum())
    if n_coders < 2:
        axis = "rows" if orientation == "coders_units" else "columns"
        raise invalid(
            name,
            owner,
            "ratings from at least two coders",
            f"{n_coders} coder with ratings",
            f"Agreement needs several coders; check the orientation (coders are the {axis} with "
            f"orientation={orientation!r}).",
        )
    return data[active]


def _value_counts_input(
    counts: object, value_domain: Sequence[float] | None, name: str, owner: str
) -> tuple[np.ndarray, np.ndarray]:
    array = _as_float_array(counts, 2, owner, name)
    if np.isnan(array).any() or (array < 0).any() or (array != np.round(array)).any():
        raise invalid(
            name, owner, "a units × values matrix of non-negative integer counts (orientation='value_counts')",
            "NaN, negative or fractional entries",
        )  # fmt: skip
    counts_int = array.astype(np.int64)
    if value_domain is None:
        return counts_int, np.arange(counts_int.shape[1], dtype=np.float64)
    domain = np.array(_check_value_domain(value_domain, np.array([[np.nan]])))
    if len(domain) != counts_int.shape[1]:
        raise invalid(
            "value_domain", owner, f"one value per column of the value counts ({counts_int.shape[1]})",
            len(domain),
        )  # fmt: skip
    return counts_int, domain


def _check_value_domain(value_domain: object, data: np.ndarray) -> list[float]:
    """The domain as a list of distinct finite numbers covering every rating in ``data``."""
    owner = "krippendorff_alpha"
    if isinstance(value_domain, str | bytes) or not isinstance(value_domain, Sequence | np.ndarray):
        raise invalid("value_domain", owner, "a sequence of the possible rating values", value_domain)
    try:
        domain = np.array(list(value_domain), dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise invalid(
            "value_domain", owner, "numbers (the possible rating values)", list(value_domain)
        ) from error
    if domain.ndim != 1 or len(domain) < 2 or not np.isfinite(domain).all():
        raise invalid("value_domain", owner, "at least two finite numbers", list(value_domain))
    if len(np.unique(domain)) != len(domain):
        raise invalid("value_domain", owner, "distinct values", list(value_domain), "List each value once.")
    present = np.unique(data[~np.isnan(data)])
    outside = present[~np.isin(present, domain)]
    if outside.size:
        shown = ", ".join(f"{v:g}" for v in outside[:10]) + (" …" if outside.size > 10 else "")
        raise invalid(
            "value_domain", owner, "a list holding every rating value of the data",
            f"{[float(v) for v in domain]}, while the ratings also hold {shown}",
            "Add the missing values to value_domain (in scale order), or fix the ratings.",
        )  # fmt: skip
    return [float(v) for v in domain]


@dataclass
class HumanEvaluation:
    """The document's human-evaluation analysis.

    Attributes:
        summary: DataFrame, one row per dimension: ``dimension``, ``mean_rating``, ``std_rating``
            (population, ``ddof=0``), ``median_rating``, ``pct_agree`` (share ≥ ``agree_at``),
            ``pct_disagree`` (share ≤ ``disagree_at``), ``n_ratings``, ``alpha``, ``alpha_band``.
        alpha: α over every (example, dimension) unit together.
        dimension_alpha: α per dimension (units: the examples).
        n_examples: rated examples; n_annotators: annotators.
    """

    summary: pd.DataFrame
    alpha: AlphaResult
    dimension_alpha: list[AlphaResult] = field(default_factory=list)
    n_examples: int = 0
    n_annotators: int = 0

    @property
    def means(self) -> list[float]:
        return [float(x) for x in self.summary["mean_rating"]]

    def to_dict(self) -> dict[str, object]:
        records = self.summary.astype(object).where(self.summary.notna(), None).to_dict(orient="records")
        return {
            "alpha": self.alpha.to_dict(),
            "dimensions": records,
            "n_examples": self.n_examples,
            "n_annotators": self.n_annotators,
        }


def _ordered(column: pd.Series) -> list[object]:
    """Distinct values, sorted when they can be (else in order of appearance)."""
    values = list(dict.fromkeys(column))
    try:
        return sorted(values)
    except TypeError:
        return values


def _long_to_cube(frame: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    required = {"example", "annotator", "dimension", "rating"}
    missing = required - set(frame.columns)
    if missing:
        raise invalid(
            "ratings",
            "analyze_ratings",
            f"a DataFrame with columns {sorted(required)}",
            f"missing {sorted(missing)}",
        )
    if frame.duplicated(["example", "annotator", "dimension"]).any():
        raise invalid(
            "ratings", "analyze_ratings", "one rating per (example, annotator, dimension)", "duplicated rows"
        )
    examples, annotators, dimensions = (_ordered(frame[c]) for c in ("example", "annotator", "dimension"))
    cube = np.full((len(examples), len(annotators), len(dimensions)), np.nan)
    e = frame["example"].map({v: i for i, v in enumerate(examples)}).to_numpy()
    a = frame["annotator"].map({v: i for i, v in enumerate(annotators)}).to_numpy()
    d = frame["dimension"].map({v: i for i, v in enumerate(dimensions)}).to_numpy()
    cube[e, a, d] = _as_float_array(frame["rating"], 1, "analyze_ratings")
    return cube, [str(x) for x in dimensions]


def analyze_ratings(
    ratings: ArrayLike | pd.DataFrame,
    *,
    level: Level = "ordinal",
    scale: tuple[float, float] | None = (1, 5),
    agree_at: float = 4,
    disagree_at: float = 2,
    dimension_names: Sequence[str] | None = None,
) -> HumanEvaluation:
    """Per-dimension statistics of Likert ratings and Krippendorff's α (the document's protocol).

    Args:
        ratings: either an array of shape ``(n_examples, n_annotators, n_dimensions)`` (the document's
            layout; NaN for a missing rating) or a long DataFrame with columns ``example``, ``annotator``,
            ``dimension``, ``rating``.
        level: level of measurement for α (``"ordinal"`` for Likert ratings).
        scale: allowed rating range (inclusive), checked; ``None`` to skip the check.
        agree_at: ratings ≥ this count as agreement (4: "Agree" and "Strongly agree").
        disagree_at: ratings ≤ this count as disagreement (2).
        dimension_names: labels of the dimensions.

    Returns:
        :class:`HumanEvaluation`.

    Example:
        >>> cube = np.array([[[4, 2], [5, 2]], [[4, 1], [4, 3]], [[3, 2], [3, 2]]])  # 3 examples, 2 annotators
        >>> result = analyze_ratings(cube)
        >>> result.summary[["mean_rating", "pct_agree", "pct_disagree"]].round(3).to_numpy().tolist()
        [[3.833, 0.667, 0.0], [2.0, 0.0, 0.833]]
    """
    names: list[str] | None = None
    if hasattr(ratings, "columns"):
        cube, names = _long_to_cube(ratings)
    else:
        cube = _as_float_array(ratings, 3, "analyze_ratings")
    n_examples, n_annotators, n_dimensions = cube.shape
    if dimension_names is not None:
        if len(dimension_names) != n_dimensions:
            raise invalid("dimension_names", "analyze_ratings", f"{n_dimensions} names", len(dimension_names))
        names = list(dimension_names)
    names = names or [str(d) for d in range(n_dimensions)]
    present = cube[~np.isnan(cube)]
    if present.size == 0:
        raise invalid("ratings", "analyze_ratings", "at least one rating", "only missing values")
    if scale is not None and ((present < scale[0]).any() or (present > scale[1]).any()):
        raise invalid(
            "ratings",
            "analyze_ratings",
            f"ratings in [{scale[0]:g}, {scale[1]:g}]",
            f"values from {present.min():g} to {present.max():g}",
            "Fix the data or pass scale=None.",
        )
    import pandas as pd

    overall = krippendorff_alpha(
        cube.transpose(1, 0, 2).reshape(n_annotators, -1), orientation="coders_units", level=level
    )
    rows, per_dimension = [], []
    for d in range(n_dimensions):
        values = cube[:, :, d]
        values = values[~np.isnan(values)]
        alpha = krippendorff_alpha(cube[:, :, d], orientation="units_coders", level=level)
        per_dimension.append(alpha)
        empty = values.size == 0
        rows.append(
            {
                "dimension": names[d],
                "mean_rating": np.nan if empty else float(values.mean()),
                "std_rating": np.nan if empty else float(values.std()),
                "median_rating": np.nan if empty else float(np.median(values)),
                "pct_agree": np.nan if empty else float((values >= agree_at).mean()),
                "pct_disagree": np.nan if empty else float((values <= disagree_at).mean()),
                "n_ratings": int(values.size),
                "alpha": alpha.alpha,
                "alpha_band": alpha.band,
            }
        )
    return HumanEvaluation(pd.DataFrame(rows), overall, per_dimension, n_examples, n_annotators)
