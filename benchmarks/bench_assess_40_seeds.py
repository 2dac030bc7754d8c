"""Wall time and peak memory of ``xaimetrics.benchmark.assess`` on 40 seeds of a simulated grid (benchmark).

The grid is ``simulate_results(n_seeds=40)``: 6 methods, the two controls and NoExplanation, one prompt type
and interpretation (360 rows). Its split-half stability has C(40, 20) / 2 ≈ 6.9 × 10¹⁰ splits; ``assess`` used
to list every one of them before drawing 50 (at 28 seeds: 7.1 s and 3.4 GB peak), and now draws its 50 splits
directly. The baseline, in the same run, is ``assess`` on the first 8 seeds of the same grid (35 splits,
listed): the ratio says what 32 more seeds cost. Each side runs in a fresh process (so that its peak resident
memory, ``ru_maxrss``, is its own): one untimed warm-up call, then one timed call, for ``--rounds`` rounds
with the sides alternated (round r starts with side r mod 2). Goals: ≤ 1 s and ≤ 500 MB peak at 40 seeds.

    PYTHONPATH=src python benchmarks/bench_assess_40_seeds.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 1.0
GOAL_MB = 500.0


def _child(n_seeds: int) -> None:
    """One side, in its own process: warm-up, one timed ``assess``, then the process's peak RSS."""
    import resource

    sys.path.insert(0, str(ROOT / "src"))
    from xaimetrics.benchmark import assess
    from xaimetrics.benchmark._simulation import simulate_results

    frame = simulate_results(n_seeds=40, random_state=0)
    frame = frame[frame["seed"] < n_seeds]
    assess(frame)  # warm-up: imports, scipy's first permutation test
    started = time.perf_counter()
    result = assess(frame)
    seconds = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux
    print(json.dumps({"seconds": seconds, "peak_mb": peak_kb / 1024, "splits": result.stability.n_splits}))


def _side(n_seeds: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(n_seeds)], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds, sides alternated (default: %(default)s)"
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        _child(args.child)
        return
    sides = {"40 seeds": 40, "8 seeds (baseline)": 8}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
    for r in range(args.rounds):
        names = list(sides)
        for name in names[r % 2 :] + names[: r % 2]:
            runs[name].append(_side(sides[name]))
    for name, values in runs.items():
        seconds = [v["seconds"] for v in values]
        peak = [v["peak_mb"] for v in values]
        print(
            f"{name:>20}: {statistics.median(seconds):.3f} s ({min(seconds):.3f}–{max(seconds):.3f}), peak "
            f"{statistics.median(peak):.0f} MB ({min(peak):.0f}–{max(peak):.0f}), {int(values[0]['splits'])} splits"
        )
    ratios = [
        a["seconds"] / b["seconds"] for a, b in zip(runs["40 seeds"], runs["8 seeds (baseline)"], strict=True)
    ]
    memory = [
        a["peak_mb"] / b["peak_mb"] for a, b in zip(runs["40 seeds"], runs["8 seeds (baseline)"], strict=True)
    ]
    seconds = statistics.median(v["seconds"] for v in runs["40 seeds"])
    peak = statistics.median(v["peak_mb"] for v in runs["40 seeds"])
    print(
        f"40 seeds / 8 seeds: time {statistics.median(ratios):.2f}× ({min(ratios):.2f}–{max(ratios):.2f}), "
        f"peak memory {statistics.median(memory):.2f}×"
    )
    print(
        f"goal ≤ {GOAL_SECONDS:g} s: {'met' if seconds <= GOAL_SECONDS else 'not met'} ({seconds:.3f} s); "
        f"goal ≤ {GOAL_MB:g} MB: {'met' if peak <= GOAL_MB else 'not met'} ({peak:.0f} MB)"
    )


if __name__ == "__main__":
    main()
