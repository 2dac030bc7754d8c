"""Worst-case time of the ConSim answer parser on 10 KB, 100 KB and 1 MB adversarial answers (consim).

Each adversarial family of ``tests/adversarial_answers.py`` (unclosed ``<think>`` tags, ``İ`` before a
``</think>``, separator runs, huge ids, thousands of unexpected ids, long lines of class words, JSON escapes,
bullet lines without a sample mention…) is parsed at each size, best of ``--repeat`` runs. The script prints
every time, the ratio to the same family's 10 KB time (linear growth: ≈ 10× and ≈ 100×; sub-millisecond 10 KB
times make these noisy), the 1 MB / 100 KB step (linear: ≈ 10×, quadratic: ≈ 100×), and the worst family per
size. The reasoning-block regex this replaces (``<think>.*?</think>`` with ``re.DOTALL``) took seconds on
``"<think>" * 8000`` (56 KB) and about half an hour on 1 MB.

    PYTHONPATH=src python benchmarks/bench_parse_worst_case.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from adversarial_answers import CLASSES, GENERATORS, IDS  # noqa: E402
from xaimetrics.consim._parsing import parse_answers  # noqa: E402

SIZES = {"10 KB": 10_000, "100 KB": 100_000, "1 MB": 1_000_000}


def best_time(text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        parse_answers(text, IDS, CLASSES)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the best is kept")
    args = parser.parse_args()
    times: dict[str, dict[str, float]] = {}
    name_width = max(len(name) for name in GENERATORS)
    print(f"{'family':<{name_width}}  " + "  ".join(f"{label:>18}" for label in SIZES) + "  1 MB / 100 KB")
    for name, make in GENERATORS.items():
        times[name] = {label: best_time(make(size), args.repeat) for label, size in SIZES.items()}
        base = times[name]["10 KB"]
        cells = [f"{t * 1000:9.2f} ms ({t / base:5.1f}×)" for t in times[name].values()]
        step = times[name]["1 MB"] / times[name]["100 KB"]
        print(f"{name:<{name_width}}  " + "  ".join(cells) + f"  {step:8.1f}×")
    print()
    base = max(times[name]["10 KB"] for name in GENERATORS)
    for label in SIZES:
        worst = max(GENERATORS, key=lambda name: times[name][label])
        t = times[worst][label]
        print(
            f"worst case at {label:>6}: {t * 1000:8.2f} ms ({worst}), {t / base:6.1f}× the worst 10 KB case"
        )


if __name__ == "__main__":
    main()
