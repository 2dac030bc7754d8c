"""The dataset container shared by every loader."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from xaimetrics._validation import check_positive_int, check_seed, invalid

__all__ = ["TextDataset"]


@dataclass(frozen=True)
class TextDataset:
    """Texts with integer labels and the names of their classes.

    Attributes:
        texts: the texts, ``n`` strings.
        labels: array of shape ``(n,)``, dtype int64, values in ``[0, len(class_names))``.
        class_names: the class of label ``i`` is ``class_names[i]``.
        name: the dataset name, e.g. ``"rotten_tomatoes"``.
        split: ``"train"``, ``"validation"``, ``"test"`` or ``"all"``.
        info: provenance (source file, package version, rows removed as duplicates, …).

    Example:
        >>> ds = TextDataset(["good", "bad", "fine"], np.array([1, 0, 1]), ["negative", "positive"])
        >>> len(ds), ds[1], ds.subset([2, 0]).texts
        (3, ('bad', 0), ['fine', 'good'])
    """

    texts: list[str]
    labels: np.ndarray
    class_names: list[str]
    name: str = "custom"
    split: str = "all"
    info: dict[str, object] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        labels = np.asarray(self.labels)
        if labels.ndim != 1 or len(labels) != len(self.texts):
            raise invalid(
                "labels",
                "TextDataset",
                f"a 1-D array with one label per text ({len(self.texts)})",
                f"shape {labels.shape}",
                "Pass one integer label per text.",
            )
        if labels.size and not np.issubdtype(labels.dtype, np.integer):
            raise invalid("labels", "TextDataset", "integers (class indices)", f"dtype {labels.dtype}")
        labels = labels.astype(np.int64, copy=False)
        if labels.size and (labels.min() < 0 or labels.max() >= len(self.class_names)):
            raise invalid(
                "labels",
                "TextDataset",
                f"in [0, {len(self.class_names) - 1}] (one per class name)",
                f"values in [{labels.min()}, {labels.max()}]",
                "Check 'class_names'.",
            )
        object.__setattr__(self, "texts", list(self.texts))
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "class_names", list(self.class_names))

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, index: int) -> tuple[str, int]:
        return self.texts[index], int(self.labels[index])

    @property
    def num_classes(self) -> int:
        return len(self.class_names)

    def subset(self, indices: Sequence[int] | np.ndarray) -> TextDataset:
        """The rows at ``indices``, in that order."""
        indices = np.asarray(indices, dtype=np.int64)
        return TextDataset(
            [self.texts[i] for i in indices],
            self.labels[indices],
            self.class_names,
            self.name,
            self.split,
            dict(self.info),
        )

    def sample(self, n: int, *, seed: int = 0, stratify: bool = True) -> TextDataset:
        """``n`` rows drawn without replacement, class-proportional when ``stratify`` (deterministic)."""
        n = check_positive_int(n, "n", "TextDataset.sample")
        seed = check_seed(seed, "seed", "TextDataset.sample")
        if n >= len(self):
            return self
        rng = np.random.default_rng(seed)
        if not stratify:
            return self.subset(np.sort(rng.choice(len(self), size=n, replace=False)))
        order = _stratified_order(self.labels, rng)
        return self.subset(np.sort(order[:n]))


def _stratified_order(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A permutation in which every prefix is as close to class-proportional as possible."""
    keys = np.empty(len(labels), dtype=np.float64)
    for label in np.unique(labels):
        members = np.flatnonzero(labels == label)
        # Spread each class evenly over [0, 1): its j-th member gets key (j + u) / count.
        keys[rng.permutation(members)] = (np.arange(len(members)) + rng.random()) / len(members)
    return np.argsort(keys, kind="stable")
