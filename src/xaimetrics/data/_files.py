"""Datasets from a user's own files: CSV, TSV, JSON Lines (or a JSON array) and Parquet.

Every problem with a file is an :class:`~xaimetrics.exceptions.InvalidParameterError` that names the file
(and the column, line or rows) and the fix: a missing file, an undecodable byte (with the ``encoding`` to
pass), an empty or header-only file, a JSON line that does not parse, empty text or label cells (refused
with their line numbers, or dropped and counted with ``drop_empty_rows=True``), a label column holding one
class. Nothing is silently turned into the text ``"nan"``.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, TypeGuard

import numpy as np

from xaimetrics._file_checks import check_encoding, check_one_class
from xaimetrics._optional import import_optional
from xaimetrics._validation import invalid
from xaimetrics.data._dataset import TextDataset
from xaimetrics.data._splits import carve_split, deduplicate, split_indices
from xaimetrics.data._tables import Columns, encode_labels, shared_class_names
from xaimetrics.exceptions import InvalidParameterError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FILE_SUFFIXES", "file_error", "is_data_file", "load_files", "read_table"]

#: file suffixes read by :func:`read_table` (compressed CSV/JSON Lines too, e.g. ``.csv.gz``)
FILE_SUFFIXES: tuple[str, ...] = (".csv", ".tsv", ".jsonl", ".json", ".parquet")
_COMPRESSION = (".gz", ".bz2", ".xz", ".zst", ".zip")
_ENCODING_FIX = (
    "Pass the file's encoding: encoding='latin-1' (or 'cp1252', 'utf-16', ...) in Python, --encoding latin-1 "
    'on the command line, encoding = "latin-1" in a grid file; or save the file as UTF-8.'
)


def file_error(path: Path | str, problem: str, fix: str) -> InvalidParameterError:
    """The error for a data file: ``The data file 'PATH' PROBLEM. FIX`` (the path is never shortened).

    Example:
        >>> str(file_error("t.csv", "is empty (0 bytes)", "Check that it was written completely."))
        "The data file 't.csv' is empty (0 bytes). Check that it was written completely."
    """
    return InvalidParameterError(f"The data file '{path}' {problem}. {fix}")


def _kind(path: Path) -> str | None:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION:
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes and suffixes[-1] in FILE_SUFFIXES else None


def _compressed(path: Path) -> bool:
    return path.suffix.lower() in _COMPRESSION


def is_data_file(path: object) -> TypeGuard[str | os.PathLike[str]]:
    """True if ``path`` names a file :func:`read_table` reads (by suffix; the file need not exist yet).

    Example:
        >>> is_data_file("reviews.csv"), is_data_file("bios.jsonl.gz"), is_data_file("imdb")
        (True, True, False)
    """
    if not isinstance(path, str | os.PathLike):
        return False
    return _kind(Path(path)) is not None


def read_table(path: str | os.PathLike[str], *, encoding: str = "utf-8") -> pd.DataFrame:
    """Read a CSV / TSV / JSON Lines / JSON / Parquet file into a ``pandas.DataFrame``.

    Empty CSV cells are missing values (``NaN``), never the text ``"nan"``; the strings ``"NA"``, ``"null"``
    … stay text. JSON Lines are parsed line by line, so that an error names its line.

    Args:
        path: the file (compressed ``.gz``/``.bz2``/``.xz``/``.zst``/``.zip`` too).
        encoding: the text encoding of CSV, TSV and JSON files (Parquet stores its own).

    Raises:
        InvalidParameterError: the file does not exist, has an unknown suffix, is empty, has a header but no
            rows, is not valid in its format, or cannot be decoded with ``encoding`` (the message names the
            file, the line and the fix).
        MissingDependencyError: Parquet without ``pyarrow``.

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
        >>> _ = open(path, "w").write("Content,Author\\nhello,a\\n,b\\n")
        >>> read_table(path)["Content"].tolist()
        ['hello', nan]
    """
    path = Path(path)
    kind = _kind(path)
    if kind is None:
        raise invalid(
            "path", "load_dataset", f"a file ending in one of {', '.join(FILE_SUFFIXES)}", str(path)
        )
    encoding = check_encoding(encoding)
    if not path.exists():
        raise file_error(
            path,
            "was not found",
            f"Check the path (a relative path starts at the current directory, {Path.cwd()}).",
        )
    if not path.is_file():
        raise file_error(
            path, "is not a file", "Pass the path of a CSV, TSV, JSON Lines, JSON or Parquet file."
        )
    if path.stat().st_size == 0:
        raise file_error(
            path, "is empty (0 bytes)", "Check that it was written completely, or pass another file."
        )
    try:
        frame = _read(path, kind, encoding)
    except UnicodeError as error:
        raise file_error(path, f"is not {encoding} text ({_where(path, error)})", _ENCODING_FIX) from None
    if len(frame) == 0:
        columns = ", ".join(map(str, frame.columns))
        raise file_error(
            path, f"has no data rows{f' (only a header: {columns})' if columns else ''}",
            "Add rows below the header, or pass another file.",
        )  # fmt: skip
    return frame


def _where(path: Path, error: UnicodeError) -> str:
    """``"byte 0xe9 on line 3"`` for a decoding error (the line only for uncompressed files)."""
    start = getattr(error, "start", None)
    bad = getattr(error, "object", b"")
    if not isinstance(start, int) or not isinstance(bad, bytes | bytearray):
        return str(error)
    byte = f"byte 0x{bad[start]:02x}" if start < len(bad) else "a truncated character"
    if _compressed(path):
        return byte
    raw = path.read_bytes()
    position = raw.find(bytes(bad[: start + 1]))  # the decoded chunk's place in the file
    if position < 0:
        return byte
    line = raw[: position + start].count(b"\n") + 1
    return f"{byte} on line {line}"


def _read(path: Path, kind: str, encoding: str) -> pd.DataFrame:
    import pandas as pd

    if kind in (".csv", ".tsv"):
        try:
            return pd.read_csv(
                path, sep="\t" if kind == ".tsv" else ",", keep_default_na=False, na_values=[""],
                encoding=encoding,
            )  # fmt: skip
        except pd.errors.EmptyDataError:
            raise file_error(
                path,
                "holds no header and no rows",
                "Write a header line naming the columns, then one row per text.",
            ) from None
        except pd.errors.ParserError as error:
            raise file_error(
                path, f"could not be read as {kind[1:].upper()}: {str(error).strip()}",
                "Check the quoting and the number of fields on that line (a tab-separated file needs the .tsv "
                "suffix).",
            ) from None  # fmt: skip
    if kind == ".parquet":
        import_optional("pyarrow", extra="files", caller="load_dataset (Parquet files)")
        return pd.read_parquet(path)
    handle = _open_text(path, encoding)
    if handle is None:  # .zst / .zip: pandas knows them
        return pd.read_json(path, lines=kind == ".jsonl", encoding=encoding)
    with handle:
        text = handle.read().removeprefix("\ufeff")  # a byte-order mark (files saved by Excel, Notepad)
    if kind == ".json" and not text.lstrip().startswith("{"):
        return _json_array(path, text)
    return _json_lines(path, text)


def _open_text(path: Path, encoding: str) -> IO[str] | None:
    import bz2
    import gzip
    import lzma

    suffix = path.suffix.lower()
    if suffix == ".gz":
        return gzip.open(path, "rt", encoding=encoding)
    if suffix == ".bz2":
        return bz2.open(path, "rt", encoding=encoding)
    if suffix == ".xz":
        return lzma.open(path, "rt", encoding=encoding)
    if suffix in _COMPRESSION:
        return None
    return open(path, encoding=encoding)


_JSON_FIX = 'Each line of a JSON Lines file holds one object, e.g. {"text": "...", "label": "..."}.'


def _parse_json(path: Path, text: str, problem: str, fix: str) -> object:
    """``json.loads(text)``, or the data file error ``problem``/``fix`` without the decoder's traceback.

    ``problem`` is a ``str.format`` template that may name the decoder's ``{msg}``, ``{lineno}`` and ``{colno}``.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        problem = problem.format(msg=error.msg, lineno=error.lineno, colno=error.colno)
        raise file_error(path, problem, fix) from None


