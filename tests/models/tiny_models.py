"""Shared test data for ``tests/models``: architectures, texts and tiny model configs."""

from __future__ import annotations

from typing import Any

ARCHITECTURES = ("bert", "distilbert", "roberta")

# Asymmetric lengths (1 to ~40 tokens) so that batches need padding and sorting matters.
TEXTS = [
    "a fine film",
    "dull, predictable and far too long; the second half drags on without any reason to care",
    "ok",
    "what a wonderful, strange little movie",
    "the actors try hard but the script gives them nothing to do except shout at each other in the rain",
    "bad",
    "funny, warm and surprisingly moving",
    "i wanted to like it",
    "",
    "a masterpiece of tedium",
    "the soundtrack is great. the rest is not.",
    "two hours of my life i will never get back, although the cinematography is occasionally lovely",
]


def tiny_config(architecture: str, num_labels: int) -> Any:
    from transformers import BertConfig, DistilBertConfig, RobertaConfig

    labels = {"id2label": {i: f"class_{i}" for i in range(num_labels)}, "num_labels": num_labels}
    if architecture == "bert":
        return BertConfig(
            vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=48,
            **labels,
        )  # fmt: skip
    if architecture == "distilbert":
        return DistilBertConfig(vocab_size=30522, dim=32, n_layers=2, n_heads=2, hidden_dim=48, **labels)
    return RobertaConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=48,
        pad_token_id=0, bos_token_id=101, eos_token_id=102, type_vocab_size=2, **labels,
    )  # fmt: skip
