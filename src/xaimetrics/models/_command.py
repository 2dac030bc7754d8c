"""``xaimetrics finetune``: fine-tune a sequence classifier on a dataset (cached, resumable) and report it."""

from __future__ import annotations

import argparse
import json

from xaimetrics._arguments import DATASET_HELP, add_data_arguments, add_progress_argument, data_options

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the ``finetune`` sub-command."""
    parser = subparsers.add_parser(
        "finetune",
        help="fine-tune a sequence classifier (any Hugging Face architecture, '+' variant) once and cache it",
        description=(
            "Fine-tune a classifier on a dataset, cache it (a rerun loads it; a killed run resumes from its last "
            "checkpoint) and print where it is with its test accuracy."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--model",
        default="minilm",
        help="'minilm' (offline MiniLM-L6), a Hugging Face id or a local directory",
    )
    add_data_arguments(
        parser, dataset="rotten_tomatoes", help=DATASET_HELP.removesuffix(" (default: %(default)s)")
    )
    parser.add_argument("--config", default=None, help="the Hugging Face configuration of --dataset")
    parser.add_argument("--positive", action="store_true", help="the '+' variant: a ReLU at the head input")
    parser.add_argument("--n-train", type=int, default=3000, help="training texts (0: the whole train split)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument(
        "--max-length", type=int, default=None,
        help="tokens per text (default: 64 for minilm, the grid's minilm/minilm+ recipe; 128 for other models)",
    )  # fmt: skip
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument(
        "--learning-rate", type=float, default=None,
        help="AdamW's peak learning rate (default: 1e-4 for minilm, the grid's recipe; 5e-5 for other models)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-eval", type=int, default=1000, help="texts evaluated per split (0: all)")
    parser.add_argument(
        "--checkpoint-steps", type=int, default=200, help="checkpoint every N steps (0: per epoch)"
    )
    parser.add_argument("--output", default=None, help="directory to save the model in (default: the cache)")
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--force", action="store_true", help="retrain even if the model exists")
    add_progress_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the metadata as JSON")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Fine-tune (or load) the model and print its path and accuracy."""
    from xaimetrics.models import finetune

    options = data_options(args)
    if args.config is not None:
        options["config"] = args.config
    classifier = finetune(
        args.model, args.dataset, positive=args.positive, n_train=args.n_train or None, epochs=args.epochs,
        max_length=args.max_length, batch_size=args.batch_size, learning_rate=args.learning_rate, seed=args.seed,
        n_eval=args.n_eval or None, dataset_options=options, output_dir=args.output, cache_dir=args.cache_dir,
        checkpoint_steps=args.checkpoint_steps or None, device=args.device, force=args.force,
        progress=not args.no_progress,
    )  # fmt: skip
    metadata = classifier.metadata
    if args.json:
        print(json.dumps({"path": metadata.get("path"), **metadata}, indent=2, sort_keys=True, default=str))
        return 0
    print(f"model: {metadata.get('path')}")
    macro = metadata.get("test_macro_f1")
    macro_text = "" if macro is None else f", macro-F1 {macro:.3f}"
    print(
        f"test accuracy {metadata['test_accuracy']:.3f}{macro_text} (n={metadata['n_test']}), validation "
        f"{metadata['validation_accuracy']:.3f}; {metadata['steps']} steps, {metadata['train_seconds']:.0f} s"
    )
    per_class = metadata.get("test_per_class")
    if isinstance(per_class, dict):
        print(per_class_table(per_class))
    return 0


def per_class_table(per_class: dict[str, dict[str, float]]) -> str:
    """The test split's precision / recall / F1 / support per class, as aligned text.

    Example:
        >>> print(per_class_table({"sports": {"precision": 1.0, "recall": 0.5, "f1": 0.667, "support": 4}}))
        class   precision  recall     F1  support
        sports      1.000   0.500  0.667        4
    """
    width = max(5, *(len(name) for name in per_class))
    lines = [f"{'class':<{width}}  precision  recall     F1  support"]
    for name, row in per_class.items():
        lines.append(
            f"{name:<{width}}  {row['precision']:9.3f}  {row['recall']:6.3f}  {row['f1']:5.3f}  {int(row['support']):7d}"
        )
    return "\n".join(lines)
