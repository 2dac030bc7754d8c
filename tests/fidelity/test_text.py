"""The text path: a tiny random BERT with the MiniLM tokenizer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.fidelity import AOPCComprehensiveness, AOPCSufficiency, Deletion, Insertion, MuFidelity

# short texts have fewer words than the steps asked for: the clamping warning is tested with tensors
pytestmark = pytest.mark.filterwarnings("ignore:.*is larger than the number of features:UserWarning")

TEXTS = [
    "An unbelievably moving film, with superb acting.",
    "dull",
    "The plot was thin but the actors were great and the music memorable.",
]


class Recorder(torch.nn.Module):
    """Wraps the real model and records every batch it receives."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.batches = []

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        self.batches.append((input_ids.clone(), attention_mask.clone()))
        return self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)


def scores_for(text_count, seed=0):
    generator = np.random.default_rng(seed)
    return [generator.normal(size=n) for n in text_count]


def direct_score(model, ids, attention=None):
    ids = torch.tensor([ids])
    attention = torch.ones_like(ids) if attention is None else torch.tensor([attention])
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=attention).logits.softmax(-1)[0]


@pytest.mark.parametrize("mode", ["mask", "pad", "delete", 0.0, 1037])
def test_special_tokens_are_never_perturbed(tiny_bert, tokenizer, mode):
    recorder = Recorder(tiny_bert).eval()
    metric = Deletion(recorder, TEXTS, tokenizer=tokenizer, baseline_mode=mode, steps=3, batch_size=4)
    metric.evaluate(scores_for([len(f) for f in metric.feature_names]))
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    for ids, attention in recorder.batches:
        for row, mask in zip(ids, attention, strict=True):
            attended = row[mask.bool()]
            assert attended[0] == cls_id
            last = int(mask.nonzero().max())
            assert row[last] == sep_id and mask[last] == 1
            assert (row == cls_id).sum() == 1 and (row == sep_id).sum() == 1


def test_mask_mode_masks_exactly_the_top_tokens(tiny_bert, tokenizer):
    recorder = Recorder(tiny_bert).eval()
    metric = Deletion(recorder, TEXTS[:1], tokenizer=tokenizer, baseline_mode="mask", steps=-1)
    n = len(metric.feature_names[0])
    explanation = [np.arange(n, dtype=float)]  # last feature most important
    metric.evaluate(explanation)
    original = tokenizer(TEXTS[0])["input_ids"]
    rows = torch.cat([ids for ids, _ in recorder.batches])
    seen = set()
    for row in rows:
        masked = (row[: len(original)] == tokenizer.mask_token_id).nonzero().flatten().tolist()
        k = len(masked)
        # the k masked positions are the k last word-piece positions before [SEP]
        assert masked == list(range(len(original) - 1 - k, len(original) - 1))
        seen.add(k)
    assert seen == set(range(0, n + 1))  # every count, each once (0 for f(x), n for f(baseline))


@pytest.mark.parametrize("mode", ["delete", "pad", "mask"])
def test_curve_matches_the_model_on_hand_built_sequences(tiny_bert, tokenizer, mode):
    text = TEXTS[2]
    metric = Deletion(
        tiny_bert, [text], tokenizer=tokenizer, baseline_mode=mode, steps=4, activation="softmax"
    )
    n = len(metric.feature_names[0])
    explanation = np.random.default_rng(3).normal(size=n)
    curves = metric.curves([explanation])
    ids = tokenizer(text)["input_ids"]
    body = ids[1:-1]
    target = int(direct_score(tiny_bert, ids).argmax())
    order = sorted(range(n), key=lambda j: (-explanation[j], j))
    for k, score in zip(curves.n_perturbed[0], curves.scores[0], strict=True):
        removed = set(order[:k])
        if mode == "delete":
            kept = [ids[0]] + [t for j, t in enumerate(body) if j not in removed] + [ids[-1]]
            expected = direct_score(tiny_bert, kept)[target]
        elif mode == "pad":
            replaced = (
                [ids[0]]
                + [tokenizer.pad_token_id if j in removed else t for j, t in enumerate(body)]
                + [ids[-1]]
            )
            attention = [1] + [0 if j in removed else 1 for j in range(n)] + [1]
            expected = direct_score(tiny_bert, replaced, attention)[target]
        else:
            replaced = (
                [ids[0]]
                + [tokenizer.mask_token_id if j in removed else t for j, t in enumerate(body)]
                + [ids[-1]]
            )
            expected = direct_score(tiny_bert, replaced)[target]
        assert score == pytest.approx(float(expected), abs=1e-5)


def test_word_granularity_moves_word_pieces_together(tiny_bert, tokenizer):
    recorder = Recorder(tiny_bert).eval()
    metric = Insertion(recorder, TEXTS[:1], tokenizer=tokenizer, granularity="word", steps=-1)
    words = metric.feature_names[0]
    assert words[:3] == ["An", "unbelievably", "moving"]
    pieces = tokenizer.tokenize("unbelievably")
    assert len(pieces) > 1
    explanation = np.zeros(len(words))
    explanation[1] = 1.0  # "unbelievably" first
    metric.curves([explanation])
    encoded = tokenizer(TEXTS[0])
    positions = [t for t, w in enumerate(encoded.word_ids()) if w == 1]
    rows = torch.cat([ids for ids, _ in recorder.batches])
    # insertion at step 1: only "unbelievably" (all its pieces) is visible, every other word is masked
    step1 = [row for row in rows if (row != tokenizer.mask_token_id).sum() == len(positions) + 2]
    assert len(step1) == 1
    assert all(step1[0][p] == encoded["input_ids"][p] for p in positions)


