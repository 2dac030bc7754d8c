"""Compare xaimetrics.conceptmetrics with PyC (``pytorch-concepts``) on the same inputs: numbers and speed.

On demand (not part of the test suite)::

    python benchmarks/compare_pytorch_concepts.py            # installs PyC into a side venv if needed
    python benchmarks/compare_pytorch_concepts.py --no-venv  # use the current interpreter (PyC installed)

The side venv reuses the active environment's packages and installs PyC under constraints frozen from it,
so the install can never replace torch (``_sideenv.side_environment``).

Printed: every result key with both numbers and whether they agree, then the time of one epoch
(update over batches + compute) for both, warmed up and alternated (``_harness.measure``), as the median
ratio ours / PyC measured in the same rounds. Then PyC's model-level functions (CaCE, residual effect,
interventions, TCAV, NEC, NCC, completeness) against ours: the largest absolute difference and the time
ratio ours / PyC of one call on the same inputs.
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


def _function_cases(n: int):
    """``{metric: (ours, pyc)}``: zero-argument calls of both sides on the same asymmetric inputs."""
    import torch
    from sklearn.metrics import f1_score
    from torch_concepts.nn import functional as F

    from xaimetrics import conceptmetrics as ours

    g = torch.Generator().manual_seed(7)
    low = torch.softmax(torch.randn(n, 10, generator=g), dim=1)
    high = torch.softmax(torch.randn(n, 10, generator=g) + torch.linspace(-1, 1, 10), dim=1)
    before, after = high.mean(0) - low.mean(0), (high.mean(0) - low.mean(0)) * torch.rand(10, generator=g)
    k = 32
    c_true = (torch.rand(n, k, generator=g) < torch.linspace(0.1, 0.9, k)).float()
    c_pred = (0.5 * c_true + 0.5 * torch.rand(n, k, generator=g)).round(decimals=2)
    head = torch.nn.Linear(k, 5)
    y = (torch.sigmoid(head(c_true)) > torch.rand(n, 5, generator=g)).long().detach()
    groups = [list(range(i)) for i in range(4, k + 1, 4)]
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.Tanh(), torch.nn.Linear(128, 10))
    x, cavs = torch.randn(n, 64, generator=g), torch.randn(20, 64, generator=g)
    W = torch.randn(200, 512, generator=g)
    W[W.abs() < 1.0] = 0.0
    cards = [1, 3, 4, 2, 6] * 32
    W_ncc, a_ncc = W[:20, :256].double(), torch.randn(n // 8, 256, generator=g).double()
    labels = torch.randint(0, 3, (n,), generator=g)
    black = torch.where(torch.rand(n, generator=g) < 0.8, labels, (labels + 1) % 3)
    white = torch.where(torch.rand(n, generator=g) < 0.6, labels, (labels + 2) % 3)
    score_black, score_white = torch.rand(n, generator=g), torch.rand(n, generator=g)
    binary = (score_black + 0.3 * torch.rand(n, generator=g) > 0.6).long()
    return {
        "cace_score": (lambda: ours.cace_score(low, high), lambda: F.cace_score(low, high)),
        "residual_concept_causal_effect": (
            lambda: ours.residual_concept_causal_effect(before, after),
            lambda: F.residual_concept_causal_effect(before, after),
        ),
        "intervention_curve (8 groups, ROC AUC)": (
            lambda: ours.intervention_curve(head, c_pred, c_true, y, groups),
            lambda: F.intervention_score(head, c_pred, c_true, y, groups, auc=False),
        ),
        "intervention_score": (
            lambda: ours.intervention_score(head, c_pred, c_true, y, groups),
            lambda: F.intervention_score(head, c_pred, c_true, y, groups),
        ),
        "tcav_score": (
            lambda: ours.tcav_score(x, mlp, cavs, target=3),
            lambda: F.tcav_score(x, mlp, cavs, 3),
        ),
        "number_of_effective_concepts": (
            lambda: ours.number_of_effective_concepts(W, threshold=1.5, cardinalities=cards),
            lambda: F.number_of_effective_concepts(W, 1.5, cards),
        ),
        "number_of_contributing_concepts": (
            lambda: ours.number_of_contributing_concepts(W_ncc, a_ncc, coverage=0.9),
            lambda: F.number_of_contributing_concepts(W_ncc, a_ncc, 0.9),
        ),
        "completeness_score (ROC AUC)": (
            lambda: ours.completeness_score(binary, score_black, score_white),
            lambda: F.completeness_score(binary, score_black, score_white),
        ),
        "completeness_score (F1 macro)": (
            lambda: ours.completeness_score(labels, black, white, scorer=f1_score),
            lambda: F.completeness_score(labels, black, white, scorer=f1_score),
        ),
    }


def compare_functions(n: int, repeats: int, report: Report) -> None:
    """PyC's functional metrics against ours: largest absolute difference and time ratio per call."""
    import numpy as np

    if importlib.util.find_spec("xaimetrics") is None:
        sys.path.insert(0, str(ROOT / "src"))
    print(f"\nPyC functional metrics on {n} samples: max |ours − PyC| and time of one call")
    worst = 0.0
    for name, (ours, theirs) in _function_cases(n).items():
        timings, results = measure({"xaimetrics": ours, "pyc": theirs}, repeats=repeats)
        a = np.asarray(results["xaimetrics"], dtype=np.float64)
        b = np.asarray(
            [float(v) for v in results["pyc"]] if isinstance(results["pyc"], list) else results["pyc"],
            dtype=np.float64,
        )
        diff = float(np.max(np.abs(a - b)))
        worst = max(worst, diff)
        report.row(f"{name}: max |diff|", f"{diff:.1e}")
        report.row(f"{name}: xaimetrics", Stats([t * 1e3 for t in timings["xaimetrics"].samples]), "ms", 3)
        report.row(f"{name}: xaimetrics / PyC", ratio(timings["xaimetrics"], timings["pyc"]), "×")
    if worst > 1e-5:
        raise SystemExit(f"a functional metric differs from PyC by {worst:.2e}")


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
        compare_functions(args.samples // (4 if args.quick else 1), args.repeats, report)
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
