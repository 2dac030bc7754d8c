"""Compare xaimetrics.conceptmetrics with PyC (``pytorch-concepts``) on the same inputs: numbers and speed.

On demand (not part of the test suite)::

    python benchmarks/compare_pytorch_concepts.py            # installs PyC into a side venv if needed
    python benchmarks/compare_pytorch_concepts.py --no-venv  # use the current interpreter (PyC installed)

The side venv reuses the active environment's packages and installs PyC under constraints frozen from it,
so the install can never replace torch (``_sideenv.side_environment``).

Printed: every result key with both numbers and whether they agree, then the time of one epoch
(update over batches + compute) for both, warmed up and alternated (``_harness.measure``), as the median
ratio ours / PyC measured in the same rounds.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _harness import Report, Stats, common_arguments, measure, ratio, set_threads
from _sideenv import side_environment

PYC_REQUIREMENT = "pytorch-concepts==1.0.0a7"
ROOT = Path(__file__).resolve().parents[1]

LABELS = ["is_round", "color", "big", "shape", "shiny", "size", "material"]
CARDS = [1, 3, 1, 4, 1, 5, 2]
#: Keys whose definitions differ on purpose (see docs/conceptmetrics.md, "Summaries").
CLASS_WISE_SUMMARIES = {"SUMMARY-categorical_f1_macro", "SUMMARY-categorical_acc_macro"}


def _ensure_venv(venv: Path) -> Path:
    """The side environment with PyC on top of the active environment's torch (see ``_sideenv``)."""
    return side_environment(venv, no_deps=[], requirements=[PYC_REQUIREMENT], check="import torch_concepts")


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


def compare(n: int, batch_size: int, repeats: int, report: Report) -> None:
    import torch_concepts as pyc
    from torch_concepts.nn import ConceptMetrics as PycConceptMetrics

    if importlib.util.find_spec("xaimetrics") is None:
        sys.path.insert(0, str(ROOT / "src"))
    from xaimetrics.conceptmetrics import Annotations, ConceptMetrics

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
    n_keys = len(set(ours_values) | set(pyc_values))
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

    def epoch(metrics, wrap):
        def run():
            metrics.reset()
            return _epoch(metrics, batches, wrap)

        return run

    timings, _ = measure({"xaimetrics": epoch(ours, plain), "pyc": epoch(theirs, annotated)}, repeats=repeats)
    report.settings = {"samples": n, "batches": len(batches), "repeats": repeats, "pyc": PYC_REQUIREMENT}
    report.row(
        "epoch: xaimetrics ConceptMetrics", Stats([t * 1e3 for t in timings["xaimetrics"].samples]), "ms", 1
    )
    report.row("epoch: PyC ConceptMetrics", Stats([t * 1e3 for t in timings["pyc"].samples]), "ms", 1)
    report.row("xaimetrics / PyC (per-round ratio)", ratio(timings["xaimetrics"], timings["pyc"]), "×")
    report.row(
        "result keys equal where the definitions agree",
        f"{n_keys - mismatches - len(CLASS_WISE_SUMMARIES)}/{n_keys - len(CLASS_WISE_SUMMARIES)}",
    )
    if mismatches:
        raise SystemExit(f"{mismatches} result(s) differ where the definitions agree")


def main() -> None:
    parser = common_arguments(
        argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    )
    parser.add_argument(
        "--no-venv", action="store_true", help="run in this interpreter (PyC must be installed)"
    )
    parser.add_argument("--venv", type=Path, default=Path(tempfile.gettempdir()) / "xaimetrics-pyc-venv")
    parser.add_argument("--samples", type=int, default=4096)
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()
    set_threads(args.threads)
    if args.no_venv or importlib.util.find_spec("torch_concepts") is not None:
        report = Report("conceptmetrics", "ConceptMetrics vs PyC (pytorch-concepts): values and epoch time")
        compare(args.samples // (4 if args.quick else 1), args.batch_size, args.repeats, report)
        report.finish(args.json)
        return
    python = _ensure_venv(args.venv)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
    )
    command = [str(python), __file__, "--no-venv", *sys.argv[1:]]
    raise SystemExit(subprocess.run(command, env=env).returncode)


if __name__ == "__main__":
    main()
