"""Conventions shared by every benchmark, so that their figures can be compared and trusted.

- **Warm-up on both sides**: every side runs ``warmup`` times untimed before anything is timed.
- **Same repeats, alternated**: ``repeats`` rounds; in each round every side runs once, and the order rotates
  from round to round (A B, B A, ...), so the drifting load of a shared machine hits every side alike.
- **Medians and min–max**: every figure is the median of the rounds, printed with its range; a ratio is the
  median of the per-round ratios (the two sides of one round ran back to back).
- **Threads fixed**: ``torch.set_num_threads`` (and ``OMP_NUM_THREADS`` for subprocesses) is set explicitly.
- **Load recorded**: the 1/5/15-minute load averages before and after each benchmark.

Each ``bench_*.py`` script builds a :class:`Report` (rows, goals, notes) and writes it as JSON with
``--json``; ``run_all.py`` collects the reports into ``results.md``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "numpy", "scipy", "scikit-learn", "torch", "transformers", "gensim", "interpreto", "quantus",
    "pytorch-concepts", "openai",
)  # fmt: skip


@dataclass
class Stats:
    """Repeated measurements of one quantity (seconds, bytes or a ratio)."""

    samples: list[float]

    @property
    def median(self) -> float:
        return float(statistics.median(self.samples))

    @property
    def min(self) -> float:
        return float(min(self.samples))

    @property
    def max(self) -> float:
        return float(max(self.samples))

    def text(self, unit: str = "s", digits: int = 2) -> str:
        """``"1.23 s (1.20–1.30, n=3)"``."""
        space = "" if unit in ("×", "") else " "
        if len(self.samples) == 1:
            return f"{self.median:.{digits}f}{space}{unit} (n=1)"
        return (
            f"{self.median:.{digits}f}{space}{unit} ({self.min:.{digits}f}–{self.max:.{digits}f}, "
            f"n={len(self.samples)})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"median": self.median, "min": self.min, "max": self.max, "samples": self.samples}


def ratio(numerator: Stats, denominator: Stats) -> Stats:
    """Per-round ratios of two sides measured in the same rounds (paired), as :class:`Stats`."""
    return Stats([a / b for a, b in zip(numerator.samples, denominator.samples, strict=True)])


def measure(
    sides: Mapping[str, Callable[[], Any]], *, repeats: int, warmup: int = 1
) -> tuple[dict[str, Stats], dict[str, Any]]:
    """Warm every side up, then time ``repeats`` alternated rounds; return the timings and the last results.

    Round ``r`` runs the sides in the order rotated by ``r`` (two sides: A B, B A, A B, ...).
    """
    names = list(sides)
    results: dict[str, Any] = {}
    for _ in range(warmup):
        for name in names:
            results[name] = sides[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(repeats):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            results[name] = sides[name]()
            times[name].append(time.perf_counter() - start)
    return {name: Stats(values) for name, values in times.items()}, results


def set_threads(threads: int) -> None:
    """Fix the number of intra-op threads (torch, and OpenMP/MKL of any subprocess)."""
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[variable] = str(threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(threads)


def load_average() -> list[float]:
    """The 1, 5 and 15-minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        return None
    return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment() -> dict[str, Any]:
    """The machine, the versions and the date of a run."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    return {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.platform(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "python": platform.python_version(),
        "versions": {name: _version(name) for name in PACKAGES if _version(name)},
        "commit": git("rev-parse", "--short", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
    }


@dataclass
class Report:
    """What one benchmark measured: table rows, goal verdicts and notes (JSON for ``run_all.py``)."""

    name: str
    title: str
    settings: dict[str, Any] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    goals: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    load_before: list[float] = field(default_factory=load_average)
    load_after: list[float] = field(default_factory=list)

    def row(self, label: str, value: Stats | str, unit: str = "s", digits: int = 2, **extra: Any) -> None:
        """Add a table row (``value`` is measured :class:`Stats` or a text)."""
        text = value if isinstance(value, str) else value.text(unit, digits)
        entry: dict[str, Any] = {"label": label, "value": text, **extra}
        if isinstance(value, Stats):
            entry["stats"] = value.to_dict()
            entry["unit"] = unit
        self.rows.append(entry)
        print(f"  {label:<58} {text}", flush=True)

    def goal(self, goal_id: str, figure: str, met: bool | None, why: str = "") -> None:
        """Record the verdict of a goal of ``goals.py`` (``met=None``: not measured in this run)."""
        from goals import GOALS

        if goal_id not in GOALS:
            raise KeyError(f"unknown goal {goal_id!r}; add it to benchmarks/goals.py")
        verdict = "not measured" if met is None else ("met" if met else "not met")
        self.goals[goal_id] = {"figure": figure, "verdict": verdict, "why": why}
        print(f"  goal {goal_id}: {figure} → {verdict}{f' ({why})' if why else ''}", flush=True)

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"  note: {text}", flush=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "settings": self.settings,
            "rows": self.rows,
            "goals": self.goals,
            "notes": self.notes,
            "load_before": self.load_before,
            "load_after": self.load_after or load_average(),
        }

    def finish(self, json_path: Path | None) -> None:
        """Print the load average and write the JSON report (when asked)."""
        self.load_after = load_average()
        print(f"load average before {self.load_before}, after {self.load_after}", flush=True)
        if json_path is not None:
            json_path.parent.mkdir(parents=True, exist_ok=True)
            json_path.write_text(json.dumps(self.to_dict(), indent=1))


def common_arguments(parser: argparse.ArgumentParser, repeats: int = 3) -> argparse.ArgumentParser:
    """``--quick``, ``--repeats``, ``--warmup``, ``--threads`` and ``--json``, the same for every script."""
    parser.add_argument("--quick", action="store_true", help="a smaller smoke run")
    parser.add_argument("--repeats", type=int, default=repeats, help="timed rounds per side")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs per side first")
    parser.add_argument("--threads", type=int, default=1, help="torch / OpenMP threads (fixed)")
    parser.add_argument("--json", type=Path, default=None, help="write the report here")
    return parser
