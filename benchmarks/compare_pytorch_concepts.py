"""Compare xaimetrics.conceptmetrics with PyC (``pytorch-concepts``) on the same inputs: numbers and speed.

On demand (not part of the test suite)::

    python benchmarks/compare_pytorch_concepts.py            # installs PyC into a side venv if needed
    python benchmarks/compare_pytorch_concepts.py --no-venv  # use the current interpreter (PyC installed)

The side venv is created with ``--system-site-packages`` (it reuses the installed torch) and PyC is installed
with a pip constraint pinning torch to the running version, so the install can never replace torch.

Printed: every result key with both numbers and whether they agree, then the time of one epoch
(update over batches + compute) for both, as a ratio ours / PyC measured in the same run.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYC_REQUIREMENT = "pytorch-concepts==1.0.0a7"
ROOT = Path(__file__).resolve().parents[1]

LABELS = ["is_round", "color", "big", "shape", "shiny", "size", "material"]
CARDS = [1, 3, 1, 4, 1, 5, 2]
#: Keys whose definitions differ on purpose (see docs/conceptmetrics.md, "Summaries").
CLASS_WISE_SUMMARIES = {"SUMMARY-categorical_f1_macro", "SUMMARY-categorical_acc_macro"}


def _ensure_venv(venv: Path) -> Path:
    """Create the side venv and install PyC into it without touching torch; return its python."""
    import torch

    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    if not python.exists():
        print(f"creating {venv} (--system-site-packages)")
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    probe = subprocess.run([str(python), "-c", "import torch_concepts"], capture_output=True)
    if probe.returncode != 0:
        constraints = venv / "torch-constraint.txt"
        constraints.write_text(f"torch=={torch.__version__}\n")
        print(f"installing {PYC_REQUIREMENT} (torch pinned to {torch.__version__})")
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "-c", str(constraints), PYC_REQUIREMENT],
            check=True,
        )
    version = subprocess.run(
        [str(python), "-c", "import torch; print(torch.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if version != torch.__version__:
        raise SystemExit(f"the venv's torch is {version}, not {torch.__version__}: refusing to compare")
    return python


def _inputs(n: int, seed: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(n, sum(CARDS), generator=g) * 1.7 - 0.2
    columns = []
    for card in CARDS:
        if card == 1:
            columns.append((torch.rand(n, generator=g) < 0.4).float())
        else:
            columns.append(torch.randint(0, card, (n,), generator=g).float())
    return logits, torch.stack(columns, dim=1)


def _specs():
    from torchmetrics.classification import (
        BinaryAccuracy,
        BinaryAUROC,
        BinaryF1Score,
        MulticlassAccuracy,
        MulticlassF1Score,
    )

    return {
        "binary": {"acc": BinaryAccuracy, "f1": BinaryF1Score, "auroc": BinaryAUROC},
        "categorical": {
            "acc": (MulticlassAccuracy, {"average": "micro"}),
            "acc_macro": (MulticlassAccuracy, {"average": "macro"}),
            "f1_macro": (MulticlassF1Score, {"average": "macro"}),
        },
    }


def _epoch(metrics, batches, wrap):
    for logits, target in batches:
        metrics.update(*wrap(logits, target))
    return {key: value.item() for key, value in metrics.compute().items()}


def compare(n: int, batch_size: int, repeats: int) -> None:
    import torch
    import torch_concepts as pyc
    from torch_concepts.nn import ConceptMetrics as PycConceptMetrics

    if importlib.util.find_spec("xaimetrics") is None:
        sys.path.insert(0, str(ROOT / "src"))
    from xaimetrics.conceptmetrics import Annotations, ConceptMetrics

    torch.set_num_threads(1)
    logits, target = _inputs(n, seed=0)
    batches = list(zip(logits.split(batch_size), target.split(batch_size), strict=True))
    pyc_ann = pyc.Annotations(labels=LABELS, cardinalities=CARDS)
    pyc_target_ann = pyc_ann.to_concept_space()
    ours = ConceptMetrics(Annotations(LABELS, cardinalities=CARDS), per_concept=True, **_specs())
    theirs = PycConceptMetrics(annotations=pyc_ann, per_concept=True, **_specs())

    def plain(lg, tg):
        return lg, tg

    def annotated(lg, tg):
        return pyc.AnnotatedTensor(lg, pyc_ann), pyc.AnnotatedTensor(tg, pyc_target_ann)

    ours_values = _epoch(ours, batches, plain)
    pyc_values = _epoch(theirs, batches, annotated)
    print(
        f"\nnumbers on {n} samples, {len(batches)} batches, concepts {dict(zip(LABELS, CARDS, strict=True))}"
    )
    print(f"{'key':36s} {'xaimetrics':>11s} {'pyc':>11s} {'|diff|':>9s}  verdict")
    mismatches = 0
    for key in sorted(set(ours_values) | set(pyc_values)):
        a, b = ours_values.get(key, float("nan")), pyc_values.get(key, float("nan"))
        diff = abs(a - b)
        if key in CLASS_WISE_SUMMARIES:
            verdict = "differs by definition" if diff > 1e-6 else "agrees (by chance)"
        elif diff <= 1e-6:
            verdict = "agrees"
        else:
            verdict = "MISMATCH"
            mismatches += 1
        print(f"{key:36s} {a:11.6f} {b:11.6f} {diff:9.2e}  {verdict}")

    def timed(metrics, wrap) -> float:
        best = float("inf")
        for _ in range(repeats):
            metrics.reset()
            start = time.perf_counter()
            _epoch(metrics, batches, wrap)
            best = min(best, time.perf_counter() - start)
        return best

    t_ours, t_pyc = timed(ours, plain), timed(theirs, annotated)
    print(
        f"\nepoch time (best of {repeats}): xaimetrics {t_ours * 1e3:.1f} ms, pyc {t_pyc * 1e3:.1f} ms, ratio {t_ours / t_pyc:.2f}"
    )
    if mismatches:
        raise SystemExit(f"{mismatches} result(s) differ where the definitions agree")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--no-venv", action="store_true", help="run in this interpreter (PyC must be installed)"
    )
    parser.add_argument("--venv", type=Path, default=Path(tempfile.gettempdir()) / "xaimetrics-pyc-venv")
    parser.add_argument("--samples", type=int, default=4096)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.no_venv or importlib.util.find_spec("torch_concepts") is not None:
        compare(args.samples, args.batch_size, args.repeats)
        return
    python = _ensure_venv(args.venv)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
    )
    command = [str(python), __file__, "--no-venv", "--samples", str(args.samples)]
    command += ["--batch-size", str(args.batch_size), "--repeats", str(args.repeats)]
    raise SystemExit(subprocess.run(command, env=env).returncode)


if __name__ == "__main__":
    main()
