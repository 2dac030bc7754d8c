"""What the library's SQLite stores share (the benchmark results, a study's answers): one connection used by
every thread behind a lock, and SQLite's errors raised as a :class:`~xaimetrics.exceptions.StoreError` that
names the file and the way out.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from xaimetrics.exceptions import StoreError

__all__ = ["SQLiteFile"]

_File = TypeVar("_File", bound="SQLiteFile")


class SQLiteFile(ABC):
    """Base of a store kept in one SQLite file; ``close()`` it, or use it in a ``with`` block.

    Subclasses set ``path``, ``_lock`` and ``_connection`` (opened with ``check_same_thread=False``), use the
    connection only under the lock and inside :meth:`_guard`, and say in :meth:`_error` what a database error
    means for their file.
    """

    path: Path
    _lock: threading.Lock | threading.RLock
    _connection: sqlite3.Connection

    @abstractmethod
    def _error(self, error: sqlite3.DatabaseError) -> StoreError:
        """The error raised instead of SQLite's ``error``."""

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn SQLite's errors into the :class:`StoreError` of :meth:`_error`."""
        try:
            yield
        except sqlite3.DatabaseError as error:
            raise self._error(error) from error

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._connection.close()

    def __enter__(self: _File) -> _File:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
