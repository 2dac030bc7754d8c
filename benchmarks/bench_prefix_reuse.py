"""Shared-prefix reuse for class probabilities: prompt tokens computed and wall time, with and without reuse.

On the demo grid's real prompts (demo classifier, concept methods, controls, anonymised E2 and NE2, the demo's
sample counts), the local GGUF simulator scores every evaluation sample as a continuation of the prompt:

- **with reuse** (the default): the prompt is read once, each sample's continuation from its KV state;
- **without reuse**: the prompt is read again for every sample (what a simulator without KV reuse pays).

Both runs give identical probabilities (checked here), so the ratio of prompt tokens computed is the saving.
The artefacts come from the demo's output folder (run ``xaimetrics demo`` first, or this builds them).

    PYTHONPATH=src python benchmarks/bench_prefix_reuse.py [--prompts 6] [--model qwen2.5-coder-0.5b-instruct]

``--layouts`` measures the prompt layouts instead (issue #32; no LLM is loaded): on the demo's grid over
``--seeds`` seeds, every prompt rendered in App. E's layout and in the cache layout, in grid order, and

- the share of the grid's prompt characters in a prefix shared with an earlier prompt of the grid
  (:func:`xaimetrics.consim._prefix.shared_prefix_share`; goal >= 60 % with the cache layout), for the demo's prompt
  types and for the paper's five (anonymised);
- the lexical reader's score of every setting in both layouts, averaged per seed, and a paired test over seeds.

    PYTHONPATH=src python benchmarks/bench_prefix_reuse.py --layouts [--seeds 8] [--json benchmarks/prompt_layout.json]
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
from xaimetrics.consim._scoring import ConSimPrompt, answer_schema  # noqa: E402
from xaimetrics.simulators import default_simulator  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=6, help="prompts measured (default: %(default)s)")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--output", default="xaimetrics-output", help="the demo's output folder")
    parser.add_argument("--layouts", action="store_true", help="measure the prompt layouts (no LLM)")
    parser.add_argument(
        "--seeds", type=int, default=8, help="--layouts: seeds of the grid (default: %(default)s)"
    )
    parser.add_argument("--json", default=None, help="--layouts: write the figures to this JSON file")
    parser.add_argument(
        "--methods", default=None, help="--layouts: comma-separated methods (default: the demo's)"
    )
    options = parser.parse_args()
    if options.layouts:
        return layouts(options)

    demo_parser = argparse.ArgumentParser()
    register(demo_parser.add_subparsers())
    args = demo_parser.parse_args(["demo", "--output", options.output])
    grid = demo_grid(args)
    artefacts = Artefacts(grid.artefact_config(), Providers(), Path(options.output) / "artefacts")
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


def ep_first(prompt: ConSimPrompt) -> ConSimPrompt:
    """A cache-layout prompt with the EP texts moved from the user message to just after the shared block (task,
    classes, LP block), the explanation after them and only the question left in the user message: the layout
    that would put the EP texts in the shared prefix. Measured here (its share), not offered (docs/consim.md)."""
    import dataclasses

    from xaimetrics.simulators import ChatMessage

    system, user = prompt.messages
    head, tail = system.content[: prompt.shared_prefix_chars], system.content[prompt.shared_prefix_chars :]
    moved = f"{head}\n\nThe samples to classify:\n{user.content}{tail}"
    question = "Answer for each sample to classify, one line 'Sample_<id>: <class>' each."
    return dataclasses.replace(prompt, messages=(ChatMessage("system", moved), ChatMessage("user", question)))


def layouts(options: argparse.Namespace) -> None:
    """The shared-prefix share and the lexical reader's scores in both layouts (module docstring).

    One set of artefacts (concept fits, selections) renders both layouts, so they differ in the order only.
    The figures are written after every seed (``--json``), so an interrupted run still reports the seeds done.
    """
    import dataclasses
    import json

    import numpy as np
    from scipy import stats

    from xaimetrics._demo import demo_providers
    from xaimetrics.consim import build_prompts, evaluate_prompts
    from xaimetrics.consim._prefix import shared_prefix_share
    from xaimetrics.simulators import LexicalSimulator

    demo_parser = argparse.ArgumentParser()
    register(demo_parser.add_subparsers())
    args = demo_parser.parse_args(["demo", "--output", options.output, "--no-progress"])
    changes: dict[str, object] = {"seeds": tuple(range(options.seeds)), "simulators": ("lexical",)}
    demo = demo_grid(args)
    if options.methods:
        changes["methods"] = tuple(options.methods.split(","))
        kept = {m: o for m, o in (demo.extractor_options or {}).items() if m in changes["methods"]}
        changes["extractor_options"] = kept or None
    base = dataclasses.replace(demo, **changes)
    wide = ("NE1-a", "E1-a", "NE2-a", "E2-a", "E3-a")
    grid = dataclasses.replace(base, prompt_types=tuple(dict.fromkeys((*base.prompt_types, *wide))))
    artefacts = Artefacts(grid.artefact_config(), demo_providers(args), Path(options.output) / "artefacts")
    reader = LexicalSimulator()
    sent: dict[str, list[tuple[str, ConSimPrompt]]] = {
        "paper": [],
        "cache": [],
        "ep_first": [],  # projected: the cache layout with the EP texts moved before the explanation
    }  # (label, prompt), grid order
    scores: dict[str, dict[tuple[int, str, str], float | None]] = {"paper": {}, "cache": {}}
    figures: dict[str, object] = {"methods": list(grid.methods), "n_lp": grid.n_lp, "n_ep": grid.n_ep,
                                  "max_sample_chars": grid.max_sample_chars}  # fmt: skip
    for seed in grid.seeds:
        for setting in grid.settings():
            if setting.seed != seed:
                continue
            samples = artefacts.samples(setting.dataset, setting.model, seed)
            _, pool = artefacts.aligned_data(setting.dataset, setting.model)
            explanation = artefacts.explanation(setting)
            for layout in ("paper", "cache"):
                (prompt,) = build_prompts(
                    samples, explanation, [setting.label], model=artefacts.model(setting.dataset, setting.model),
                    class_names=list(pool.class_names), max_sample_chars=grid.max_sample_chars, layout=layout,
                )  # fmt: skip
                sent[layout].append((setting.label, prompt))
                if layout == "cache":
                    sent["ep_first"].append((setting.label, ep_first(prompt)))
                (result,) = evaluate_prompts([prompt], reader)
                scores[layout][(seed, setting.method, setting.label)] = result.score
        for name, types in (("demo", base.prompt_types), ("paper five", wide)):
            shares = {
                layout: shared_prefix_share([p for label, p in sent[layout] if label in types])
                for layout in sent
            }
            figures[name] = {"prompt_types": list(types), "seeds_done": seed + 1, **{
                f"share_{layout}": share for layout, share in shares.items()}}  # fmt: skip
        keys = [k for k in scores["paper"] if k[2] in base.prompt_types and scores["paper"][k] is not None]
        done = sorted({k[0] for k in keys})
        mean = {
            layout: np.array([np.mean([scores[layout][k] for k in keys if k[0] == s]) for s in done])
            for layout in scores
        }
        difference = mean["cache"] - mean["paper"]
        p_value = stats.ttest_rel(mean["cache"], mean["paper"]).pvalue if np.ptp(difference) > 0 else None
        figures["lexical"] = {
            "prompt_types": list(base.prompt_types), "seeds": done, "settings": len(keys),
            "settings_equal": sum(scores["paper"][k] == scores["cache"][k] for k in keys),
            "mean_paper": float(mean["paper"].mean()), "mean_cache": float(mean["cache"].mean()),
            "seed_differences": difference.tolist(), "paired_t_p": p_value,
        }  # fmt: skip
        print(json.dumps({"seed": seed, **figures}), flush=True)
        if options.json:
            Path(options.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
