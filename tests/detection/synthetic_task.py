"""A synthetic classifier whose concepts are known: concept j fires exactly on the words of group j.

Importable by the tests of this folder (its conftest puts the folder on ``sys.path``).
"""

from __future__ import annotations

import numpy as np

GROUPS = (
    ("goal", "match", "striker", "league", "cup"),
    ("chip", "laptop", "software", "internet", "broadband"),
    ("election", "minister", "parliament", "vote", "party"),
    ("film", "actor", "oscar", "cinema", "director"),
    ("bank", "shares", "profit", "market", "economy"),
)
FILLER = tuple(f"w{i}" for i in range(300))


def make_texts(n: int = 600, *, seed: int = 0, p_group: float = 0.3, length: int = 15) -> list[str]:
    """Texts of filler words, each group present independently with probability ``p_group`` (1–3 of its words)."""
    rng = np.random.default_rng(seed)
    texts = []
    for _ in range(n):
        words = list(rng.choice(FILLER, size=length))
        for group in GROUPS:
            if rng.random() < p_group:
                words += list(rng.choice(group, size=int(rng.integers(1, 4))))
        rng.shuffle(words)
        texts.append(" ".join(words))
    return texts


class GroupModel:
    """``h(text)``: per group, how many of its words the text holds; then 8 bag-of-filler features."""

    def activations(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), len(GROUPS) + 8))
        for i, text in enumerate(texts):
            words = text.split()
            for j, group in enumerate(GROUPS):
                out[i, j] = sum(w in group for w in words)
            for w in words:
                if w.startswith("w"):
                    out[i, len(GROUPS) + int(w[1:]) % 8] += 1.0
        return out


class GroupExtractor:
    """The true concepts: the group counts (the first columns of ``h``)."""

    def encode(self, A: np.ndarray) -> np.ndarray:
        return np.asarray(A)[:, : len(GROUPS)]


class GroupClassifier(GroupModel):
    """The synthetic model as a split classifier: ``h`` = the group counts; logits = which group set dominates."""

    def activations(self, texts: list[str]) -> np.ndarray:
        return super().activations(texts)[:, : len(GROUPS)]

    def logits_from_activations(self, activations: object, inputs: object = None) -> np.ndarray:
        A = np.asarray(activations.detach().cpu().numpy() if hasattr(activations, "detach") else activations)
        return np.stack([A[:, :2].sum(axis=1), A[:, 2:5].sum(axis=1)], axis=1)


def group_dataset(split: str) -> object:
    from xaimetrics.data import TextDataset

    texts = make_texts(400 if split == "train" else 300, seed=0 if split == "train" else 1)
    model = GroupClassifier()
    labels = model.logits_from_activations(model.activations(texts)).argmax(axis=1)
    return TextDataset(texts, labels, ["sport-tech", "other"], name="groups", split=split)


def group_model(dataset: str) -> GroupClassifier:
    return GroupClassifier()


def _providers() -> object:
    from xaimetrics.benchmark import Providers

    return Providers(datasets={"groups": group_dataset}, models={"minilm+": group_model}, progress=False)


#: for ``--providers synthetic_task:PROVIDERS`` in real ``xaimetrics detection`` processes
PROVIDERS = _providers()
