from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xaimetrics.benchmark._store import ResultsStore, setting_key
from xaimetrics.exceptions import InvalidParameterError


def test_add_is_idempotent_and_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with ResultsStore(path) as store:
        assert store.add(setting_key({"seed": 1}), {"method": "NMF", "score": 0.5, "anonymized": True})
        assert not store.add(setting_key({"seed": 1}), {"method": "NMF", "score": 0.9})
    with ResultsStore(path) as store:
        frame = store.to_frame()
        assert len(store) == 1 and frame["score"].tolist() == [0.5]
        assert frame["anonymized"].tolist() == [1]


def test_payload_round_trip_and_unknown_column(tmp_path: Path) -> None:
    with ResultsStore(tmp_path / "r.sqlite") as store:
        store.add("k", {"method": "SAE"}, payload={"answer": "Sample_3: positive", "ids": [3]})
        assert store.payload("k") == {"answer": "Sample_3: positive", "ids": [3]}
        with pytest.raises(InvalidParameterError, match=r"'row' parameter of ResultsStore\.add"):
            store.add("k2", {"methd": "SAE"})
        with pytest.raises(InvalidParameterError, match="a stored key"):
            store.payload("missing")


def test_export_csv(tmp_path: Path) -> None:
    with ResultsStore(tmp_path / "r.sqlite") as store:
        store.add("b", {"method": "PCA", "score": 0.25})
        store.add("a", {"method": "NMF", "score": 0.75})
        out = store.export(tmp_path / "r.csv")
        assert pd.read_csv(out)["key"].tolist() == ["a", "b"]
        with pytest.raises(InvalidParameterError, match=r"\.csv or \.parquet"):
            store.export(tmp_path / "r.xlsx")


def _writer(path: str, start: int) -> None:
    store = ResultsStore(path)
    i = start
    while True:  # killed from outside
        store.add(f"k{i:06d}", {"method": "NMF", "score": i / 1000}, payload={"i": i})
        i += 1


def test_sigkill_leaves_only_whole_rows(tmp_path: Path) -> None:
    path = str(tmp_path / "r.sqlite")
    ctx = multiprocessing.get_context("spawn")
    process = ctx.Process(target=_writer, args=(path, 0))
    process.start()
    while not os.path.exists(path) or len(ResultsStore(path)) < 50:
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.join()
    with ResultsStore(path) as store:
        frame = store.to_frame()
        n = len(frame)
        assert n >= 50
        # Every committed row is whole and the keys are a gap-free prefix: nothing lost, nothing doubled.
        assert frame["key"].tolist() == [f"k{i:06d}" for i in range(n)]
        assert all(store.payload(f"k{i:06d}") == {"i": i} for i in range(0, n, 7))
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# -- corrupted, truncated, emptied or foreign stores (issue #11, class 11) -------------------------------------
def _filled_store(path: Path, n: int = 40) -> bytes:
    with ResultsStore(path) as store:
        for i in range(n):
            store.add(f"k{i:03d}", {"method": "NMF", "score": i / n}, payload={"answer": "Sample_1: a" * 50})
        store.set_meta("grid", {"seeds": [0]})
    assert not path.with_name(path.name + "-wal").exists()  # checkpointed on close: one self-contained file
    return path.read_bytes()


