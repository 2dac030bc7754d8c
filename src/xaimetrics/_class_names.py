"""Class names that survive the ``Sample_<id>: <class>`` answer format, checked wherever they enter: the grid,
and fine-tuning (a model trained on names no prompt can show could be evaluated by no grid)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from xaimetrics._validation import invalid
from xaimetrics._words import words_of

__all__ = ["check_class_names", "check_prompt_class_names"]

#: characters and patterns a class name must not hold: the simulator answers ``Sample_<id>: <class>`` lines
_BAD_CLASS_NAME = re.compile(r"[\x00-\x1f\x7f,]|sample_\d+\s*:", re.IGNORECASE)


def check_class_names(names: Sequence[object], name: str, owner: str) -> None:
    """Class names must survive the ``Sample_<id>: <class>`` answer format: non-empty text without control
    characters (NUL, newline, tab), commas or a ``Sample_<id>:`` pattern, no surrounding spaces, and distinct
    ignoring case (answers are matched case-insensitively).

    Example:
        >>> check_class_names(["positive", "negative"], "class_names", "run_grid")
        >>> check_class_names(["Sample_3: x", "b"], "class_names", "run_grid")
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'class_names' parameter of run_grid must be ...
    """
    expected = (
        "distinct non-empty names (ignoring case) without control characters (NUL, newline, tab), commas, "
        "surrounding spaces or a 'Sample_<id>:' pattern, which break the 'Sample_<id>: <class>' answer format"
    )
    for class_name in names:
        text = str(class_name)
        if not text.strip() or text != text.strip() or _BAD_CLASS_NAME.search(text):
            raise invalid(
                name, owner, expected, repr(text), "Rename the class (e.g. in the dataset's label names)."
            )
    folded = [str(n).casefold() for n in names]
    if len(set(folded)) != len(folded):
        raise invalid(name, owner, expected, list(names), "Rename the classes so that they differ.")


def check_prompt_class_names(class_names: object, owner: str) -> tuple[str, ...]:
    """The class names a ConSim prompt can show, stripped: at least two one-line strings with letters or digits
    that differ in their letters or digits (answers are matched on them, :func:`~xaimetrics._words.words_of`).

    Example:
        >>> check_prompt_class_names(["World ", "Sci/Tech"], "render_prompt")
        ('World', 'Sci/Tech')
        >>> check_prompt_class_names(["Sci/Tech", "sci-tech"], "render_prompt")
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'class_names' parameter of render_prompt must be ...
    """
    if isinstance(class_names, str) or not isinstance(class_names, Iterable):
        raise invalid("class_names", owner, "a list of at least two class names", class_names)
    names = tuple(class_names)
    if len(names) < 2:
        raise invalid("class_names", owner, "a list of at least two class names", names)
    for name in names:
        if not isinstance(name, str) or not words_of(name) or "\n" in name or "\r" in name:
            raise invalid("class_names", owner, "one-line strings containing letters or digits", repr(name))
    if len({tuple(words_of(name)) for name in names}) != len(names):
        raise invalid(
            "class_names",
            owner,
            "names that differ in their letters or digits (answers are matched on them)",
            names,
            "Rename the classes, e.g. 'Sci/Tech' and 'sci-tech' cannot both be classes.",
        )
    return tuple(name.strip() for name in names)
