"""Reading a table's columns: the usual names, explicit names, label encoding and class names across splits."""

from __future__ import annotations

import numpy as np
import pytest

from xaimetrics.data._tables import (
    LABEL_COLUMNS,
    TEXT_COLUMNS,
    Columns,
    encode_labels,
    pick_column,
    shared_class_names,
)
from xaimetrics.exceptions import InvalidParameterError


def test_pick_column_takes_the_request_or_the_first_usual_name_in_candidate_order() -> None:
    assert (
        pick_column(["target", "label", "content"], None, LABEL_COLUMNS, "label_column", "f.csv") == "label"
    )
    assert pick_column(["document", "sentence"], None, TEXT_COLUMNS, "text_column", "f.csv") == "sentence"
    assert pick_column(["a", "b"], "b", TEXT_COLUMNS, "text_column", "f.csv") == "b"
    with pytest.raises(InvalidParameterError, match=r"'text_column'.*Did you mean 'Review'.*case-sensitive"):
        pick_column(["Review", "stars"], "review", TEXT_COLUMNS, "text_column", "f.csv")
    with pytest.raises(InvalidParameterError, match=r"none of the usual columns.*Its columns are id, body"):
        pick_column(["id", "body"], None, TEXT_COLUMNS, "text_column", "f.csv")


def test_columns_refuse_the_same_column_for_texts_and_labels() -> None:
    assert Columns().pick(["label", "text"], "f.csv") == ("text", "label")
    with pytest.raises(InvalidParameterError, match=r"another column than the text column of f\.csv"):
        Columns("text", "text").pick(["text", "label"], "f.csv")


def test_encode_labels_from_names_integers_and_whole_floats() -> None:
    labels, names = encode_labels(["sport", "art", "sport", "tech"], None, "f.csv")
    assert labels.tolist() == [1, 0, 1, 2] and names == ["art", "sport", "tech"]
    labels, names = encode_labels(["sport", "art"], ["sport", "art"], "f.csv")  # the given order wins
    assert labels.tolist() == [0, 1] and names == ["sport", "art"]
    labels, names = encode_labels([2.0, 0.0, 3.0], None, "f.csv")
    assert labels.dtype == np.int64 and labels.tolist() == [2, 0, 3] and names == ["0", "1", "2", "3"]


def test_encode_labels_strips_spaces_with_a_warning_and_refuses_bad_values() -> None:
    with pytest.warns(UserWarning, match=r"1 label value\(s\) had surrounding spaces"):
        labels, names = encode_labels(["earn ", "earn", "acq"], None, "f.csv")
    assert labels.tolist() == [1, 1, 0] and names == ["acq", "earn"]
    with pytest.raises(InvalidParameterError, match=r"Labels not in it: 'c'"):
        encode_labels(["a", "c"], ["a", "b"], "f.csv")
    with pytest.raises(InvalidParameterError, match="control characters"):
        encode_labels(["a\nb", "c"], None, "f.csv")
    with pytest.raises(InvalidParameterError, match=r"missing or non-integer values in f\.csv"):
        encode_labels([1.0, float("nan")], None, "f.csv")
    with pytest.raises(InvalidParameterError, match=r"at least 3 names \(labels of f.csv go up to 2\)"):
        encode_labels([0, 2], ["a", "b"], "f.csv")


def test_shared_class_names_cover_every_split() -> None:
    assert shared_class_names([["b", "a "], ["c"]], None) == ["a", "b", "c"]
    assert shared_class_names([[0, 1], [4]], None) == ["0", "1", "2", "3", "4"]
    assert shared_class_names([[0], ["a"]], None) is None  # mixed: encode_labels reports it
    assert shared_class_names([[0]], ["x", "y"]) == ["x", "y"]
    assert shared_class_names([[], []], None) is None
