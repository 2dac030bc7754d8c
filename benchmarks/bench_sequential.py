"""Calibration of the gated, sequential design (issue #34) on simulated grids, through the public path.

Each simulated grid (``simulate_results``: seed, method × seed and setting noise, SDs 0.05 / 0.03 / 0.04, so the
unit difference has SD ≈ 0.071) is grown look by look by :func:`~xaimetrics.benchmark.until_decided`, exactly as
``run_gated`` grows a real one (the ``run`` callback filters the simulated rows by seed):

- **gate under the null** (both controls equal to NoExplanation): the share of grids whose gate ends "valid"
  (controls pass) at any look — must stay ≤ α;
- **methods under the null** (six methods equal to NoExplanation): the family-wise share of grids with any false
  "helps" at any look — ≤ α — plain, **with a missing arm** (one method's E3 setting missing in half the seeds,
  E3 scoring 0.1 higher for every arm) and **with two simulators sharing the seeds**;
- **power and seeds spent** under stated effects: the gate with a positive control at +0.10 and +0.20, a blind
  simulator's gate (positive control +0.006, unit SD 0.016: the 0.5B LLM), one method among six at +0.05 and
  +0.10;
- **the fixed-size planner against the test it plans for**: at the planner's minimum detectable difference (10
  seeds, one-sided, power 0.8) the positive control's realised power.

Rates come with their Monte-Carlo standard error; the results go to ``benchmarks/sequential.json`` with the
machine, commit and date.

    PYTHONPATH=src python benchmarks/bench_sequential.py --grids 300
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "benchmarks")]

from _harness import environment  # noqa: E402

from xaimetrics.benchmark import SequentialDesign, assess  # noqa: E402
from xaimetrics.benchmark._gated import GatedDesign  # noqa: E402
from xaimetrics.benchmark._sequential import until_decided  # noqa: E402
from xaimetrics.benchmark._simulation import simulate_results  # noqa: E402
from xaimetrics.stats import plan  # noqa: E402

#: the demo's designs: gate 5…8 seeds, methods 8…16 fresh seeds, α = 0.05, ρ = 0.5
DESIGN = GatedDesign.default()
UNIT_SD = math.sqrt(2 * 0.03**2 + 2 * 0.04**2)
METHODS = ("NMF", "SAE", "ICA", "PCA", "SVD", "NoProjection")


def _rate(hits: int, n: int) -> dict[str, float]:
    p = hits / n
    return {"rate": round(p, 4), "mc_se": round(math.sqrt(max(p * (1 - p), 1e-12) / n), 4), "n": n}


def _grow(frame: Any, design: SequentialDesign, question: str) -> Any:
    return until_decided(
        lambda seeds: frame[frame["seed"].isin(list(seeds))],
        design,
        question=question,
        pvalues=False,  # type: ignore[arg-type]
    )


def gate(
    n_grids: int, effects: Mapping[str, float], *, sd: Mapping[str, float] | None = None
) -> dict[str, Any]:
    valid = invalid = seeds = 0
    for g in range(n_grids):
        frame = simulate_results(n_seeds=DESIGN.gate.max_seeds, methods=(), effects=effects,
                                 random_state=7_000_000 + g, **(sd or {}))  # fmt: skip
        result = _grow(frame, DESIGN.gate, "controls")
        verdicts = result.verdicts
        valid += bool(len(verdicts) and (verdicts["verdict"] == "pass").all() and len(verdicts) == 2)
        invalid += bool((verdicts["verdict"] == "fail").any())
        seeds += result.looks[-1]["n_seeds"]
    return {"valid": _rate(valid, n_grids), "invalid": _rate(invalid, n_grids), "mean_seeds": seeds / n_grids}


def methods(n_grids: int, effects: Mapping[str, float], **options: Any) -> dict[str, Any]:
    any_false = target = seeds = 0
    null = [m for m in METHODS if effects.get(m, 0.0) == 0.0]
    for g in range(n_grids):
        frame = simulate_results(n_seeds=DESIGN.methods.max_seeds, controls=(), effects=effects,
                                 random_state=8_000_000 + g, **options)  # fmt: skip
        result = _grow(frame, DESIGN.methods, "methods")
        verdicts = result.verdicts["verdict"]
        any_false += bool(verdicts[null].isin(["helps", "helps_little"]).any())
        target += bool(all(verdicts.get(m) in ("helps", "helps_little") for m in effects if effects[m] > 0))
        seeds += result.looks[-1]["n_seeds"]
    out = {"family_wise_false_helps": _rate(any_false, n_grids), "mean_seeds": seeds / n_grids}
    if any(v > 0 for v in effects.values()):
        out["power"] = _rate(target, n_grids)
    return out


def planner(n_grids: int, n_seeds: int = 10) -> dict[str, Any]:
    mdd = plan(UNIT_SD, n_units=n_seeds, alternative="greater").mdd
    hits = 0
    for g in range(n_grids):
        frame = simulate_results(n_seeds=n_seeds, methods=("NMF",), effects={"SurrogateWords": mdd},
                                 random_state=9_000_000 + g)  # fmt: skip
        hits += assess(frame).verdict.positive["SurrogateWords"] == "pass"
    return {"mdd": round(mdd, 4), "planned_power": 0.8, "realised": _rate(hits, n_grids)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--grids", type=int, default=300)
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "sequential.json"))
    parser.add_argument("--cells", default="", help="comma-separated cells to run (default: all)")
    args = parser.parse_args()
    n = args.grids
    started = time.perf_counter()
    # E1 and its baseline NE1 are 0.3 harder for every arm (a true null: each compares with its own baseline);
    # NMF's E3 is missing in half the seeds, so a per-arm mean mixes prompt types differently from the baseline's
    missing = {"prompt_types": ("E1", "E2", "E3"), "prompt_effects": {"E1": -0.3, "NE1": -0.3},
               "missing": {("NMF", "E3"): tuple(range(0, DESIGN.methods.max_seeds, 2))}}  # fmt: skip
    only = set(args.cells.split(",")) if args.cells else None
    cells: dict[str, Any] = {
        "gate_null": lambda: gate(n, {}),
        "gate_positive_0.10": lambda: gate(n, {"SurrogateWords": 0.10}),
        "gate_positive_0.20": lambda: gate(n, {"SurrogateWords": 0.20}),
        "gate_blind_llm": lambda: gate(n, {"SurrogateWords": 0.006},
                                       sd={"seed_sd": 0.05, "method_sd": 0.008, "setting_sd": 0.008}),
        "methods_null": lambda: methods(n, {}),
        "methods_null_missing_arm": lambda: methods(n, {}, **missing),
        "methods_null_two_simulators": lambda: methods(n, {}, simulators=("s1", "s2")),
        "methods_one_at_0.05": lambda: methods(n, {"NMF": 0.05}),
        "methods_one_at_0.10": lambda: methods(n, {"NMF": 0.10}),
        "planner_positive_10_seeds": lambda: planner(n),
    }  # fmt: skip
    results = {}
    for name, cell in cells.items():
        if only is not None and name not in only:
            continue
        t0 = time.perf_counter()
        results[name] = cell()
        results[name]["seconds"] = round(time.perf_counter() - t0, 1)
        print(name, json.dumps(results[name]), flush=True)
    report = {"environment": environment(), "grids_per_cell": n, "design": DESIGN.to_dict(),
              "unit_sd": UNIT_SD, "results": results, "seconds": round(time.perf_counter() - started, 1)}  # fmt: skip
    Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
