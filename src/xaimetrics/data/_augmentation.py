"""Augmentation by punctuation split (ConSim paper, App. A.1)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from xaimetrics._validation import check_same_length, check_texts

__all__ = ["augment_with_punctuation_splits", "split_on_punctuation"]

# Sentence punctuation, except a dot or comma between two digits ("3.5", "1,000"); brackets, double quotes and
# spaced dashes also separate clauses. Apostrophes and hyphens inside words do not.
_SPLIT = re.compile(r"(?<!\d)[.,;:!?]|[.,;:!?](?!\d)|[()\[\]{}\"“”…]|\s--?\s|\s—\s|—")


def split_on_punctuation(text: str) -> list[str]:
    """The fragments of ``text`` between punctuation marks, stripped, empty ones dropped.

    Example:
        >>> split_on_punctuation("This is a first example, made up for understanding.")
        ['This is a first example', 'made up for understanding']
        >>> split_on_punctuation("It costs 3.5 dollars; a bargain")
        ['It costs 3.5 dollars', 'a bargain']
    """
    return [piece.strip() for piece in _SPLIT.split(text) if piece and piece.strip()]


def augment_with_punctuation_splits(
    texts: Sequence[str], labels: Sequence[int] | np.ndarray | None = None, *, min_words: int = 1
) -> tuple[list[str], np.ndarray | None]:
    """Each text followed by its punctuation fragments, as in the paper's App. A.1.

    A text with fewer than two fragments is kept alone (its single fragment would nearly duplicate it);
    fragments with fewer than ``min_words`` words are skipped. Labels, when given, are copied to the
    fragments of their text.

    Returns:
        ``(augmented_texts, augmented_labels)``; the labels are ``None`` when none were given.

    Example:
        >>> augment_with_punctuation_splits(["This is a first example, made up for understanding.", "Short."], [1, 0])
        (['This is a first example, made up for understanding.', 'This is a first example', 'made up for understanding', 'Short.'], array([1, 1, 1, 0]))
    """
    texts = check_texts(texts, "texts", "augment_with_punctuation_splits")
    if labels is not None:
        check_same_length(texts, labels, ("texts", "labels"), "augment_with_punctuation_splits")
    out_texts: list[str] = []
    sources: list[int] = []
    for i, text in enumerate(texts):
        out_texts.append(text)
        sources.append(i)
        fragments = split_on_punctuation(text)
        if len(fragments) < 2:
            continue
        for fragment in fragments:
            if len(fragment.split()) >= min_words:
                out_texts.append(fragment)
                sources.append(i)
    if labels is None:
        return out_texts, None
    return out_texts, np.asarray(labels, dtype=np.int64)[np.asarray(sources)]
