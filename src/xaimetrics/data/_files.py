"""Datasets from a user's own files: CSV, TSV, JSON Lines (or a JSON array) and Parquet."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from xaimetrics._optional import import_optional
from xaimetrics._validation import invalid
from xaimetrics.data._dataset import TextDataset
from xaimetrics.data._splits import carve_split, deduplicate, split_indices
from xaimetrics.data._tables import Columns, encode_labels, shared_class_names

__all__ = ["FILE_SUFFIXES", "is_data_file", "load_files", "read_table"]

#: file suffixes read by :func:`read_table` (compressed CSV/JSON Lines too, e.g. ``.csv.gz``)
FILE_SUFFIXES: tuple[str, ...] = (".csv", ".tsv", ".jsonl", ".json", ".parquet")
_COMPRESSION = (".gz", ".bz2", ".xz", ".zst", ".zip")


def _kind(path: Path) -> str | None:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION:
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes and suffixes[-1] in FILE_SUFFIXES else None


def is_data_file(path: Any) -> bool:
    """True if ``path`` names a file :func:`read_table` reads (by suffix; the file need not exist yet).

    Example:
        >>> is_data_file("reviews.csv"), is_data_file("bios.jsonl.gz"), is_data_file("imdb")
        (True, True, False)
    """
    if not isinstance(path, str | os.PathLike):
        return False
    return _kind(Path(path)) is not None


def read_table(path: str | os.PathLike[str]) -> Any:
    """Read a CSV / TSV / JSON Lines / JSON / Parquet file into a ``pandas.DataFrame``.

    Raises:
        InvalidParameterError: the file does not exist or has an unknown suffix.
        MissingDependencyError: Parquet without ``pyarrow``.
    """
    import pandas as pd

    path = Path(path)
    kind = _kind(path)
    if kind is None:
        raise invalid(
            "path", "load_dataset", f"a file ending in one of {', '.join(FILE_SUFFIXES)}", str(path)
        )
    if not path.is_file():
        raise invalid("path", "load_dataset", "an existing file", str(path), "Check the path.")
    if kind in (".csv", ".tsv"):
        return pd.read_csv(path, sep="\t" if kind == ".tsv" else ",", keep_default_na=False, na_values=[""])
    if kind == ".parquet":
        import_optional("pyarrow", extra="files", caller="load_dataset (Parquet files)")
        return pd.read_parquet(path)
    lines = kind == ".jsonl" or _starts_with_object(path)
    return pd.read_json(path, lines=lines)


def _starts_with_object(path: Path) -> bool:
    """A ``.json`` file holding one object per line (JSON Lines) rather than one array."""
    import gzip

    opener = gzip.open if path.suffix.lower() == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                return line.lstrip().startswith("{")
    return False


def load_files(
    files: str | os.PathLike[str] | Mapping[str, str | os.PathLike[str]],
    split: str,
    *,
    seed: int,
    validation_fraction: float,
    test_fraction: float,
    columns: Columns,
    name: str | None = None,
) -> TextDataset:
    """One file (split into train / validation / test like the offline datasets) or ``{split: file}``.

    With a mapping, its splits are used as given; a missing ``validation`` is carved from ``train``.
    Exact duplicate texts are removed within each file (the count is in ``info["duplicates_removed"]``).
    """
    if isinstance(files, Mapping):
        return _load_mapping(
            files, split, seed=seed, validation_fraction=validation_fraction, columns=columns, name=name,
        )  # fmt: skip
    full = _read_dataset(Path(files), columns, name)
    return carve_split(
        full, split, seed=seed, validation_fraction=validation_fraction, test_fraction=test_fraction
    )


def _read_rows(path: Path, columns: Columns) -> tuple[list[str], list[Any], dict[str, object]]:
    frame = read_table(path)
    text, label = columns.pick(list(frame.columns), path.name)
    texts = [" ".join(str(value).split()) for value in frame[text].tolist()]
    return texts, frame[label].tolist(), {"source": str(path), "text_column": text, "label_column": label}


def _dataset(
    texts: list[str],
    raw: list[Any],
    names: Sequence[str] | None,
    info: dict[str, object],
    name: str,
    split: str,
) -> TextDataset:
    labels, classes = encode_labels(raw, names, Path(str(info["source"])).name)
    texts, labels, removed = deduplicate(texts, labels)
    return TextDataset(texts, labels, classes, name, split, {**info, "duplicates_removed": removed})


def _read_dataset(path: Path, columns: Columns, name: str | None) -> TextDataset:
    texts, raw, info = _read_rows(path, columns)
    return _dataset(texts, raw, columns.class_names, info, name or path.name.split(".")[0], "all")


def _load_mapping(
    files: Mapping[str, str | os.PathLike[str]],
    split: str,
    *,
    seed: int,
    validation_fraction: float,
    columns: Columns,
    name: str | None,
) -> TextDataset:
    available = [key for key in files if key in ("train", "validation", "test")]
    if len(available) != len(files) or not available:
        raise invalid(
            "path", "load_dataset", "a file or a mapping {'train'|'validation'|'test': file}",
            f"keys {list(files)}",
        )  # fmt: skip
    carve = split == "validation" and "validation" not in files
    if carve and "train" not in files:
        raise invalid("split", "load_dataset", f"one of the given splits {available}", split)
    if not carve and split != "all" and split not in files:
        raise invalid("split", "load_dataset", f"one of the given splits {available} or 'all'", split)
    rows = {key: _read_rows(Path(files[key]), columns) for key in available}
    # Every split shares one class order, so that label i means the same class in train and in test.
    names = shared_class_names([raw for _, raw, _ in rows.values()], columns.class_names)
    dataset_name = name or Path(files[available[0]]).name.split(".")[0]
    parts = {
        key: _dataset(rows[key][0], rows[key][1], names, rows[key][2], dataset_name, key) for key in available
    }
    if carve:
        train = parts["train"]
        carved = train.subset(split_indices(train.labels, seed, validation_fraction, 0.0)["validation"])
        return TextDataset(
            carved.texts,
            carved.labels,
            carved.class_names,
            dataset_name,
            "validation",
            {**carved.info, "seed": seed},
        )
    if split != "all":
        return parts[split]
    chosen = list(parts.values())
    info = {"source": {key: str(value) for key, value in files.items()}}
    texts = [t for p in chosen for t in p.texts]
    labels = [label for p in chosen for label in p.labels.tolist()]
    return TextDataset(texts, labels, chosen[0].class_names, dataset_name, "all", info)
