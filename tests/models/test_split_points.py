"""Any split point: named inner modules at every granularity, g = the rest of the network, left/right padding,
per-text concept importance, and ConSim end to end at an inner layer with token granularity."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xaimetrics.concepts import PCA, TopWords, local_importance
from xaimetrics.consim import ConSim, Explanation
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.models import SplitClassifier, concept_importance
from xaimetrics.simulators import ScriptedSimulator

ARCHITECTURES = ("bert", "distilbert", "roberta")
INNER = {
    "bert": "bert.encoder.layer.0",
    "distilbert": "distilbert.transformer.layer.0",
    "roberta": "roberta.encoder.layer.0",
}
TEXTS = [
    "a fine film",
    "dull, predictable and far too long; the second half drags on without any reason to care",
    "ok",
    "what a wonderful, strange little movie",
    "don't bother: it's two hours of shouting",
    "bad",
    "funny, warm and surprisingly moving",
]


def _hidden(model, tokenizer, layer: int, text: str) -> tuple[torch.Tensor, list[tuple[int, int]]]:
    """Output of block ``layer`` for one unpadded text, and the token offsets."""
    encoding = tokenizer([text], return_tensors="pt", return_offsets_mapping=True)
    offsets = [tuple(map(int, pair)) for pair in encoding.pop("offset_mapping")[0]]
    if model.config.model_type == "distilbert":
        encoding.pop("token_type_ids")
    with torch.no_grad():
        hidden = model(**encoding, output_hidden_states=True).hidden_states[layer + 1][0]
    return hidden, offsets


@pytest.mark.parametrize("granularity", ["cls", "last", "mean", "token", "word"])
@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_g_of_h_equals_f_at_an_inner_layer(architecture, granularity, make_model, tokenizer) -> None:
    clf = SplitClassifier(
        make_model(architecture), tokenizer, split=INNER[architecture], granularity=granularity, device="cpu",
        batch_size=3,
    )  # fmt: skip
    activations, logits = clf.activations_and_logits(TEXTS)
    assert activations.shape[0] == int(clf.rows_per_text(TEXTS).sum())
    torch.testing.assert_close(clf.logits_from_activations(activations, TEXTS), logits, atol=1e-5, rtol=1e-5)
    # A changed row moves the logits of its own text only.
    rows = clf.rows_per_text(TEXTS)
    edited = activations.clone()
    edited[int(rows[:4].sum())] *= -20.0
    moved = (clf.logits_from_activations(edited, TEXTS) - logits).abs().amax(dim=1) > 1e-7
    assert moved.tolist() == [i == 4 for i in range(len(TEXTS))]


def test_word_rows_are_the_means_of_their_tokens(make_model, tokenizer) -> None:
    model = make_model("bert")
    clf = SplitClassifier(model, tokenizer, split="bert.encoder.layer.1", granularity="word", device="cpu")
    expected = []
    for text in TEXTS:
        hidden, offsets = _hidden(model, tokenizer, 1, text)
        words = text.split()
        starts = np.cumsum([0] + [len(w) + 1 for w in words[:-1]])  # single spaces in TEXTS
        for start, word in zip(starts, words, strict=True):
            inside = [t for t, (a, b) in enumerate(offsets) if b > a and start <= a < start + len(word)]
            expected.append(hidden[inside].mean(dim=0))
    torch.testing.assert_close(clf.activations(TEXTS), torch.stack(expected), atol=1e-5, rtol=1e-5)
    assert clf.rows_per_text(TEXTS).tolist() == [len(t.split()) for t in TEXTS]
    # a single word alone is one row, whatever its number of tokens ("don't" is 3 BERT tokens)
    assert clf.activations(["don't", "wonderfully", "x"]).shape == (3, 32)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_left_padding_is_refused_for_first_token_heads(architecture, make_model, tokenizer) -> None:
    with pytest.raises(InvalidParameterError, match=r"'padding_side' parameter.*reads the first column"):
        SplitClassifier(make_model(architecture), tokenizer, device="cpu", padding_side="left")


def test_gradient_of_a_pooled_row_is_the_sum_of_its_token_gradients(make_model, tokenizer) -> None:
    model = make_model("bert")
    kwargs = {"split": "bert.encoder.layer.0", "device": "cpu"}
    token = SplitClassifier(model, tokenizer, granularity="token", **kwargs)
    mean = SplitClassifier(model, tokenizer, granularity="mean", **kwargs)
    texts = TEXTS[:3]
    a_token = token.activations(texts).requires_grad_(True)
    token.logits_from_activations(a_token, texts)[:, 2].sum().backward()
    a_mean = mean.activations(texts).requires_grad_(True)
    mean.logits_from_activations(a_mean, texts)[:, 2].sum().backward()
    summed = torch.stack(
        [g.sum(dim=0) for g in torch.split(a_token.grad, token.rows_per_text(texts).tolist())]
    )
    torch.testing.assert_close(a_mean.grad, summed, atol=1e-5, rtol=1e-4)


class _Identity:
    """t = t⁻¹ = identity (a concept per activation dimension), torch in, torch out."""

    def encode(self, activations):
        return activations

    def decode(self, concepts):
        return concepts


def test_concept_importance_at_the_head_input_is_eq_3(make_model, tokenizer) -> None:
    clf = SplitClassifier(make_model("distilbert"), tokenizer, device="cpu")
    extractor = PCA(n_concepts=5, random_state=0).fit(clf.activations(TEXTS))
    phi, predicted = concept_importance(clf, extractor, TEXTS, batch_size=3)
    expected, expected_predictions = local_importance(
        clf, extractor.encode(clf.activations(TEXTS)), extractor=extractor, return_predictions=True
    )
    np.testing.assert_allclose(phi, expected.numpy(), atol=1e-5)
    assert predicted.tolist() == expected_predictions.tolist()


def test_concept_importance_at_token_level_sums_gradient_x_input_over_tokens(make_model, tokenizer) -> None:
    clf = SplitClassifier(
        make_model("bert"), tokenizer, split="bert.encoder.layer.1", granularity="token", device="cpu"
    )
    targets = np.array([0, 1, 2, 0, 1, 2, 0])
    phi, _ = clf.concept_importance(_Identity(), TEXTS, targets, batch_size=2)
    assert phi.shape == (len(TEXTS), 32)
    for i, text in enumerate(TEXTS):
        a = clf.activations([text]).requires_grad_(True)
        clf.logits_from_activations(a, [text])[0, targets[i]].backward()
        np.testing.assert_allclose(phi[i], (a * a.grad).sum(dim=0).detach().numpy(), atol=2e-5, rtol=1e-4)
    with pytest.raises(InvalidParameterError, match=r"'targets' parameter of concept_importance"):
        clf.concept_importance(_Identity(), TEXTS, targets[:3])


def test_consim_runs_at_an_inner_layer_with_token_granularity(make_model, tokenizer) -> None:
    """The Interpreto page's setting (BERT, inner layer, token granularity) through the whole ConSim pipeline."""
    clf = SplitClassifier(make_model("bert", num_labels=2), tokenizer, split="bert.encoder.layer.1",
                          granularity="token", device="cpu", class_names=["negative", "positive"])  # fmt: skip
    fit_texts = [f"{t} number {i}" for i in range(4) for t in TEXTS]
    extractor = PCA(n_concepts=6, random_state=0).fit(clf.activations(fit_texts))
    interpretation = TopWords(clf.with_granularity("word"), extractor, n_words=3, min_frequency=2).fit(
        fit_texts
    )
    assert len(interpretation.vocabulary_) == len(interpretation.scores_)
    predictions = clf.predict(fit_texts)
    answers = {}

    def simulate(messages):  # answers f's prediction for each EP sample: a perfect reader
        answers["prompt"] = "\n".join(m.content for m in messages)
        return "\n".join(f"Sample_{i}: {clf.class_names[p]}" for i, p in ep)

    explanation = Explanation(extractor=extractor, interpretation=interpretation, activations=fit_texts)
    consim = ConSim(clf, ScriptedSimulator(simulate), explanation=explanation)
    samples = consim.select_examples(fit_texts, predictions, predictions, n_lp=4, n_ep=4, balance="relaxed")
    ep = [(len(samples.lp_texts) + i, p) for i, p in enumerate(samples.ep_predictions)]
    result = consim.evaluate(samples, prompt_type="E3")
    assert result.score == 1.0
    assert (
        "concept_0: aligned" in answers["prompt"]
        and "Concepts contributions for Sample_0:" in answers["prompt"]
    )
    phi_lp, _ = clf.concept_importance(extractor, list(samples.lp_texts), samples.lp_predictions)
    assert np.abs(phi_lp).sum() > 0
    with pytest.raises(InvalidParameterError, match=r"'activations' parameter of ConSim.*texts"):
        pooled = Explanation(
            extractor=extractor, interpretation=interpretation, activations=clf.activations(fit_texts)
        )
        ConSim(clf, None, explanation=pooled).evaluate(samples, prompt_type="E1")


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_with_layer_reads_the_named_block_and_keeps_g_of_h_equal_to_f(
    architecture, make_model, tokenizer
) -> None:
    from xaimetrics._model_identity import model_digest

    head = SplitClassifier(make_model(architecture), tokenizer, device="cpu", batch_size=3)
    inner = head.with_layer(0)
    assert inner.split == INNER[architecture] and inner.granularity == "mean" and inner.needs_inputs
    assert inner.model is head.model and head.split is None  # the same model; the original is unchanged
    # the mean over the real tokens of block 0's output, as transformers' hidden states give it
    hidden, _ = _hidden(head.model, tokenizer, 0, TEXTS[1])
    torch.testing.assert_close(inner.activations([TEXTS[1]])[0], hidden.mean(dim=0), atol=1e-5, rtol=1e-5)
    activations, logits = inner.activations_and_logits(TEXTS)
    torch.testing.assert_close(
        inner.logits_from_activations(activations, TEXTS), logits, atol=1e-5, rtol=1e-5
    )
    torch.testing.assert_close(logits, head.logits(TEXTS), atol=1e-5, rtol=1e-5)  # f itself is unchanged
    last = head.with_layer(1, "cls")
    assert last.split.endswith(".1") and last.granularity == "cls"
    digests = {model_digest(c) for c in (head, inner, last)}
    assert len(digests) == 3  # caches keyed on the digest tell the layers apart
    back = inner.with_layer(None)
    assert back.split is None and back.granularity == "cls" and back.metadata["split"] is None
    torch.testing.assert_close(back.activations(TEXTS), head.activations(TEXTS))


@pytest.mark.parametrize("layer", [2, -1, True, 1.0])
def test_with_layer_refuses_a_layer_outside_the_model(layer, make_model, tokenizer) -> None:
    head = SplitClassifier(make_model("bert"), tokenizer, device="cpu")
    with pytest.raises(
        InvalidParameterError, match=r"'--layer' .* an integer from 0 to 1 \(one of the model's 2 "
    ):
        head.with_layer(layer, owner="xaimetrics consim", argument="--layer")


def test_how_a_classifier_runs_does_not_change_its_digest(make_model, tokenizer) -> None:
    """A progress bar or a batch size is not an input of a result: a demo rerun with --no-progress reuses every
    stored row (it recomputed them all, and would have paid for them twice, when the flag entered the digest)."""
    from xaimetrics._model_identity import model_digest

    model = SplitClassifier(make_model(ARCHITECTURES[0]), tokenizer, device="cpu", batch_size=3)
    before = model_digest(model)
    model.progress, model.batch_size = not model.progress, 17
    assert model_digest(model) == before
    assert model_digest(model.with_layer(0)) != before  # what it computes still counts
