"""Small, fast fixtures for the ConSim tests: the lexicon classifier of ``toy_models`` (task ``NEWS``)."""

from __future__ import annotations

import numpy as np
import pytest

from fake_openai_server import fake_openai_server  # noqa: F401  (fixture)
from toy_models import NEWS, LexiconClassifier

TOPICS = NEWS.topics
toy_data = NEWS.texts


@pytest.fixture
def lexicon() -> LexiconClassifier:
    return NEWS.model()


@pytest.fixture(scope="session")
def toy() -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """(train texts, train labels, test texts, test labels)."""
    train_texts, train_labels = toy_data(300, seed=1)
    test_texts, test_labels = toy_data(300, seed=2)
    return train_texts, train_labels, test_texts, test_labels
