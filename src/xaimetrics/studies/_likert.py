"""The Likert rating study (the Atlas protocol's human evaluation), as plain data.

Annotators see one text per screen with, for each dimension, its value on that text and its description, and
answer "How well does this dimension capture [property]?" on a 1–5 scale (1 strongly disagree … 5 strongly
agree). The ratings form an ``(examples × annotators × dimensions)`` array that
:func:`xaimetrics.representation.analyze_ratings` and :func:`~xaimetrics.representation.krippendorff_alpha`
read directly (see :func:`xaimetrics.studies._results.likert_ratings`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.studies._lookup import find

__all__ = ["DEFAULT_QUESTION", "DEFAULT_SCALE", "Dimension", "LikertOptions", "LikertStudy", "RatingItem"]

_OWNER = "LikertStudy"
#: the Atlas protocol's question; ``{property}`` is replaced by the dimension's property
DEFAULT_QUESTION = "How well does this dimension capture {property}?"
#: the Atlas protocol's 1–5 scale, in plain words
DEFAULT_SCALE: tuple[str, ...] = (
    "Strongly disagree: the dimension looks random or meaningless here",
    "Disagree: some pattern, but inconsistent",
    "Neutral: mixed evidence",
    "Agree: it generally captures the property",
    "Strongly agree: it clearly and consistently captures the property",
)
_BANDS = ((0.2, "very low"), (0.4, "low"), (0.6, "middle"), (0.8, "high"), (math.inf, "very high"))


@dataclass(frozen=True)
class Dimension:
    """One rated dimension: its name, the property it should capture, and optional poles.

    Example:
        >>> Dimension("Positive ↔ Negative", "emotional tone", low="Negative", high="Positive").property
        'emotional tone'
    """

    name: str
    property: str
    description: str = ""
    low: str = ""
    high: str = ""

    def __post_init__(self) -> None:
        for field_name in ("name", "property"):
            value = getattr(self, field_name)
            if not isinstance(value, str) or not value.strip():
                raise invalid(f"dimensions.{field_name}", _OWNER, "a non-empty string", value)


@dataclass(frozen=True)
class RatingItem:
    """A text to rate and the value of every dimension on it."""

    id: str
    text: str
    values: tuple[float, ...]


class LikertOptions(TypedDict, total=False):
    """The settings of a :class:`LikertStudy` beside its dimensions and items (``**options`` of its builders)."""

    title: str
    question: str
    scale: tuple[str, ...]
    n_annotators: int
    shuffle: bool
    instructions: str


@dataclass(frozen=True)
class LikertStudy:
    """A Likert rating study: texts, dimensions, the question and the scale.

    Args:
        dimensions: the :class:`Dimension` objects rated on every text.
        items: the :class:`RatingItem` texts (the protocol uses 50).
        title: shown to annotators.
        question: the question per dimension; ``{property}`` is replaced by the dimension's property.
        scale: the labels of ratings 1 … len(scale) (default the protocol's five).
        n_annotators: how many annotators the study plans (the protocol: 3); shown in the admin page.
        shuffle: show the texts in a different (seeded) order to each annotator.
        instructions: extra instructions shown before the first text.

    Example:
        >>> study = LikertStudy([Dimension("tone", "emotional tone")],
        ...                     [RatingItem("0", "a joy", (0.8,)), RatingItem("1", "dull", (-0.4,))])
        >>> study.question_for(study.dimensions[0]), study.value_label(study.items[1], 0)
        ('How well does this dimension capture emotional tone?', '-0.40 (low: -50 % of the largest magnitude)')
    """

    dimensions: tuple[Dimension, ...]
    items: tuple[RatingItem, ...]
    title: str = "Rate the dimensions"
    question: str = DEFAULT_QUESTION
    scale: tuple[str, ...] = DEFAULT_SCALE
    n_annotators: int = 3
    shuffle: bool = True
    instructions: str = ""

    kind: ClassVar[str] = "likert"

    def __post_init__(self) -> None:
        object.__setattr__(self, "dimensions", tuple(_dimension(d) for d in self.dimensions))
        object.__setattr__(self, "items", tuple(_item(i) for i in self.items))
        object.__setattr__(self, "scale", tuple(str(s) for s in self.scale))
        if not self.dimensions:
            raise invalid("dimensions", _OWNER, "at least one dimension", "none")
        if not self.items:
            raise invalid("items", _OWNER, "at least one text to rate", "none")
        ids = [item.id for item in self.items]
        if len(set(ids)) != len(ids):
            raise invalid("items", _OWNER, "items with distinct ids", ids[:10])
        for item in self.items:
            if len(item.values) != len(self.dimensions) or not all(math.isfinite(v) for v in item.values):
                raise invalid(
                    "items", _OWNER, f"{len(self.dimensions)} finite values per text (one per dimension)",
                    f"{list(item.values)} for item {item.id!r}",
                )  # fmt: skip
        if not 2 <= len(self.scale) <= 9:
            raise invalid("scale", _OWNER, "2 to 9 labels (ratings 1 … n, one key each)", len(self.scale))
        if "{property}" not in self.question:
            raise invalid("question", _OWNER, "a text containing '{property}'", self.question)
        n = self.n_annotators
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise invalid("n_annotators", _OWNER, "an integer ≥ 1", n)

    @property
    def values(self) -> np.ndarray:
        """The dimension values, shape ``(n_items, n_dimensions)``."""
        return np.array([item.values for item in self.items], dtype=np.float64)

    def item(self, item_id: str) -> RatingItem:
        return find(
            self.items, lambda item: item.id, item_id, "item", _OWNER, "the id of one of the study's texts"
        )

    def question_for(self, dimension: Dimension) -> str:
        return self.question.replace("{property}", dimension.property)

    def value_label(self, item: RatingItem, d: int) -> str:
        """The value, its band by value and towards which pole.

        The band is read from the value itself, as a fraction of the largest value of the dimension among the
        study's texts (of the largest magnitude when the dimension takes negative values too): a value at 1 %
        of the maximum is "very low" even when most texts are lower still. Ranks would call it "high".
        """
        fraction, signed = self.value_fraction(item, d)
        position = (fraction + 1) / 2 if signed else fraction  # in [0, 1]
        band = next(name for limit, name in _BANDS if position < limit)
        dimension = self.dimensions[d]
        towards = ""
        if band in ("very low", "low") and dimension.low:
            towards = f", toward {dimension.low}"
        elif band in ("high", "very high") and dimension.high:
            towards = f", toward {dimension.high}"
        largest = "the largest magnitude" if signed else "the largest value"
        return f"{item.values[d]:.2f} ({band}: {100 * fraction:.0f} % of {largest}{towards})"

    def value_fraction(self, item: RatingItem, d: int) -> tuple[float, bool]:
        """``(value / max |value| of the dimension, whether the dimension takes negative values)``."""
        column = self.values[:, d]
        scale = float(np.abs(column).max())
        return (item.values[d] / scale if scale > 0 else 0.0), bool((column < 0).any())

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind, "title": self.title, "question": self.question, "scale": list(self.scale),
            "n_annotators": self.n_annotators, "shuffle": self.shuffle, "instructions": self.instructions,
            "dimensions": [vars(d) for d in self.dimensions],
            "items": [{"id": i.id, "text": i.text, "values": list(i.values)} for i in self.items],
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LikertStudy:
        return cls(
            dimensions=tuple(data["dimensions"]), items=tuple(data["items"]),
            title=str(data.get("title", cls.title)), question=str(data.get("question", DEFAULT_QUESTION)),
            scale=tuple(data.get("scale", DEFAULT_SCALE)), n_annotators=data.get("n_annotators", 3),
            shuffle=bool(data.get("shuffle", True)), instructions=str(data.get("instructions", "")),
        )  # fmt: skip


def _dimension(value: object) -> Dimension:
    if isinstance(value, Dimension):
        return value
    if isinstance(value, Mapping):
        unknown = set(value) - {"name", "property", "description", "low", "high"}
        if unknown:
            raise invalid(
                "dimensions", _OWNER, "keys among name, property, description, low, high", sorted(unknown)
            )
        return Dimension(**{k: str(v) for k, v in value.items()})
    raise invalid("dimensions", _OWNER, "Dimension objects or mappings", type(value).__name__)


def _item(value: object) -> RatingItem:
    if isinstance(value, RatingItem):
        data: Mapping[str, object] = vars(value)
    elif isinstance(value, Mapping):
        data = value
    else:
        raise invalid(
            "items", _OWNER, "RatingItem objects or {id, text, values} mappings", type(value).__name__
        )
    text, values = data.get("text"), data.get("values")
    if not isinstance(text, str) or isinstance(values, str) or not isinstance(values, Sequence | np.ndarray):
        raise invalid("items", _OWNER, "a text (string) and a list of values per item", data)
    try:
        numbers = tuple(float(v) for v in values)
    except (TypeError, ValueError) as error:
        raise invalid("items", _OWNER, "numeric dimension values", list(values)) from error
    return RatingItem(str(data.get("id")), text, numbers)
