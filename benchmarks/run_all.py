"""Run every benchmark with the same conventions and publish the figures: ``results.md`` and ``results.json``.

    PYTHONPATH=src python benchmarks/run_all.py            # the full run → benchmarks/results.md (+ .json)
    PYTHONPATH=src python benchmarks/run_all.py --quick    # smoke run → benchmarks/results-quick.md (+ .json)

Each benchmark runs in its own process (``bench_*.py --json``) with the conventions of ``_harness.py``:
warm-up on every side, the same number of alternated rounds, medians with min–max, torch threads fixed, the
load average before and after. The reference libraries that need a side environment (Interpreto, Quantus,
PyC when it is not installed) are used in the full run and skipped by ``--quick`` unless ``--refs`` is given;
when they are asked for and cannot be installed, the benchmark fails loudly and this script exits 1.
A missed goal does not change the exit status (it is a measurement); a benchmark that crashes does.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import ROOT, environment, load_average  # noqa: E402
from goals import GOALS  # noqa: E402

#: (name, script), in the order they run
BENCHMARKS: list[tuple[str, str]] = [
    ("coherence", "bench_coherence.py"),
    ("concept_pipeline", "bench_concept_pipeline.py"),
    ("grid", "bench_grid.py"),
    ("fidelity", "bench_fidelity.py"),
    ("conceptmetrics", "compare_pytorch_concepts.py"),
]


def run_one(script: str, arguments: list[str], json_path: Path, log: Any) -> tuple[int, float]:
    """Run one benchmark, streaming its output to the console and the log; return (exit code, seconds)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    command = [sys.executable, str(HERE / script), *arguments, "--json", str(json_path)]
    print(f"\n$ {' '.join(command[1:])}", flush=True)
    log.write(f"\n$ {' '.join(command[1:])}\n")
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT
    )
    for line in process.stdout:
        sys.stdout.write(line)
        log.write(line)
    code = process.wait()
    return code, time.perf_counter() - started


def cell(text: Any) -> str:
    """Text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(summary: dict[str, Any]) -> str:
    """``results.md``: the machine, the goals table and every benchmark's rows."""
    env = summary["environment"]
    versions = ", ".join(f"{name} {version}" for name, version in env["versions"].items())
    lines = [
        "# Benchmark results",
        "",
        f"Written by `{summary['command']}` — do not edit by hand; goals and verdicts are explained in",
        "[README.md](README.md).",
        "",
        f"- **Date**: {env['date']}; commit `{env['commit']}`{' (with uncommitted changes)' if env['dirty'] else ''}",
        f"- **Machine**: {env['machine']}; {env['cpu']}; {env['cpus']} CPUs; {env['memory_gib']} GiB",
        f"- **Python** {env['python']}; {versions}",
        (
            f"- **Conventions**: torch threads {summary['threads']}; every side warmed up, the same alternated rounds, "
            "median (min–max, n rounds); ratios are medians of per-round ratios"
        ),
        f"- **Load average** (1/5/15 min): {summary['load_start']} at the start, {summary['load_end']} at the end",
        f"- **Wall time**: {summary['wall_s'] / 60:.1f} min",
        "",
        "## Goals",
        "",
        "| goal | target | figure | verdict | why |",
        "|---|---|---|---|---|",
    ]
    found: dict[str, dict[str, Any]] = {}
    for bench in summary["benchmarks"]:
        found.update((bench.get("report") or {}).get("goals", {}))
    for goal_id, (statement, _) in GOALS.items():
        goal = found.get(
            goal_id, {"figure": "—", "verdict": "not measured", "why": "benchmark not run or failed"}
        )
        cells = [statement, goal["figure"], goal["verdict"], goal["why"]]
        lines.append(f"| `{goal_id}` | " + " | ".join(cell(c) for c in cells) + " |")
    for bench in summary["benchmarks"]:
        report = bench.get("report")
        lines += ["", f"## {report['title'] if report else bench['name']} (`{bench['script']}`)", ""]
        if bench["skipped"]:
            lines.append(f"Skipped: {bench['skipped']}.")
            continue
        lines.append(
            f"Exit code {bench['exit_code']}; {bench['wall_s']:.0f} s; load average {bench['load_before']} before, "
            f"{bench['load_after']} after."
        )
        if not report:
            lines.append("No report (the benchmark failed; see the log).")
            continue
        if report["settings"]:
            lines += ["", "Settings: " + ", ".join(f"{k} {v}" for k, v in report["settings"].items()) + "."]
        lines += ["", "| measurement | value |", "|---|---|"]
        lines += [f"| {cell(row['label'])} | {cell(row['value'])} |" for row in report["rows"]]
        if report["notes"]:
            lines += [""] + [f"- {note}" for note in report["notes"]]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="smaller sizes; no side environments unless --refs"
    )
    parser.add_argument(
        "--refs", action="store_true", help="use the reference side environments with --quick"
    )
    parser.add_argument("--no-refs", action="store_true", help="never build reference side environments")
    parser.add_argument("--only", nargs="*", default=None, help=f"some of {[name for name, _ in BENCHMARKS]}")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--output", type=Path, default=None, help="default benchmarks/results[-quick].md")
    args = parser.parse_args()
    refs = not args.no_refs and (args.refs or not args.quick)
    output = args.output or HERE / ("results-quick.md" if args.quick else "results.md")
    common = ["--repeats", str(args.repeats), "--threads", str(args.threads)] + (
        ["--quick"] if args.quick else []
    )
    summary: dict[str, Any] = {
        "command": "python benchmarks/run_all.py" + "".join(f" {a}" for a in sys.argv[1:]),
        "environment": environment(),
        "threads": args.threads,
        "refs": refs,
        "load_start": load_average(),
        "benchmarks": [],
    }
    started = time.perf_counter()
    failed = []
    log_path = output.with_suffix(".log")
    with open(log_path, "w") as log:
        for name, script in BENCHMARKS:
            if args.only is not None and name not in args.only:
                continue
            arguments = list(common)
            skipped = ""
            if name == "fidelity" and not refs:
                arguments.append("--no-refs")
            if name == "conceptmetrics":
                if importlib.util.find_spec("torch_concepts") is not None:
                    arguments.append("--no-venv")
                elif not refs:
                    skipped = "pytorch-concepts is not installed and side environments are off"
            entry: dict[str, Any] = {"name": name, "script": script, "skipped": skipped, "report": None}
            if not skipped:
                json_path = output.with_name(f".{output.stem}-{name}.json")
                json_path.unlink(missing_ok=True)
                entry["load_before"] = load_average()
                entry["exit_code"], entry["wall_s"] = run_one(script, arguments, json_path, log)
                entry["load_after"] = load_average()
                if json_path.exists():
                    entry["report"] = json.loads(json_path.read_text())
                    json_path.unlink()
                if entry["exit_code"] != 0 or entry["report"] is None:
                    failed.append(name)
            summary["benchmarks"].append(entry)
    summary["wall_s"] = time.perf_counter() - started
    summary["load_end"] = load_average()
    summary["failed"] = failed
    output.write_text(markdown(summary))
    output.with_suffix(".json").write_text(json.dumps(summary, indent=1))
    print(f"\nwrote {output.relative_to(ROOT) if output.is_relative_to(ROOT) else output} "
          f"and its .json in {summary['wall_s'] / 60:.1f} min; load {summary['load_start']} → {summary['load_end']}")  # fmt: skip
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
