"""Seeded, stratified train / validation / test splits carved from one table of rows."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from xaimetrics.data._dataset import TextDataset

__all__ = ["SPLITS", "carve_split", "deduplicate", "split_indices"]

#: the split names every loader understands (``"all"``: every row)
SPLITS: tuple[str, ...] = ("train", "validation", "test", "all")


def split_indices(
    labels: np.ndarray, seed: int, validation_fraction: float, test_fraction: float
) -> dict[str, np.ndarray]:
    """Per class: shuffle with ``seed``, then take test, then validation, the rest is train.

    Example:
        >>> parts = split_indices(np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1]), 0, 0.25, 0.25)
        >>> {name: len(rows) for name, rows in parts.items()}
        {'train': 4, 'validation': 3, 'test': 3}
    """
    rng = np.random.default_rng(seed)
    parts: dict[str, list[np.ndarray]] = {"train": [], "validation": [], "test": []}
    for label in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == label))
        n_test = round(len(members) * test_fraction)
        n_validation = round(len(members) * validation_fraction)
        parts["test"].append(members[:n_test])
        parts["validation"].append(members[n_test : n_test + n_validation])
        parts["train"].append(members[n_test + n_validation :])
    # Each split is returned in a seeded random order: source files are often grouped by class, and a split in
    # file order would make "the first n texts" a one-class sample.
    return {key: rng.permutation(np.concatenate(value)) for key, value in parts.items()}


def carve_split(
    full: TextDataset, split: str, *, seed: int, validation_fraction: float, test_fraction: float
) -> TextDataset:
    """The ``split`` of ``full`` (``"all"`` returns it whole), with ``seed`` recorded in ``info``."""
    if split == "all":
        return full
    rows = split_indices(full.labels, seed, validation_fraction, test_fraction)[split]
    subset = full.subset(rows)
    return TextDataset(
        subset.texts, subset.labels, full.class_names, full.name, split, {**full.info, "seed": seed}
    )


def deduplicate(texts: Sequence[str], labels: np.ndarray) -> tuple[list[str], np.ndarray, int]:
    """Keep the first occurrence of each text, so that no text is in two splits.

    Example:
        >>> deduplicate(["a", "b", "a"], np.array([0, 1, 1]))
        (['a', 'b'], array([0, 1]), 1)
    """
    seen: set[str] = set()
    keep = []
    for i, text in enumerate(texts):
        if text not in seen:
            seen.add(text)
            keep.append(i)
    return [texts[i] for i in keep], labels[keep], len(texts) - len(keep)
