"""Classifier names for grids and the command line: registered families, or any Hugging Face id / local path.

:data:`CLASSIFIERS` maps a name to a factory ``factory(dataset, *, progress) -> SplitClassifier``; the
built-in ``minilm`` / ``minilm+`` are the demo MiniLM (``+``: the non-negative variant). Any other name that
is a Hugging Face id (``org/model``) or a local directory is a classifier too (:func:`load_classifier`): a
directory holding a fine-tuned sequence classifier is loaded as it is; anything else is fine-tuned on the
dataset with :func:`~xaimetrics.models.finetune` (once, cached), a trailing ``+`` asking for the non-negative
variant.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xaimetrics._registry import Registry
from xaimetrics._validation import invalid

__all__ = ["CLASSIFIERS", "is_classifier_reference", "load_classifier"]

ClassifierFactory = Callable[..., Any]
#: the registered classifier names (case-insensitive), e.g. for ``Grid(models=[...])``
CLASSIFIERS: Registry[ClassifierFactory] = Registry("classifier", argument="models")
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def _demo(positive: bool) -> ClassifierFactory:
    def load(dataset: str, *, progress: bool = True) -> Any:
        from xaimetrics.models._demo import load_demo_classifier

        return load_demo_classifier(dataset, positive=positive, progress=progress)

    return load


CLASSIFIERS.register(
    "minilm", _demo(False), description="the demo MiniLM-L6, fine-tuned on the dataset", builtin=True
)
CLASSIFIERS.register(
    "minilm+",
    _demo(True),
    description="the demo MiniLM-L6 with a ReLU at the split (non-negative)",
    builtin=True,
)


def is_classifier_reference(name: Any) -> bool:
    """True for a registered name, a Hugging Face id (``org/model``, optionally ``+``) or an existing directory.

    Example:
        >>> is_classifier_reference("minilm+"), is_classifier_reference("distilbert/distilbert-base-uncased+")
        (True, True)
        >>> is_classifier_reference("bert")
        False
    """
    if not isinstance(name, str) or not name:
        return False
    if name in CLASSIFIERS:
        return True
    base = name[:-1] if name.endswith("+") else name
    return Path(base).is_dir() or bool(_HUB_ID.fullmatch(base))


def _is_fine_tuned(path: Path) -> bool:
    config = path / "config.json"
    if not config.is_file():
        return False
    architectures = json.loads(config.read_text(encoding="utf-8")).get("architectures") or []
    return any(str(a).endswith("ForSequenceClassification") for a in architectures)


def load_classifier(name: str, dataset: str, *, progress: bool = True, **finetune_options: Any) -> Any:
    """The classifier ``name`` for ``dataset`` (see the module docstring for what names mean).

    Raises:
        InvalidParameterError: a name that is neither registered, nor a Hugging Face id, nor a directory.
    """
    if name in CLASSIFIERS:
        return CLASSIFIERS.get(name)(dataset, progress=progress)
    if not is_classifier_reference(name):
        raise invalid(
            "models", "load_classifier", f"one of {CLASSIFIERS.choices()}, a Hugging Face id or a local directory",
            name, "Register other names with xaimetrics.models.CLASSIFIERS.register(name, factory).",
        )  # fmt: skip
    positive = name.endswith("+")
    base = name[:-1] if positive else name
    if Path(base).is_dir() and _is_fine_tuned(Path(base)):
        from xaimetrics.models._split_classifier import SplitClassifier

        return SplitClassifier.from_pretrained(base, positive=True if positive else None)
    from xaimetrics.models._finetune import finetune

    return finetune(base, dataset, positive=positive, progress=progress, **finetune_options)
