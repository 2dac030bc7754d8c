"""Shared-prefix reuse for class probabilities: prompt tokens computed and wall time, with and without reuse.

On the demo grid's real prompts (demo classifier, concept methods, controls, anonymised E2 and NE2, the demo's
sample counts), the local GGUF simulator scores every evaluation sample as a continuation of the prompt:

- **with reuse** (the default): the prompt is read once, each sample's continuation from its KV state;
- **without reuse**: the prompt is read again for every sample (what a simulator without KV reuse pays).

Both runs give identical probabilities (checked here), so the ratio of prompt tokens computed is the saving.
The artefacts come from the demo's output folder (run ``xaimetrics demo`` first, or this builds them).

    PYTHONPATH=src python benchmarks/bench_prefix_reuse.py [--prompts 6] [--model qwen2.5-coder-0.5b-instruct]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from xaimetrics._demo import demo_grid, register  # noqa: E402
from xaimetrics.benchmark import Artefacts, Providers  # noqa: E402
from xaimetrics.benchmark._runner import _groups, build_group_prompts  # noqa: E402
from xaimetrics.consim._scoring import answer_schema  # noqa: E402
from xaimetrics.simulators import default_simulator  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=6, help="prompts measured (default: %(default)s)")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--output", default="xaimetrics-output", help="the demo's output folder")
    options = parser.parse_args()

    demo_parser = argparse.ArgumentParser()
    register(demo_parser.add_subparsers())
    args = demo_parser.parse_args(["demo", "--output", options.output])
    grid = demo_grid(args)
    artefacts = Artefacts(grid, Providers(), Path(options.output) / "artefacts")
    prompts = []
    for group in _groups(grid.settings()):
        prompts.extend(prompt for _, prompt in build_group_prompts(artefacts, group, {}))
        if len(prompts) >= options.prompts:
            break
    prompts = prompts[: options.prompts]
    threads = int(os.environ.get("XAIMETRICS_THREADS", os.cpu_count() or 1))
    results = {}
    for reuse in (True, False, True):  # warm-up of the model load folded into the first run; best of the two
        simulator = default_simulator(options.model, prefix_reuse=reuse, n_threads=threads)
        simulator.load()
        started = time.perf_counter()
        responses = [
            simulator.generate(list(p.messages), answer_schema=answer_schema(p, "probability"))
            for p in prompts
        ]
        wall = time.perf_counter() - started
        computed = sum(r.prompt_tokens for r in responses)
        conditioned = sum(int(r.metadata["prompt_tokens_total"]) for r in responses)
        best = results.get(reuse)
        if best is None or wall < best[0]:
            results[reuse] = (wall, computed, conditioned, [r.probabilities for r in responses])
    with_reuse, without = results[True], results[False]
    identical = with_reuse[3] == without[3]
    samples = sum(len(p.sample_ids) for p in prompts)
    print(f"{len(prompts)} prompts, {samples} evaluation samples, model {options.model}, {threads} threads")
    print(f"load average: {os.getloadavg()[0]:.2f}")
    print(f"prompt tokens computed: without reuse {without[1]:,}, with reuse {with_reuse[1]:,} "
          f"-> {without[1] / with_reuse[1]:.1f}x fewer (target >= 3x)")  # fmt: skip
    print(f"wall time: without reuse {without[0]:.1f} s, with reuse {with_reuse[0]:.1f} s "
          f"-> {without[0] / with_reuse[0]:.1f}x faster")  # fmt: skip
    print(f"probabilities identical with and without reuse: {identical}")


if __name__ == "__main__":
    main()
