"""T5 on tiny random configs: the sequence-classification head and text-to-text classification by class tokens."""

from __future__ import annotations

import pytest
import torch

from xaimetrics.concepts import NMF, TopWords
from xaimetrics.consim import ConSim, Explanation
from xaimetrics.models import PromptClassifier, SplitClassifier
from xaimetrics.simulators import ScriptedSimulator

TEXTS = [
    "the striker scored twice in the final",
    "shares fell after the bank cut its forecast",
    "ok",
    "a new chip doubles battery life, and the phone is thinner too",
    "ministers debated the budget",
]


def t5_config(**extra: object) -> object:
    from transformers import T5Config

    # The MiniLM (BERT) tokenizer ends every text with [SEP] (id 102): it plays T5's </s>.
    return T5Config(
        vocab_size=30522, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
        relative_attention_num_buckets=8, pad_token_id=0, eos_token_id=102, decoder_start_token_id=0, **extra,
    )  # fmt: skip


def seq_model(num_labels: int = 3) -> torch.nn.Module:
    from transformers import T5ForSequenceClassification

    with torch.random.fork_rng():
        torch.manual_seed(5)
        return T5ForSequenceClassification(t5_config(num_labels=num_labels)).eval()


def text_to_text_model() -> torch.nn.Module:
    from transformers import T5ForConditionalGeneration

    with torch.random.fork_rng():
        torch.manual_seed(7)
        return T5ForConditionalGeneration(t5_config()).eval()


def _one(tokenizer, text: str) -> dict[str, torch.Tensor]:
    encoding = tokenizer([text], return_tensors="pt")
    encoding.pop("token_type_ids")
    return dict(encoding)


@pytest.mark.parametrize("positive", [False, True])
def test_sequence_classification_head(positive, tokenizer) -> None:
    model = seq_model()
    clf = SplitClassifier(model, tokenizer, positive=positive, device="cpu", batch_size=2)
    activations, logits = clf.activations_and_logits(TEXTS)
    assert "decoder end-of-sequence state (t5)" in repr(clf) and activations.shape == (len(TEXTS), 32)
    torch.testing.assert_close(clf.logits_from_activations(activations), logits, atol=1e-5, rtol=1e-5)
    if not positive:  # the model itself, one unpadded text at a time
        with torch.no_grad():
            expected = torch.cat([model(**_one(tokenizer, t)).logits for t in TEXTS])
        torch.testing.assert_close(logits, expected, atol=1e-5, rtol=1e-5)
    else:
        assert (activations >= 0).all() and (activations == 0).any()
    left = SplitClassifier(model, tokenizer, device="cpu", batch_size=2, padding_side="left")
    left_activations, left_logits = left.activations_and_logits(TEXTS)
    torch.testing.assert_close(left_activations, activations, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(left_logits, logits, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("granularity", ["mean", "token", "word"])
def test_inner_encoder_block(granularity, tokenizer) -> None:
    clf = SplitClassifier(seq_model(), tokenizer, split="transformer.encoder.block.0", granularity=granularity,
                          device="cpu", batch_size=2)  # fmt: skip
    activations, logits = clf.activations_and_logits(TEXTS)
    torch.testing.assert_close(clf.logits_from_activations(activations, TEXTS), logits, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("positive", [False, True])
def test_text_to_text_classification_by_class_tokens(positive, tokenizer) -> None:
    model = text_to_text_model()
    classes = ["sport", "business", "tech"]
    results = {}
    for side in ("left", "right"):
        clf = PromptClassifier(model, tokenizer, classes, device="cpu", batch_size=2, padding_side=side,
                               positive=positive)  # fmt: skip
        activations, logits = clf.activations_and_logits(TEXTS)
        torch.testing.assert_close(clf.logits_from_activations(activations), logits, atol=1e-5, rtol=1e-5)
        results[side] = activations, logits
    torch.testing.assert_close(results["left"][0], results["right"][0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(results["left"][1], results["right"][1], atol=1e-5, rtol=1e-5)
    if not positive:
        expected = []
        for text in TEXTS:
            encoding = tokenizer([clf.prompt(text)], return_tensors="pt")
            with torch.no_grad():
                out = model(input_ids=encoding["input_ids"], attention_mask=encoding["attention_mask"],
                            decoder_input_ids=torch.tensor([[0, *clf.answer.prefix]])).logits  # fmt: skip
            expected.append(out[0, -1, list(clf.answer.ids)])
        torch.testing.assert_close(results["left"][1], torch.stack(expected), atol=1e-5, rtol=1e-5)
    else:
        assert (results["left"][0] >= 0).all()


def test_consim_end_to_end_on_a_positive_t5(tokenizer) -> None:
    clf = SplitClassifier(seq_model(2), tokenizer, positive=True, device="cpu",
                          class_names=["negative", "positive"])  # fmt: skip
    pool = [f"{t} {word}" for word in ("today", "again", "now", "here") for t in TEXTS]
    activations = clf.activations(pool)
    nmf = NMF(n_concepts=3, random_state=0).fit(activations)  # non-negative: the "+" variant
    words = TopWords(clf, nmf, n_words=2, min_frequency=2).fit(pool)
    predictions = clf.predict(pool)

    def perfect(messages):
        return "\n".join(
            f"Sample_{len(samples.lp_texts) + i}: {clf.class_names[p]}"
            for i, p in enumerate(samples.ep_predictions)
        )

    explanation = Explanation(extractor=nmf, interpretation=words, activations=activations)
    consim = ConSim(clf, ScriptedSimulator(perfect), explanation=explanation)
    samples = consim.select_examples(pool, predictions, predictions, n_lp=4, n_ep=4, balance="relaxed")
    baseline, explained = consim.evaluate_many(samples, prompt_types=["NE2", "E3"])
    assert baseline.score == explained.score == 1.0
    assert "concept_" in "\n".join(m.content for m in explained.messages)
