"""A run killed with SIGKILL at a random point and resumed equals an uninterrupted run, without duplicates."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from toy_grid import PROVIDER_KWARGS, resume_grid

from xaimetrics.benchmark import Providers, ResultsStore, run_grid

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"
VOLATILE = ["created_at", "latency_s"]


def _rows(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_sigkill_at_a_random_point_then_resume_gives_the_same_table(tmp_path):
    grid = resume_grid()
    total = len(grid.settings())
    stop_after = random.Random().randint(1, total - 3)
    store = tmp_path / "killed.sqlite"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(HERE), str(HERE.parent)])}
    code = f"from toy_grid import run_child; run_child({str(store)!r}, {str(tmp_path / 'artefacts')!r})"
    child = subprocess.Popen([sys.executable, "-c", code], env=env)
    deadline = time.monotonic() + 120
    while _rows(store) < stop_after and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL, "the child finished before it could be killed"
    stored_at_kill = _rows(store)
    assert stop_after <= stored_at_kill < total

    providers = Providers(**PROVIDER_KWARGS)
    resumed = run_grid(grid, store, providers=providers, artefact_dir=tmp_path / "artefacts", progress=False)
    assert resumed.skipped == stored_at_kill and resumed.completed == total - stored_at_kill
    reference = tmp_path / "reference.sqlite"
    run_grid(grid, reference, providers=providers, artefact_dir=tmp_path / "fresh", progress=False)

    killed_frame = ResultsStore(store).to_frame().drop(columns=VOLATILE)
    reference_frame = ResultsStore(reference).to_frame().drop(columns=VOLATILE)
    assert len(killed_frame) == total and not killed_frame["key"].duplicated().any()
    assert killed_frame.equals(reference_frame)
    # the payloads (prompt, answer, parse details) are identical too
    with ResultsStore(store) as killed, ResultsStore(reference) as fresh:
        for key in reference_frame["key"]:
            a, b = killed.payload(key), fresh.payload(key)
            a["result"].pop("latency_s"), b["result"].pop("latency_s")
            assert a == b
