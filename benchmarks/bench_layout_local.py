"""The cache-friendly prompt layout against the paper's, read by the local LLM (issue #32).

The demo's providers and task (BBC News, ``minilm+``, NMF and NoExplanation, anonymised NE2-a / E2-a, 10 + 10
samples cut at 150 characters, class probabilities) run twice on the same seeds, once per ``prompt_layout``, with
the local GGUF simulator (llama.cpp in process, which reuses the KV cache of a prompt's prefix shared with the one
before it). Reports per layout the wall time, the prompt tokens and the prompt tokens the backend reused, and the
seed-level paired difference of the explained settings' scores (cache − paper: mean, Student-t interval, two-sided
exact sign-flip p; NoExplanation's prompts are the same in both layouts).
Writes ``benchmarks/prompt_layout_local.json`` with the commit, machine and date. Resumable (one store a layout).

    PYTHONPATH=src python benchmarks/bench_layout_local.py --output /tmp/layout-local --seeds 5
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "benchmarks")]

from _harness import environment  # noqa: E402

from xaimetrics._demo import demo_providers  # noqa: E402
from xaimetrics.benchmark import Grid, ResultsStore, run_grid  # noqa: E402
from xaimetrics.stats import sign_flip_test, t_interval  # noqa: E402

LAYOUTS = ("paper", "cache")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default="layout-local", help="the run's folder (resumable)")
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "prompt_layout_local.json"))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument(
        "--server", action="store_true",
        help="read through llama.cpp's OpenAI-compatible server (started here, text answers) instead of in process",
    )  # fmt: skip
    args = parser.parse_args()
    if args.server:
        with _server() as url:
            _run(args, simulator="openai:qwen2.5-coder-0.5b", scoring="accuracy", base_url=url)
    else:
        _run(args, simulator="local", scoring="probability", base_url=None)


@contextlib.contextmanager
def _server() -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server (llama-cpp-python) on the default GGUF, on a free port."""
    from xaimetrics.simulators._assets import load_default_gguf

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        sys.executable, "-m", "xaimetrics.simulators._llama_server", "--model", str(load_default_gguf()),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "2", "--seed", "0",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except OSError:
                time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def _run(args: argparse.Namespace, *, simulator: str, scoring: str, base_url: str | None) -> None:
    providers = demo_providers(argparse.Namespace(dataset="bbc_news", no_progress=True))
    base = Grid(
        datasets=("bbc_news",), models=("minilm+",), methods=("NMF", "NoExplanation"), n_concepts=20,
        prompt_types=("NE2-a", "E2-a"), seeds=tuple(range(args.seeds)), simulators=(simulator,), n_lp=10, n_ep=10,
        n_fit=2000, max_sample_chars=150, balance="relaxed", scoring=scoring, concurrency=1, base_url=base_url,
        **providers.grid_extras(),
    )  # fmt: skip
    out = Path(args.output) / ("server" if base_url else "in-process")
    out.mkdir(parents=True, exist_ok=True)
    frames, runs = {}, {}
    for layout in LAYOUTS:
        started = time.perf_counter()
        summary = run_grid(
            base.replace(prompt_layout=layout), out / f"{layout}.sqlite", providers=providers,
            artefact_dir=out / "artefacts", progress=False,
        )  # fmt: skip
        with ResultsStore(out / f"{layout}.sqlite", read_only=True) as store:
            frame = store.to_frame()
        frames[layout] = frame
        runs[layout] = {
            "settings_run": summary.completed,  # the wall time only of a run that asked (a rerun reads the store)
            "wall_s": round(time.perf_counter() - started, 1) if summary.completed else None,
            "latency_s_sum": round(float(frame["latency_s"].sum()), 1),
            "latency_s_explained": round(float(frame.loc[frame["method"] != "NoExplanation", "latency_s"].mean()), 2),
            "prompt_tokens": int(frame["prompt_tokens"].sum()),
            "reused_prompt_tokens": int(frame["cached_prompt_tokens"].sum()),
        }  # fmt: skip
    columns = ["seed", "method", "prompt_type"]
    paired = frames["cache"].merge(frames["paper"], on=columns, suffixes=("_cache", "_paper"))
    score = "expected_accuracy" if scoring == "probability" else "score"  # accuracy: text answers
    paired["difference"] = paired[f"{score}_cache"] - paired[f"{score}_paper"]
    # the layout moves only the explanation: NoExplanation's prompts are the same in both (their difference is 0)
    explained = paired[paired["method"] != "NoExplanation"]
    by_seed = explained.groupby("seed")["difference"].mean()
    mean, low, high = t_interval(by_seed.to_numpy())
    record = {
        "grid": base.to_dict(), "runs": runs, "n_settings_paired": len(paired), "n_seeds": len(by_seed),
        "baseline_identical": bool((paired.loc[paired["method"] == "NoExplanation", "difference"] == 0).all()),
        "score": score, "reader": simulator,
        "difference_cache_minus_paper": {"mean": mean, "low": low, "high": high,
                                         "p_two_sided": sign_flip_test(by_seed.to_numpy())},
        "by_seed": {str(k): float(v) for k, v in by_seed.items()},
        "environment": environment(),
    }  # fmt: skip
    target = Path(args.json)
    if base_url:
        target = target.with_name(target.stem + "_server.json")
    target.write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")
    print(
        json.dumps(
            {k: record[k] for k in ("runs", "difference_cache_minus_paper", "n_settings_paired")}, indent=2
        )
    )


if __name__ == "__main__":
    main()
