"""The HTTP fault suite, before and after the openai client's own retries replaced the hand-written ones.

One batch of chat calls (``OpenAICompatibleSimulator.generate_batch``) to the fake OpenAI server over real
HTTP, with faults injected between answered requests: rate limits with ``Retry-After``, 5xx without it, 409,
dropped connections, a delay past the client's timeout, a body that is not JSON and 200 bodies that are not a
completion. For each side (a source tree: ``--baseline-src``, by default the commit before the change, against
this tree's ``src``) it counts, in a fresh process per round:

- **lost** answers (calls that ended with an error), **duplicated** ones (a call answered twice: the server
  served more answers than calls, beyond the timed-out request it still answered) and **abandoned** ones
  (served by the server after the client's timeout: the one ``Fault.delay`` here, on both sides);
- **HTTP requests** (answered + faulted) and the **attempts** the simulator reports;
- the **wall time** of the batch (most of it is the backoff waits).

Rounds alternate the two sides; medians with min–max. The baseline is exported with ``git archive`` into a
temporary folder.

    PYTHONPATH=src:tests python benchmarks/bench_retries.py [--rounds 3] [--baseline-commit 8345adf]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: the faults, each followed by ``GAP`` answered requests (so that no call runs out of its 4 retries)
FAULTS = (
    "Fault.rate_limit(0.05)", "Fault.server_error(503)", "Fault.server_error(500)", "Fault.drop()",
    "Fault.delay(1.0)", "Fault.garbage()", "Fault.completion(choices='oops')", "Fault.completion(content=None)",
    "Fault.server_error(409)", "Fault.json([1, 2])", "Fault.rate_limit(None)", "Fault.server_error(502)",
)  # fmt: skip
GAP = 3
CALLS = 60
CONCURRENCY = 4

_SIDE = r"""
import json, sys, time
from fake_openai_server import FakeOpenAIServer, Fault, constant_responder
from xaimetrics.simulators import ChatMessage, OpenAICompatibleSimulator
faults, gap, calls, concurrency = json.loads(sys.argv[1])
with FakeOpenAIServer(constant_responder("Sample_1: yes")) as server:
    for text in faults:
        server.inject(eval(text, {"Fault": Fault}), *[None] * gap)
    sim = OpenAICompatibleSimulator("m", base_url=server.base_url, api_key="sk-bench", timeout=0.5,
                                    max_retries=4, max_concurrency=concurrency)
    conversations = [[ChatMessage("user", f"question {i}")] for i in range(calls)]
    started = time.perf_counter()
    responses = sim.generate_batch(conversations)
    wall = time.perf_counter() - started
    answered = sum(r.error is None and r.text == "Sample_1: yes" for r in responses)
    print(json.dumps({
        "wall_s": wall, "lost": calls - answered, "abandoned": server.completion_count - answered,
        "duplicated": server.completion_count - answered - sum(f.startswith("Fault.delay") for f in faults),
        "requests": server.chat_request_count, "attempts": sum(r.attempts for r in responses),
        "faults_left": server.pending_faults,
    }))
"""


def _export(commit: str, into: Path) -> Path:
    archive = into / "baseline.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", commit, "src"], stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def _side(src: Path) -> dict[str, float]:
    environment = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{ROOT / 'tests'}"}
    argument = json.dumps([list(FAULTS), GAP, CALLS, CONCURRENCY])
    done = subprocess.run(
        [sys.executable, "-c", _SIDE, argument], env=environment, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline-commit", default="8345adf", help="the tree with the hand-written retries")
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "retries.json")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        sides = {"before": _export(options.baseline_commit, Path(folder)), "after": ROOT / "src"}
        rounds: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
        for r in range(options.rounds):
            for name in list(sides)[r % 2 :] + list(sides)[: r % 2]:  # alternate the order
                rounds[name].append(_side(sides[name]))
    summary = {}
    for name, results in rounds.items():
        walls = [x["wall_s"] for x in results]
        summary[name] = {
            "wall_s_median": statistics.median(walls), "wall_s_min": min(walls), "wall_s_max": max(walls),
            **{k: max(x[k] for x in results) for k in ("lost", "duplicated", "abandoned", "faults_left")},
            **{k: statistics.median(x[k] for x in results) for k in ("requests", "attempts")},
        }  # fmt: skip
    ratio = statistics.median(
        a["wall_s"] / b["wall_s"] for a, b in zip(rounds["after"], rounds["before"], strict=True)
    )
    report = {
        "calls": CALLS, "faults": len(FAULTS), "concurrency": CONCURRENCY, "rounds": options.rounds,
        "baseline_commit": options.baseline_commit, "sides": summary, "wall_ratio_after_over_before": ratio,
    }  # fmt: skip
    options.json.write_text(json.dumps(report, indent=2) + "\n")
    for name, row in summary.items():
        print(
            f"{name:6s} lost {row['lost']} duplicated {row['duplicated']} abandoned {row['abandoned']} requests {row['requests']:.0f} "
            f"attempts {row['attempts']:.0f} wall {row['wall_s_median']:.2f} s "
            f"({row['wall_s_min']:.2f}–{row['wall_s_max']:.2f})"
        )
    print(f"wall after / before: {ratio:.2f}×")


if __name__ == "__main__":
    main()
