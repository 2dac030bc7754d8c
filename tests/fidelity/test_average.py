"""Average Drop / Increase / Gain against Xplique's published formulas, computed by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.fidelity import AverageDrop, AverageGain, AverageIncrease

EPS = 1e-8


def _xplique_mask(explanations):
    """Xplique's _perturb_with_mask on channels-first maps: |e|, channel mean (4-D), per-sample min-max."""
    mask = np.abs(explanations)
    if mask.ndim == 4:
        mask = mask.mean(axis=1)
    axes = tuple(range(1, mask.ndim))
    low, high = mask.min(axis=axes, keepdims=True), mask.max(axis=axes, keepdims=True)
    return (mask - low) / (high - low + EPS)


def _by_hand(model, x, explanations, activation):
    mask = torch.from_numpy(_xplique_mask(explanations.numpy())).float()
    if x.ndim == 4:
        mask = mask[:, None]
    with torch.no_grad():
        clean, masked = model(x), model(x * mask)
    if activation == "softmax":
        clean, masked = clean.softmax(-1), masked.softmax(-1)
    target = clean.argmax(1, keepdim=True)
    base = clean.gather(1, target)[:, 0].double().numpy()
    after = masked.gather(1, target)[:, 0].double().numpy()
    return (
        np.maximum(base - after, 0) / (base + EPS),
        (after > base).astype(float),
        np.maximum(after - base, 0) / (1 - base + EPS),
    )


def test_tabular_equals_xplique_formulas(tabular_task):
    model, x = tabular_task
    e = torch.randn(x.shape, generator=torch.Generator().manual_seed(4))
    e[0] = torch.linspace(-1, 1, 12)  # a tie-free ramp and signs (|e| is used)
    drop, increase, gain = _by_hand(model, x, e, "softmax")
    np.testing.assert_allclose(
        AverageDrop(model, x, activation="softmax").evaluate_samples(e), drop, atol=1e-6
    )
    np.testing.assert_allclose(AverageIncrease(model, x, activation="softmax").evaluate_samples(e), increase)
    np.testing.assert_allclose(
        AverageGain(model, x, activation="softmax", batch_size=7).evaluate_samples(e), gain, atol=1e-5
    )
    assert 0 < drop.mean() < 1 and 0 < increase.mean() < 1  # a non-trivial case: both directions occur
    assert AverageDrop(model, x, activation="softmax").evaluate(e) == pytest.approx(drop.mean(), abs=1e-6)
    assert (AverageDrop.higher_is_better, AverageIncrease.higher_is_better, AverageGain.higher_is_better) == (
        False,
        True,
        True,
    )


def test_images_average_explanation_channels_and_accept_pixel_maps(small_cnn):
    x = torch.rand(5, 3, 6, 6, generator=torch.Generator().manual_seed(1))
    e = torch.randn(5, 3, 6, 6, generator=torch.Generator().manual_seed(2))
    drop, _, gain = _by_hand(small_cnn, x, e, None)
    np.testing.assert_allclose(AverageDrop(small_cnn, x).evaluate_samples(e), drop, atol=1e-5)
    # a pixel map (n, H, W) equal to the channel mean of |e| gives the same masks
    pixel_map = e.abs().mean(dim=1)
    np.testing.assert_allclose(AverageGain(small_cnn, x).evaluate_samples(pixel_map), gain, atol=1e-5)


def test_baseline_moves_the_masked_input_towards_it(tabular_task):
    model, x = tabular_task
    e = torch.rand(x.shape, generator=torch.Generator().manual_seed(5))
    mask = torch.from_numpy(_xplique_mask(e.numpy())).float()
    with torch.no_grad():
        clean = model(x)
        target = clean.argmax(1, keepdim=True)
        after = model(0.5 + mask * (x - 0.5)).gather(1, target)[:, 0].double()
    base = clean.gather(1, target)[:, 0].double()
    expected = (torch.clamp(base - after, min=0) / (base + EPS)).numpy()
    np.testing.assert_allclose(
        AverageDrop(model, x, baseline_mode=0.5).evaluate_samples(e), expected, atol=1e-5
    )


def test_texts_scale_word_embeddings_towards_the_mask_token(tiny_bert, tokenizer):
    texts = ["a quiet film about loss", "sharp and funny"]
    metric = AverageDrop(tiny_bert, texts, tokenizer=tokenizer, activation="softmax")
    explanations = [np.array([0.2, -1.0, 0.5, 0.0, 0.7]), np.array([1.0, 0.1, -0.4])]
    assert [len(f) for f in metric.feature_names] == [5, 3]
    values = metric.evaluate_samples(explanations)
    layer = tiny_bert.get_input_embeddings()
    for i, text in enumerate(texts):
        encoded = tokenizer(text, return_tensors="pt")
        magnitude = np.abs(explanations[i])
        mask = (magnitude - magnitude.min()) / (magnitude.max() - magnitude.min() + EPS)
        weights = torch.ones(encoded["input_ids"].shape[1])
        weights[1:-1] = torch.from_numpy(mask).float()  # [CLS] and [SEP] keep their embedding
        with torch.no_grad():
            clean = tiny_bert(**encoded).logits.softmax(-1)[0]
            embeddings = layer(encoded["input_ids"])
            masked_token = layer(torch.full_like(encoded["input_ids"], tokenizer.mask_token_id))
            mixed = masked_token + weights[None, :, None] * (embeddings - masked_token)
            after = tiny_bert(
                inputs_embeds=mixed,
                attention_mask=encoded["attention_mask"],
                token_type_ids=encoded["token_type_ids"],
            ).logits.softmax(-1)[0]
        target = int(clean.argmax())
        expected = max(float(clean[target] - after[target]), 0.0) / (float(clean[target]) + EPS)
        assert values[i] == pytest.approx(expected, abs=1e-6)
    with pytest.raises(
        InvalidParameterError, match="'baseline_mode' parameter of AverageGain must be 'mask', 'pad'"
    ):
        AverageGain(tiny_bert, texts, tokenizer=tokenizer, baseline_mode="delete")


def test_errors(tabular_task):
    model, x = tabular_task
    with pytest.raises(InvalidParameterError, match="'explanations' parameter of AverageDrop must be finite"):
        AverageDrop(model, x).evaluate(torch.full(x.shape, float("nan")))
    with pytest.raises(InvalidParameterError, match="'activation' parameter of AverageIncrease"):
        AverageIncrease(model, x, activation="relu")
