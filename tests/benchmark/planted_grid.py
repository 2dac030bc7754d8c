"""A planted-concept task for the grid's per-concept phase: concept ``j`` of ``h`` counts the words of group ``j``.

``h`` is a torch ``EmbeddingBag`` whose weights are the groups' one-hot membership (filler words weigh nothing),
so ``NoProjection``'s concepts are exactly the planted groups; its randomised twin re-draws those weights, and its
concepts become random mixtures of every word (the planted structure is gone). ``g`` is a linear head.
"""

from __future__ import annotations

import numpy as np
import torch

from xaimetrics.data import TextDataset

GROUPS = (
    ("goal", "match", "striker", "league", "cup"),
    ("chip", "laptop", "software", "internet", "broadband"),
    ("election", "minister", "parliament", "vote", "party"),
)
CLASSES = ("sport", "tech", "politics")
FILLER = tuple(f"w{i}" for i in range(200))
VOCABULARY = (*[w for g in GROUPS for w in g], *FILLER)


def texts(n: int, seed: int) -> list[str]:
    """Filler texts; each group present with probability 0.3 (1–3 of its words)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        words = list(rng.choice(FILLER, size=12))
        for group in GROUPS:
            if rng.random() < 0.3:
                words += list(rng.choice(group, size=int(rng.integers(1, 4))))
        rng.shuffle(words)
        out.append(" ".join(words))
    return out


class _Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.words = torch.nn.EmbeddingBag(len(VOCABULARY), len(GROUPS), mode="sum")
        self.head = torch.nn.Linear(len(GROUPS), len(CLASSES))
        with torch.no_grad():
            self.words.weight.zero_()
            for j, group in enumerate(GROUPS):
                for word in group:
                    self.words.weight[VOCABULARY.index(word), j] = 1.0
            self.head.weight.copy_(torch.eye(len(GROUPS)) * torch.tensor([1.0, 1.3, 1.6]).unsqueeze(1))
            self.head.bias.zero_()


class PlantedClassifier:
    """``h(text)`` = the group counts (an ``EmbeddingBag``), ``g`` = a linear head; ``model`` is the torch module
    (what :func:`~xaimetrics.models.randomized_copy` re-draws)."""

    def __init__(self) -> None:
        self.class_names = list(CLASSES)
        self.num_classes = len(CLASSES)
        self.model = _Net().eval()

    def activations(self, inputs: list[str]) -> torch.Tensor:
        ids, offsets = [], []
        for text in inputs:
            offsets.append(len(ids))
            ids += [VOCABULARY.index(w) for w in text.split() if w in VOCABULARY]
        with torch.no_grad():
            return self.model.words(
                torch.tensor(ids, dtype=torch.long), torch.tensor(offsets, dtype=torch.long)
            )

    def logits_from_activations(self, activations: object, inputs: object = None) -> torch.Tensor:
        return self.model.head(torch.as_tensor(activations, dtype=torch.float32))

    def logits(self, inputs: list[str]) -> torch.Tensor:
        return self.logits_from_activations(self.activations(inputs))

    def predict(self, inputs: list[str]) -> np.ndarray:
        with torch.no_grad():
            return self.logits(inputs).argmax(dim=1).numpy().astype(np.int64)


def planted_dataset(split: str) -> TextDataset:
    """300 train / 300 test texts, labelled by the planted classifier with a third of the labels moved to another
    class (so that the model errs on some texts, as ConSim's selection needs)."""
    seed = 0 if split == "train" else 1
    items = texts(300, seed)
    labels = PlantedClassifier().predict(items)
    moved = np.random.default_rng(seed).random(len(labels)) < 1 / 3
    labels[moved] = (labels[moved] + 1) % len(CLASSES)
    return TextDataset(items, labels, list(CLASSES), name="planted", split=split)


def planted_model(dataset: str) -> PlantedClassifier:
    return PlantedClassifier()


def planted_providers() -> object:
    from xaimetrics.benchmark import Providers

    return Providers(datasets={"planted": planted_dataset}, models={"planted": planted_model}, progress=False)


def planted_grid(**changes: object) -> object:
    """NoProjection (the planted groups) and NoExplanation on the lexical reader, 3 seeds, intruder + detection."""
    from xaimetrics.benchmark import Grid

    options: dict[str, object] = {
        "datasets": ("planted",), "models": ("planted",), "methods": ("NoProjection", "NoExplanation"),
        "prompt_types": ("NE1", "E1"), "seeds": (0, 1, 2), "simulators": ("lexical",), "n_lp": 6, "n_ep": 6,
        "n_fit": 300, "detection": ("detection", "intruder"), "concurrency": 2,
    }  # fmt: skip
    options.update(changes)
    return Grid(**options, **planted_providers().grid_extras())  # type: ignore[arg-type]


#: for ``--providers planted_grid:PROVIDERS`` in ``xaimetrics benchmark run``
PROVIDERS = planted_providers()
