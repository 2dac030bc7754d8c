"""One registry of metric metadata: what every metric xaimetrics ships measures, which way is better, its range.

Quantus attaches a score direction, data applicability and category to each metric as enums; Interpreto's
users misread Deletion's direction (its issue #147). Here every metric has one :class:`MetricInfo` in
``METRICS``, a :class:`~xaimetrics._registry.Registry` filled from the family modules of ``_metric_entries/``. The
``xaimetrics metrics`` command, ``xaimetrics.metrics()`` (a DataFrame, ``_metric_listing.py``), the docs table
(``docs/metrics.md``, checked by a test) and the fidelity plots read it; a test fails when a family exports a
metric without an entry.

Callables are stored as dotted paths and imported only by :meth:`MetricInfo.resolve`, so reading the registry
imports neither torch nor the families.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, NamedTuple, cast, get_args

from xaimetrics._registry import Registry
from xaimetrics._validation import invalid

__all__ = [
    "CATEGORIES",
    "DATA_TYPES",
    "DIRECTIONS",
    "FAMILIES",
    "Entry",
    "MetricInfo",
    "Row",
    "family_entries",
    "new_registry",
]

Family = Literal["fidelity", "conceptmetrics", "concepts", "representation", "detection", "consim"]
Direction = Literal["higher", "lower", "neither"]
DataType = Literal[
    "text", "tensor", "image", "activations", "concepts", "words", "labelings", "ratings", "answers"
]
Category = Literal[
    "faithfulness",
    "robustness",
    "complexity",
    "randomisation",
    "causality",
    "completeness",
    "accuracy",
    "coherence",
    "stability",
    "purity",
    "agreement",
    "simulatability",
    "composite",
    "similarity",
]

FAMILIES: tuple[str, ...] = get_args(Family)
DIRECTIONS: tuple[str, ...] = get_args(Direction)
DATA_TYPES: tuple[str, ...] = get_args(DataType)
CATEGORIES: tuple[str, ...] = get_args(Category)
#: the columns of :func:`metrics`, in order
COLUMNS = (
    "name",
    "family",
    "direction",
    "range",
    "data",
    "category",
    "reference",
    "callables",
    "description",
)


@dataclass(frozen=True)
class MetricInfo:
    """Metadata of one metric.

    Args:
        family: the ``xaimetrics.<family>`` it is imported from.
        direction: ``"higher"`` or ``"lower"`` is better, or ``"neither"`` (an effect size, a signed statistic).
        range: ``(low, high)`` of the score; ``math.inf`` for an open end.
        data: what it evaluates (``"text"``, ``"tensor"``, ``"image"``, ``"activations"``, ``"concepts"``,
            ``"words"``, ``"labelings"``, ``"ratings"``, ``"answers"``).
        category: what property it measures (Quantus' categories, plus the families' own).
        callables: the public callables computing it, as import paths (``"xaimetrics.fidelity.Deletion"``).
        reference: the library (or paper) whose numbers it reproduces; ``""`` for none.
        name: filled in from the registry entry.

    Example:
        >>> from xaimetrics import METRICS
        >>> info = METRICS.get("deletion")
        >>> info.direction, info.range_text, info.data, info.reference
        ('lower', '[0, 1]', ('text', 'tensor', 'image'), 'xplique')
        >>> info.resolve()[0].__name__
        'Deletion'
    """

    family: Family
    direction: Direction
    range: tuple[float, float]
    data: tuple[DataType, ...]
    category: Category
    callables: tuple[str, ...]
    reference: str = ""
    name: str = ""

    @property
    def higher_is_better(self) -> bool | None:
        """``True`` / ``False`` as torchmetrics spells the direction; ``None`` for ``"neither"``."""
        return None if self.direction == "neither" else self.direction == "higher"

    @property
    def range_text(self) -> str:
        """The range in interval notation: ``"[0, 1]"``, ``"[0, ∞)"``, ``"(-∞, ∞)"``."""
        low, high = self.range
        left = "(-∞" if low == -math.inf else f"[{low:g}"
        right = "∞)" if high == math.inf else f"{high:g}]"
        return f"{left}, {right}"

    @property
    def direction_text(self) -> str:
        """``"higher is better"``, ``"lower is better"`` or ``"no better direction"`` (for reports)."""
        return "no better direction" if self.direction == "neither" else f"{self.direction} is better"

    def resolve(self) -> tuple[Any, ...]:
        """Import and return the callables (this imports their family)."""
        found = []
        for path in self.callables:
            module, _, attribute = path.rpartition(".")
            found.append(getattr(importlib.import_module(module), attribute))
        return tuple(found)

    def to_dict(self, description: str = "") -> dict[str, Any]:
        """The entry as JSON-ready data: tuples as lists, an infinite end of the range as ``None``."""
        return {
            "name": self.name,
            "family": self.family,
            "direction": self.direction,
            "range": [None if math.isinf(end) else end for end in self.range],
            "range_text": self.range_text,
            "data": list(self.data),
            "category": self.category,
            "reference": self.reference,
            "callables": list(self.callables),
            "description": description,
        }

    def row(self, description: str = "") -> dict[str, Any]:
        """The entry as one row of :func:`metrics` (tuples joined by ``", "``)."""
        return {
            "name": self.name,
            "family": self.family,
            "direction": self.direction,
            "range": self.range_text,
            "data": ", ".join(self.data),
            "category": self.category,
            "reference": self.reference,
            "callables": ", ".join(self.callables),
            "description": description,
        }


class Entry(NamedTuple):
    """One metric of a family's ``ENTRIES`` (``_metric_entries/<family>.py``): its name, metadata and a line."""

    name: str
    info: MetricInfo
    description: str


