"""Per-class counts of a reader's answers against f's classes (``n``, ``hits``, ``answered``): computed by ConSim's
scoring, summed and read back by the benchmark's store and tables (a leaf, so both reach it from below; the
ratios and their definitions are :func:`xaimetrics.consim.per_class_scores`)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import TypedDict

from xaimetrics._validation import invalid

__all__ = ["ClassCounts", "add_class_counts", "class_counts", "read_class_counts"]


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
