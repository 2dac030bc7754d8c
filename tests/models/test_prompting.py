"""PromptClassifier on tiny random decoder-only LMs (Llama, Qwen2, GPT-2) with an offline byte-level BPE tokenizer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from bpe_texts import BPE_TEXTS
from xaimetrics.concepts import PCA
from xaimetrics.consim import ConSim, Explanation
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.models import PromptClassifier
from xaimetrics.simulators import ScriptedSimulator

TEXTS = BPE_TEXTS
CLASSES = ["sport", "business", "tech", "politics"]
ARCHITECTURES = ("llama", "qwen2", "gpt2")


def tiny_lm(architecture: str, vocab_size: int) -> torch.nn.Module:
    import transformers

    with torch.random.fork_rng():
        torch.manual_seed(sum(map(ord, architecture)))
        if architecture == "gpt2":
            config = transformers.GPT2Config(
                vocab_size=vocab_size, n_embd=32, n_layer=2, n_head=2, n_positions=256
            )
            return transformers.GPT2LMHeadModel(config).eval()
        config_class = transformers.LlamaConfig if architecture == "llama" else transformers.Qwen2Config
        config = config_class(
            vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=256, tie_word_embeddings=architecture == "qwen2",
        )  # fmt: skip
        auto = transformers.LlamaForCausalLM if architecture == "llama" else transformers.Qwen2ForCausalLM
        return auto(config).eval()


def _reference_logits(clf: PromptClassifier, text: str) -> torch.Tensor:
    """The LM run alone on one unpadded prompt: next-token logits of the class tokens."""
    ids = clf.tokenizer(clf.prompt(text), add_special_tokens=False)["input_ids"] + list(clf.answer.prefix)
    with torch.no_grad():
        logits = clf.model(input_ids=torch.tensor([ids])).logits[0, -1]
    return logits[list(clf.answer.ids)]


INNER = {"llama": "model.layers.0", "qwen2": "model.layers.0", "gpt2": "transformer.h.0"}


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_logits_are_the_next_token_logits_of_the_class_tokens(architecture, bpe) -> None:
    clf = PromptClassifier(tiny_lm(architecture, len(bpe)), bpe, CLASSES, device="cpu", batch_size=4)
    logits = clf.logits(TEXTS)
    expected = torch.stack([_reference_logits(clf, t) for t in TEXTS])
    torch.testing.assert_close(logits, expected, atol=1e-5, rtol=1e-5)
    assert clf.predict(TEXTS).tolist() == expected.argmax(dim=1).tolist()
    assert clf.class_names == CLASSES and clf.num_classes == 4


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_g_of_h_equals_f_and_padding_sides_agree(architecture, bpe) -> None:
    model = tiny_lm(architecture, len(bpe))
    results = {}
    for side in ("left", "right"):
        clf = PromptClassifier(model, bpe, CLASSES, device="cpu", batch_size=4, padding_side=side)
        activations, logits = clf.activations_and_logits(TEXTS)
        assert activations.shape == (len(TEXTS), 32)
        torch.testing.assert_close(clf.logits_from_activations(activations), logits, atol=1e-5, rtol=1e-5)
        results[side] = (activations, logits)
    torch.testing.assert_close(results["left"][0], results["right"][0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(results["left"][1], results["right"][1], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("granularity", ["last", "mean", "token", "word"])
@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_inner_layer_covers_the_text_tokens_only(architecture, granularity, bpe) -> None:
    model = tiny_lm(architecture, len(bpe))
    results = {}
    for side in ("left", "right"):
        clf = PromptClassifier(model, bpe, CLASSES, split=INNER[architecture], granularity=granularity,
                               device="cpu", batch_size=4, padding_side=side)  # fmt: skip
        activations, logits = clf.activations_and_logits(TEXTS)
        torch.testing.assert_close(
            clf.logits_from_activations(activations, TEXTS), logits, atol=1e-5, rtol=1e-5
        )
        results[side] = activations
    torch.testing.assert_close(results["left"], results["right"], atol=1e-5, rtol=1e-5)
    rows = clf.rows_per_text(TEXTS)
    if granularity == "word":
        assert rows.tolist() == [len(t.split()) for t in TEXTS]
    elif granularity == "token":
        text_tokens = [len(bpe(t, add_special_tokens=False)["input_ids"]) for t in TEXTS]
        # the text's tokens only (a token may straddle each boundary with the template), never the template's
        assert (np.abs(rows - np.asarray(text_tokens)) <= 2).all()
        assert (rows + 15 < clf.token_counts(TEXTS)).all()


def test_positive_variant_rectifies_the_answer_state(bpe) -> None:
    model = tiny_lm("llama", len(bpe))
    plain = PromptClassifier(model, bpe, CLASSES, device="cpu")
    a_plain = plain.activations(TEXTS)
    assert (a_plain < 0).any()
    positive = PromptClassifier(model, bpe, CLASSES, device="cpu", positive=True)
    a_pos, logits = positive.activations_and_logits(TEXTS)
    torch.testing.assert_close(a_pos, torch.relu(a_plain))
    torch.testing.assert_close(plain.logits_from_activations(a_pos), logits, atol=1e-5, rtol=1e-5)


def test_multi_token_class_names_share_a_prefix_and_differ_by_one_token(bpe) -> None:
    model = tiny_lm("qwen2", len(bpe))
    words = ["very positive news", "very negative news"]
    clf = PromptClassifier(model, bpe, ["pos", "neg"], class_words=words, device="cpu")
    answers = [bpe(" " + w, add_special_tokens=False)["input_ids"] for w in words]
    common = next(i for i, (a, b) in enumerate(zip(*answers, strict=False)) if a != b)
    assert common >= 1 and clf.answer.prefix == tuple(answers[0][:common])
    assert clf.answer.ids == (answers[0][common], answers[1][common])
    torch.testing.assert_close(clf.logits(TEXTS[:2]), torch.stack([_reference_logits(clf, t) for t in TEXTS[:2]]),
                               atol=1e-5, rtol=1e-5)  # fmt: skip
    with pytest.raises(
        InvalidParameterError, match=r"'class_words' parameter.*first differing token.*'tech news' / 'tech"
    ):
        PromptClassifier(
            model, bpe, ["a", "b", "c"], class_words=["tech news", "tech talk", "politics"], device="cpu"
        )
    with pytest.raises(InvalidParameterError, match=r"'class_words' parameter.*not the beginning of another"):
        PromptClassifier(model, bpe, ["a", "b"], class_words=["sport", "sport news"], device="cpu")


def test_chat_template_and_truncation_keep_the_answer_cue(bpe) -> None:
    clf = PromptClassifier(tiny_lm("llama", len(bpe)), bpe, CLASSES, chat=True, system="Be brief.",
                           template="Topic of: {text}", device="cpu", max_length=40)  # fmt: skip
    prompt = clf.prompt("a chip")
    assert prompt.startswith("<|system|>Be brief.<|end|><|user|>Topic of: a chip") and prompt.endswith(
        "<|assistant|>"
    )
    long_text = " ".join(TEXTS * 5)
    counts = clf.token_counts([long_text, "ok"])
    assert counts[0] <= 40 < len(bpe(clf.prompt(long_text))["input_ids"])
    ids = clf._encode([long_text]).input_ids[0]
    assert ids[-1] == bpe.convert_tokens_to_ids("<|assistant|>")  # the template's end survives truncation


def test_save_and_load_keep_the_prompt(bpe, tmp_path: Path) -> None:
    clf = PromptClassifier(
        tiny_lm("gpt2", len(bpe)), bpe, CLASSES, template="News: {text}\nTopic:", device="cpu"
    )
    clf.save_pretrained(tmp_path / "lm")
    loaded = PromptClassifier.from_pretrained(tmp_path / "lm", device="cpu")
    assert loaded.template == "News: {text}\nTopic:" and loaded.class_names == CLASSES
    torch.testing.assert_close(loaded.logits(TEXTS), clf.logits(TEXTS), atol=1e-5, rtol=1e-5)


def test_bad_arguments(bpe) -> None:
    model = tiny_lm("llama", len(bpe))
    with pytest.raises(InvalidParameterError, match=r"'template' parameter.*one '\{text\}' placeholder"):
        PromptClassifier(model, bpe, CLASSES, template="no placeholder", device="cpu")
    with pytest.raises(InvalidParameterError, match=r"'class_words' parameter.*4 non-empty strings"):
        PromptClassifier(model, bpe, CLASSES, class_words=["a"], device="cpu")
    with pytest.raises(InvalidParameterError, match=r"'template' parameter.*trailing space"):
        PromptClassifier(model, bpe, CLASSES, template="Text: {text}\nTopic: ", device="cpu")


def test_consim_end_to_end_on_a_prompted_llm(bpe) -> None:
    clf = PromptClassifier(tiny_lm("qwen2", len(bpe)), bpe, CLASSES, device="cpu", positive=True)
    pool = [f"{t} ({i})" for i in range(5) for t in TEXTS]
    activations = clf.activations(pool)
    extractor = PCA(n_concepts=4, random_state=0).fit(activations)
    predictions = clf.predict(pool)

    def perfect(messages):
        return "\n".join(
            f"Sample_{len(samples.lp_texts) + i}: {CLASSES[p]}" for i, p in enumerate(samples.ep_predictions)
        )

    explanation = Explanation(
        extractor=extractor, interpretation={i: f"direction {i}" for i in range(4)}, activations=activations
    )
    consim = ConSim(clf, ScriptedSimulator(perfect), explanation=explanation)
    samples = consim.select_examples(pool, predictions, predictions, n_lp=4, n_ep=4, balance="relaxed")
    result = consim.evaluate(samples, prompt_type="E3")
    assert result.score == 1.0 and result.n_parsed == 4