def _json_lines(path: Path, text: str) -> pd.DataFrame:
    """One object per line; the frame's ``attrs["lines"]`` holds each record's line number."""
    import pandas as pd

    records, lines = [], []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        problem = f"has invalid JSON on line {number} (column {{colno}}): {{msg}}"
        record = _parse_json(path, line, problem, _JSON_FIX)
        if not isinstance(record, dict):
            raise file_error(
                path, f"holds a JSON {type(record).__name__} on line {number}, not an object", _JSON_FIX
            )
        records.append(record)
        lines.append(number)
    if not records:
        raise file_error(path, "holds no JSON records (only blank lines)", "Write one JSON object per line.")
    frame = pd.DataFrame.from_records(records)
    frame.attrs["lines"] = lines
    return frame


def _json_array(path: Path, text: str) -> pd.DataFrame:
    import pandas as pd

    fix = 'A .json file holds one array of objects, [{"text": "...", "label": "..."}, ...], or JSON Lines.'
    records = _parse_json(path, text, "is not valid JSON: {msg} on line {lineno} (column {colno})", fix)
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise file_error(path, "does not hold an array of objects", fix)
    if not records:
        raise file_error(path, "holds an empty array", fix)
    return pd.DataFrame.from_records(records)


def _row_names(frame: pd.DataFrame, kind: str | None, positions: Sequence[int]) -> str:
    """Where rows are in the file, for messages: ``"lines 3, 7"`` (CSV: the header is line 1)."""
    lines = frame.attrs.get("lines")
    if lines is not None:
        where = [lines[i] for i in positions]
    elif kind in (".csv", ".tsv"):
        where = [i + 2 for i in positions]  # exact unless a quoted cell spans several lines
    else:
        shown = ", ".join(str(i + 1) for i in positions[:10])
        return f"record{'s' if len(positions) > 1 else ''} {shown}{' …' if len(positions) > 10 else ''}"
    shown = ", ".join(map(str, where[:10]))
    return f"line{'s' if len(where) > 1 else ''} {shown}{' …' if len(where) > 10 else ''}"


