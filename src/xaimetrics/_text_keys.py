"""When two texts are the same sample: the normalised form ConSim's selection and the study builder's counts
compare (a leaf, so that both reach it from below)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np

from xaimetrics._validation import check_texts, invalid

__all__ = ["first_occurrences", "normalized_text"]


def normalized_text(text: str) -> str:
    """The form under which two texts count as the same sample: NFKC, case-folded, whitespace collapsed.

    Example:
        >>> normalized_text("  A  fine\tFILM ") == normalized_text("a fine film")
        True
    """
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def first_occurrences(inputs: Sequence[str] | None, n: int, owner: str) -> np.ndarray:
    """Boolean mask of the samples whose normalised text did not occur before (all True without texts).

    Example:
        >>> first_occurrences(["A film", "a  FILM", "a plot"], 3, "select_examples").tolist()
        [True, False, True]
    """
    keep = np.ones(n, dtype=bool)
    if inputs is None:
        return keep
    texts = check_texts(inputs, "inputs", owner)
    if len(texts) != n:
        raise invalid("inputs", owner, f"one text per label ({n})", f"{len(texts)} texts")
    seen: set[str] = set()
    for i, text in enumerate(texts):
        key = normalized_text(text)
        if key in seen:
            keep[i] = False
        seen.add(key)
    return keep
