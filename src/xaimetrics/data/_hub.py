"""Datasets through Hugging Face ``datasets`` (a hub id, a local dataset folder, or a builder such as ``csv``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.data._dataset import TextDataset
from xaimetrics.data._splits import split_indices
from xaimetrics.data._tables import Columns, encode_labels, shared_class_names
from xaimetrics.exceptions import AssetError, MissingDependencyError

__all__ = ["hub_splits", "load_from_hub"]


class HubSplit(Protocol):
    """What the loaders read of one split of a Hugging Face ``datasets.Dataset``."""

    @property
    def column_names(self) -> list[str]: ...

    @property
    def features(self) -> Mapping[str, object]: ...

    def __getitem__(self, column: str, /) -> Sequence[object]: ...


#: other names of a validation split on the hub
_VALIDATION_NAMES = ("validation", "valid", "dev")


def hub_splits(
    path: str, config: str | None, caller: str, hint: str, **kwargs: object
) -> Mapping[str, HubSplit]:
    """``datasets.load_dataset(path, config, **kwargs)`` as a ``DatasetDict``, with errors that say what to do.

    Raises:
        MissingDependencyError: ``datasets`` is not installed.
        AssetError: the dataset could not be loaded (offline and not cached, unknown id, unknown config).
    """
    try:
        import datasets as hf_datasets
    except ImportError:
        raise MissingDependencyError(
            f"{caller} needs Hugging Face 'datasets', which is not installed. Install it with: "
            f"pip install 'xaimetrics[hub]' (or pip install datasets). {hint}"
        ) from None
    try:
        loaded = hf_datasets.load_dataset(path, config, **kwargs)
    except Exception as error:  # datasets raises many types (ConnectionError, FileNotFoundError, ValueError…)
        where = path if config is None else f"{path!r} with configuration {config!r}"
        raise AssetError(
            f"{caller} could not load {where} with Hugging Face 'datasets': {type(error).__name__}: {error}. "
            f"{hint}"
        ) from error
    if not hasattr(loaded, "keys"):  # a single split was asked through kwargs
        return {str(kwargs.get("split", "train")): loaded}
    splits: Mapping[str, HubSplit] = loaded  # a DatasetDict
    return splits


def load_from_hub(
    path: str,
    config: str | None,
    split: str,
    *,
    seed: int,
    validation_fraction: float,
    columns: Columns,
    hint: str,
    **kwargs: object,
) -> TextDataset:
    """A split of a Hugging Face dataset; a missing validation split is carved from train (seeded)."""
    splits = hub_splits(path, config, "load_dataset", hint, **kwargs)
    available = list(splits.keys())
    validation = next((s for s in _VALIDATION_NAMES if s in available), None)
    carve = split == "validation" and validation is None and "train" in available
    if split == "all":
        chosen = available
    elif split == "validation" and validation is not None:
        chosen = [validation]
    elif split in available or carve:
        chosen = ["train"] if carve else [split]
    else:
        raise invalid("split", "load_dataset", f"one of the splits of {path!r}: {available} or 'all'", split)
    first = splits[available[0]]
    source = repr(path) if config is None else f"{path!r} ({config})"
    text, label = columns.pick(first.column_names, source)
    class_names = columns.class_names
    if class_names is None:
        class_names = getattr(first.features[label], "names", None) or None
    if class_names is None:  # one class order for every split, not only the one returned
        class_names = shared_class_names([list(splits[key][label]) for key in available], None)
    raw = [value for key in chosen for value in splits[key][label]]
    texts = [str(value) for key in chosen for value in splits[key][text]]
    labels, names = encode_labels(raw, class_names, source)
    if carve:
        rows = split_indices(labels, seed, validation_fraction, 0.0)["validation"]
        texts, labels = [texts[i] for i in rows], labels[rows]
    info: dict[str, object] = {"source": f"huggingface:{path}", "config": config, "splits": chosen}
    name = Path(path).name if Path(path).is_dir() else path  # a local dataset folder: its name, not its path
    return TextDataset(texts, np.asarray(labels, dtype=np.int64), names, name, split, info)