def test_text_results_do_not_depend_on_batch_size_and_accept_special_token_positions(tiny_bert, tokenizer):
    kwargs = {"tokenizer": tokenizer, "steps": 5, "activation": "softmax", "baseline_mode": "delete"}
    metric = Deletion(tiny_bert, TEXTS, batch_size=64, **kwargs)
    explanation = scores_for([len(f) for f in metric.feature_names], seed=4)
    reference = metric.curves(explanation)
    for batch_size in (1, 3):
        other = Deletion(tiny_bert, TEXTS, batch_size=batch_size, **kwargs).curves(explanation)
        for a, b in zip(reference.scores, other.scores, strict=True):
            np.testing.assert_allclose(a, b, atol=1e-5)
    with_specials = [np.concatenate([[9.0], e, [9.0]]) for e in explanation]
    np.testing.assert_allclose(metric.curves(with_specials).auc, reference.auc)
    padded = np.full((3, max(len(e) for e in explanation)), 7.0)
    for i, e in enumerate(explanation):
        padded[i, : len(e)] = e
    np.testing.assert_allclose(metric.curves(padded).auc, reference.auc)


def test_split_classifier_is_accepted_as_model(tiny_bert, tokenizer):
    from xaimetrics.models import SplitClassifier

    classifier = SplitClassifier(tiny_bert, tokenizer, device="cpu")
    via_wrapper = Insertion(classifier, TEXTS, steps=4)
    via_hf = Insertion(tiny_bert, TEXTS, tokenizer=tokenizer, steps=4)
    explanation = scores_for([len(f) for f in via_hf.feature_names], seed=1)
    assert via_wrapper.feature_names == via_hf.feature_names
    assert via_wrapper.evaluate(explanation) == pytest.approx(via_hf.evaluate(explanation), abs=1e-6)


def test_aopc_and_mufidelity_on_text(tiny_bert, tokenizer):
    aopc = AOPCComprehensiveness(
        tiny_bert, TEXTS, tokenizer=tokenizer, activation="softmax", thresholds=(0.1, 0.5)
    )
    names = aopc.feature_names
    explanation = scores_for([len(f) for f in names], seed=2)
    deletion = Deletion(tiny_bert, TEXTS, tokenizer=tokenizer, activation="softmax", steps=-1)
    curves = deletion.curves(explanation)
    for i, drop in enumerate(aopc.evaluate_samples(explanation)):
        n = len(names[i])
        k = [min(n, max(1, int(np.ceil(t * n - 1e-9)))) for t in (0.1, 0.5)]
        expected = np.mean([curves.scores[i][0] - curves.scores[i][kk] for kk in k])
        assert drop == pytest.approx(expected, abs=1e-6)
    sufficiency = AOPCSufficiency(tiny_bert, TEXTS, tokenizer=tokenizer, activation="softmax").evaluate(
        explanation
    )
    assert np.isfinite(sufficiency)
    mu = MuFidelity(tiny_bert, TEXTS[::2], tokenizer=tokenizer, nb_samples=16, random_state=3)
    values = mu.evaluate_samples(explanation[::2])
    assert values.shape == (2,) and np.all(np.abs(values) <= 1)


def test_text_errors(tiny_bert, tokenizer):
    with pytest.raises(
        InvalidParameterError, match=r"'tokenizer' parameter of Deletion must be the model's tokenizer"
    ):
        Deletion(tiny_bert, TEXTS)
    with pytest.raises(
        InvalidParameterError, match=r"'baseline_mode' parameter of Deletion must be 'mask', 'pad'"
    ):
        Deletion(tiny_bert, TEXTS, tokenizer=tokenizer, baseline_mode="zeros")
    with pytest.raises(
        InvalidParameterError, match=r"'baseline_mode' parameter of Deletion must be a token id in"
    ):
        Deletion(tiny_bert, TEXTS, tokenizer=tokenizer, baseline_mode=10**9)
    with pytest.raises(
        InvalidParameterError, match=r"'granularity' parameter of Deletion must be one of 'token', 'word'"
    ):
        Deletion(tiny_bert, TEXTS, tokenizer=tokenizer, granularity="sentence")
    with pytest.raises(
        InvalidParameterError, match=r"texts with at least one non-special token\. Got text 1"
    ):
        Deletion(tiny_bert, ["fine", ""], tokenizer=tokenizer)
    metric = Deletion(tiny_bert, TEXTS, tokenizer=tokenizer)
    sizes = [len(f) for f in metric.feature_names]
    with pytest.raises(
        InvalidParameterError, match=r"for text 1, 1 scores \(its tokens, see feature_names\)"
    ):
        metric.evaluate([np.ones(sizes[0]), np.ones(5), np.ones(sizes[2])])
    with pytest.raises(InvalidParameterError, match=r"one explanation per text \(3\)"):
        metric.evaluate([np.ones(sizes[0])])
    bad = [np.ones(s) for s in sizes]
    bad[2][0] = np.nan
    with pytest.raises(InvalidParameterError, match=r"NaN or inf for text 2"):
        metric.evaluate(bad)
    with pytest.raises(
        InvalidParameterError, match=r"'tokenizer' parameter of Deletion must be None for tensor inputs"
    ):
        Deletion(torch.nn.Linear(2, 2), torch.ones(2, 2), tokenizer=tokenizer)
