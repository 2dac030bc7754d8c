"""The toy topic task of the tests: a lexicon classifier and its texts, in one place (importable by pytest,
subprocesses and Ray workers, which all have ``tests/`` on their path).

``LexiconClassifier`` is a real (tiny) torch model honouring the split-classifier contract, not a mock:
``h(text)`` counts the words of each of three topics plus a few style features (all non-negative, so NMF
applies), and ``g`` is a fixed linear head with unequal topic weights, so texts that mix topics are often
misclassified and every (class, correct/wrong) cell of a ConSim selection is populated.

Two configurations are used, each pinned by the results its tests check (golden prompts, grid tables):
:data:`NEWS` (the ConSim tests) and :data:`GRID` (the benchmark tests). They differ only by their settings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

__all__ = ["GRID", "NEWS", "LexiconClassifier", "ToyTask"]

#: style features of ``h``: (name, what it measures)
STYLE_FEATURES = ("length", "the", "exclamations")


class LexiconClassifier:
    """``h(text)`` = per topic, how many of its words the text holds, then the ``style`` features;
    ``g(a) = a @ W``.

    Args:
        topics: ``{class name: topic words}``, three classes.
        topic_weights: the weight of each topic count on its own class.
        style: ``(feature, class, weight)`` rows: a style feature of :data:`STYLE_FEATURES` (``"length"``:
            words / ``length_scale``; ``"the"``: occurrences of "the"; ``"exclamations"``: of "!") and the
            class it pushes with that weight.
        length_scale: the divisor of the length feature.
        split_exclamations: "!" separates words (else "goal!" is a word of its own, not "goal").
    """

    def __init__(
        self,
        topics: Mapping[str, Sequence[str]],
        *,
        topic_weights: Sequence[float],
        style: Sequence[tuple[str, int, float]],
        length_scale: float,
        split_exclamations: bool,
    ) -> None:
        self.topics = {name: tuple(words) for name, words in topics.items()}
        self.class_names = list(self.topics)
        self.num_classes = len(self.class_names)
        self.style = [name for name, _, _ in style]
        self.length_scale = length_scale
        self.split_exclamations = split_exclamations
        weights = torch.zeros(self.num_classes + len(style), self.num_classes)
        for topic, weight in enumerate(topic_weights):
            weights[topic, topic] = weight
        for row, (_, target, weight) in enumerate(style, start=self.num_classes):
            weights[row, target] = weight
        self.weights = weights

    def _features(self, text: str) -> list[float]:
        words = (text.replace("!", " ") if self.split_exclamations else text).lower().split()
        counts = [float(sum(w in vocabulary for w in words)) for vocabulary in self.topics.values()]
        values = {
            "length": len(words) / self.length_scale,
            "the": float(words.count("the")),
            "exclamations": float(text.count("!")),
        }
        return counts + [values[name] for name in self.style]

    def activations(self, inputs: Sequence[str]) -> torch.Tensor:
        rows = [self._features(text) for text in inputs]
        return torch.tensor(rows, dtype=torch.float32).reshape(-1, self.weights.shape[0])

    def logits_from_activations(self, activations: Any, inputs: Any = None) -> torch.Tensor:
        return torch.as_tensor(activations, dtype=torch.float32) @ self.weights

    def logits(self, inputs: Sequence[str]) -> torch.Tensor:
        return self.logits_from_activations(self.activations(inputs))

    def predict(self, inputs: Sequence[str]) -> np.ndarray:
        return self.logits(inputs).argmax(dim=1).numpy().astype(np.int64)


@dataclass(frozen=True)
class ToyTask:
    """A toy topic task: its texts (:meth:`texts`) and its classifier (:meth:`model`)."""

    topics: Mapping[str, tuple[str, ...]]
    fillers: tuple[str, ...]
    exclamation: str
    model_settings: Mapping[str, Any] = field(default_factory=dict)

    def model(self) -> LexiconClassifier:
        return LexiconClassifier(self.topics, **self.model_settings)

    def texts(self, n: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
        """``n`` texts with 2 words of their label's topic, 1–3 of another topic and 1–3 fillers, shuffled,
        30% of them ending with ``exclamation``; and their labels."""
        rng = np.random.default_rng(seed)
        names = list(self.topics)
        texts, labels = [], []
        for _ in range(n):
            label = int(rng.integers(3))
            other = (label + int(rng.integers(1, 3))) % 3
            words = list(rng.choice(self.topics[names[label]], 2)) + list(
                rng.choice(self.topics[names[other]], int(rng.integers(1, 4)))
            )
            words += list(rng.choice(self.fillers, int(rng.integers(1, 4))))
            rng.shuffle(words)
            texts.append(" ".join(words) + (self.exclamation if rng.random() < 0.3 else ""))
            labels.append(label)
        return texts, np.array(labels, dtype=np.int64)


#: the ConSim tests' task (the golden prompts depend on it)
NEWS = ToyTask(
    topics={
        "World": ("election", "minister", "treaty", "embassy"),
        "Sports": ("goal", "match", "coach", "league"),
        "Sci/Tech": ("chip", "software", "laptop", "robot"),
    },
    fillers=("the", "today", "new", "report", "big", "a"),
    exclamation="!",
    model_settings={
        "topic_weights": (1.0, 1.3, 1.6),
        "style": (("length", 0, 0.05), ("the", 0, 0.05), ("exclamations", 0, 0.05)),  # lean towards World
        "length_scale": 10.0,
        "split_exclamations": False,
    },
)

#: the benchmark tests' task (their grids and stored tables depend on it)
GRID = ToyTask(
    topics={
        "world": ("election", "minister", "treaty", "embassy", "border"),
        "sports": ("goal", "match", "coach", "league", "referee"),
        "tech": ("chip", "software", "laptop", "robot", "server"),
    },
    fillers=("the", "today", "new", "report", "big", "again"),
    exclamation=" !",
    model_settings={
        "topic_weights": (1.0, 1.4, 1.8),
        "style": (("length", 0, 0.1), ("exclamations", 1, 0.3)),
        "length_scale": 8.0,
        "split_exclamations": True,
    },
)