#: one metric as a family file writes it: ``(name, direction, range, data, category, reference, callables,
#: description)``, the callables named in ``xaimetrics.<family>``
Row = tuple[str, str, tuple[float, float], tuple[str, ...], str, str, tuple[str, ...], str]


def family_entries(family: str, rows: Sequence[Row]) -> tuple[Entry, ...]:
    """A family's ``ENTRIES`` from one compact row per metric (the family named once, callables by name).

    Example:
        >>> (entry,) = family_entries("fidelity", [
        ...     ("deletion", "lower", (0, 1), ("text",), "faithfulness", "xplique", ("Deletion",), "area")])
        >>> entry.info.callables, entry.info.family
        (('xaimetrics.fidelity.Deletion',), 'fidelity')
    """
    return tuple(
        Entry(
            name,
            MetricInfo(
                family=cast("Family", family), direction=cast("Direction", direction), range=value_range,
                data=cast("tuple[DataType, ...]", data), category=cast("Category", category), reference=reference,
                callables=tuple(f"xaimetrics.{family}.{c}" for c in callables),
            ),
            description,
        )
        for name, direction, value_range, data, category, reference, callables, description in rows
    )  # fmt: skip


def _prepare(name: str, info: MetricInfo) -> MetricInfo:
    owner = f"metric {name!r}"
    if not isinstance(info, MetricInfo):
        raise invalid("value", owner, "a MetricInfo", type(info).__name__)
    for field, value, choices in (
        ("family", info.family, FAMILIES),
        ("direction", info.direction, DIRECTIONS),
        ("category", info.category, CATEGORIES),
    ):
        if value not in choices:
            raise invalid(field, owner, f"one of {', '.join(choices)}", value)
    if not info.data or any(kind not in DATA_TYPES for kind in info.data):
        raise invalid("data", owner, f"a non-empty tuple of {', '.join(DATA_TYPES)}", info.data)
    low, high = info.range
    if not low <= high:
        raise invalid("range", owner, "(low, high) with low ≤ high", info.range)
    prefix = f"xaimetrics.{info.family}."
    if not info.callables or any(
        not path.startswith(prefix) or "." in path[len(prefix) :] for path in info.callables
    ):
        raise invalid(
            "callables", owner, f"public import paths of its family ('{prefix}<name>')", info.callables,
            "Export the callable from the family's __init__ and give that path.",
        )  # fmt: skip
    return replace(info, name=name)


def new_registry() -> Registry[MetricInfo]:
    """An empty metric registry whose entries are checked (``_metric_entries.METRICS`` is the library's)."""
    return Registry("metric", argument="metric", prepare=_prepare)
