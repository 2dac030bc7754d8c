"""llama.cpp weights policy and crash isolation: tokens/s of the offline model, and the worker's overhead.

Issue #20 chose where llama.cpp keeps the weights of the offline Qwen2.5-Coder-0.5B GGUF:

- **portable**: the plain CPU buffer (``use_extra_bufts = false``; what ``portable=True`` loads);
- **accelerated**: llama.cpp's default, its extra buffer types (weights repacked for its AVX2 / AVX-512
  kernels; on CPUs with AMX, the AMX buffer that crashed in issue #20).

Both are loaded in this process, in alternated rounds, and timed on the same tokens: prompt processing (one
``eval`` of ``--prompt-tokens`` tokens from an empty context) and decoding (``--decode-tokens`` single-token
evals after a short prompt). Then the crash isolation: one class-probability call (the simulator's ConSim
path) in a worker process (``isolate=True``, the default) against the same call in-process; the ratio is the
cost of the isolation per call. The CPU's features are printed with the figures (the accelerated path differs
by CPU: where AMX is present, ``auto`` picks portable and this script measures both anyway unless it crashes
— each side then runs in its own subprocess with ``--side``).

    PYTHONPATH=src python benchmarks/bench_llama_weights.py [--repeats 3] [--threads 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from _harness import Report, Stats, common_arguments, measure, ratio  # noqa: E402

from xaimetrics.simulators import AnswerSchema, ChatMessage, LlamaCppSimulator  # noqa: E402
from xaimetrics.simulators._cpu import cpu_info  # noqa: E402

TEXT = (
    "The central bank raised interest rates again on Thursday, citing persistent inflation in services, "
    "while the striker's late goal sealed the league title for the visitors after a tense second half. "
)
MESSAGES = (
    ChatMessage("system", "Predict the topic a classifier gives each news text. Classes: business, sport."),
    ChatMessage("user", "\n".join(f"Sample_{i}: {TEXT[i * 7 :]}" for i in range(6))),
)
SCHEMA = AnswerSchema(tuple(str(i) for i in range(6)), ("business", "sport"), probabilities=True)


def _speed(policies: list[bool], threads: int, prompt_tokens: int, decode_tokens: int, repeats: int) -> dict:
    """Prompt-processing and decode seconds of each weights policy, loaded side by side, alternated rounds."""
    sides = {}
    for portable in policies:
        sim = LlamaCppSimulator(portable=portable, isolate=False, n_threads=threads, n_ctx=2048, n_batch=512)
        llama = sim._model()
        tokens = llama.tokenize((TEXT * 40).encode(), add_bos=True, special=False)
        prompt, decode = tokens[:prompt_tokens], tokens[prompt_tokens : prompt_tokens + decode_tokens]

        def read_prompt(llama=llama, prompt=prompt) -> None:
            llama.reset()
            llama.eval(prompt)

        def decode_one_by_one(llama=llama, prompt=prompt, decode=decode) -> None:
            llama.reset()
            llama.eval(prompt[:16])
            for token in decode:
                llama.eval([token])

        name = "portable" if portable else "accelerated"
        sides[f"{name} prompt"], sides[f"{name} decode"] = read_prompt, decode_one_by_one
    timings, _ = measure(sides, repeats=repeats)
    return {name: stats.samples for name, stats in timings.items()}


def _sides(
    options: argparse.Namespace, which: str, site: str | None = None, repeats: int | None = None
) -> dict | None:
    """Timings in a subprocess (a crash of the accelerated path is then a result, not the end of the run);
    ``site``: a folder holding another llama-cpp-python build, put first on the path."""
    command = [sys.executable, __file__, "--side", which, "--repeats", str(repeats or options.repeats),
               "--threads", str(options.threads), "--prompt-tokens", str(options.prompt_tokens),
               "--decode-tokens", str(options.decode_tokens)]  # fmt: skip
    env = dict(os.environ)
    if site:
        env["PYTHONPATH"] = os.pathsep.join([site, env.get("PYTHONPATH", "")])
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        print(f"  measuring {which} failed ({done.returncode}): {done.stderr[-500:]}")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = common_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]), repeats=5)
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--decode-tokens", type=int, default=64)
    parser.add_argument("--side", choices=("both", "portable"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--other-build", default=None, metavar="SITE",
        help="a folder with another llama-cpp-python build (pip install --target SITE --no-deps WHEEL), e.g. "
        "the portable GGML_NATIVE=OFF wheel: its portable weights are timed against this build's, rounds "
        "alternated",
    )  # fmt: skip
    options = parser.parse_args()
    threads = options.threads if options.threads > 1 else 2
    if options.side:
        policies = [True, False] if options.side == "both" else [True]
        samples = _speed(policies, threads, options.prompt_tokens, options.decode_tokens, options.repeats)
        print(json.dumps(samples))
        return
    options.threads = threads
    report = Report("llama_weights", "llama.cpp weights policy and crash isolation (offline 0.5B GGUF)")
    cpu = cpu_info()
    report.settings = {"cpu": cpu.summary(), "threads": threads, "prompt_tokens": options.prompt_tokens,
                       "decode_tokens": options.decode_tokens, "repeats": options.repeats}  # fmt: skip
    print(f"CPU: {cpu.summary()}; {threads} threads")
    samples = _sides(options, "both")
    if samples is None:
        report.note(
            "the accelerated weights crashed or failed on this CPU: only the portable ones are measured"
        )
        samples = _sides(options, "portable") or {}
    for name in ("portable", "accelerated"):
        if f"{name} prompt" not in samples:
            continue
        pp = Stats([options.prompt_tokens / s for s in samples[f"{name} prompt"]])
        tg = Stats([options.decode_tokens / s for s in samples[f"{name} decode"]])
        report.row(f"{name}: prompt processing ({options.prompt_tokens} tokens)", pp, "tok/s", 1)
        report.row(f"{name}: decode ({options.decode_tokens} single-token evals)", tg, "tok/s", 1)
    if "accelerated prompt" in samples:
        for what in ("prompt", "decode"):  # seconds portable / accelerated, paired round by round
            report.row(
                f"{what} time, portable / accelerated",
                ratio(Stats(samples[f"portable {what}"]), Stats(samples[f"accelerated {what}"])),
                "×",
                3,
            )

    if options.other_build:  # build against build, the portable weights on both, subprocess rounds alternated
        this, other = [], []
        for round_ in range(options.repeats):
            for site in (None, options.other_build) if round_ % 2 == 0 else (options.other_build, None):
                timings = _sides(options, "portable", site, repeats=1)
                if timings is not None:
                    (other if site else this).append(timings)
        for name, runs in (("this build", this), ("other build", other)):
            for what, count in (("prompt", options.prompt_tokens), ("decode", options.decode_tokens)):
                values = [count / s for run in runs for s in run[f"portable {what}"]]
                if values:
                    report.row(f"{name}, portable weights: {what} tok/s", Stats(values), "tok/s", 1)
        if this and other:
            for what in ("prompt", "decode"):
                report.row(
                    f"{what} time, other build / this build",
                    ratio(Stats([r[f"portable {what}"][0] for r in other]),
                          Stats([r[f"portable {what}"][0] for r in this])), "×", 3,
                )  # fmt: skip

    isolated = LlamaCppSimulator(n_threads=threads, n_ctx=2048, portable=True)
    in_process = LlamaCppSimulator(n_threads=threads, n_ctx=2048, portable=True, isolate=False)
    started = time.perf_counter()
    info = isolated.load()
    report.row("worker start: spawn + load + first decode", Stats([time.perf_counter() - started]), "s", 2)
    in_process.load()
    timings, answers = measure(
        {
            "isolated": lambda: isolated.generate(MESSAGES, answer_schema=SCHEMA).probabilities,
            "in-process": lambda: in_process.generate(MESSAGES, answer_schema=SCHEMA).probabilities,
        },
        repeats=options.repeats,
    )
    report.row("class-probability call, worker process", timings["isolated"], "s", 3)
    report.row("class-probability call, in-process", timings["in-process"], "s", 3)
    report.row("worker / in-process, per call", ratio(timings["isolated"], timings["in-process"]), "×", 3)
    report.note(
        f"worker info: {info}; identical probabilities: {answers['isolated'] == answers['in-process']}"
    )
    isolated.close()
    report.finish(options.json)


if __name__ == "__main__":
    main()
