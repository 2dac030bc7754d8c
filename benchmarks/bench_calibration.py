"""Calibration of ``xaimetrics.benchmark.assess`` on simulated grids (issue #21): is it honest at its size?

Under the null (every method and control equal to NoExplanation; ``simulate_results``: seed, method × seed and
setting noise, SDs 0.05 / 0.03 / 0.04), for 3, 5 and 10 seeds × 6 methods + 2 controls:

- **interval miss rate**: the share of the 95 % intervals (every method and control) that miss the true 0;
- **family-wise error**: the share of grids in which some concept method is "significant" (Holm, α = 0.05);
- **controls pass**: the share of grids whose verdict says the grid detects explanation quality;

and under known effects at 10 seeds, the **power** of the positive control (one-sided) and of one method among six
(Holm level) at the planner's minimum detectable difference, against the planner's 0.8. Each rate is printed with
its Monte-Carlo standard error; the results go to ``benchmarks/calibration.json`` with the commit, machine and date.

    PYTHONPATH=src python benchmarks/bench_calibration.py --grids 400
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "benchmarks")]

from _harness import environment  # noqa: E402

from xaimetrics.benchmark import assess  # noqa: E402
from xaimetrics.benchmark._simulation import simulate_results  # noqa: E402
from xaimetrics.stats import plan  # noqa: E402

#: the unit-difference SD of the simulation with one arm per competitor: √(2·0.03² + 2·0.04²)
UNIT_SD = math.sqrt(2 * 0.03**2 + 2 * 0.04**2)


def _rate(hits: int, n: int) -> dict[str, float]:
    p = hits / n
    return {"rate": p, "mc_se": math.sqrt(max(p * (1 - p), 1e-12) / n), "n": n}


def null_grids(n_seeds: int, n_grids: int) -> dict[str, dict[str, float]]:
    misses = intervals = fwer = controls = 0
    for g in range(n_grids):
        result = assess(simulate_results(n_seeds=n_seeds, random_state=1_000_000 + 10_000 * n_seeds + g))
        c = result.comparison
        misses += int(((c["ci_low"] > 0) | (c["ci_high"] < 0)).sum())
        intervals += len(c)
        fwer += bool(c.loc[c["role"] == "method", "significant"].any())
        controls += bool(result.verdict.detects)
    return {"interval_miss": _rate(misses, intervals), "family_wise": _rate(fwer, n_grids),
            "controls_pass": _rate(controls, n_grids)}  # fmt: skip


def power(n_seeds: int, n_grids: int) -> dict[str, dict[str, float]]:
    positive = plan(UNIT_SD, n_units=n_seeds, alternative="greater").mdd
    method = plan(UNIT_SD, n_units=n_seeds, n_comparisons=6).mdd
    hits_positive = hits_method = 0
    for g in range(n_grids):
        frame = simulate_results(n_seeds=n_seeds, effects={"SurrogateWords": positive, "NMF": method},
                                 random_state=2_000_000 + g)  # fmt: skip
        result = assess(frame)
        hits_positive += result.verdict.positive["SurrogateWords"] == "pass"
        hits_method += bool(result.comparison.loc["NMF", "significant"])
    return {
        "positive_control": {**_rate(hits_positive, n_grids), "effect": positive, "planned": 0.8},
        "method_holm": {**_rate(hits_method, n_grids), "effect": method, "planned": 0.8},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--grids", type=int, default=400, help="simulated grids per case (default: %(default)s)"
    )
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "calibration.json"))
    args = parser.parse_args()
    started = time.perf_counter()
    out: dict[str, object] = {}
    for n_seeds in (3, 5, 10):
        out[f"null_{n_seeds}_seeds"] = rates = null_grids(n_seeds, args.grids)
        print(f"null, {n_seeds:2d} seeds, {args.grids} grids: " + ", ".join(
            f"{k} {v['rate']:.3f} ± {v['mc_se']:.3f}" for k, v in rates.items()), flush=True)  # fmt: skip
    out["power_10_seeds"] = rates = power(10, args.grids)
    print(f"power, 10 seeds, {args.grids} grids: " + ", ".join(
        f"{k} {v['rate']:.3f} ± {v['mc_se']:.3f} at effect {v['effect']:.3f} (planned 0.8)"
        for k, v in rates.items()))  # fmt: skip
    # the machine, versions, commit and date, as every benchmark records them
    out["provenance"] = {
        **environment(),
        "grids": args.grids,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    Path(args.output).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"written {args.output} ({out['provenance']['wall_s']} s)")


if __name__ == "__main__":
    main()