def _corrupt(path: Path, how: str, data: bytes) -> None:
    if how == "emptied":
        path.write_bytes(b"")
    elif how == "half":
        path.write_bytes(data[: len(data) // 2])
    elif how == "header only":
        path.write_bytes(data[:100])
    elif how == "garbage header":
        path.write_bytes(b"this is not sqlite" + data[18:])
    elif how == "zeroed pages":
        path.write_bytes(data[:4096] + bytes(len(data) - 4096))
    elif how == "text file":
        path.write_text("key,score\nk1,0.5\n")


CORRUPTIONS = {
    "emptied": r"is empty \(0 bytes\)",
    "half": "cannot be read",
    "header only": "cannot be read",
    "garbage header": "cannot be read",
    "zeroed pages": "cannot be read",
    "text file": "cannot be read",
}


@pytest.mark.parametrize(("how", "message"), CORRUPTIONS.items(), ids=CORRUPTIONS.keys())
def test_a_damaged_store_is_a_clear_error_and_is_never_written(
    tmp_path: Path, how: str, message: str
) -> None:
    from xaimetrics.exceptions import StoreError

    path = tmp_path / "results.sqlite"
    _corrupt(path, how, _filled_store(path))
    before = path.read_bytes()
    with pytest.raises(StoreError, match=message) as caught:
        ResultsStore(path)
    assert str(path) in str(caught.value) and "Nothing was written" in str(caught.value)
    assert path.read_bytes() == before  # never overwritten, never "repaired"
    assert not path.with_name(path.name + "-wal").exists()


@settings(max_examples=40, deadline=None)
@given(fraction=st.floats(0.001, 0.999))
def test_property_any_truncation_is_reported_or_harmless(tmp_path_factory, fraction: float) -> None:
    """Cut a store anywhere: opening it raises StoreError, or reading it works; never a raw sqlite3 error."""
    from xaimetrics.exceptions import StoreError

    path = tmp_path_factory.mktemp("cut") / "results.sqlite"
    data = _filled_store(path)
    path.write_bytes(data[: max(1, int(len(data) * fraction))])
    before = path.read_bytes()
    try:
        with ResultsStore(path) as store:
            frame = store.to_frame()
    except StoreError as error:
        assert str(path) in str(error)
        assert path.read_bytes() == before
    else:
        assert len(frame) <= 40


def test_a_foreign_sqlite_file_is_not_taken_over(tmp_path: Path) -> None:
    from xaimetrics.exceptions import StoreError

    path = tmp_path / "notes.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"not a xaimetrics results store \(its tables: notes\)"):
        ResultsStore(path)
    assert path.read_bytes() == before
    with sqlite3.connect(path) as connection:
        connection.execute("DROP TABLE notes")
        connection.execute("CREATE TABLE results (key TEXT, method TEXT)")
    with pytest.raises(StoreError, match="has other columns than this version"):
        ResultsStore(path)
    with pytest.raises(StoreError, match="is not a file"):
        ResultsStore(tmp_path)


@pytest.mark.parametrize("read_only", [False, True])
def test_a_store_with_other_columns_is_refused_not_migrated(tmp_path: Path, read_only: bool) -> None:
    """A store written before the probabilistic columns existed is never altered: the error names the file and
    the way out."""
    from xaimetrics.benchmark import ResultRow
    from xaimetrics.exceptions import StoreError

    path = tmp_path / "old.sqlite"
    columns = ResultRow.columns()
    old = columns[: columns.index("expected_accuracy")]
    with sqlite3.connect(path) as connection:
        connection.execute(f"CREATE TABLE results (key TEXT PRIMARY KEY, {', '.join(old)}, payload TEXT NOT NULL, "
                           "created_at TEXT NOT NULL DEFAULT 'x')")  # fmt: skip
        connection.execute("INSERT INTO results (key, method, score, payload) VALUES ('k', 'NMF', 0.5, '{}')")
    connection.close()
    before = path.read_bytes()
    with pytest.raises(StoreError) as raised:
        ResultsStore(path, read_only=read_only)
    message = str(raised.value)
    assert str(path) in message and "'expected_accuracy'" in message and "unknown: none" in message
    assert "Start a new output folder, or delete the old store" in message
    assert path.read_bytes() == before
    assert not path.with_name(path.name + "-wal").exists()


def test_the_schema_is_the_row_types_columns(tmp_path: Path) -> None:
    from xaimetrics.benchmark import ResultRow

    with ResultsStore(tmp_path / "r.sqlite"):
        pass
    with sqlite3.connect(tmp_path / "r.sqlite") as connection:
        names = [row[1] for row in connection.execute("PRAGMA table_info(results)")]
    connection.close()
    assert names == ["key", *ResultRow.columns(), "payload", "created_at"]


def test_a_store_written_before_the_cached_prompt_tokens_column_is_read_and_extended(tmp_path: Path) -> None:
    from xaimetrics.benchmark import ResultRow
    from xaimetrics.benchmark._store import _schema

    path = tmp_path / "old.sqlite"
    old = [c for c in ResultRow.columns() if c != "cached_prompt_tokens"]
    with sqlite3.connect(path) as connection:
        connection.executescript(_schema(old))
        connection.execute("INSERT INTO results (key, method, score, payload) VALUES ('k', 'NMF', 0.5, '{}')")
    connection.close()
    before = path.read_bytes()
    with ResultsStore(path, read_only=True) as store:  # read as it is: the column's default, nothing written
        frame = store.to_frame()
        assert frame["cached_prompt_tokens"].tolist() == [0] and frame["score"].tolist() == [0.5]
    assert path.read_bytes() == before
    with ResultsStore(path) as store:  # opened to write: the column is added, old rows read 0
        assert store.add("k2", {"method": "PCA", "score": 0.25, "cached_prompt_tokens": 1024})
        frame = store.to_frame().sort_values("key")
        assert frame["cached_prompt_tokens"].tolist() == [0, 1024]
    with ResultsStore(path) as store:  # and it opens again
        assert len(store) == 2


def test_a_store_written_before_the_class_counts_column_reads_empty_counts(tmp_path: Path) -> None:
    from xaimetrics.benchmark import ResultRow
    from xaimetrics.benchmark._store import _schema

    path = tmp_path / "old.sqlite"
    old = [c for c in ResultRow.columns() if c not in ("cached_prompt_tokens", "class_counts")]
    with sqlite3.connect(path) as connection:
        connection.executescript(_schema(old))
        connection.execute("INSERT INTO results (key, method, score, payload) VALUES ('k', 'NMF', 0.5, '{}')")
    connection.close()
    with ResultsStore(path, read_only=True) as store:
        assert store.to_frame()["class_counts"].tolist() == ["{}"]
    with ResultsStore(path) as store:
        assert store.add("k2", {"method": "PCA", "score": 0.25, "class_counts": '{"a": {"n": 1}}'})
        frame = store.to_frame().sort_values("key")
        assert frame["class_counts"].tolist() == ["{}", '{"a": {"n": 1}}']
