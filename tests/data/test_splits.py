"""Seeded stratified splits: disjoint, complete, per-class fractions, seed-determined; deduplication."""

from __future__ import annotations

import numpy as np
import pytest

from xaimetrics.data import TextDataset
from xaimetrics.data._splits import carve_split, deduplicate, split_indices


def test_split_indices_partition_every_row_once_with_per_class_counts() -> None:
    labels = np.array([0] * 10 + [1] * 7 + [2] * 3)
    parts = split_indices(labels, seed=4, validation_fraction=0.2, test_fraction=0.3)
    rows = np.concatenate([parts["train"], parts["validation"], parts["test"]])
    assert sorted(rows.tolist()) == list(range(len(labels)))  # disjoint and complete
    counts = {name: np.bincount(labels[part], minlength=3).tolist() for name, part in parts.items()}
    # per class: round(n * 0.3) test rows, then round(n * 0.2) validation rows, the rest train
    assert counts == {"train": [5, 4, 1], "validation": [2, 1, 1], "test": [3, 2, 1]}


def test_split_indices_depend_on_the_seed_only() -> None:
    labels = np.array([0, 1] * 20)
    first, again = split_indices(labels, 7, 0.1, 0.1), split_indices(labels, 7, 0.1, 0.1)
    other = split_indices(labels, 8, 0.1, 0.1)
    assert all(np.array_equal(first[k], again[k]) for k in first)
    assert not np.array_equal(first["train"], other["train"])
    assert sorted(first["train"]) != list(first["train"])  # returned shuffled, not in file order


def test_carve_split_keeps_the_class_names_and_records_the_seed() -> None:
    texts = [f"t{i}" for i in range(12)]
    full = TextDataset(texts, np.array([0, 1, 2] * 4), ["a", "b", "c"], "toy", "all", {"source": "x"})
    assert carve_split(full, "all", seed=1, validation_fraction=0.25, test_fraction=0.25) is full
    test = carve_split(full, "test", seed=1, validation_fraction=0.25, test_fraction=0.25)
    rows = split_indices(full.labels, 1, 0.25, 0.25)["test"]
    assert test.texts == [texts[i] for i in rows] and test.split == "test"
    assert test.class_names == ["a", "b", "c"] and test.info == {"source": "x", "seed": 1}


def test_deduplicate_keeps_first_copies_and_warns_about_conflicting_labels() -> None:
    texts, labels, removed = deduplicate(["x", "y", "x", "z", "y"], np.array([0, 1, 0, 2, 1]))
    assert (texts, labels.tolist(), removed) == (["x", "y", "z"], [0, 1, 2], 2)
    with pytest.warns(UserWarning, match=r"1 text\(s\) appear more than once with different labels.*'b'"):
        texts, labels, removed = deduplicate(["b", "a", "b"], np.array([1, 0, 0]))
    assert (texts, labels.tolist(), removed) == (["b", "a"], [1, 0], 1)  # the first copy's label wins
