"""Run ``xaimetrics benchmark`` in a real subprocess (signals, resource limits, concurrent runs) against the fake
OpenAI server, and read what it stored."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"

#: PCA × E2-a + the NoExplanation baseline × NE2-a, 12 seeds = 24 settings on the toy data
GRID = """
datasets = ["toy"]
models = ["toy"]
methods = ["PCA", "NoExplanation"]
n_concepts = 3
prompt_types = ["NE2-a", "E2-a"]
seeds = [{seeds}]
simulators = ["openai:fake-model"]
base_url = "{base_url}"
n_lp = 6
n_ep = 6
n_fit = 200
concurrency = {concurrency}
"""


def write_grid(folder: Path, base_url: str, *, n_seeds: int = 12, concurrency: int = 2) -> Path:
    path = folder / "grid.toml"
    seeds = ", ".join(str(s) for s in range(n_seeds))
    path.write_text(GRID.format(seeds=seeds, base_url=base_url, concurrency=concurrency))
    return path


def environment(cache_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), str(HERE), str(HERE.parent)]),
        "XAIMETRICS_CACHE_DIR": str(cache_dir),
        "OPENAI_API_KEY": "sk-test",
    }


def start_run(
    grid: Path,
    output: Path,
    *extra: str,
    cache_dir: Path,
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.Popen[str]:
    """``xaimetrics benchmark run GRID --output OUTPUT --providers toy_grid:PROVIDERS --no-progress ...``."""
    command = [
        sys.executable, "-c", "import sys; from xaimetrics.cli import main; sys.exit(main())",
        "benchmark", "run", str(grid), "--output", str(output), "--providers", "toy_grid:PROVIDERS",
        "--no-progress", *extra,
    ]  # fmt: skip
    return subprocess.Popen(
        command, env=environment(cache_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=preexec_fn,
    )  # fmt: skip


def cli(*argv: str, cache_dir: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "import sys; from xaimetrics.cli import main; sys.exit(main())", *argv]
    return subprocess.run(
        command, env=environment(cache_dir), capture_output=True, text=True, timeout=timeout, check=False
    )


def stored_rows(store: Path) -> int:
    if not store.exists():
        return 0
    with sqlite3.connect(store, timeout=30) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM results").fetchone()[0])


def stored_keys(store: Path) -> list[str]:
    with sqlite3.connect(store, timeout=30) as connection:
        return [row[0] for row in connection.execute("SELECT key FROM results")]
