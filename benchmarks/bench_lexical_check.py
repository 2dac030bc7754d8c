"""The demo's instrument check at 3, 5 and 10 seeds, with the seed-level statistics (issue #21, M2/M3).

Runs ``xaimetrics demo --simulator lexical --seeds 10`` once (the demo's grid — BBC News, anonymised, NE2-a/E2-a,
10 + 10 samples, k = 20, expected accuracy — read by the lexical reference simulator; resumable), then assesses
seeds 0–2, 0–4 and 0–9 of the same store, and every 3- and 5-seed subset of the ten seeds (how often the
verdict would pass at that size). Writes ``benchmarks/lexical_check.json`` with the commit, machine and date;
docs/consim.md's table is read from it.

    PYTHONPATH=src python benchmarks/bench_lexical_check.py --output /tmp/lexical-demo
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "benchmarks")]

from _harness import environment  # noqa: E402

from xaimetrics import cli  # noqa: E402
from xaimetrics.benchmark import ResultsStore, assess  # noqa: E402
from xaimetrics.benchmark._sentences import controls_sentence  # noqa: E402


def _row(table, method: str, columns: list[str]) -> dict[str, object]:
    return {
        c: (float(v) if isinstance(v, int | float) else str(v)) for c, v in table.loc[method, columns].items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default="lexical-demo", help="the demo's output folder (resumable)")
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "lexical_check.json"))
    args = parser.parse_args()
    started = time.perf_counter()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = cli.main(
            ["demo", "--simulator", "lexical", "--seeds", "10", "--output", args.output, "--no-progress"]
        )
    demo_wall = time.perf_counter() - started
    design = next((line for line in printed.getvalue().splitlines() if line.startswith("Data design:")), "")
    frame = ResultsStore(Path(args.output) / "results.sqlite").to_frame()
    out: dict[str, object] = {
        "demo_exit_code": code,
        "demo_wall_s": round(demo_wall, 1),
        "data_design": design,
    }
    for n in (3, 5, 10):
        result = assess(frame[frame["seed"].isin(range(n))])
        methods = result.comparison[result.comparison["role"] == "method"]
        out[f"seeds_{n}"] = {
            "controls": {m: _row(result.controls, m, ["difference", "ci_low", "ci_high", "pvalue", "verdict"])
                         for m in result.controls.index},
            "methods": {m: _row(methods, m, ["difference", "ci_low", "ci_high", "pvalue", "pvalue_adjusted",
                                             "significant"]) for m in methods.index},
            "detects": result.verdict.detects, "best": result.best.method,
            "best_established": result.best.established, "summary": result.summary,
        }  # fmt: skip
        print(f"{n} seeds: " + controls_sentence(result.verdict), flush=True)
    for n in (3, 5):
        verdicts = []
        for subset in itertools.combinations(range(10), n):
            verdict = assess(frame[frame["seed"].isin(subset)]).verdict
            verdicts.append(verdict)
        share = {
            "positive_pass": sum(v.positive.get("SurrogateWords") == "pass" for v in verdicts)
            / len(verdicts),
            "negative_pass": sum(v.negative.get("RandomWords") == "pass" for v in verdicts) / len(verdicts),
            "detects": sum(bool(v.detects) for v in verdicts) / len(verdicts),
            "subsets": len(verdicts),
        }
        out[f"subsets_{n}"] = share
        print(f"{n}-seed subsets of the 10 seeds: {share}", flush=True)
    # the machine, versions, commit and date, as every benchmark records them
    out["provenance"] = {**environment(), "wall_s": round(time.perf_counter() - started, 1)}
    Path(args.json).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"written {args.json}")


if __name__ == "__main__":
    main()
