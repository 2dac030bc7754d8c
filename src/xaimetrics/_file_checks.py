"""Checks of a data file's reading options and labels, shared by the dataset loaders, fine-tuning and the grid's
settings (a leaf: codecs and the error template only)."""

from __future__ import annotations

import codecs
from collections.abc import Sequence

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.exceptions import InvalidParameterError

__all__ = ["check_encoding", "check_one_class"]


def check_encoding(encoding: object, owner: str = "load_dataset") -> str:
    """``encoding`` if Python knows the codec; raises naming the argument otherwise.

    Example:
        >>> check_encoding("Latin-1")
        'Latin-1'
    """
    if not isinstance(encoding, str) or not encoding:
        raise invalid("encoding", owner, "a codec name such as 'utf-8' or 'latin-1'", encoding)
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise invalid(
            "encoding", owner, "a codec Python knows ('utf-8', 'latin-1', 'cp1252', 'utf-16', ...)", encoding,
            "See https://docs.python.org/3/library/codecs.html#standard-encodings.",
        ) from None  # fmt: skip
    return encoding


def check_one_class(
    labels: Sequence[int] | np.ndarray, class_names: Sequence[str], source: str, column: object
) -> None:
    """Refuse labels holding fewer than two classes (a classifier of one class is always right).

    Example:
        >>> check_one_class([0, 0, 0], ["spam", "ham"], "t.csv", "label")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The label column 'label' of t.csv holds one class ('spam') ...
    """
    present = sorted({int(v) for v in labels})
    if len(present) >= 2:
        return
    only = f"one class ({class_names[present[0]]!r})" if present else "no class"
    raise InvalidParameterError(
        f"The label column {column!r} of {source} holds {only} in {len(labels)} rows: a classifier needs at "
        "least two (trained on one class, it predicts that class for every text). Pass the column that holds "
        'the classes (label_column=..., --label-column, label_column = "..." in a grid file), or add rows of '
        "the other classes."
    )
