from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import time
from pathlib import Path

import pandas as pd
import pytest

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
