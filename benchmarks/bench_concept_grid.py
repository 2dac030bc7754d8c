"""Per-concept legibility in a grid (``Grid.detection``) on the offline demo's data, read by the lexical reader.

The demo's providers (BBC News, the ``minilm+`` classifier fine-tuned on 800 articles) and a small grid (NMF and PCA,
k = 10, E2-a against NE2-a, 10 + 10 samples, concepts fitted on ``--n-fit`` training articles, ``--seeds`` seeds)
with ``detection = ["detection", "intruder"]`` and a randomised twin (``"all"``, one draw for the grid): each
concept of every fit is scored by the detection word reader, one row per concept × scorer in the run's store. The
same grid is then run again into the same store (the resume check: nothing may be asked). Writes
``benchmarks/concept_grid.json`` (:func:`~xaimetrics.benchmark.legibility_summary`, both runs' counts and wall times,
the commit, machine and date); docs/benchmark.md's table is read from it. Resumable.

    PYTHONPATH=src python benchmarks/bench_concept_grid.py --output /tmp/concept-grid
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "benchmarks")]

from _harness import environment  # noqa: E402

from xaimetrics._demo import demo_providers  # noqa: E402
from xaimetrics.benchmark import Grid, ResultsStore, run_grid  # noqa: E402
from xaimetrics.benchmark._concept_report import (  # noqa: E402
    concept_frame,
    legibility_summary,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default="concept-grid", help="the run's folder (resumable)")
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "concept_grid.json"))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-fit", type=int, default=500)
    args = parser.parse_args()
    providers = demo_providers(argparse.Namespace(dataset="bbc_news", no_progress=True))
    grid = Grid(
        datasets=("bbc_news",), models=("minilm+",), methods=("NMF", "PCA", "NoExplanation"), n_concepts=10,
        prompt_types=("NE2-a", "E2-a"), seeds=tuple(range(args.seeds)), simulators=("lexical",), n_lp=10, n_ep=10,
        n_fit=args.n_fit, max_sample_chars=150, balance="relaxed", randomized_twins=("all",), twin_seed=0,
        detection=("detection", "intruder"), concurrency=2, **providers.grid_extras(),
    )  # fmt: skip
    output = Path(args.output)
    runs = []
    for _ in range(2):  # the second run is the resume check: it must ask nothing
        started = time.perf_counter()
        summary = run_grid(
            grid,
            output / "results.sqlite",
            providers=providers,
            artefact_dir=output / "artefacts",
            progress=False,
        )
        runs.append({"wall_s": round(time.perf_counter() - started, 1), "settings_completed": summary.completed,
                     "settings_failed": summary.failed, "concepts": summary.concepts.as_dict()})  # fmt: skip
    with ResultsStore(output / "results.sqlite", read_only=True) as store:
        results = store.to_frame()
    concepts = concept_frame(output / "results.sqlite")
    table = legibility_summary(concepts, results)
    out = {
        "grid": grid.to_dict(),
        "runs": runs,
        "table": json.loads(table.to_json(orient="records")),
        "environment": environment(),
    }
    Path(args.json).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(table.round(3).to_string(index=False))
    print(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()
