"""A damaged response cache is refused with an error naming the file and the way out — never a raw sqlite3
traceback, never a run whose settings fail one by one — and a cache that fails mid-run is bypassed."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from xaimetrics.exceptions import StoreError
from xaimetrics.simulators import CachedSimulator, ChatMessage, ScriptedSimulator


def _filled(path: Path, n: int = 300) -> None:
    sim = CachedSimulator(ScriptedSimulator(lambda messages: "Sample_1: yes " + "x" * 200), path)
    for i in range(n):
        sim.generate([ChatMessage("user", f"question {i}")])
    sim.close()
    with sqlite3.connect(path) as connection:  # everything in the main file
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _refused(path: Path) -> str:
    inner = ScriptedSimulator(lambda messages: "Sample_1: yes")
    with pytest.raises(StoreError) as caught:
        CachedSimulator(inner, path)
    message = str(caught.value)
    assert str(path) in message
    assert inner.calls == []
    return message


def test_truncated_cache_is_refused(tmp_path):
    path = tmp_path / "responses.sqlite"
    _filled(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    message = _refused(path)
    assert "--no-cache" in message and "Move it away" in message


def test_text_file_and_directory_are_refused(tmp_path):
    text = tmp_path / "text.sqlite"
    text.write_text("these are my notes, not a cache\n" * 100)
    assert "not SQLite" in _refused(text)
    folder = tmp_path / "folder.sqlite"
    folder.mkdir()
    assert "is not a file" in _refused(folder)


def test_garbage_in_the_middle_is_refused_before_any_call(tmp_path):
    path = tmp_path / "responses.sqlite"
    _filled(path)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 8192] = b"\xde\xad\xbe\xef" * 2048
    path.write_bytes(bytes(data))
    message = _refused(path)
    assert "damaged" in message or "cannot be read" in message


def test_a_table_of_another_layout_is_refused(tmp_path):
    path = tmp_path / "responses.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE responses (id INTEGER PRIMARY KEY, blob BLOB)")
    assert "another layout" in _refused(path)
    with sqlite3.connect(path) as connection:  # nothing was added to it
        assert [r[1] for r in connection.execute("PRAGMA table_info(responses)")] == ["id", "blob"]


def test_a_cache_without_the_probabilities_column_is_refused_not_migrated(tmp_path):
    path = tmp_path / "responses.sqlite"
    _filled(path, n=3)
    with sqlite3.connect(path) as connection:  # the layout before class probabilities were cached
        connection.execute("ALTER TABLE responses DROP COLUMN probabilities")
    message = _refused(path)
    assert "another layout" in message and "Move it away" in message and "--no-cache" in message
    with sqlite3.connect(path) as connection:  # left as it was
        columns = [r[1] for r in connection.execute("PRAGMA table_info(responses)")]
        assert "probabilities" not in columns
        assert connection.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 3


def test_an_empty_file_becomes_a_new_cache(tmp_path):
    path = tmp_path / "responses.sqlite"
    path.write_bytes(b"")
    sim = CachedSimulator(ScriptedSimulator(lambda messages: "Sample_1: yes"), path)
    assert [sim.generate([ChatMessage("user", "q")]).cached for _ in range(2)] == [False, True]


def test_a_cache_failing_mid_run_is_bypassed_with_one_warning(tmp_path, caplog):
    path = tmp_path / "responses.sqlite"
    inner = ScriptedSimulator(lambda messages: "Sample_1: yes")
    sim = CachedSimulator(inner, path)
    sim.generate([ChatMessage("user", "q0")])
    with sim._lock:  # another program drops the table under the running cache
        sim._connection.execute("DROP TABLE responses")
    caplog.set_level(logging.WARNING, logger="xaimetrics")
    answers = [sim.generate([ChatMessage("user", f"q{i}")]) for i in range(3)]
    assert [a.text for a in answers] == ["Sample_1: yes"] * 3 and not any(a.cached for a in answers)
    assert caplog.text.count("bypassed") == 1 and str(path) in caplog.text
