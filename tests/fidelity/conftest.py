"""Small models shared by the fidelity tests: a trained MLP, a CNN and a tiny random BERT (with the MiniLM
``tokenizer`` of the root conftest)."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(scope="session")
def tiny_bert(tokenizer):
    """A 2-layer BERT with random weights (seeded), in eval mode."""
    from transformers import AutoModelForSequenceClassification, BertConfig

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=3,
    )
    return AutoModelForSequenceClassification.from_config(config).eval()


@pytest.fixture(scope="session")
def tabular_task():
    """An MLP trained on a synthetic task whose label depends on 4 of 12 features; returns (model, X)."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(600, 12, generator=generator)
    logit = 3 * x[:, 0] - 2 * x[:, 1] + 1.5 * x[:, 2] + x[:, 3]
    y = (logit > 0).long()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(60):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x[:500]), y[:500]).backward()
        optimizer.step()
    model.eval()
    accuracy = (model(x[500:]).argmax(1) == y[500:]).float().mean().item()
    assert accuracy > 0.9, accuracy
    return model, x[500:560]


@pytest.fixture(scope="session")
def small_cnn():
    torch.manual_seed(1)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(16, 3),
    ).eval()
