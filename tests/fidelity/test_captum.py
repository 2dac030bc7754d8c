"""The Captum attribution helper, against closed forms and hand-computed gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.fidelity import attribute


@pytest.fixture
def linear2():
    model = torch.nn.Linear(4, 2)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[1.0, -2.0, 0.5, 3.0], [0.0, 1.0, -1.0, 2.0]]))
        model.bias.copy_(torch.tensor([0.1, -0.2]))
    return model.eval()


def test_closed_forms_on_a_linear_model(linear2):
    x = torch.tensor([[2.0, 1.0, -4.0, 0.5], [1.0, 1.0, 1.0, 1.0]])
    targets = [0, 1]
    w = linear2.weight.detach()[targets]
    torch.testing.assert_close(attribute(linear2, x, "saliency", targets), w.abs())
    torch.testing.assert_close(attribute(linear2, x, "input_x_gradient", targets), w * x)
    torch.testing.assert_close(attribute(linear2, x, "integrated_gradients", targets, n_steps=10), w * x)
    torch.testing.assert_close(attribute(linear2, x, "occlusion", targets), w * x)
    # default target: the predicted class; one-hot targets are accepted
    predicted = linear2(x).argmax(1)
    torch.testing.assert_close(attribute(linear2, x, "saliency"), linear2.weight.detach()[predicted].abs())
    one_hot = torch.nn.functional.one_hot(torch.tensor(targets), 2)
    torch.testing.assert_close(attribute(linear2, x, "saliency", one_hot), w.abs())


def test_images_are_reduced_over_channels(small_cnn):
    x = torch.rand(2, 3, 5, 5, generator=torch.Generator().manual_seed(0))
    full = attribute(small_cnn, x, "occlusion", reduce_channels=False)
    reduced = attribute(small_cnn, x, "occlusion")
    assert full.shape == (2, 3, 5, 5) and reduced.shape == (2, 5, 5)
    # occlusion windows cover a pixel's three channels: the score is repeated on each channel
    torch.testing.assert_close(full[:, 0], full[:, 2])
    torch.testing.assert_close(reduced, full.sum(1))
    captum_attr = pytest.importorskip("captum.attr")
    target = small_cnn(x).argmax(1)
    expected = captum_attr.IntegratedGradients(small_cnn).attribute(x, target=target, n_steps=20).sum(1)
    torch.testing.assert_close(attribute(small_cnn, x, "integrated_gradients", n_steps=20), expected.detach())


def _embedding_gradient(model, tokenizer, text, target):
    ids = torch.tensor([tokenizer(text)["input_ids"]])
    embeddings = model.get_input_embeddings()(ids).detach().requires_grad_(True)
    logit = model(inputs_embeds=embeddings, attention_mask=torch.ones_like(ids)).logits[0, target]
    (gradient,) = torch.autograd.grad(logit, embeddings)
    return embeddings[0].detach(), gradient[0]


def test_text_gradients_per_token_and_word(tiny_bert, tokenizer):
    texts = ["An unbelievably moving film.", "dull"]
    targets = [2, 0]
    ixg = attribute(tiny_bert, texts, "input_x_gradient", targets, tokenizer=tokenizer)
    saliency = attribute(tiny_bert, texts, "saliency", targets, tokenizer=tokenizer)
    for i, text in enumerate(texts):
        embeddings, gradient = _embedding_gradient(tiny_bert, tokenizer, text, targets[i])
        np.testing.assert_allclose(ixg[i], (embeddings * gradient).sum(-1)[1:-1].double().numpy(), atol=1e-6)
        np.testing.assert_allclose(saliency[i], gradient.norm(dim=-1)[1:-1].double().numpy(), atol=1e-6)
    words = attribute(tiny_bert, texts, "input_x_gradient", targets, tokenizer=tokenizer, granularity="word")
    word_ids = [w for w in tokenizer(texts[0]).word_ids() if w is not None]
    expected = np.zeros(max(word_ids) + 1)
    np.add.at(expected, word_ids, ixg[0])
    np.testing.assert_allclose(words[0], expected, atol=1e-9)
    assert [len(a) for a in words] == [5, 1]  # An, unbelievably, moving, film, "." ; dull


def test_text_occlusion_and_integrated_gradients(tiny_bert, tokenizer):
    text = "the music was memorable"
    occlusion = attribute(tiny_bert, [text], "occlusion", [1], tokenizer=tokenizer)[0]
    ids = tokenizer(text)["input_ids"]
    with torch.no_grad():
        clean = tiny_bert(input_ids=torch.tensor([ids])).logits[0, 1]
        for j in range(len(ids) - 2):
            masked = list(ids)
            masked[j + 1] = tokenizer.mask_token_id
            drop = clean - tiny_bert(input_ids=torch.tensor([masked])).logits[0, 1]
            assert occlusion[j] == pytest.approx(float(drop), abs=1e-5)
    ig = attribute(tiny_bert, [text], "integrated_gradients", [1], tokenizer=tokenizer, n_steps=64)[0]
    baseline = [ids[0]] + [tokenizer.pad_token_id] * (len(ids) - 2) + [ids[-1]]
    with torch.no_grad():
        difference = clean - tiny_bert(input_ids=torch.tensor([baseline])).logits[0, 1]
    # completeness: attributions add up to f(x) - f(baseline)
    assert ig.sum() == pytest.approx(float(difference), abs=0.05 * abs(float(difference)) + 1e-4)


def test_a_split_classifier_is_attributed_at_its_own_length_like_the_metrics(tiny_bert, tokenizer):
    """Issue #35 item 3: attribute(SplitClassifier) was refused, and the attribution and the metric then cut texts
    at different lengths; integrated gradients go through the model batch_size interpolations at a time."""
    from xaimetrics.fidelity import Deletion
    from xaimetrics.models import SplitClassifier

    classifier = SplitClassifier(tiny_bert, tokenizer, max_length=8, device="cpu")
    texts = ["an unbelievably moving film about music and memory", "dull"]
    for method in ("input_x_gradient", "integrated_gradients"):
        by_classifier = attribute(classifier, texts, method, [2, 0], n_steps=16, batch_size=1)
        by_model = attribute(tiny_bert, texts, method, [2, 0], tokenizer=tokenizer, max_length=8, n_steps=16)
        assert [len(a) for a in by_classifier] == [6, 1]  # 8 tokens with [CLS] and [SEP]: 6 features
        for mine, theirs in zip(by_classifier, by_model, strict=True):
            np.testing.assert_allclose(mine, theirs, atol=1e-5)
    metric = Deletion(classifier, texts, [2, 0], batch_size=2)  # the same features: the attributions fit
    assert np.isfinite(metric.evaluate_samples(by_classifier)).all()


def test_attribute_errors(linear2):
    with pytest.raises(
        InvalidParameterError, match=r"'method' parameter of attribute must be one of 'saliency'"
    ):
        attribute(linear2, torch.ones(1, 4), "lime")
    with pytest.raises(
        InvalidParameterError, match=r"'targets' parameter of attribute must be 1 class indices"
    ):
        attribute(linear2, torch.ones(1, 4), "saliency", targets=[0, 1])
