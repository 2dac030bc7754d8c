from __future__ import annotations

import numpy as np
import pytest

from xaimetrics.data import augment_with_punctuation_splits
from xaimetrics.data._augmentation import split_on_punctuation
from xaimetrics.exceptions import InvalidParameterError


def test_paper_example() -> None:
    text = "This is a first example, made up for understanding."
    texts, labels = augment_with_punctuation_splits([text])
    assert texts == [text, "This is a first example", "made up for understanding"]
    assert labels is None


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("it's a well-made film ; sadly , too long .", ["it's a well-made film", "sadly", "too long"]),
        ('the rock is " conan " and more', ["the rock is", "conan", "and more"]),
        ("It costs 3.5 dollars, or 1,000 cents!", ["It costs 3.5 dollars", "or 1,000 cents"]),
        ("wait... what? (really) -- yes", ["wait", "what", "really", "yes"]),
        ("no punctuation here", ["no punctuation here"]),
        ("", []),
    ],
)
def test_split_on_punctuation(text: str, fragments: list[str]) -> None:
    assert split_on_punctuation(text) == fragments


def test_labels_follow_their_text_and_single_fragments_are_not_duplicated() -> None:
    texts, labels = augment_with_punctuation_splits(["a b, c d.", "plain text.", "x; y"], np.array([2, 0, 1]))
    assert texts == ["a b, c d.", "a b", "c d", "plain text.", "x; y", "x", "y"]
    assert labels.tolist() == [2, 2, 2, 0, 1, 1, 1]


def test_min_words_skips_short_fragments() -> None:
    texts, _ = augment_with_punctuation_splits(["ok, this one is long enough."], min_words=2)
    assert texts == ["ok, this one is long enough.", "this one is long enough"]


def test_length_mismatch_is_a_clear_error() -> None:
    with pytest.raises(
        InvalidParameterError, match="'texts' and 'labels' of augment_with_punctuation_splits"
    ):
        augment_with_punctuation_splits(["a, b", "c"], [0])


def test_single_string_is_rejected_with_the_fix() -> None:
    with pytest.raises(InvalidParameterError, match=r"Wrap it in a list"):
        augment_with_punctuation_splits("a, b")
