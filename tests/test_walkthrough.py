"""The own-data walkthrough of docs/data.md, as a new user runs it: real CLI processes, in order, on a generated
Reuters-like file (columns ``body`` / ``category``, 7 imbalanced classes, labels with trailing spaces) and a model
folder that is not the demo's. Each step asserts its outcome; ``WALKTHROUGH_TIMES`` (env) names a JSON file that
receives each step's wall time.

Slow (a MiniLM fine-tuning and several encodings: minutes on 2 CPU cores): ``pytest --run-slow
tests/test_walkthrough.py``.
"""

from __future__ import annotations

import csv
import json
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src"

#: topic → its words; sizes are imbalanced as Reuters-8's (earn largest, ship smallest)
TOPICS = {
    "earn": (["profit", "dividend", "quarter", "shr", "net", "revenue", "earnings"], 70),
    "acq": (["acquire", "merger", "stake", "takeover", "buyout", "shareholders", "bid"], 45),
    "crude": (["oil", "barrel", "opec", "crude", "refinery", "pipeline", "petroleum"], 30),
    "trade": (["tariff", "export", "import", "deficit", "trade", "surplus", "quota"], 24),
    "money-fx": (["dollar", "yen", "currency", "exchange", "intervention", "forex", "mark"], 20),
    "interest": (["rate", "prime", "discount", "lending", "basis", "points", "cut"], 18),
    "ship": (["vessel", "port", "cargo", "tanker", "freight", "shipping", "strike"], 16),
}
FILLER = [
    "the",
    "company",
    "said",
    "in",
    "a",
    "statement",
    "on",
    "monday",
    "market",
    "analysts",
    "for",
    "year",
]
GRID = """\
datasets = ["{data}"]
models = ["{model}"]
text_column = "body"
label_column = "category"
methods = ["PCA", "NoExplanation"]
n_concepts = 5
prompt_types = ["NE2", "E2"]
seeds = [0, 1, 2]
simulators = ["lexical"]
n_lp = 7
n_ep = 14
n_fit = 150
balance = "relaxed"
"""


def write_reuters_like(path: Path, seed: int = 0) -> Path:
    """A CSV with columns ``body`` and ``category`` (labels with a trailing space on every other row)."""
    rng = random.Random(seed)
    rows = []
    for name, (words, count) in TOPICS.items():
        others = [w for other, (ws, _) in TOPICS.items() if other != name for w in ws]
        for i in range(count):
            body = rng.sample(words, 3) + rng.sample(others, 1) + rng.sample(FILLER, 5)
            rng.shuffle(body)
            rows.append({"body": " ".join(body) + f" ref {i}.", "category": name + (" " if i % 2 else "")})
    rng.shuffle(rows)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["body", "category"])
        writer.writeheader()
        writer.writerows(rows)
    return path


