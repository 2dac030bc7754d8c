"""Decoder sequence classifiers (Llama, Qwen2, GPT-2 ``…ForSequenceClassification``: a ``score`` head on the last
real token) as SplitClassifiers: g∘h = f, left and right padding agree, the "+" variant."""

from __future__ import annotations

import pytest
import torch

from xaimetrics.models import SplitClassifier

TEXTS = [
    "the striker scored twice in the final",
    "ok",
    "shares fell after the bank cut its forecast, and investors sold",
    "a new chip",
]


def tiny_classifier(architecture: str, bpe) -> torch.nn.Module:
    import transformers

    pad = {"pad_token_id": bpe.eos_token_id}
    with torch.random.fork_rng():
        torch.manual_seed(3)
        if architecture == "gpt2":
            config = transformers.GPT2Config(
                vocab_size=len(bpe), n_embd=32, n_layer=2, n_head=2, num_labels=3, **pad
            )
            return transformers.GPT2ForSequenceClassification(config).eval()
        config_class = transformers.LlamaConfig if architecture == "llama" else transformers.Qwen2Config
        config = config_class(vocab_size=len(bpe), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                              num_attention_heads=4, num_key_value_heads=2, num_labels=3, **pad)  # fmt: skip
        auto = (
            transformers.LlamaForSequenceClassification
            if architecture == "llama"
            else transformers.Qwen2ForSequenceClassification
        )
        return auto(config).eval()


@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("architecture", ["llama", "qwen2", "gpt2"])
def test_last_token_score_head(architecture, positive, bpe) -> None:
    bpe.pad_token = bpe.eos_token
    model = tiny_classifier(architecture, bpe)
    results = {}
    for side in ("right", "left"):
        clf = SplitClassifier(model, bpe, positive=positive, padding_side=side, device="cpu", batch_size=3)
        activations, logits = clf.activations_and_logits(TEXTS)
        assert "last-token hidden state" in repr(clf) and activations.shape == (len(TEXTS), 32)
        torch.testing.assert_close(clf.logits_from_activations(activations), logits, atol=1e-5, rtol=1e-5)
        results[side] = activations, logits
    torch.testing.assert_close(results["left"][0], results["right"][0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(results["left"][1], results["right"][1], atol=1e-5, rtol=1e-5)
    if positive:
        assert (results["left"][0] >= 0).all()
    else:
        with torch.no_grad():  # the model alone, one unpadded text at a time
            expected = torch.cat([model(**bpe([t], return_tensors="pt")).logits for t in TEXTS])
        torch.testing.assert_close(results["right"][1], expected, atol=1e-5, rtol=1e-5)
