"""Human ratings: Krippendorff's α (inter-annotator agreement) and the per-dimension rating summary.

α is computed by the ``krippendorff`` package (extra ``agreement``) with the level of measurement always
passed explicitly (the package's own default is ``"interval"``; ours is ``"ordinal"``, the document's choice
for Likert ratings) and with the input orientation declared by the caller (the package expects coders ×
units; passing units × coders silently gives a different number). Missing ratings are NaN (or ``None``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from xaimetrics._optional import import_optional
from xaimetrics._validation import check_choice, invalid
from xaimetrics.representation._bands import band

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike

__all__ = ["AlphaResult", "HumanEvaluation", "analyze_ratings", "krippendorff_alpha"]

Level = Literal["nominal", "ordinal", "interval", "ratio"]
Orientation = Literal["coders_units", "units_coders"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")
ORIENTATIONS: tuple[Orientation, ...] = ("coders_units", "units_coders")


@dataclass(frozen=True)
class AlphaResult:
    """Krippendorff's α and what it rests on.

    Attributes:
        alpha: α in [-1, 1] (1: perfect agreement, 0: chance); NaN when undefined, with ``reason`` set.
        level: the level of measurement used.
        n_coders: coders with at least one rating.
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


def _as_float_array(ratings: object, ndim: int, owner: str) -> np.ndarray:
    if hasattr(ratings, "to_numpy"):
        ratings = ratings.to_numpy()
    try:
        array = np.array(ratings, dtype=np.float64)  # None becomes NaN
    except (TypeError, ValueError) as error:
        raise invalid(
            "ratings",
            owner,
            "numbers (NaN or None for a missing rating)",
            "non-numeric values",
            "Encode categories as integers.",
        ) from error
    if array.ndim != ndim:
        raise invalid("ratings", owner, f"a {ndim}-D array", f"shape {array.shape}")
    if np.isinf(array).any():
        raise invalid("ratings", owner, "finite ratings or NaN", "infinite values")
    return array


def krippendorff_alpha(
    ratings: ArrayLike | pd.DataFrame,
    *,
    orientation: Orientation,
    level: Level = "ordinal",
    value_domain: Sequence[float] | None = None,
) -> AlphaResult:
    """Krippendorff's α of a reliability matrix (Krippendorff 2011), via the ``krippendorff`` package.

    Args:
        ratings: 2-D array of ratings, NaN (or ``None``) where a coder did not rate a unit.
        orientation: how ``ratings`` is laid out, required: ``"coders_units"`` (one row per coder, the
            package's layout) or ``"units_coders"`` (one row per rated item, one column per coder).
        level: ``"nominal"``, ``"ordinal"`` (default, Likert scales), ``"interval"`` or ``"ratio"``.
        value_domain: the possible values (ordinal scales: in order); default the values present.

    Returns:
        :class:`AlphaResult`; ``alpha`` is NaN with a ``reason`` when no unit has two ratings or when all
        pairable ratings are the same value (α is 0/0: there is no disagreement to expect).

    Raises:
        InvalidParameterError: fewer than two coders, non-numeric ratings, a bad orientation or level, a
            ``value_domain`` that repeats a value or misses a rating present in the data.

    Example:
        >>> ratings = [[1, 2, 3, 3, None], [1, 2, 3, 4, 4], [None, 3, 3, 4, 4]]  # 3 coders × 5 units
        >>> round(krippendorff_alpha(ratings, orientation="coders_units", level="ordinal").alpha, 4)
        0.8193
    """
    orientation = check_choice(orientation, "orientation", "krippendorff_alpha", ORIENTATIONS)
    level = check_choice(level, "level", "krippendorff_alpha", LEVELS)
    data = _as_float_array(ratings, 2, "krippendorff_alpha")
    if value_domain is not None:
        value_domain = _check_value_domain(value_domain, data)
    if orientation == "units_coders":
        data = data.T
    rated = ~np.isnan(data)
    active = rated.any(axis=1)
    n_coders = int(active.sum())
    if n_coders < 2:
        axis = "rows" if orientation == "coders_units" else "columns"
        raise invalid(
            "ratings",
            "krippendorff_alpha",
            "ratings from at least two coders",
            f"{n_coders} coder with ratings",
            f"Agreement needs several coders; check the orientation (coders are the {axis} with "
            f"orientation={orientation!r}).",
        )
    data = data[active]
    pairable = rated[active].sum(axis=0) >= 2
    n_pairable = int(rated[active][:, pairable].sum())
    common = {"level": level, "n_coders": n_coders, "n_units": data.shape[1], "n_pairable": n_pairable}
    if not pairable.any():
        return AlphaResult(float("nan"), reason="no unit was rated by two or more coders", **common)
    values = np.unique(data[:, pairable][~np.isnan(data[:, pairable])])
    if len(values) < 2:
        return AlphaResult(
            float("nan"),
            reason=f"every pairable rating is {values[0]:g}: with no variation, α is 0/0 (agreement is total "
            "but not distinguishable from chance)",
            **common,
        )
    krippendorff = import_optional("krippendorff", extra="agreement", caller="krippendorff_alpha")
    alpha = krippendorff.alpha(
        reliability_data=data,
        level_of_measurement=level,
        value_domain=value_domain,
    )
    return AlphaResult(float(alpha), **common)


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
