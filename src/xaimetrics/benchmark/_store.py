"""Durable results store for experiment grids (SQLite).

Every finished setting is one row, committed in its own transaction with ``synchronous=FULL`` before the
runner moves on, so a crash or ``kill -9`` loses at most the setting in flight and never leaves half a row.
A setting is identified by a *key* (a stable hash of its parameters): re-running a grid skips the keys
already stored, which is how runs resume, and ``INSERT`` on an existing key is refused, so no setting is ever
stored twice.

A store that cannot be trusted is never used, nor overwritten: a file that is not SQLite, is truncated or
corrupted (``PRAGMA quick_check`` fails), was emptied to zero bytes, or holds another database raises
:class:`~xaimetrics.exceptions.StoreError` naming the file and the way out (restore it, or move it away to
start over), instead of a raw ``sqlite3.DatabaseError`` or a silent fresh start that reruns every setting.

The columns are the fields of :class:`~xaimetrics.benchmark.ResultRow` (``_row.py``), and a store holds exactly
them: a store written with other columns (by another version) is refused with a :class:`StoreError`, never
migrated — except the columns of :data:`ADDED_COLUMNS`, added since stores were first written: a store without
them is read with their default (a writable one gets the column, appended at the end of the table).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from xaimetrics._digest import json_digest
from xaimetrics._sqlite import SQLiteFile
from xaimetrics._validation import invalid
from xaimetrics._writes import is_write_failure, write_failure_cause
from xaimetrics.benchmark._concept_row import ConceptRow
from xaimetrics.benchmark._row import ResultRow
from xaimetrics.exceptions import StoreError

__all__ = ["ResultsStore", "setting_key"]

#: the meta entry listing the keys of superseded rows (:meth:`ResultsStore.superseded`)
SUPERSEDED_META = "superseded"
_CREATED_AT = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"


#: columns added after stores were first written, with the value rows of an older store read for them
ADDED_COLUMNS: Mapping[str, object] = {"cached_prompt_tokens": 0, "class_counts": "{}"}


#: the tables a store may hold: the settings' rows, the per-concept scores (``Grid.detection``) and the meta
#: entries
TABLES = ("results", "concept_results", "meta")


def _schema(columns: Sequence[str], table: str = "results") -> str:
    """The tables of a store whose rows have ``columns``. The columns carry no SQL type (no affinity), so every
    value is read back exactly as it was written (an integer score stays an integer in the export)."""
    return f"""
