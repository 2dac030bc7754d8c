from __future__ import annotations

import numpy as np
import pytest

from xaimetrics.data import TextDataset
from xaimetrics.exceptions import InvalidParameterError


def _dataset(n: int = 30) -> TextDataset:
    labels = np.array([0] * 20 + [1] * 7 + [2] * (n - 27))
    return TextDataset([f"text {i}" for i in range(n)], labels, ["a", "b", "c"])


def test_labels_length_mismatch() -> None:
    with pytest.raises(
        InvalidParameterError,
        match=r"'labels' parameter of TextDataset must be a 1-D array with one label per text \(2\)",
    ):
        TextDataset(["a", "b"], np.array([0, 1, 1]), ["x", "y"])


def test_labels_out_of_range() -> None:
    with pytest.raises(InvalidParameterError, match=r"in \[0, 1\] \(one per class name\)"):
        TextDataset(["a", "b"], np.array([0, 2]), ["x", "y"])


def test_float_labels_rejected() -> None:
    with pytest.raises(InvalidParameterError, match="integers"):
        TextDataset(["a"], np.array([0.5]), ["x"])


def test_stratified_sample_keeps_proportions_and_is_deterministic() -> None:
    dataset = _dataset()
    sample = dataset.sample(10, seed=3)
    assert len(sample) == 10 and len(set(sample.texts)) == 10
    counts = np.bincount(sample.labels, minlength=3)
    assert abs(counts[0] - 20 / 3) <= 1 and abs(counts[1] - 7 / 3) <= 1
    assert sample.texts == dataset.sample(10, seed=3).texts
    assert sample.texts != dataset.sample(10, seed=4).texts


def test_sample_larger_than_dataset_returns_everything() -> None:
    dataset = _dataset()
    assert dataset.sample(100) is dataset


def test_subset_keeps_order() -> None:
    subset = _dataset().subset([29, 0, 21])
    assert subset.texts == ["text 29", "text 0", "text 21"]
    assert subset.labels.tolist() == [2, 0, 1]
