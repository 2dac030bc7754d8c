"""Fixtures: tiny random-weight classifiers (BERT, DistilBERT, RoBERTa layouts); the MiniLM ``tokenizer`` is
the root conftest's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from bpe_texts import BPE_TEXTS


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


@pytest.fixture(scope="session")
def make_model() -> Callable[..., torch.nn.Module]:
    """Build a fresh tiny model (hidden 32, 2 layers) with seeded random weights, in eval mode.

    Fresh per call because a positive ``SplitClassifier`` installs its ReLU on the model in place.
    """
    from transformers import AutoModelForSequenceClassification

    def make(architecture: str = "bert", num_labels: int = 3) -> torch.nn.Module:
        with torch.random.fork_rng():
            torch.manual_seed(sum(map(ord, architecture)) + num_labels)
            model = AutoModelForSequenceClassification.from_config(tiny_config(architecture, num_labels))
        return model.eval()

    return make


CHAT = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


@pytest.fixture(scope="session")
def bpe() -> object:
    """A byte-level BPE tokenizer trained on a few sentences (no special tokens added to texts)."""
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<|end|>", "<|system|>", "<|user|>", "<|assistant|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )  # fmt: skip
    corpus = [*BPE_TEXTS, "Classify the text into one of these classes: sport, business, tech, politics."]
    tokenizer.train_from_iterator(corpus * 10, trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|end|>")
    fast.chat_template = CHAT
    return fast
