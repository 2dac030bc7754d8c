"""One of a study's parts (arm, sample set, rated text) by its id, or the library's error naming the argument."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from xaimetrics._validation import invalid

__all__ = ["find"]

_Part = TypeVar("_Part")


def find(
    parts: Iterable[_Part],
    key: Callable[[_Part], object],
    wanted: object,
    name: str,
    owner: str,
    expected: str,
) -> _Part:
    """The first of ``parts`` whose ``key`` is ``wanted``; an ``InvalidParameterError`` about ``name`` otherwise.

    Example:
        >>> find(["a", "bb"], len, 2, "word", "demo", "the length of a word")
        'bb'
        >>> find(["a", "bb"], len, 3, "word", "demo", "the length of a word")
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'word' parameter of demo must be the length of a word. Got 3.
    """
    for part in parts:
        if key(part) == wanted:
            return part
    raise invalid(name, owner, expected, wanted)
