"""Per-class ConSim scores: which of f's classes the explanation helps the reader predict (issue #35).

The ConSim score (eq. 5) is one accuracy over the EP samples; it hides a reader that gets one class always right
and another never. Per class ``c`` **of f's predictions**, over the EP samples:

- ``n`` — samples f put in ``c``; ``hits`` — those the reader also put in ``c``; ``answered`` — samples the
  reader put in ``c`` (whatever f said);
- **recall** ``hits / n``: how often the reader predicts f when f says ``c`` (undefined, NaN, when ``n = 0``);
- **precision** ``hits / answered``: how often f agrees when the reader says ``c`` (NaN when ``answered = 0``).

A missing or invalid answer counts in ``n`` (a miss, as in eq. 5) but in no class's ``answered``. The counts,
not the ratios, are what the benchmark stores per row (a JSON object), so sums over settings and seeds are
exact; ratios are taken last. The recall weighted by ``n`` is the accuracy of eq. 5.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import TypedDict

from xaimetrics._validation import invalid

__all__ = ["ClassCounts", "add_class_counts", "class_counts", "per_class_scores", "read_class_counts"]


class ClassCounts(TypedDict):
    """The counts of one class: f's samples in it (``n``), the reader's hits and the reader's answers."""

    n: int
    hits: int
    answered: int


def class_counts(references: Mapping[str, str], answers: Mapping[str, str | None]) -> dict[str, ClassCounts]:
    """``{class: counts}`` for every class f predicted or the reader answered, sorted by name.

    ``references`` maps each EP id to f's class, ``answers`` to the reader's class (``None``: no valid answer).
    """
    out: dict[str, ClassCounts] = {}

    def entry(name: str) -> ClassCounts:
        return out.setdefault(name, {"n": 0, "hits": 0, "answered": 0})

    for sample, reference in references.items():
        answer = answers.get(sample)
        entry(reference)["n"] += 1
        if answer is not None:
            entry(answer)["answered"] += 1
            if answer == reference:
                entry(reference)["hits"] += 1
    return dict(sorted(out.items()))


def add_class_counts(counts: Iterable[Mapping[str, ClassCounts]]) -> dict[str, ClassCounts]:
    """The exact sum of several ``{class: counts}`` (settings, participants or seeds), sorted by class name."""
    out: dict[str, ClassCounts] = {}
    for part in counts:
        for name, values in part.items():
            total = out.setdefault(name, {"n": 0, "hits": 0, "answered": 0})
            for key in ("n", "hits", "answered"):
                total[key] += int(values[key])
    return dict(sorted(out.items()))


def read_class_counts(value: object, owner: str = "read_class_counts") -> dict[str, ClassCounts]:
    """``{class: counts}`` from a stored JSON text (a results-store cell) or a mapping; ``{}`` for empty cells.

    Raises:
        InvalidParameterError: not JSON, or an entry without non-negative integer ``n``/``hits``/``answered``.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return {}
    data: object = value
    if isinstance(value, str):
        try:
            data = json.loads(value)
        except ValueError as error:
            raise invalid("class_counts", owner, "a JSON object of per-class counts", value) from error
    if not isinstance(data, Mapping):
        raise invalid("class_counts", owner, "a JSON object of per-class counts", value)
    out: dict[str, ClassCounts] = {}
    for name, values in data.items():
        if not isinstance(values, Mapping) or not all(
            isinstance(values.get(k), int) and not isinstance(values.get(k), bool) and values[k] >= 0
            for k in ("n", "hits", "answered")
        ):
            raise invalid(
                "class_counts", owner, "entries {'n': int, 'hits': int, 'answered': int} of counts ≥ 0",
                {name: values}, "Pass the class_counts of a ConSimResult or of a results-store row.",
            )  # fmt: skip
        out[str(name)] = {"n": values["n"], "hits": values["hits"], "answered": values["answered"]}
    return out


def per_class_scores(counts: object) -> dict[str, dict[str, float | int]]:
    """Per class of f's predictions: ``n``, ``recall`` (``hits / n``) and ``precision`` (``hits / answered``).

    Args:
        counts: ``{class: {"n", "hits", "answered"}}`` — a :attr:`ConSimResult.class_counts
            <xaimetrics.consim.ConSimResult.class_counts>`, their sum, or the JSON text a results store keeps.

    Returns:
        ``{class: {"n": int, "recall": float, "precision": float}}`` for the classes f predicted at least once
        (NaN precision where the reader never answered the class).

    Example:
        >>> from xaimetrics.consim import render_prompt, score_response
        >>> prompt = render_prompt("NE1", class_names=["sport", "tech", "arts"], ep_samples=list("abcde"),
        ...                        ep_predictions=[0, 0, 0, 1, 1])
        >>> result = score_response(prompt, "\\n".join(f"Sample_{i}: sport" for i in range(5)))
        >>> per_class_scores(result.class_counts)
        {'sport': {'n': 3, 'recall': 1.0, 'precision': 0.6}, 'tech': {'n': 2, 'recall': 0.0, 'precision': nan}}
    """
    table = read_class_counts(counts, "per_class_scores")
    return {
        name: {
            "n": values["n"],
            "recall": values["hits"] / values["n"],
            "precision": values["hits"] / values["answered"] if values["answered"] else math.nan,
        }
        for name, values in table.items()
        if values["n"] > 0
    }