CREATE TABLE IF NOT EXISTS {table} (
    key TEXT PRIMARY KEY,
    {", ".join(columns)},
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT ({_CREATED_AT})
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def setting_key(parameters: Mapping[str, object]) -> str:
    """A stable identifier of a setting: the SHA-256 of its parameters as canonical JSON.

    Example:
        >>> setting_key({"seed": 0, "method": "NMF"}) == setting_key({"method": "NMF", "seed": 0})
        True
    """
    return json_digest(dict(parameters), length=32)


class ResultsStore(SQLiteFile):
    """An append-only SQLite table of finished settings.

    Args:
        path: the database file (created with its folder if needed).
        read_only: open an existing store without writing anything to it or beside it (reports and exports of
            an archived, read-only folder).
        row_type: the row type whose fields are the columns (:class:`ResultRow`, or a subclass that adds
            columns; :class:`~xaimetrics.benchmark.ConceptRow` for the per-concept scores).

    A row type's ``TABLE`` names its table: the per-concept rows of ``Grid.detection`` live in the same file as
    the settings' rows (``concept_results``), with their own keys and superseded list, so that one lock, one
    resume rule and one failed-write rule cover both.

    Example:
        >>> import tempfile, os
        >>> store = ResultsStore(os.path.join(tempfile.mkdtemp(), "results.sqlite"))
        >>> store.add("k1", {"method": "NMF", "score": 0.75}, payload={"answer": "Sample_0: a"})
        True
        >>> store.add("k1", {"method": "NMF", "score": 0.75})
        False
        >>> store.keys(), store.to_frame()["score"].tolist()
        ({'k1'}, [0.75])
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        row_type: type[ResultRow] | type[ConceptRow] = ResultRow,
    ) -> None:
        self.path = Path(path)
        self.read_only = bool(read_only)
        self.row_type = row_type
        self.table: str = row_type.TABLE
        self._superseded_meta = (
            SUPERSEDED_META if self.table == "results" else f"{SUPERSEDED_META} {self.table}"
        )
        self.columns: tuple[str, ...] = row_type.columns()
        #: what SELECT reads for each column (its default for an added column an older store lacks)
        self._read: dict[str, str] = {c: c for c in self.columns}
        #: a read-only store without this row type's table (a grid run without ``detection``): no rows
        self._absent = False
        existed = self.path.exists()
        if existed:
            _check_file(self.path)
        elif read_only:
            raise StoreError(
                f"The results store {self.path} does not exist. Pass the path of a results.sqlite file."
            )
        self._lock = threading.Lock()
        if read_only:
            self._connection = self._open_read_only()
            try:
                with self._guard():
                    self._check_contents()
            except StoreError:
                self._connection.close()
                raise
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise _write_error(self.path, error) from error
        with self._guard():
            self._connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            with self._guard():
                if existed:  # inspect before any write: a bad file is reported, never "repaired"
                    self._check_contents()
                self._connection.execute("PRAGMA journal_mode=WAL")
                self._connection.execute("PRAGMA synchronous=FULL")
                self._connection.executescript(_schema(self.columns, self.table))
        except StoreError:
            self._connection.close()
            raise

    def _open_read_only(self) -> sqlite3.Connection:
        """A connection that writes nothing: ``mode=ro``, or ``immutable=1`` when SQLite cannot even create the
        shared-memory file of a WAL store beside it (a read-only folder; then the store must not change while
        it is read, which holds for an archived folder)."""
        uri = self.path.resolve().as_uri()
        try:
            connection = sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False)
            connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return connection
        except sqlite3.DatabaseError as error:
            if not is_write_failure(error):
                raise self._error(error) from error
        with self._guard():
            connection = sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False)
            connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return connection

    def _error(self, error: sqlite3.DatabaseError) -> StoreError:
        return _store_error(self.path, error)

    def _check_contents(self) -> None:
        connection = self._connection
        check = connection.execute("PRAGMA quick_check(1)").fetchone()
        if check is None or check[0] != "ok":
            raise _store_error(
                self.path, sqlite3.DatabaseError(f"quick_check: {check[0] if check else 'no answer'}")
            )
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and not tables & set(TABLES[:2]):
            raise StoreError(
                f"{self.path} is an SQLite file but not a xaimetrics results store (its tables: "
                f"{', '.join(sorted(tables))}). Nothing was written to it. Pass the path of a results store, "
                "or a new path to start a new run."
            )
        self._absent = self.read_only and self.table not in tables
        if self.table in tables:
            present = [row[1] for row in connection.execute(f"PRAGMA table_info({self.table})")]
            expected = ["key", *self.columns, "payload", "created_at"]
            added = [c for c in ADDED_COLUMNS if c in self.columns]
            if [c for c in present if c not in added] == [c for c in expected if c not in added]:
                for column in added:
                    if column in present:
                        continue
                    if self.read_only:
                        self._read[column] = f"{ADDED_COLUMNS[column]!r} AS {column}"
                    else:  # an older store: the column, with its default for the rows it holds
                        connection.execute(
                            f"ALTER TABLE {self.table} ADD COLUMN {column} DEFAULT {ADDED_COLUMNS[column]!r}"
                        )
                present = expected
            if present != expected:
                missing = [c for c in expected if c not in present]
                extra = [c for c in present if c not in expected]
                raise StoreError(
                    f"The {self.table} table of {self.path} has other columns than this version of xaimetrics writes "
                    f"(missing: {missing or 'none'}; unknown: {extra or 'none'}; or in another order): another "
                    "version wrote it. Nothing was written to it. Start a new output folder, or delete the old "
                    "store to rerun every setting (export it first with the version that wrote it to keep its "
                    "rows)."
                )

    def keys(self) -> set[str]:
        if self._absent:
            return set()
        with self._lock, self._guard():
            return {row[0] for row in self._connection.execute(f"SELECT key FROM {self.table}")}

    def __contains__(self, key: str) -> bool:
        if self._absent:
            return False
        with self._lock, self._guard():
            found = self._connection.execute(f"SELECT 1 FROM {self.table} WHERE key = ?", (key,)).fetchone()
        return found is not None

    def __len__(self) -> int:
        if self._absent:
            return 0
        with self._lock, self._guard():
            return int(self._connection.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0])

    def add(
        self,
        key: str,
        row: ResultRow | ConceptRow | Mapping[str, object],
        payload: Mapping[str, object] | None = None,
    ) -> bool:
        """Store one finished setting; ``False`` (and nothing written) when the key is already stored.

        ``row`` is a :class:`ResultRow` of the store's row type, or ``{column: value}`` for some of its columns
        (the others are stored empty).
        """
        if isinstance(row, ResultRow | ConceptRow):
            if not isinstance(row, self.row_type):
                raise invalid("row", "ResultsStore.add", f"a {self.row_type.__name__}", type(row).__name__)
            row = row.as_dict()
        unknown = set(row) - set(self.columns)
        if unknown:
            raise invalid("row", "ResultsStore.add", f"columns among {self.columns}", sorted(unknown))
        values = [_to_sql(row.get(c)) for c in self.columns]
        text = json.dumps(dict(payload or {}), default=str, ensure_ascii=False)
        placeholders = ", ".join("?" for _ in range(len(self.columns) + 2))
        self._check_writable()
        with self._lock, self._guard():
            cursor = self._connection.execute(
                f"INSERT OR IGNORE INTO {self.table} (key, {', '.join(self.columns)}, payload) VALUES ({placeholders})",
                [key, *values, text],
            )
        return cursor.rowcount == 1

    def payload(self, key: str) -> dict[str, Any]:
        """The JSON payload stored with ``key`` (prompt, answer, parse details)."""
        with self._lock, self._guard():
            found = self._connection.execute(
                f"SELECT payload FROM {self.table} WHERE key = ?", (key,)
            ).fetchone()
        if found is None:
            raise invalid("key", "ResultsStore.payload", "a stored key", key)
        payload: dict[str, Any] = json.loads(found[0])
        return payload

    def rows(self) -> Iterator[dict[str, object]]:
        """Every stored row as ``{column: value}``, with ``key`` first and ``created_at`` last."""
        if self._absent:
            return
        with self._lock, self._guard():
            cursor = self._connection.execute(
                f"SELECT key, {', '.join(self._read[c] for c in self.columns)}, created_at FROM {self.table}"
            )
            names = [d[0] for d in cursor.description]
            fetched = cursor.fetchall()
        for values in fetched:
            yield dict(zip(names, values, strict=True))

    def to_frame(self, *, superseded: bool = False) -> pd.DataFrame:
        """The rows, ordered by key (so two stores with the same results give equal frames), without the
        :meth:`superseded` ones (computed from other inputs than the last run's) unless ``superseded``."""
        rows = self.rows()
        if not superseded:
            hidden = self.superseded()
            rows = (row for row in rows if row["key"] not in hidden)
        frame = pd.DataFrame(list(rows), columns=["key", *self.columns, "created_at"])
        return frame.sort_values("key", kind="stable").reset_index(drop=True)

    def superseded(self) -> set[str]:
        """The keys of rows that a later run replaced by rows of the same settings computed from other inputs
        (another data file content, model, selection, simulator …; see :meth:`set_superseded`). They stay in the
        store (a run with the old inputs reuses them) but reports and exports do not read them."""
        return set(self.get_meta(self._superseded_meta, []) or [])

    def set_superseded(self, keys: Iterable[str]) -> None:
        """Record the keys of the superseded rows (one meta entry, written in one transaction)."""
        self.set_meta(self._superseded_meta, sorted(keys))

    def supersede(self, expected_key: Callable[[Mapping[str, object]], str | None]) -> int:
        """Mark superseded the stored rows whose key is not ``expected_key(row)`` (the same setting computed from
        other inputs), and no longer superseded those whose key is; rows it gives ``None`` for are not the
        caller's. Returns how many rows were newly superseded."""
        hidden = self.superseded()
        before = set(hidden)
        for row in self.rows():
            key = expected_key(row)
            if key is None:
                continue
            if key == row["key"]:
                hidden.discard(str(row["key"]))
            else:
                hidden.add(str(row["key"]))
        if hidden != before:
            self.set_superseded(hidden)
        return len(hidden - before)

    def export(self, path: str | Path) -> Path:
        """Write the rows (not the superseded ones) to ``.csv`` or ``.parquet`` (needs ``pyarrow``), chosen by the
        suffix.

        Raises:
            StoreError: the file cannot be written (the message names the cause: a full disk, a read-only
                folder, missing permission, a folder path through a file).
        """
        path = Path(path)
        if path.suffix not in (".csv", ".parquet"):
            raise invalid("path", "ResultsStore.export", "a file ending in .csv or .parquet", str(path))
        frame = self.to_frame()
        try:
            if path.suffix == ".csv":
                frame.to_csv(path, index=False)
            else:
                frame.to_parquet(path, index=False)
        except OSError as error:
            raise StoreError(
                f"The export to {path} failed: {write_failure_cause(path, error)}. The results store was not "
                "changed."
            ) from error
        return path

    def _check_writable(self) -> None:
        if self.read_only:
            raise StoreError(
                f"The results store {self.path} was opened read-only; nothing can be added to it."
            )

    def set_meta(self, name: str, value: object) -> None:
        self._check_writable()
        with self._lock, self._guard():
            self._connection.execute(
                "INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)",
                (name, json.dumps(value, default=str)),
            )

    def get_meta(self, name: str, default: object = None) -> Any:  # JSON: the caller knows the shape
        with self._lock, self._guard():
            found = self._connection.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return default if found is None else json.loads(found[0])

    def add_many(
        self, items: Iterable[tuple[str, ResultRow | Mapping[str, object], Mapping[str, object] | None]]
    ) -> int:
        return sum(self.add(key, row, payload) for key, row, payload in items)


#: how long a zero-byte store may stay empty before it counts as emptied (another process may be creating it)
_EMPTY_GRACE_S = 1.0


def _check_file(path: Path) -> None:
    """Refuse a path that is not a regular file, or a file emptied to zero bytes (its rows are gone)."""
    if not path.is_file():
        raise StoreError(f"The results store {path} is not a file. Pass the path of a results.sqlite file.")
    wal = path.with_name(path.name + "-wal")
    deadline = time.monotonic() + _EMPTY_GRACE_S
    while path.stat().st_size == 0 and not (wal.is_file() and wal.stat().st_size > 0):
        if time.monotonic() > deadline:
            raise StoreError(
                f"The results store {path} is empty (0 bytes): its results are gone (a truncated copy, a full "
                "disk?). Nothing was written to it. Restore it from a backup, or delete it to rerun every "
                "setting from scratch."
            )
        time.sleep(0.05)


def _write_error(path: Path, error: BaseException) -> StoreError:
    """A failed write: the store is intact up to its last committed row (each row is one transaction)."""
    return StoreError(
        f"Could not write to the results store {path}: {write_failure_cause(path, error)}. The store is "
        "intact: every row stored before was committed, the failed one rolled back, and the run stopped before "
        f"another call. Rerun the same command to resume. ({type(error).__name__}: {error})"
    )


def _store_error(path: Path, error: sqlite3.DatabaseError) -> StoreError:
    message = str(error)
    if isinstance(error, sqlite3.OperationalError) and ("locked" in message or "busy" in message):
        return StoreError(
            f"The results store {path} is locked by another process (sqlite: {message}). Wait for it to "
            "finish, or use another store."
        )
    if is_write_failure(error):
        return _write_error(path, error)
    return StoreError(
        f"The results store {path} cannot be read (sqlite: {message}): it is corrupted or truncated, or "
        "not an SQLite file (an interrupted copy, a full disk?). Nothing was written to it. Restore it from "
        "a backup, or move it away to rerun every setting in a new store."
    )


def _to_sql(value: object) -> str | int | float | None:
    if isinstance(value, bool):
        return int(value)
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, np.generic):  # numpy scalars
        return _to_sql(value.item())
    return json.dumps(value, default=str)
