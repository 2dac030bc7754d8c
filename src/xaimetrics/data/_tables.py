"""From a table's text and label columns to a :class:`TextDataset`: column choice and label encoding."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeGuard

import numpy as np

from xaimetrics._registry import did_you_mean
from xaimetrics._validation import invalid

__all__ = ["LABEL_COLUMNS", "TEXT_COLUMNS", "Columns", "encode_labels", "pick_column", "shared_class_names"]

#: columns tried, in order, when no ``text_column`` is given
TEXT_COLUMNS: tuple[str, ...] = ("text", "sentence", "content", "review", "document")
#: columns tried, in order, when no ``label_column`` is given
LABEL_COLUMNS: tuple[str, ...] = ("label", "labels", "class", "target")


@dataclass(frozen=True)
class Columns:
    """How to read a table: which columns hold the texts and the labels (``None``: the usual names), the
    class names, the files' text encoding and whether rows with an empty text or label are dropped."""

    text: str | None = None
    label: str | None = None
    class_names: Sequence[str] | None = None
    encoding: str = "utf-8"
    drop_empty_rows: bool = False

    def pick(self, columns: Sequence[str], source: str) -> tuple[str, str]:
        """The text and label column names among ``columns`` (see :func:`pick_column`).

        Example:
            >>> Columns("Content", "Author").pick(["Author", "Content"], "tweets.csv")
            ('Content', 'Author')
        """
        text = pick_column(columns, self.text, TEXT_COLUMNS, "text_column", source)
        label = pick_column(columns, self.label, LABEL_COLUMNS, "label_column", source)
        if text == label:
            raise invalid(
                "label_column", "load_dataset", f"another column than the text column of {source}", label,
                f"Its columns are {', '.join(map(str, columns))}.",
            )  # fmt: skip
        return text, label


def pick_column(
    columns: Sequence[str], requested: str | None, candidates: tuple[str, ...], argument: str, source: str
) -> str:
    """``requested`` if it is a column, else the first of ``candidates`` present; raises naming the columns.

    Example:
        >>> pick_column(["id", "review", "stars"], None, TEXT_COLUMNS, "text_column", "reviews.csv")
        'review'
    """
    columns = list(columns)
    if requested is not None:
        if not isinstance(requested, str) or not requested:
            raise invalid(argument, "load_dataset", "a column name (a non-empty string)", requested)
        if requested not in columns:
            hint = did_you_mean(requested, columns)
            hint = f" {hint} Column names are case-sensitive." if hint else ""
            raise invalid(
                argument, "load_dataset", f"a column of {source} ({', '.join(map(str, columns))})", requested,
                f"Pass one of its columns.{hint}",
            )  # fmt: skip
        return requested
    found = next((c for c in candidates if c in columns), None)
    if found is None:
        raise invalid(
            argument, "load_dataset", f"given: {source} has none of the usual columns {candidates}",
            None,
            f"Its columns are {', '.join(map(str, columns))}; pass {argument}='<column>' "
            f"(--{argument.replace('_', '-')} on the command line, {argument} = \"<column>\" in a grid file).",
        )  # fmt: skip
    return found


def encode_labels(
    raw: Sequence[object], class_names: Sequence[str] | None, source: str
) -> tuple[np.ndarray, list[str]]:
    """Integer labels and class names from a label column of integers or of class-name strings.

    Integers are class indices (``class_names`` names them; default ``"0"``, ``"1"``, …). Strings are class
    names: ``class_names`` fixes their order (and rejects other values), otherwise they are sorted.

    Example:
        >>> encode_labels(["pos", "neg", "pos"], None, "t.csv")
        (array([1, 0, 1]), ['neg', 'pos'])
        >>> encode_labels([2, 0], ["low", "mid", "high"], "t.csv")
        (array([2, 0]), ['low', 'mid', 'high'])
    """
    values = list(raw)
    names = None if class_names is None else [str(name) for name in class_names]
    if _all_strings(values):
        strings = _clean_label_names(values, source)
        if names is None:
            names = sorted(set(strings))
        index = {name: i for i, name in enumerate(names)}
        unknown = sorted(set(strings) - set(index))
        if unknown:
            raise invalid(
                "class_names", "load_dataset", f"a list holding every label of {source}", names,
                f"Labels not in it: {', '.join(map(repr, unknown[:5]))}.",
            )  # fmt: skip
        return np.asarray([index[v] for v in strings], dtype=np.int64), names
    array = np.asarray(values)
    if array.dtype.kind == "f" and np.isfinite(array).all() and (array == np.round(array)).all():
        array = array.astype(np.int64)  # a CSV column of whole numbers read as floats
    if array.dtype.kind not in "iu" or (array.size and array.min() < 0):
        bad = "missing or non-integer values" if array.dtype.kind in "fO" else f"dtype {array.dtype}"
        raise invalid(
            "label_column", "load_dataset", "a column of class indices (integers ≥ 0) or of class names",
            f"{bad} in {source}", "Drop the rows without a label, or pick another label_column.",
        )  # fmt: skip
    array = array.astype(np.int64)
    top = int(array.max()) if array.size else -1
    if names is None:
        names = [str(i) for i in range(top + 1)]
    elif len(names) <= top:
        raise invalid(
            "class_names",
            "load_dataset",
            f"at least {top + 1} names (labels of {source} go up to {top})",
            names,
        )
    return array, names


def _all_strings(values: list[object]) -> TypeGuard[list[str]]:
    return all(isinstance(v, str) for v in values)


def _clean_label_names(values: list[str], source: str) -> list[str]:
    """String labels without surrounding whitespace (``'earn '`` is ``'earn'``, said once in a warning); a label
    holding a control character (a NUL byte, a line break) is refused, naming it."""
    bad = next((v for v in values if any(ord(c) < 32 or ord(c) == 127 for c in v.strip())), None)
    if bad is not None:
        raise invalid(
            "label_column", "load_dataset", "class names without control characters (NUL bytes, line breaks)",
            repr(bad), f"Clean the label column of {source}.",
        )  # fmt: skip
    stripped = [v.strip() for v in values]
    changed = sorted({v for v, s in zip(values, stripped, strict=True) if v != s})
    if changed:
        warnings.warn(
            f"{source}: {len(changed)} label value(s) had surrounding spaces and are read without them "
            f"({', '.join(map(repr, changed[:5]))}{', …' if len(changed) > 5 else ''}).",
            UserWarning,
            stacklevel=4,
        )
    return stripped


def shared_class_names(raw: list[list[object]], class_names: Sequence[str] | None) -> Sequence[str] | None:
    """Class names common to every split: given, the sorted union of string labels, or ``"0"…"max"``."""
    if class_names is not None:
        return class_names
    values = [v for labels in raw for v in labels]
    if not values:
        return None
    if _all_strings(values):
        return sorted({v.strip() for v in values})
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool) and v == v]
    if len(numbers) == len(values):  # class indices: name them up to the largest index of any split
        return [str(i) for i in range(int(max(numbers)) + 1)]
    return None  # mixed values: encode_labels reports them
