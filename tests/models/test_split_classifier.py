"""SplitClassifier: f = g∘h on tiny BERT, DistilBERT and RoBERTa models, compared with direct model calls."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.models import SplitClassifier

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

FIRST_LAYER = {
    "bert": "bert.encoder.layer.0",
    "distilbert": "distilbert.transformer.layer.0",
    "roberta": "roberta.encoder.layer.0",
}


def _encode_one(tokenizer, model, text: str) -> dict[str, torch.Tensor]:
    encoding = tokenizer([text], truncation=True, max_length=256, return_tensors="pt")
    if model.config.model_type == "distilbert":
        encoding.pop("token_type_ids")
    return dict(encoding)


def _reference_head_input(model, tokenizer, text: str) -> torch.Tensor:
    """The head input read directly from the backbone, one text at a time (no padding)."""
    encoding = _encode_one(tokenizer, model, text)
    with torch.no_grad():
        if model.config.model_type == "bert":
            return model.bert(**encoding).pooler_output[0]
        backbone = model.distilbert if model.config.model_type == "distilbert" else model.roberta
        return backbone(**encoding).last_hidden_state[0, 0]


def _reference_logits(model, tokenizer, text: str) -> torch.Tensor:
    with torch.no_grad():
        return model(**_encode_one(tokenizer, model, text)).logits[0]


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_activations_and_logits_match_the_model_run_text_by_text(architecture, make_model, tokenizer) -> None:
    model = make_model(architecture)
    clf = SplitClassifier(model, tokenizer, device="cpu", batch_size=5)
    activations, logits = clf.activations_and_logits(TEXTS)
    expected_a = torch.stack([_reference_head_input(model, tokenizer, t) for t in TEXTS])
    expected_l = torch.stack([_reference_logits(model, tokenizer, t) for t in TEXTS])
    assert activations.shape == (len(TEXTS), 32) and logits.shape == (len(TEXTS), 3)
    assert activations.dtype == logits.dtype == torch.float32 and activations.device.type == "cpu"
    torch.testing.assert_close(activations, expected_a, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(logits, expected_l, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(clf.activations(TEXTS), activations)
    torch.testing.assert_close(clf.logits(TEXTS), logits)


@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_g_of_h_equals_f(architecture, positive, make_model, tokenizer) -> None:
    clf = SplitClassifier(make_model(architecture), tokenizer, positive=positive, device="cpu")
    activations, logits = clf.activations_and_logits(TEXTS)
    torch.testing.assert_close(clf.logits_from_activations(activations), logits, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(clf.logits_from_activations(activations.numpy()), logits, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_results_do_not_depend_on_batch_size(architecture, make_model, tokenizer) -> None:
    model = make_model(architecture)
    results = [
        SplitClassifier(model, tokenizer, device="cpu", batch_size=size).activations_and_logits(TEXTS)
        for size in (1, 32, 5)
    ]
    for activations, logits in results[1:]:
        torch.testing.assert_close(activations, results[0][0], atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(logits, results[0][1], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_positive_model_applies_relu_at_the_head_input(architecture, make_model, tokenizer) -> None:
    model = make_model(architecture)
    standard = SplitClassifier(model, tokenizer, device="cpu")
    plain_a, plain_logits = standard.activations_and_logits(TEXTS)
    assert (plain_a < 0).any()  # otherwise the test below proves nothing
    positive = SplitClassifier(model, tokenizer, positive=True, device="cpu")
    pos_a, pos_logits = positive.activations_and_logits(TEXTS)
    assert (pos_a >= 0).all()
    torch.testing.assert_close(pos_a, torch.relu(plain_a), atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(
        pos_logits, standard.logits_from_activations(torch.relu(plain_a)), atol=1e-5, rtol=0
    )
    assert not torch.allclose(pos_logits, plain_logits, atol=1e-4)
    assert model.config.xaimetrics_positive_split is True
    with pytest.warns(UserWarning, match="fine-tuned with a ReLU"):
        back = SplitClassifier(model, tokenizer, positive=False, device="cpu")
    torch.testing.assert_close(back.logits(TEXTS), plain_logits)
    assert model.config.xaimetrics_positive_split is False


def test_wrapping_a_positive_model_twice_applies_the_relu_once(make_model, tokenizer) -> None:
    model = make_model("distilbert")
    first = SplitClassifier(model, tokenizer, positive=True, device="cpu")
    second = SplitClassifier(model, tokenizer, device="cpu")  # positive read from the config
    assert second.positive is True
    assert len(model.pre_classifier._forward_pre_hooks) == 1
    torch.testing.assert_close(first.logits(TEXTS), second.logits(TEXTS))


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_gradient_flows_through_g(architecture, make_model, tokenizer) -> None:
    clf = SplitClassifier(make_model(architecture), tokenizer, device="cpu")
    activations = clf.activations(TEXTS[:4]).requires_grad_(True)  # a normal tensor, not an inference one
    logits = clf.logits_from_activations(activations)
    assert logits.requires_grad
    (gradient,) = torch.autograd.grad(logits[:, 1].sum(), activations)
    assert gradient.shape == activations.shape and gradient.abs().sum() > 0
    # Finite differences on one coordinate agree with autograd.
    step = 1e-3
    shifted = activations.detach().clone()
    shifted[2, 5] += step
    numeric = (clf.logits_from_activations(shifted)[2, 1] - logits[2, 1].detach()) / step
    assert float(numeric) == pytest.approx(float(gradient[2, 5]), abs=2e-3)


def test_gradient_of_a_linear_head_is_its_weight(make_model, tokenizer) -> None:
    model = make_model("bert")
    clf = SplitClassifier(model, tokenizer, device="cpu")
    activations = torch.rand(3, 32, requires_grad=True)
    clf.logits_from_activations(activations)[:, 2].sum().backward()
    torch.testing.assert_close(activations.grad, model.classifier.weight[2].detach().expand(3, -1))


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_named_module_granularities_match_hidden_states(architecture, make_model, tokenizer) -> None:
    model = make_model(architecture)
    layer = FIRST_LAYER[architecture]
    per_text = []
    for text in TEXTS:
        with torch.no_grad():
            hidden = model(**_encode_one(tokenizer, model, text), output_hidden_states=True).hidden_states[1][
                0
            ]
        per_text.append(hidden)
    expected = {
        "cls": torch.stack([h[0] for h in per_text]),
        "mean": torch.stack([h.mean(dim=0) for h in per_text]),
        "token": torch.cat(per_text),
    }
    for granularity, reference in expected.items():
        clf = SplitClassifier(
            model, tokenizer, split=layer, granularity=granularity, device="cpu", batch_size=4
        )
        torch.testing.assert_close(clf.activations(TEXTS), reference, atol=1e-5, rtol=1e-5)
        assert clf.hidden_size == 32
    counts = clf.token_counts(TEXTS)
    assert counts.tolist() == [len(h) for h in per_text] and counts.sum() == expected["token"].shape[0]


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_token_level_g_re_runs_the_network(architecture, make_model, tokenizer) -> None:
    model = make_model(architecture)
    clf = SplitClassifier(
        model, tokenizer, split=FIRST_LAYER[architecture], granularity="token", device="cpu"
    )
    activations, logits = clf.activations_and_logits(TEXTS)
    torch.testing.assert_close(clf.logits_from_activations(activations, TEXTS), logits, atol=1e-5, rtol=1e-5)
    # Changing the tokens of one text changes only that text's logits.
    counts = clf.token_counts(TEXTS)
    edited = activations.clone()
    start = int(counts[:3].sum())
    edited[start : start + counts[3]] += torch.randn(
        int(counts[3]), 32, generator=torch.Generator().manual_seed(0)
    )
    changed = clf.logits_from_activations(edited, TEXTS)
    moved = (changed - logits).abs().amax(dim=1) > 1e-4
    assert moved.tolist() == [i == 3 for i in range(len(TEXTS))]
    # And the gradient flows back to the token rows of the text it belongs to.
    leaf = activations.clone().requires_grad_(True)
    clf.logits_from_activations(leaf, TEXTS)[3, 0].backward()
    by_text = torch.stack([rows.abs().sum() for rows in torch.split(leaf.grad, counts.tolist())])
    assert by_text[3] > 0 and torch.count_nonzero(by_text) == 1


def test_module_with_one_vector_per_text(make_model, tokenizer) -> None:
    model = make_model("bert")
    clf = SplitClassifier(model, tokenizer, split="bert.pooler", device="cpu")
    activations, logits = clf.activations_and_logits(TEXTS)
    head = SplitClassifier(model, tokenizer, device="cpu")
    torch.testing.assert_close(activations, head.activations(TEXTS))
    torch.testing.assert_close(clf.logits_from_activations(activations, TEXTS), logits, atol=1e-5, rtol=1e-5)
    token = SplitClassifier(model, tokenizer, split="bert.pooler", granularity="token", device="cpu")
    with pytest.raises(InvalidParameterError, match=r"'granularity' parameter.*no tokens to keep"):
        token.activations(TEXTS)


def test_token_level_g_checks_inputs(make_model, tokenizer) -> None:
    clf = SplitClassifier(
        make_model("bert"), tokenizer, split="bert.encoder.layer.0", granularity="token", device="cpu"
    )
    activations = clf.activations(TEXTS[:3])
    with pytest.raises(InvalidParameterError, match=r"'inputs' parameter.*needs the texts"):
        clf.logits_from_activations(activations)
    with pytest.raises(InvalidParameterError, match=r"one row per group of 'inputs' \(\d+ rows\)"):
        clf.logits_from_activations(activations, TEXTS[:4])
    with pytest.raises(InvalidParameterError, match=r"shape \(n_rows_total, 32\)"):
        clf.logits_from_activations(activations[:, :8], TEXTS[:3])


def test_predict_and_class_names(make_model, tokenizer) -> None:
    model = make_model("roberta", num_labels=2)
    clf = SplitClassifier(model, tokenizer, device="cpu")
    predictions = clf.predict(TEXTS)
    assert predictions.dtype == np.int64
    assert predictions.tolist() == clf.logits(TEXTS).argmax(dim=1).tolist()
    assert clf.class_names == ["class_0", "class_1"] and clf.num_classes == 2
    named = SplitClassifier(model, tokenizer, class_names=["neg", "pos"], device="cpu")
    assert named.class_names == ["neg", "pos"]
    with pytest.raises(InvalidParameterError, match=r"'class_names' parameter.*2 strings"):
        SplitClassifier(model, tokenizer, class_names=["a", "b", "c"], device="cpu")


def test_save_and_load_a_positive_model(make_model, tokenizer, tmp_path: Path) -> None:
    clf = SplitClassifier(make_model("bert"), tokenizer, positive=True, device="cpu")
    clf.metadata = {"test_accuracy": 0.75}
    expected_a, expected_logits = clf.activations_and_logits(TEXTS)
    clf.save_pretrained(tmp_path / "saved")
    loaded = SplitClassifier.from_pretrained(tmp_path / "saved", device="cpu")
    assert loaded.positive is True and loaded.test_accuracy == 0.75
    activations, logits = loaded.activations_and_logits(TEXTS)
    assert (activations >= 0).all() and (activations == 0).any()
    torch.testing.assert_close(activations, expected_a)
    torch.testing.assert_close(logits, expected_logits)
    with pytest.warns(UserWarning, match="the ReLU is removed"):
        unrectified = SplitClassifier.from_pretrained(tmp_path / "saved", device="cpu", positive=False)
    assert (unrectified.activations(TEXTS) < 0).any()


def test_from_pretrained_errors(tmp_path: Path) -> None:
    with pytest.raises(
        InvalidParameterError, match=r"'name_or_path' parameter of SplitClassifier.from_pretrained"
    ):
        SplitClassifier.from_pretrained(tmp_path / "missing")


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ([], "non-empty list of strings"),
        ("one text", "Wrap it in a list"),
        (["fine", 3], "int at position 1"),
        (None, "a list of strings. Got NoneType"),
    ],
)
def test_bad_texts(inputs, message, make_model, tokenizer) -> None:
    clf = SplitClassifier(make_model("bert"), tokenizer, device="cpu")
    for method in (clf.logits, clf.predict, clf.activations, clf.activations_and_logits):
        with pytest.raises(InvalidParameterError, match=message):
            method(inputs)


def test_bad_activations_for_g(make_model, tokenizer) -> None:
    clf = SplitClassifier(make_model("bert"), tokenizer, device="cpu")
    with pytest.raises(
        InvalidParameterError, match=r"'activations' parameter.*shape \(n, 32\). Got shape \(4, 31\)"
    ):
        clf.logits_from_activations(torch.zeros(4, 31))
    with pytest.raises(InvalidParameterError, match=r"Got shape \(32,\)"):
        clf.logits_from_activations(np.zeros(32))
    with pytest.raises(InvalidParameterError, match="numpy array or torch tensor of floats"):
        clf.logits_from_activations("not numbers")


def test_bad_constructor_arguments(make_model, tokenizer) -> None:
    model = make_model("bert")
    with pytest.raises(InvalidParameterError, match=r"Closest names: bert.encoder.layer.0"):
        SplitClassifier(model, tokenizer, split="bert.encoder.layers.0")
    with pytest.raises(InvalidParameterError, match=r"named_modules\(\)"):
        SplitClassifier(model, tokenizer, split="nothing_like_it")
    with pytest.raises(
        InvalidParameterError, match=r"'granularity' parameter.*one of 'cls', 'last', 'mean', 'token', 'word'"
    ):
        SplitClassifier(model, tokenizer, split="bert.encoder.layer.0", granularity="max")
    with pytest.raises(InvalidParameterError, match=r"'cls' when split=None.*split='bert.encoder.layer.1'"):
        SplitClassifier(model, tokenizer, granularity="mean")
    with pytest.raises(InvalidParameterError, match="'model' parameter"):
        SplitClassifier("bert", tokenizer)
    with pytest.raises(InvalidParameterError, match=r"'batch_size' parameter.*≥ 1. Got 0"):
        SplitClassifier(model, tokenizer, batch_size=0)
    with pytest.raises(InvalidParameterError, match="'positive' parameter"):
        SplitClassifier(model, tokenizer, positive="yes")


def test_unknown_head_layout_asks_for_a_split(make_model, tokenizer) -> None:
    model = make_model("bert")
    model.classifier = torch.nn.Sequential(torch.nn.Linear(32, 3))
    with pytest.raises(InvalidParameterError, match=r"'split' parameter.*Pass split='<module name>'"):
        SplitClassifier(model, tokenizer, device="cpu")
    with pytest.raises(InvalidParameterError, match=r"'positive' parameter.*head layout"):
        SplitClassifier(model, tokenizer, split="bert.pooler", positive=True, device="cpu")
    clf = SplitClassifier(model, tokenizer, split="bert.pooler", device="cpu")  # a named split still works
    activations, logits = clf.activations_and_logits(TEXTS)
    torch.testing.assert_close(clf.logits_from_activations(activations, TEXTS), logits, atol=1e-5, rtol=1e-5)


def test_a_look_alike_head_is_caught(make_model, tokenizer) -> None:
    model = make_model("bert")
    original_forward = model.forward

    def negated(*args, **kwargs):
        output = original_forward(*args, **kwargs)
        output.logits = -output.logits
        return output

    model.forward = negated
    clf = SplitClassifier(model, tokenizer, device="cpu")
    with pytest.raises(InvalidParameterError, match="does not reproduce the model's logits"):
        clf.activations(TEXTS)


def test_module_called_twice_is_rejected(make_model, tokenizer) -> None:
    model = make_model("bert")
    model.bert.encoder.layer[1] = model.bert.encoder.layer[0]
    clf = SplitClassifier(model, tokenizer, split="bert.encoder.layer.0", device="cpu")
    with pytest.raises(InvalidParameterError, match="called 2 times"):
        clf.activations(TEXTS)


def test_progress_bar_shows_when_asked(make_model, tokenizer, capsys) -> None:
    model = make_model("distilbert")
    SplitClassifier(model, tokenizer, device="cpu", batch_size=2, progress=True).logits(TEXTS)
    assert "SplitClassifier" in capsys.readouterr().err
    SplitClassifier(model, tokenizer, device="cpu", batch_size=2, progress=False).logits(TEXTS)
    assert capsys.readouterr().err == ""


def test_repr_names_the_split(make_model, tokenizer) -> None:
    text = repr(SplitClassifier(make_model("distilbert"), tokenizer, device="cpu"))
    assert "head input: [CLS] hidden state (distilbert)" in text and "positive=False" in text


def test_importing_the_family_does_not_import_transformers() -> None:
    code = "import sys, xaimetrics.models; print('transformers' in sys.modules)"
    src = Path(__file__).resolve().parents[2] / "src"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONPATH": str(src)}
    )
    assert result.stdout.strip() == "False"