class Steps:
    """Runs ``xaimetrics …`` as real processes in ``folder`` and keeps each step's wall time and exit code."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.times: dict[str, dict[str, object]] = {}
        self.environment = {
            **os.environ,
            "PYTHONPATH": str(SRC),
            "XAIMETRICS_CACHE_DIR": str(folder / "cache"),
            "TOKENIZERS_PARALLELISM": "false",
        }

    def run(self, name: str, *args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
        command = [
            sys.executable,
            "-c",
            "import sys; from xaimetrics.cli import main; sys.exit(main())",
            *args,
        ]
        start = time.perf_counter()
        done = subprocess.run(
            command, cwd=self.folder, env=self.environment, capture_output=True, text=True, timeout=1800,
            check=False,
        )  # fmt: skip
        self.times[name] = {"seconds": round(time.perf_counter() - start, 1), "exit": done.returncode}
        assert done.returncode == expect, (
            f"{name}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
        return done

    def note(self, name: str, outcome: str) -> None:
        """Record what a step gave (for the closing note of issue #35)."""
        self.times[name]["outcome"] = outcome


DATA = ["--dataset", "reuters.csv", "--text-column", "body", "--label-column", "category"]


@pytest.mark.slow
def test_the_own_data_walkthrough(tmp_path: Path) -> None:
    write_reuters_like(tmp_path / "reuters.csv")
    steps = Steps(tmp_path)
    try:
        _walk(steps, tmp_path)
    finally:
        target = os.environ.get("WALKTHROUGH_TIMES")
        if target:
            Path(target).write_text(json.dumps(steps.times, indent=2), encoding="utf-8")


def _walk(steps: Steps, folder: Path) -> None:
    model = "models/reuters-minilm"
    # 1. fine-tune on the file: 7 classes (the trailing spaces are stripped, and said), saved in our own folder
    done = steps.run(
        "finetune", "finetune", *DATA, "--output", model, "--n-train", "0", "--epochs", "3", "--n-eval", "0",
        "--no-progress", "--json",
    )  # fmt: skip
    metadata = json.loads(done.stdout[done.stdout.index("{") :])
    assert sorted(metadata["class_names"]) == sorted(TOPICS), metadata["class_names"]
    assert "had surrounding spaces and are read without them" in done.stderr
    assert metadata["test_accuracy"] > 1 / len(TOPICS), metadata["test_accuracy"]
    assert (folder / model / "config.json").is_file()
    steps.note("finetune", f"{len(metadata['class_names'])} classes, test accuracy {metadata['test_accuracy']:.3f}, "
               f"macro-F1 {metadata.get('test_macro_f1', float('nan')):.3f}")  # fmt: skip

    # 2. one ConSim setting with the lexical reader, at the head input, with per-class lines
    done = steps.run(
        "consim", "consim", *DATA, "--model", model, "--method", "pca", "--n-concepts", "5", "--prompt-type", "E2",
        "--baseline", "--simulator", "lexical", "--balance", "relaxed", "--n-lp", "7", "--n-ep", "14",
        "--fit-samples", "150", "--no-progress",
    )  # fmt: skip
    assert any(line.startswith("E2 ") for line in done.stdout.splitlines()), done.stdout
    assert "Per class of the model's predictions" in done.stdout and "  E2: " in done.stdout
    steps.note(
        "consim", " | ".join(line.strip() for line in done.stdout.splitlines() if line[:3] in ("NE2", "E2 "))
    )

    # 3. the same at an inner layer (MiniLM has 6: 0 … 5), and a layer it does not have
    done = steps.run(
        "consim --layer 4", "consim", *DATA, "--model", model, "--method", "pca", "--n-concepts", "5",
        "--prompt-type", "E2", "--simulator", "lexical", "--balance", "relaxed", "--n-lp", "7", "--n-ep", "14",
        "--fit-samples", "150", "--layer", "4", "--no-progress",
    )  # fmt: skip
    assert "Activations at bert.encoder.layer.4" in done.stderr
    steps.note(
        "consim --layer 4", " | ".join(line.strip() for line in done.stdout.splitlines() if line[:3] == "E2 ")
    )
    done = steps.run(
        "consim --layer 6 (refused)", "consim", *DATA, "--model", model, "--layer", "6", expect=1
    )
    assert "an integer from 0 to 5" in done.stderr and "Traceback" not in done.stderr
    steps.note("consim --layer 6 (refused)", done.stderr.strip().splitlines()[-1])

    # 4. a small grid on the file and the model, lexical reader; its report has the per-class tables
    (folder / "grid.toml").write_text(GRID.format(data="reuters.csv", model=model), encoding="utf-8")
    steps.run("benchmark run", "benchmark", "run", "grid.toml", "--output", "run", "--no-progress")
    with sqlite3.connect(folder / "run" / "results.sqlite") as connection:
        rows = connection.execute(
            "SELECT method, class_counts FROM results WHERE phase = 'evaluation'"
        ).fetchall()
    assert len(rows) == 6 and {m for m, _ in rows} == {"PCA", "NoExplanation"}
    assert all(set(json.loads(c)) <= set(TOPICS) for _, c in rows)
    report = (folder / "run" / "report.md").read_text(encoding="utf-8")
    assert "## Per class: PCA" in report and "## Per class: NoExplanation" in report
    steps.note(
        "benchmark run",
        f"{len(rows)} evaluation rows; "
        + " ".join(report.split("## Per class: PCA")[1].split("\n\n")[2].split("\n")[:12]),
    )

    # 5. the report rebuilt, and the ranking (the report's score, named)
    steps.run("benchmark report", "benchmark", "report", "--output", "run")
    done = steps.run("benchmark rank", "benchmark", "rank", "--output", "run")
    assert "PCA" in done.stdout and "NoExplanation" in done.stdout
    steps.note("benchmark rank", " / ".join(done.stdout.strip().splitlines()[:6]))

    # 6. detection with the word-overlap reader, on our columns and our model
    steps.run(
        "detection", "detection", *DATA, "--model", model, "--method", "pca", "--n-concepts", "5", "--n-fit",
        "150", "--concepts", "3", "--readers", "lexical", "--n-top", "2", "--n-quantile", "2", "--n-random", "4",
        "--n-hard", "4", "--output", "detection", "--no-progress",
    )  # fmt: skip
    detection_rows = (folder / "detection" / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(detection_rows) >= 3
    steps.note("detection", f"{len(detection_rows)} rows: " + " | ".join(detection_rows[:3])[:600])

    # 7. interpretability of the model's concepts (the reference corpus defaults to the same file)
    steps.run(
        "interpretability", "interpretability", "--encoder", "concepts", "--model", model, "--extractor", "PCA",
        "--n-concepts", "5", "--seeds", "2", *DATA, "--max-samples", "150", "--output", "interpretability",
    )  # fmt: skip
    assert any((folder / "interpretability").glob("*.json"))
    steps.note("interpretability", ", ".join(sorted(p.name for p in (folder / "interpretability").iterdir())))

    # 8. the concepts exported: words, top texts, directions
    steps.run(
        "export-concepts", "consim", *DATA, "--model", model, "--method", "pca", "--n-concepts", "5",
        "--prompt-type", "E2", "--simulator", "lexical", "--balance", "relaxed", "--n-lp", "7", "--n-ep", "14",
        "--fit-samples", "150", "--export-concepts", "concepts.json", "--no-progress",
    )  # fmt: skip
    concepts = json.loads((folder / "concepts.json").read_text(encoding="utf-8"))
    records = concepts if isinstance(concepts, list) else concepts.get("concepts", [])
    assert len(records) == 5 and all(r["top_texts"] and r["direction"] for r in records)
    steps.note("export-concepts", f"{len(records)} concepts; concept 0: {records[0]['description']}")
