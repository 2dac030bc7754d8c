"""Small, fast fixtures for the ConSim tests: a lexicon classifier that honours the split-classifier contract.

``LexiconClassifier`` is a real (tiny) torch model, not a mock: ``h`` counts the words of each topic and a few
style features, ``g`` is a fixed linear head whose topic weights differ (1.0, 1.3, 1.6), so texts that mix
topics are often misclassified — every (class, correct/wrong) cell is populated.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fake_openai_server import fake_openai_server  # noqa: F401  (fixture)

TOPICS = {
    "World": ("election", "minister", "treaty", "embassy"),
    "Sports": ("goal", "match", "coach", "league"),
    "Sci/Tech": ("chip", "software", "laptop", "robot"),
}
FILLERS = ("the", "today", "new", "report", "big", "a")


class LexiconClassifier:
    """``h(text)``: 3 topic counts + 3 style features (non-negative); ``g(a) = a @ W``."""

    num_classes = 3

    def __init__(self) -> None:
        self.class_names = list(TOPICS)
        weights = torch.zeros(6, 3)
        weights[0, 0], weights[1, 1], weights[2, 2] = 1.0, 1.3, 1.6
        weights[3:, 0] = 0.05  # style features lean slightly towards World
        self.weights = weights

    def activations(self, inputs):
        rows = []
        for text in inputs:
            words = text.lower().split()
            topic = [float(sum(w in vocabulary for w in words)) for vocabulary in TOPICS.values()]
            style = [len(words) / 10.0, float(words.count("the")), float(text.count("!"))]
            rows.append(topic + style)
        return torch.tensor(rows, dtype=torch.float32)

    def logits_from_activations(self, activations):
        return torch.as_tensor(activations, dtype=torch.float32) @ self.weights

    def logits(self, inputs):
        return self.logits_from_activations(self.activations(inputs))

    def predict(self, inputs) -> np.ndarray:
        return self.logits(inputs).argmax(dim=1).numpy().astype(np.int64)


def toy_data(n: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """Texts with 2 words of their label's topic, 1–3 of another topic and fillers."""
    rng = np.random.default_rng(seed)
    names = list(TOPICS)
    texts, labels = [], []
    for _ in range(n):
        label = int(rng.integers(3))
        other = (label + int(rng.integers(1, 3))) % 3
        words = list(rng.choice(TOPICS[names[label]], 2)) + list(
            rng.choice(TOPICS[names[other]], int(rng.integers(1, 4)))
        )
        words += list(rng.choice(FILLERS, int(rng.integers(1, 4))))
        rng.shuffle(words)
        texts.append(" ".join(words) + ("!" if rng.random() < 0.3 else ""))
        labels.append(label)
    return texts, np.array(labels, dtype=np.int64)


@pytest.fixture
def lexicon() -> LexiconClassifier:
    return LexiconClassifier()


@pytest.fixture(scope="session")
def toy() -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """(train texts, train labels, test texts, test labels)."""
    train_texts, train_labels = toy_data(300, seed=1)
    test_texts, test_labels = toy_data(300, seed=2)
    return train_texts, train_labels, test_texts, test_labels
