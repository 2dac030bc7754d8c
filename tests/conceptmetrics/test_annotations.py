"""Annotations: validation, inference of types/cardinalities and the logit layout."""

from __future__ import annotations

import copy
import pickle
from types import SimpleNamespace

import pytest
import torch

import xaimetrics.conceptmetrics as cm
from xaimetrics.conceptmetrics import Annotations
from xaimetrics.exceptions import InvalidParameterError


def test_all_is_sorted_and_complete() -> None:
    # ruff's RUF022 order: CONSTANTS, then Classes, then functions, each alphabetical.
    assert list(cm.__all__) == sorted(cm.__all__, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
    for name in cm.__all__:
        assert hasattr(cm, name)
    public = {n for n in dir(cm) if not n.startswith("_") and n[0].isupper() and n not in {"Any"}}
    assert public <= set(cm.__all__)


def test_layout_of_mixed_concepts() -> None:
    ann = Annotations(
        ["is.round", "color", "training", "shape", "weight"],
        cardinalities=[1, 3, 1, 4, 1],
        types=["binary", "categorical", "binary", "categorical", "continuous"],
    )
    assert ann.size == 10 and len(ann) == 5 and ann.shape == (-1, 10)
    assert ann.concept_slices == {
        "is.round": slice(0, 1),
        "color": slice(1, 4),
        "training": slice(4, 5),
        "shape": slice(5, 9),
        "weight": slice(9, 10),
    }
    assert ann.type_groups["binary"] == {
        "labels": ["is.round", "training"],
        "concept_idx": [0, 2],
        "logits_idx": [0, 4],
    }
    assert ann.type_groups["categorical"] == {
        "labels": ["color", "shape"],
        "concept_idx": [1, 3],
        "logits_idx": [1, 2, 3, 5, 6, 7, 8],
    }
    assert ann.type_groups["continuous"]["logits_idx"] == [9]
    assert ann.labels_by_type == {
        "binary": ["is.round", "training"],
        "categorical": ["color", "shape"],
        "continuous": ["weight"],
    }
    shape = ann.concept("shape")
    assert (shape.index, shape.type, shape.cardinality, shape.slice) == (3, "categorical", 4, slice(5, 9))
    assert ann.get_index("training") == 2
    assert [c.name for c in ann] == list(ann.labels)
    assert "color" in ann and "colour" not in ann
    # The slices really cut the logit tensor into the concept blocks, in order.
    logits = torch.arange(10.0).unsqueeze(0)
    blocks = [logits[:, c.slice] for c in ann]
    assert torch.equal(torch.cat(blocks, dim=1), logits)


def test_types_inferred_from_cardinalities_and_back() -> None:
    assert Annotations(["a", "b", "c"], cardinalities=[1, 5, 2]).types == (
        "binary",
        "categorical",
        "categorical",
    )
    assert Annotations(["a", "b"], types=["continuous", "binary"]).cardinalities == (1, 1)
    default = Annotations(["a", "b"])
    assert default.types == ("binary", "binary") and default.cardinalities == (1, 1)


def test_derived_views_cannot_change_the_annotations() -> None:
    ann = Annotations(["a", "b"], cardinalities=[1, 3])
    ann.type_groups["binary"]["labels"].append("z")
    ann.concept_slices["a"] = slice(0, 5)
    ann.label_to_index["zz"] = 9  # type: ignore[index]
    assert ann.type_groups["binary"]["labels"] == ["a"]
    assert ann.concept_slices["a"] == slice(0, 1)
    assert "zz" not in ann
    with pytest.raises(AttributeError):
        ann.labels = ("x", "y")  # type: ignore[misc]


def test_copy_pickle_equality_and_repr() -> None:
    ann = Annotations(["x.y", "z"], cardinalities=[1, 3])
    assert pickle.loads(pickle.dumps(ann)) == ann
    assert copy.deepcopy(ann) == ann and hash(copy.deepcopy(ann)) == hash(ann)
    assert ann != Annotations(["x.y", "z"], cardinalities=[1, 4])
    assert (
        repr(ann) == "Annotations(labels=['x.y', 'z'], cardinalities=[1, 3], types=['binary', 'categorical'])"
    )


def test_coerce_accepts_pyc_like_objects() -> None:
    other = SimpleNamespace(labels=["a", "b"], cardinalities=[1, 3], types=["binary", "categorical"])
    assert Annotations.coerce(other) == Annotations(["a", "b"], cardinalities=[1, 3])
    with pytest.raises(
        InvalidParameterError, match="'annotations' parameter of ConceptMetrics must be an Annotations"
    ):
        Annotations.coerce(["a", "b"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"labels": ["a", "b"], "cardinalities": [2, 1], "types": ["binary", "binary"]},
            "must be 1 for a binary concept. Got 2 for concept 'a'",
        ),
        (
            {"labels": ["a"], "cardinalities": [1], "types": ["categorical"]},
            "must be > 1 for a categorical concept. Got 1 for concept 'a'",
        ),
        (
            {"labels": ["a"], "cardinalities": [3], "types": ["continuous"]},
            "must be 1 for a continuous concept. Got 3",
        ),
        ({"labels": ["a", "a"]}, "must be a list of unique names. Got 'a' twice"),
        ({"labels": ["a", ""]}, "must be a list of non-empty strings. Got '' at position 1"),
        ({"labels": ["a", 3]}, "must be a list of non-empty strings. Got 3 at position 1"),
        ({"labels": []}, "must be a non-empty list of concept names"),
        ({"labels": "abc"}, r"Wrap it in a list: \['abc'\]"),
        (
            {"labels": ["a"], "types": ["ordinal"]},
            "'types' parameter of Annotations must be a list of 'binary'",
        ),
        ({"labels": ["a", "b"], "cardinalities": [1]}, r"one entry per label \(2\). Got 1 entries"),
        ({"labels": ["a", "b"], "types": ["binary"]}, r"one entry per label \(2\)"),
        ({"labels": ["a"], "cardinalities": [0]}, "integers ≥ 1. Got 0 for concept 'a'"),
        ({"labels": ["a"], "cardinalities": [True]}, "integers ≥ 1. Got True"),
        ({"labels": ["a", "b"], "types": ["binary", "categorical"]}, "given when a concept is categorical"),
    ],
)
def test_invalid_annotations(kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        Annotations(**kwargs)


def test_unknown_concept_name() -> None:
    ann = Annotations(["a", "b"])
    with pytest.raises(
        InvalidParameterError, match=r"one of the concept labels. Got 'c'. Known labels: \['a', 'b'\]"
    ):
        ann.concept("c")
