"""Recipes for the ConSim paper's hub datasets: BIOS10 and TweetEval-emotion (need ``datasets`` and one download).

A recipe names a Hugging Face dataset, its text and label columns, the names of its label indices and how to
reduce it (BIOS10 keeps the 10 most frequent occupations of Bias in Bios). :data:`DATASET_RECIPES` holds them;
:func:`~xaimetrics.data.load_dataset` reads a recipe by name. The data come from the hub (cached by
``datasets`` after the first download, then usable offline) or from local files with the hub's columns
(``data_files=``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xaimetrics._registry import Registry
from xaimetrics._validation import invalid
from xaimetrics.data._dataset import TextDataset
from xaimetrics.data._files import read_table
from xaimetrics.data._hub import hub_splits

__all__ = ["DATASET_RECIPES", "DatasetRecipe", "load_recipe"]

_SPLIT_NAMES = {"train": ("train",), "validation": ("validation", "valid", "dev"), "test": ("test",)}


@dataclass(frozen=True)
class DatasetRecipe:
    """How to build one dataset from a Hugging Face dataset.

    Attributes:
        hub_id: the dataset id on the hub, e.g. ``"LabHC/bias_in_bios"``.
        config: its configuration (``None`` for the default one).
        text_column, label_column: the columns holding the texts and the integer labels.
        label_names: the name of each raw label index.
        top_classes: keep only the this many most frequent classes of the train split (``None``: all).
        description: one line for listings.

    Example:
        >>> DATASET_RECIPES.get("tweet_eval_emotion").label_names
        ('anger', 'joy', 'optimism', 'sadness')
    """

    hub_id: str
    config: str | None
    text_column: str
    label_column: str
    label_names: tuple[str, ...]
    top_classes: int | None = None
    description: str = ""

    def download_hint(self) -> str:
        """What to run (once, with a network) or pass, to make the recipe work offline."""
        config = "" if self.config is None else f", {self.config!r}"
        return (
            f'Download it once with a network: python -c "import datasets; datasets.load_dataset('
            f"'{self.hub_id}'{config})\" (the cache then works offline, also with HF_HUB_OFFLINE=1), or pass "
            f"data_files={{'train': ..., 'test': ...}} with files holding the columns "
            f"'{self.text_column}' and '{self.label_column}'."
        )


#: the dataset recipes known to :func:`~xaimetrics.data.load_dataset`, by name (case-insensitive)
DATASET_RECIPES: Registry[DatasetRecipe] = Registry("dataset recipe", argument="path")

_BIOS_OCCUPATIONS = (
    "accountant", "architect", "attorney", "chiropractor", "comedian", "composer", "dentist", "dietitian", "dj",
    "filmmaker", "interior_designer", "journalist", "model", "nurse", "painter", "paralegal", "pastor",
    "personal_trainer", "photographer", "physician", "poet", "professor", "psychologist", "rapper",
    "software_engineer", "surgeon", "teacher", "yoga_teacher",
)  # fmt: skip
DATASET_RECIPES.register(
    "bios10",
    DatasetRecipe(
        "LabHC/bias_in_bios", None, "hard_text", "profession", _BIOS_OCCUPATIONS, top_classes=10,
        description="Bias in Bios biographies (De-Arteaga et al. 2019), the 10 most frequent occupations",
    ),
    aliases=("bias_in_bios_10",),
    description="Bias in Bios, 10 most frequent occupations (ConSim paper)",
    builtin=True,
)  # fmt: skip
DATASET_RECIPES.register(
    "tweet_eval_emotion",
    DatasetRecipe(
        "cardiffnlp/tweet_eval", "emotion", "text", "label", ("anger", "joy", "optimism", "sadness"),
        description="TweetEval emotion (Barbieri et al. 2020), 4 classes",
    ),
    aliases=("tweet_eval/emotion", "tweeteval_emotion"),
    description="TweetEval emotion, 4 classes (ConSim paper)",
    builtin=True,
)  # fmt: skip


def _raw_splits(
    recipe: DatasetRecipe, name: str, data_files: object, **kwargs: object
) -> dict[str, tuple[list[str], np.ndarray]]:
    """``{"train" | "validation" | "test": (texts, raw label indices)}`` from the hub or from files."""
    if data_files is not None:
        files = data_files if isinstance(data_files, Mapping) else {"train": data_files}
        paths = {key: path for key, path in files.items() if isinstance(path, str | os.PathLike)}
        if len(paths) != len(files):
            raise invalid("data_files", "load_dataset", "a file or a mapping {split: file}", data_files)
        frames = {str(key): read_table(Path(path)) for key, path in paths.items()}
        columns = {key: (frame[recipe.text_column], frame[recipe.label_column]) for key, frame in frames.items()
                   if {recipe.text_column, recipe.label_column} <= set(frame.columns)}  # fmt: skip
        if len(columns) != len(frames):
            raise invalid(
                "data_files", "load_dataset", f"files with the columns {recipe.text_column!r} and "
                f"{recipe.label_column!r} (as on the hub) for the recipe {name!r}", list(files.values()),
            )  # fmt: skip
        raw = {
            key: (list(map(str, text.tolist())), np.asarray(label.tolist()))
            for key, (text, label) in columns.items()
        }
    else:
        splits = hub_splits(
            recipe.hub_id, recipe.config, f"The dataset recipe {name!r}", recipe.download_hint(), **kwargs
        )
        raw = {
            key: (
                [str(t) for t in splits[key][recipe.text_column]],
                np.asarray(splits[key][recipe.label_column]),
            )
            for key in splits
        }
    out: dict[str, tuple[list[str], np.ndarray]] = {}
    for canonical, names in _SPLIT_NAMES.items():
        found = next((key for key in names if key in raw), None)
        if found is not None:
            out[canonical] = raw[found]
    if "train" not in out:
        raise invalid("data_files", "load_dataset", f"a 'train' split for the recipe {name!r}", sorted(raw))
    return out


def load_recipe(name: str, split: str, *, data_files: object = None, **kwargs: object) -> TextDataset:
    """A split of the recipe ``name`` (``"all"``: every split), its labels re-indexed to the kept classes.

    With ``top_classes``, the classes are the most frequent of the train split (ties: lower index first),
    listed in the order of ``label_names``; rows of other classes are dropped from every split.
    """
    recipe = DATASET_RECIPES.get(name, owner="load_dataset")
    canonical = DATASET_RECIPES.canonical(name)
    raw = _raw_splits(recipe, canonical, data_files, **kwargs)
    counts = np.bincount(raw["train"][1].astype(np.int64), minlength=len(recipe.label_names))
    kept = np.arange(len(counts))
    if recipe.top_classes is not None:
        by_frequency = sorted(kept.tolist(), key=lambda c: (-counts[c], c))
        kept = np.sort(np.asarray(by_frequency[: recipe.top_classes]))
    if kept.max() >= len(recipe.label_names):
        raise invalid(
            "label_column", "load_dataset", f"label indices below {len(recipe.label_names)}", int(kept.max())
        )
    remap = np.full(len(counts), -1, dtype=np.int64)
    remap[kept] = np.arange(len(kept))
    if split != "all" and split not in raw:
        raise invalid("split", "load_dataset", f"one of {sorted(raw)} or 'all' for {canonical!r}", split)
    texts: list[str] = []
    labels: list[np.ndarray] = []
    for key in raw if split == "all" else [split]:
        split_texts, split_labels = raw[key]
        new = remap[split_labels.astype(np.int64)]
        keep = np.flatnonzero(new >= 0)
        texts.extend(split_texts[i] for i in keep)
        labels.append(new[keep])
    info: dict[str, object] = {
        "source": "files" if data_files is not None else f"huggingface:{recipe.hub_id}",
        "config": recipe.config,
        "recipe": canonical,
    }
    names = [recipe.label_names[i] for i in kept]
    return TextDataset(texts, np.concatenate(labels), names, canonical, split, info)
