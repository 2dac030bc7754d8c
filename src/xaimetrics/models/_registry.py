"""Classifier names for grids and the command line: registered families, or any Hugging Face id / local path.

:data:`CLASSIFIERS` maps a name to a factory ``factory(dataset, *, progress) -> SplitClassifier``; the
built-in ``minilm`` / ``minilm+`` are the MiniLM-L6 classifier (``+``: the non-negative variant), fine-tuned on
the dataset with the demo's recipe (:func:`~xaimetrics.models.load_demo_classifier`), on any dataset — a data
file with any column names included (``dataset_options``). Every other name
that is a Hugging Face id (``org/model``) or a local directory is a classifier too (:func:`load_classifier`): a
directory holding a fine-tuned sequence classifier is loaded as it is, and whether it is a ``+`` model is read
from its own config (``xaimetrics_positive_split``), whatever the folder is called; anything else is fine-tuned
on the dataset with :func:`~xaimetrics.models.finetune` (once, cached), a trailing ``+`` asking for the
non-negative variant.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from xaimetrics._registry import Registry
from xaimetrics._validation import invalid

if TYPE_CHECKING:
    from xaimetrics.models._finetune import DatasetSource
    from xaimetrics.models._split_classifier import SplitClassifier

__all__ = [
    "CLASSIFIERS",
    "ClassifierFactory",
    "is_classifier_reference",
    "is_positive_model",
    "load_classifier",
]


class ClassifierFactory(Protocol):
    """Builds a registered classifier for a dataset: ``factory(dataset, *, progress, dataset_options=...)``."""

    def __call__(
        self,
        dataset: DatasetSource,
        *,
        progress: bool = True,
        dataset_options: Mapping[str, object] | None = None,
    ) -> SplitClassifier: ...


#: the registered classifier names (case-insensitive), e.g. for ``Grid(models=[...])``
CLASSIFIERS: Registry[ClassifierFactory] = Registry("classifier", argument="models")
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def _minilm(positive: bool) -> ClassifierFactory:
    def load(
        dataset: DatasetSource, *, progress: bool = True, dataset_options: Mapping[str, object] | None = None
    ) -> SplitClassifier:
        from xaimetrics.data import OFFLINE_DATASETS
        from xaimetrics.models._demo import load_demo_classifier

        if isinstance(dataset, str) and dataset in OFFLINE_DATASETS:
            dataset_options = None  # column options do not apply to the offline datasets
        return load_demo_classifier(
            dataset, positive=positive, progress=progress, dataset_options=dataset_options
        )

    return load


CLASSIFIERS.register(
    "minilm",
    _minilm(False),
    description="the MiniLM-L6 fine-tuned on the dataset (any dataset; cached)",
    builtin=True,
)
CLASSIFIERS.register(
    "minilm+",
    _minilm(True),
    description="the MiniLM-L6 with a ReLU at the split (non-negative), fine-tuned on the dataset",
    builtin=True,
)


def is_classifier_reference(name: object) -> bool:
    """True for a registered name, a Hugging Face id (``org/model``, optionally ``+``) or an existing directory.

    Example:
        >>> is_classifier_reference("minilm+"), is_classifier_reference("distilbert/distilbert-base-uncased+")
        (True, True)
        >>> is_classifier_reference("bert")
        False
    """
    if not isinstance(name, str) or not name:
        return False
    if name in CLASSIFIERS or Path(name).is_dir():
        return True
    base = name[:-1] if name.endswith("+") else name
    return Path(base).is_dir() or bool(_HUB_ID.fullmatch(base))


def _config(path: Path) -> dict[str, object]:
    try:
        data = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _is_fine_tuned(path: Path) -> bool:
    architectures = _config(path).get("architectures")
    names = architectures if isinstance(architectures, list) else []
    return any(str(a).endswith("ForSequenceClassification") for a in names)


def _saved_positive(path: Path) -> bool:
    """Whether a saved classifier was fine-tuned with the ReLU at its head input: its config's
    ``xaimetrics_positive_split``, or the recipe in its ``metadata.json``."""
    from xaimetrics.models._split_classifier import METADATA_FILE, POSITIVE_CONFIG_KEY

    if _config(path).get(POSITIVE_CONFIG_KEY) is True:
        return True
    try:
        metadata = json.loads((path / METADATA_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    params = metadata.get("params") if isinstance(metadata, dict) else None
    return isinstance(params, dict) and params.get("positive") is True


def is_positive_model(name: object) -> bool:
    """True if the classifier ``name`` has non-negative activations (a ConSim ``+`` model, as NMF needs).

    A saved classifier directory answers from its own config (or ``metadata.json``), whatever the folder is
    called; a registered name or a Hugging Face id is ``+`` when it ends in ``+`` (``minilm+``,
    ``org/model+``: fine-tuned with the ReLU).

    Example:
        >>> is_positive_model("minilm+"), is_positive_model("minilm"), is_positive_model("org/model+")
        (True, False, True)
    """
    if not isinstance(name, str) or not name:
        return False
    path = Path(name)
    if path.is_dir() and _is_fine_tuned(path):
        return _saved_positive(path)
    return name.endswith("+")


def _split_name(name: str) -> tuple[str, bool]:
    """``(where the model is, whether '+' was asked)``: an existing directory is taken as named."""
    if Path(name).is_dir():
        return name, False
    return (name[:-1], True) if name.endswith("+") else (name, False)


def load_classifier(
    name: str,
    dataset: DatasetSource,
    *,
    progress: bool = True,
    dataset_options: Mapping[str, object] | None = None,
    **finetune_options: Any,
) -> SplitClassifier:
    """The classifier ``name`` for ``dataset`` (see the module docstring for what names mean).

    Args:
        name: a registered name, a Hugging Face id (``+``: the ReLU variant) or a local directory.
        dataset: what the classifier is fine-tuned on (anything :func:`xaimetrics.data.load_dataset` takes).
        progress: show progress bars while fine-tuning.
        dataset_options: keyword arguments of :func:`~xaimetrics.data.load_dataset` (``text_column``,
            ``label_column``, ``encoding``, ``drop_empty_rows``); registered factories receive them as
            ``dataset_options=`` when given.
        **finetune_options: passed to :func:`~xaimetrics.models.finetune`.

    Raises:
        InvalidParameterError: a name that is neither registered, nor a Hugging Face id, nor a directory.
    """
    options = dict(dataset_options or {})
    if name in CLASSIFIERS:
        factory = CLASSIFIERS.get(name)  # factories registered without dataset_options are called without it
        return (
            factory(dataset, progress=progress, dataset_options=options)
            if options
            else factory(dataset, progress=progress)
        )
    if not is_classifier_reference(name):
        from xaimetrics._registry import did_you_mean

        raise invalid(
            "models", "load_classifier", f"one of {CLASSIFIERS.choices()}, a Hugging Face id or a local directory",
            name,
            " ".join(filter(None, (
                did_you_mean(name, CLASSIFIERS.names()),
                "Register other names with xaimetrics.models.CLASSIFIERS.register(name, factory).",
            ))),
        )  # fmt: skip
    base, plus = _split_name(name)
    if Path(base).is_dir() and _is_fine_tuned(Path(base)):
        from xaimetrics.models._split_classifier import SplitClassifier

        return SplitClassifier.from_pretrained(
            base, positive=True if plus else None, progress=None if progress else False
        )
    from xaimetrics.models._finetune import finetune

    return finetune(
        base, dataset, positive=plus, progress=progress, dataset_options=options, **finetune_options
    )
