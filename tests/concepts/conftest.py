"""Fixtures of the concept tests: one torch thread for tiny SAE fits, and tiny random-BERT split classifiers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Tiny SAE fits are much faster on one thread when the 2 cores are shared; restore afterwards."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="session")
def tiny_split_classifier(tokenizer: Any) -> Callable[..., Any]:
    """Build a ``SplitClassifier`` over a one-layer BERT with seeded random weights and the MiniLM tokenizer.

    ``make(hidden_size=..., seed=..., num_labels=3, **options)``: ``options`` go to ``SplitClassifier``.
    """
    from transformers import AutoModelForSequenceClassification, BertConfig

    from xaimetrics.models import SplitClassifier

    def make(*, hidden_size: int, seed: int, num_labels: int = 3, **options: Any) -> Any:
        torch.manual_seed(seed)
        config = BertConfig(
            hidden_size=hidden_size,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=2 * hidden_size,
            num_labels=num_labels,
        )
        model = AutoModelForSequenceClassification.from_config(config)
        return SplitClassifier(model, tokenizer, device="cpu", progress=False, **options)

    return make
