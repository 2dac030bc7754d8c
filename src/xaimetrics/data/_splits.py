"""Seeded, stratified train / validation / test splits carved from one table of rows."""

from __future__ import annotations

import warnings
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

    Copies of a text under different labels keep the first copy's label and are said in a warning (how many
    texts, an example): the label noise is the data's, and the user should know of it.

    Example:
        >>> deduplicate(["a", "b", "a"], np.array([0, 1, 0]))
        (['a', 'b'], array([0, 1]), 1)
    """
    first: dict[str, int] = {}
    keep = []
    conflicting: set[str] = set()
    for i, text in enumerate(texts):
        if text not in first:
            first[text] = i
            keep.append(i)
        elif labels[i] != labels[first[text]]:
            conflicting.add(text)
    if conflicting:
        example = min(conflicting)
        warnings.warn(
            f"{len(conflicting)} text(s) appear more than once with different labels; the first copy's label is "
            f"kept (e.g. {example[:60]!r}). Check the data's labels.",
            UserWarning,
            stacklevel=3,
        )
    return [texts[i] for i in keep], labels[keep], len(texts) - len(keep)
