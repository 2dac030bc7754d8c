"""Concept annotations: names, types and cardinalities of the concepts a model predicts, and the logit layout.

A concept model predicts one block of logits per concept, in label order:

- a **binary** concept has one logit (cardinality 1), ``P(concept) = sigmoid(logit)``;
- a **categorical** concept with ``k > 1`` states has ``k`` logits, ``P = softmax(block)``;
- a **continuous** concept has one column holding the predicted value itself.

The ground truth is in *concept space*: one column per concept (0/1 for binary, the class index for
categorical, the value for continuous).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypedDict, TypeVar, cast

from xaimetrics._validation import invalid

__all__ = ["CONCEPT_TYPES", "Annotations", "AnnotationsLike", "Concept", "ConceptType", "TypeGroup"]

ConceptType = Literal["binary", "categorical", "continuous"]
#: The concept types, in the order results and type groups are reported.
CONCEPT_TYPES: tuple[ConceptType, ...] = ("binary", "categorical", "continuous")


class AnnotationsLike(Protocol):
    """Concept annotations from elsewhere (e.g. PyC's ``torch_concepts.Annotations``)."""

    @property
    def labels(self) -> Sequence[str]: ...

    @property
    def cardinalities(self) -> Sequence[int]: ...

    @property
    def types(self) -> Sequence[str] | None: ...


class _State(TypedDict):
    """What pickling keeps: the three declared fields."""

    labels: tuple[str, ...]
    cardinalities: tuple[int, ...]
    types: tuple[ConceptType, ...]


class TypeGroup(TypedDict):
    """The concepts of one type: names, target columns and logit columns."""

    labels: list[str]
    concept_idx: list[int]
    logits_idx: list[int]


_OWNER = "Annotations"


@dataclass(frozen=True)
class Concept:
    """A read-only view of one concept of an :class:`Annotations`.

    Attributes:
        name: the concept label.
        index: position of the concept among the labels (its column in the target).
        type: ``"binary"``, ``"categorical"`` or ``"continuous"``.
        cardinality: number of logits of the concept (1 unless categorical).
        slice: the concept's columns in the logit tensor.
    """

    name: str
    index: int
    type: ConceptType
    cardinality: int
    slice: slice


class Annotations:
    """Names, types and cardinalities of concepts, with the logit layout derived from them.

    Validation: labels are unique non-empty strings; a binary concept has cardinality 1, a categorical one
    more than 1, a continuous one exactly 1. Missing ``types`` are inferred from ``cardinalities``
    (1 → binary, > 1 → categorical); missing ``cardinalities`` are inferred from ``types`` (categorical needs
    them); with neither, every concept is binary. The object is immutable, so every derived layout (slices
    per concept and per type, column indices) is computed once.

    Args:
        labels: concept names, in the order of the logit blocks and of the target columns.
        cardinalities: number of logits per concept (``None``: inferred).
        types: ``"binary"``, ``"categorical"`` or ``"continuous"`` per concept (``None``: inferred).

    Raises:
        InvalidParameterError: on empty or duplicated labels, unknown types, or a type/cardinality mismatch.

    Example:
        >>> ann = Annotations(["is_round", "color", "size.cm"], cardinalities=[1, 3, 1],
        ...                   types=["binary", "categorical", "continuous"])
        >>> ann.size, len(ann)
        (5, 3)
        >>> ann.concept_slices["color"]
        slice(1, 4, None)
        >>> ann.type_groups["categorical"]["logits_idx"]
        [1, 2, 3]
        >>> Annotations(["a", "b"], cardinalities=[4, 1]).types
        ('categorical', 'binary')
    """

    __slots__ = (
        "_cardinalities",
        "_concepts",
        "_label_to_index",
        "_labels",
        "_type_groups",
        "_types",
    )

    def __init__(
        self,
        labels: Sequence[str],
        cardinalities: Sequence[int] | None = None,
        types: Sequence[str] | None = None,
    ) -> None:
        labels_t = _check_labels(labels)
        n = len(labels_t)
        if types is not None:
            # each entry is checked against CONCEPT_TYPES just below
            types_t = _check_sequence(cast("Sequence[ConceptType]", types), "types", n)
            for label, kind in zip(labels_t, types_t, strict=True):
                if kind not in CONCEPT_TYPES:
                    raise invalid(
                        "types",
                        _OWNER,
                        "a list of 'binary', 'categorical' or 'continuous'",
                        f"{kind!r} for concept {label!r}",
                    )
        if cardinalities is not None:
            cards_t = _check_sequence(cardinalities, "cardinalities", n)
            for label, card in zip(labels_t, cards_t, strict=True):
                if isinstance(card, bool) or not isinstance(card, int) or card < 1:
                    raise invalid(
                        "cardinalities", _OWNER, "a list of integers ≥ 1", f"{card!r} for concept {label!r}"
                    )
            cards_t = tuple(int(c) for c in cards_t)
        elif types is not None:
            if "categorical" in types_t:
                label = labels_t[types_t.index("categorical")]
                raise invalid(
                    "cardinalities",
                    _OWNER,
                    "given when a concept is categorical",
                    f"None, with categorical concept {label!r}",
                    "Pass the number of states of every concept, e.g. cardinalities=[1, 3, 1].",
                )
            cards_t = (1,) * n
        else:
            cards_t = (1,) * n
        if types is None:
            types_t = tuple("binary" if card == 1 else "categorical" for card in cards_t)
        for label, kind, card in zip(labels_t, types_t, cards_t, strict=True):
            if kind in ("binary", "continuous") and card != 1:
                raise invalid(
                    "cardinalities",
                    _OWNER,
                    f"1 for a {kind} concept",
                    f"{card} for concept {label!r}",
                    "Declare it 'categorical', or give it a single logit.",
                )
            if kind == "categorical" and card < 2:
                raise invalid(
                    "cardinalities",
                    _OWNER,
                    "> 1 for a categorical concept",
                    f"{card} for concept {label!r}",
                    "Declare a two-state concept with one logit as 'binary', or give it ≥ 2 logits.",
                )
        self._labels: tuple[str, ...] = labels_t
        self._cardinalities: tuple[int, ...] = cards_t
        self._types: tuple[ConceptType, ...] = types_t
        self._label_to_index = {label: i for i, label in enumerate(labels_t)}
        concepts = []
        start = 0
        for i, (label, kind, card) in enumerate(zip(labels_t, types_t, cards_t, strict=True)):
            concepts.append(Concept(label, i, kind, card, slice(start, start + card)))
            start += card
        self._concepts = tuple(concepts)
        groups: dict[str, TypeGroup] = {
            kind: {"labels": [], "concept_idx": [], "logits_idx": []} for kind in CONCEPT_TYPES
        }
        for concept in concepts:
            group = groups[concept.type]
            group["labels"].append(concept.name)
            group["concept_idx"].append(concept.index)
            group["logits_idx"].extend(range(concept.slice.start, concept.slice.stop))
        self._type_groups = groups

    # --- the declared fields -------------------------------------------------------------------------------

    @property
    def labels(self) -> tuple[str, ...]:
        """Concept names, in layout order."""
        return self._labels

    @property
    def cardinalities(self) -> tuple[int, ...]:
        """Number of logits of each concept."""
        return self._cardinalities

    @property
    def types(self) -> tuple[ConceptType, ...]:
        """Type of each concept."""
        return self._types

    # --- the derived layout --------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """Width of the logit tensor: the sum of the cardinalities."""
        return self._concepts[-1].slice.stop

    @property
    def shape(self) -> tuple[int, int]:
        """Shape of a logit tensor, ``(-1, size)`` (the batch size is free)."""
        return (-1, self.size)

    @property
    def concepts(self) -> tuple[Concept, ...]:
        """Every concept as a :class:`Concept`, in layout order."""
        return self._concepts

    @property
    def label_to_index(self) -> Mapping[str, int]:
        """Concept name → its position (a copy; the annotations cannot be changed through it)."""
        return dict(self._label_to_index)

    @property
    def concept_slices(self) -> dict[str, slice]:
        """Concept name → its columns in the logit tensor."""
        return {c.name: c.slice for c in self._concepts}

    @property
    def type_groups(self) -> dict[str, TypeGroup]:
        """Per type: ``labels``, ``concept_idx`` (target columns) and ``logits_idx`` (logit columns).

        Every type is present, possibly with empty lists (the layout of PyC's ``Annotations.type_groups``).
        """
        return {
            kind: {
                "labels": list(group["labels"]),
                "concept_idx": list(group["concept_idx"]),
                "logits_idx": list(group["logits_idx"]),
            }
            for kind, group in self._type_groups.items()
        }

    @property
    def labels_by_type(self) -> dict[str, list[str]]:
        """Type → concept names of that type, for the types that have concepts."""
        return {kind: list(g["labels"]) for kind, g in self._type_groups.items() if g["labels"]}

    def concept(self, name: str) -> Concept:
        """The :class:`Concept` called ``name``.

        Raises:
            InvalidParameterError: if no concept has that name.
        """
        return self._concepts[self.get_index(name)]

    def get_index(self, name: str) -> int:
        """Position of the concept called ``name`` (its column in the target tensor)."""
        try:
            return self._label_to_index[name]
        except (KeyError, TypeError):
            raise invalid(
                "name",
                _OWNER,
                "one of the concept labels",
                repr(name),
                f"Known labels: {list(self._labels)}.",
            ) from None

    # --- protocol ------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._labels)

    def __iter__(self) -> Iterator[Concept]:
        return iter(self._concepts)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._label_to_index

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Annotations):
            return NotImplemented
        return (self._labels, self._cardinalities, self._types) == (
            other._labels,
            other._cardinalities,
            other._types,
        )

    def __hash__(self) -> int:
        return hash((self._labels, self._cardinalities, self._types))

    def __repr__(self) -> str:
        return (
            f"Annotations(labels={list(self._labels)!r}, cardinalities={list(self._cardinalities)!r}, "
            f"types={list(self._types)!r})"
        )

    def __getstate__(self) -> _State:
        return {"labels": self._labels, "cardinalities": self._cardinalities, "types": self._types}

    def __setstate__(self, state: _State) -> None:
        self.__init__(state["labels"], state["cardinalities"], state["types"])  # type: ignore[misc]

    @classmethod
    def coerce(cls, annotations: Annotations | AnnotationsLike, owner: str = "ConceptMetrics") -> Annotations:
        """Return ``annotations`` as :class:`Annotations`.

        Accepts our own class, or any object with ``labels``, ``cardinalities`` and ``types`` attributes
        (e.g. PyC's ``torch_concepts.Annotations``), which is converted (and validated).
        """
        if isinstance(annotations, Annotations):
            return annotations
        if all(hasattr(annotations, attr) for attr in ("labels", "cardinalities", "types")):
            return cls(
                list(annotations.labels),
                list(annotations.cardinalities),
                list(annotations.types) if annotations.types is not None else None,
            )
        raise invalid(
            "annotations",
            owner,
            "an Annotations object",
            type(annotations).__name__,
            "Build one with Annotations(labels, cardinalities, types).",
        )


def _check_labels(labels: object) -> tuple[str, ...]:
    if isinstance(labels, str) or not isinstance(labels, Sequence):
        raise invalid(
            "labels", _OWNER, "a list of concept names", repr(labels), f"Wrap it in a list: [{labels!r}]."
        )
    if len(labels) == 0:
        raise invalid("labels", _OWNER, "a non-empty list of concept names", "an empty list")
    seen: set[str] = set()
    for i, label in enumerate(labels):
        if not isinstance(label, str) or not label:
            raise invalid("labels", _OWNER, "a list of non-empty strings", f"{label!r} at position {i}")
        if label in seen:
            raise invalid(
                "labels", _OWNER, "a list of unique names", f"{label!r} twice", "Rename one of them."
            )
        seen.add(label)
    return tuple(labels)


_T = TypeVar("_T")


def _check_sequence(values: Sequence[_T], name: str, n: int) -> tuple[_T, ...]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise invalid(name, _OWNER, "a list with one entry per label", repr(values))
    if len(values) != n:
        raise invalid(name, _OWNER, f"a list with one entry per label ({n})", f"{len(values)} entries")
    return tuple(values)
