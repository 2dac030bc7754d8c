"""One registry of metric metadata: what every metric xaimetrics ships measures, which way is better, its range.

Quantus attaches a score direction, data applicability and category to each metric as enums; Interpreto's
users misread Deletion's direction (its issue #147). Here every metric has one :class:`MetricInfo` in
``METRICS``, a :class:`~xaimetrics._registry.Registry` filled from the family tables of ``_metric_entries/``. The
``xaimetrics metrics`` command, ``xaimetrics.metrics()`` (a DataFrame, ``_metric_listing.py``), the docs table
(``docs/metrics.md``, checked by a test) and the fidelity plots read it; a test fails when a family exports a
metric without an entry.

Callables are stored as dotted paths and imported only by :meth:`MetricInfo.resolve`, so reading the registry
imports neither torch nor the families.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple, cast, get_args

from xaimetrics._registry import Registry
from xaimetrics._validation import invalid

__all__ = [
    "CATEGORIES",
    "DATA_TYPES",
    "DIRECTIONS",
    "FAMILIES",
    "FIELDS",
    "Entry",
    "MetricInfo",
    "new_registry",
    "read_entries",
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

    def resolve(self) -> tuple[object, ...]:
        """Import and return the callables (this imports their family)."""
        found = []
        for path in self.callables:
            module, _, attribute = path.rpartition(".")
            found.append(getattr(importlib.import_module(module), attribute))
        return tuple(found)

    def to_dict(self, description: str = "") -> dict[str, object]:
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

    def row(self, description: str = "") -> dict[str, str]:
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
    """One metric of a family's table (``_metric_entries/<family>.txt``): its name, metadata and a line."""

    name: str
    info: MetricInfo
    description: str


#: the fields of a metric's block in ``_metric_entries/<family>.txt``, in order
FIELDS = ("name", "direction", "range", "data", "category", "reference", "callables", "description")


def read_entries(family: str, text: str) -> tuple[Entry, ...]:
    """A family's entries from its table (``_metric_entries/<family>.txt``): one block of ``field: value`` lines
    per metric, blocks apart by a blank line, ``#`` comments; lists comma-separated, ``inf`` for an open end,
    callables named in ``xaimetrics.<family>``.

    Example:
        >>> (entry,) = read_entries("fidelity", '''
        ... name: deletion
        ... direction: lower
        ... range: 0, inf
        ... data: text, tensor
        ... category: faithfulness
        ... reference: xplique
        ... callables: Deletion
        ... description: area under the curve
        ... ''')
        >>> entry.name, entry.info.range, entry.info.data, entry.info.callables
        ('deletion', (0, inf), ('text', 'tensor'), ('xaimetrics.fidelity.Deletion',))
    """
    blocks: list[dict[str, str]] = [{}]
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            if blocks[-1]:
                blocks.append({})
        elif not line.startswith("#"):
            field, colon, value = line.partition(":")
            if not colon or field not in FIELDS or field in blocks[-1]:
                raise invalid(
                    "text", f"the metric table of {family}", f"'field: value' lines of {', '.join(FIELDS)}",
                    f"line {number}: {line!r}", "Write each field once per block; separate blocks by a blank line.",
                )  # fmt: skip
            blocks[-1][field] = value.strip()
    return tuple(_entry(family, block) for block in blocks if block)


def _entry(family: str, block: dict[str, str]) -> Entry:
    missing = [field for field in FIELDS if field not in block and field != "reference"]
    if missing:
        raise invalid(
            "text", f"metric {block.get('name', '?')!r} of {family}", "every field", f"no {missing[0]}"
        )
    low, high = (_number(end) for end in block["range"].split(","))
    info = MetricInfo(
        family=cast("Family", family), direction=cast("Direction", block["direction"]), range=(low, high),
        data=cast("tuple[DataType, ...]", _items(block["data"])), category=cast("Category", block["category"]),
        reference=block.get("reference", ""),
        callables=tuple(f"xaimetrics.{family}.{c}" for c in _items(block["callables"])),
    )  # fmt: skip
    return Entry(block["name"], info, block["description"])


def _items(value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in value.split(",") if item.strip())


def _number(text: str) -> float:
    """An end of a range: ``inf``, ``-inf``, an integer or a decimal."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        return float(text)


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
