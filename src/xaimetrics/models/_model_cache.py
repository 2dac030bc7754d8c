"""Caching fine-tuned models: atomic saves, leftovers of killed runs, accuracy on held-out splits."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._validation import check_in_range, check_positive_int, check_seed, invalid

if TYPE_CHECKING:
    from xaimetrics.data import TextDataset
    from xaimetrics.models._split_classifier import SplitClassifier

__all__ = [
    "check_evaluation_splits",
    "check_recipe",
    "class_report",
    "evaluate_splits",
    "package_version",
    "remove_stale_temporaries",
    "save_atomically",
]

_STALE_TEMP_SECONDS = 24 * 3600


def save_atomically(classifier: SplitClassifier, target: Path) -> None:
    """Save into a temporary sibling of ``target``, then rename it into place (replacing an old one).

    An interrupted run never leaves a half-written model at ``target``; ``metadata.json`` is written last by
    ``save_pretrained``, so its presence marks a complete model.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".tmp-{target.name}-", dir=target.parent))
    try:
        classifier.save_pretrained(temporary)
        temporary.chmod(0o755)  # mkdtemp creates it private; the cache is an ordinary user directory
        if target.exists():  # force=True, or a concurrent run finished first: replace it
            trash = Path(tempfile.mkdtemp(prefix=f".old-{target.name}-", dir=target.parent))
            target.rename(trash / "model")
            shutil.rmtree(trash, ignore_errors=True)
        temporary.rename(target)
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)


def remove_stale_temporaries(models_dir: Path) -> None:
    """Delete ``.tmp-*``/``.old-*`` leftovers of runs killed more than a day ago (never resumable checkpoints)."""
    now = time.time()
    for pattern in (".tmp-*", ".old-*"):
        for path in models_dir.glob(pattern):
            try:
                if path.is_dir() and now - path.stat().st_mtime > _STALE_TEMP_SECONDS:
                    shutil.rmtree(path, ignore_errors=True)
            except OSError:
                continue


def check_evaluation_splits(
    load: Callable[[str], TextDataset], dataset: object, options: Mapping[str, object]
) -> None:
    """Refuse, before any training, data whose validation or test split is empty (a file too small to carve
    them from), naming the split and the fix.

    Example:
        >>> from xaimetrics.data import TextDataset
        >>> tiny = {"validation": TextDataset(["a"], np.array([0]), ["x"]), "test": TextDataset([], np.array([], int), ["x"])}
        >>> check_evaluation_splits(tiny.__getitem__, "two.csv", {})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'dataset' parameter of finetune must be data whose validation and test splits hold texts ...
    """
    for split in ("validation", "test"):
        if len(load(split)) == 0:
            raise invalid(
                "dataset", "finetune", "data whose validation and test splits hold texts (the model is evaluated "
                "on both)", f"an empty {split} split of {dataset!r}",
                "A file is split 80/10/10 per class, so each class needs at least 10 rows or so: pass a larger "
                "file, or a mapping {'train': file, 'validation': file, 'test': file}"
                + (" (options: " + ", ".join(f"{k}={v!r}" for k, v in options.items()) + ")" if options else "")
                + ".",
            )  # fmt: skip


def class_report(labels: np.ndarray, predictions: np.ndarray, class_names: list[str]) -> dict[str, object]:
    """Accuracy, macro-F1 and per-class precision / recall / F1 / support (scikit-learn's), ready for JSON.

    A class never predicted has precision 0 (scikit-learn's ``zero_division=0``), so macro-F1 shows classes that
    accuracy hides.

    Example:
        >>> report = class_report(np.array([0, 0, 0, 1]), np.array([0, 0, 0, 0]), ["big", "small"])
        >>> report["accuracy"], round(report["macro_f1"], 3), report["per_class"]["small"]["recall"]
        (0.75, 0.429, 0.0)
    """
    from sklearn.metrics import precision_recall_fscore_support

    classes = list(range(len(class_names)))
    precision, recall, f1, support = precision_recall_fscore_support(
        labels, predictions, labels=classes, zero_division=0
    )
    present = support > 0  # macro-F1 over the classes the split holds
    return {
        "accuracy": float(np.mean(predictions == labels)),
        "macro_f1": float(np.mean(f1[present])) if present.any() else float("nan"),
        "per_class": {
            name: {"precision": float(p), "recall": float(r), "f1": float(f), "support": int(n)}
            for name, p, r, f, n in zip(class_names, precision, recall, f1, support, strict=True)
        },
    }


def evaluate_splits(
    classifier: SplitClassifier, load: Callable[[str], TextDataset], n_eval: int | None
) -> dict[str, object]:
    """``{"validation_accuracy", "validation_macro_f1", "validation_per_class", "n_validation", "test_…",
    "eval_seconds"}`` (per class: precision, recall, F1, support; see :func:`class_report`).

    ``n_eval`` texts are drawn at random (fixed seed 0) from each split (``None``: all of them); the splits
    may be ordered by class, so the first rows are never taken.
    """
    scores: dict[str, object] = {}
    start = time.perf_counter()
    for split in ("validation", "test"):
        data = load(split)
        if n_eval is not None and n_eval < len(data):
            data = data.subset(np.sort(np.random.default_rng(0).permutation(len(data))[:n_eval]))
        predictions = np.asarray(classifier.predict(data.texts))
        report = class_report(data.labels, predictions, data.class_names)
        scores[f"{split}_accuracy"] = report["accuracy"]
        scores[f"{split}_macro_f1"] = report["macro_f1"]
        scores[f"{split}_per_class"] = report["per_class"]
        scores[f"n_{split}"] = len(data)
    scores["eval_seconds"] = time.perf_counter() - start
    return scores


def package_version(name: str) -> str:
    """The installed version of a distribution, ``"unknown"`` if it is not installed."""
    try:
        return importlib_metadata.version(name)
    except importlib_metadata.PackageNotFoundError:
        if name == "xaimetrics":
            import xaimetrics

            return xaimetrics.__version__
        return "unknown"


def check_recipe(
    owner: str,
    *,
    positive: object,
    n_train: object,
    n_eval: object,
    epochs: object,
    max_length: object,
    batch_size: object,
    learning_rate: object,
    seed: object,
) -> None:
    """Check a fine-tuning recipe at the public boundary, before any work (each error names its argument)."""
    if not isinstance(positive, bool):
        raise invalid("positive", owner, "True or False", positive)
    if n_train is not None:
        check_positive_int(n_train, "n_train", owner, minimum=2)
    if n_eval is not None:
        check_positive_int(n_eval, "n_eval", owner)
    check_positive_int(epochs, "epochs", owner)
    check_positive_int(max_length, "max_length", owner, minimum=8)
    check_positive_int(batch_size, "batch_size", owner)
    check_in_range(learning_rate, "learning_rate", owner, 1e-7, 1.0)
    check_seed(seed, "seed", owner)