def _is_empty(value: object) -> bool:
    """An empty cell: missing (``None``, ``NaN``, ``pd.NA``) or a string of spaces."""
    import pandas as pd

    if isinstance(value, str):
        return not value.strip()
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or a dict in a JSON cell: not a missing value
        return False


def _read_rows(path: Path, columns: Columns) -> tuple[list[str], list[object], dict[str, object]]:
    frame = read_table(path, encoding=columns.encoding)
    text, label = columns.pick(list(frame.columns), path.name)
    raw_texts, raw_labels = frame[text].tolist(), frame[label].tolist()
    empty_text = [i for i, value in enumerate(raw_texts) if _is_empty(value)]
    empty_label = [i for i, value in enumerate(raw_labels) if _is_empty(value)]
    info: dict[str, object] = {"source": str(path), "text_column": text, "label_column": label}
    if (empty_text or empty_label) and not columns.drop_empty_rows:
        kind = _kind(path)
        column, rows = (text, empty_text) if empty_text else (label, empty_label)
        noun = "text" if empty_text else "label"
        raise file_error(
            path, f"has {len(rows)} empty {noun} cell{'s' if len(rows) > 1 else ''} in column '{column}' "
            f"({_row_names(frame, kind, rows)})",
            "Fill them in or delete those rows, or pass drop_empty_rows=True (--drop-empty-rows, drop_empty_rows = "
            "true in a grid file) to drop them.",
        )  # fmt: skip
    dropped = sorted(set(empty_text) | set(empty_label))
    if dropped:
        keep = sorted(set(range(len(raw_texts))) - set(dropped))
        raw_texts, raw_labels = [raw_texts[i] for i in keep], [raw_labels[i] for i in keep]
        if not keep:
            raise file_error(
                path, f"has no row with both a text ('{text}') and a label ('{label}')", "Check the columns."
            )
        warnings.warn(
            f"{path.name}: dropped {len(dropped)} of {len(frame)} rows with an empty text or label "
            f"(drop_empty_rows=True).",
            UserWarning,
            stacklevel=2,
        )
    info["empty_rows_dropped"] = len(dropped)
    texts = [" ".join(str(value).split()) for value in raw_texts]
    return texts, raw_labels, info


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


def _dataset(
    texts: list[str],
    raw: list[object],
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
    data = _dataset(texts, raw, columns.class_names, info, name or path.name.split(".")[0], "all")
    check_one_class(data.labels, data.class_names, str(path), info["label_column"])
    return data


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
    first = parts["train"] if "train" in parts else parts[available[0]]
    check_one_class(first.labels, first.class_names, str(files[first.split]), first.info["label_column"])
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
    info: dict[str, object] = {"source": {key: str(value) for key, value in files.items()}}
    texts = [t for p in chosen for t in p.texts]
    labels = np.asarray([label for p in chosen for label in p.labels.tolist()])
    return TextDataset(texts, labels, chosen[0].class_names, dataset_name, "all", info)
