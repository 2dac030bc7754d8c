"""Infidelity against ``captum.metrics.infidelity`` with the same perturbations, and sensitivity_max against
``captum.metrics.sensitivity_max`` with the same noise."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.fidelity import Infidelity, attribute, sensitivity_max
from xaimetrics.fidelity._infidelity import gaussian_perturbations
from xaimetrics.fidelity._sensitivity import uniform_perturbations

captum_metrics = pytest.importorskip("captum.metrics")
#: Captum warns that it turns on requires_grad of the perturbed inputs itself, which is what we want
pytestmark = pytest.mark.filterwarnings("ignore:Input Tensor 0 did not already require gradients")


def _captum(model, x, explanations, target, perturbations, normalize):
    """Captum's infidelity with a perturb_func that returns the given perturbations (rows sample-major)."""

    def perturb_func(inputs):
        assert inputs.shape[0] == perturbations.shape[0]
        noise = perturbations.to(inputs.dtype)
        return noise, inputs - noise

    runs = perturbations.shape[0] // x.shape[0]
    return captum_metrics.infidelity(
        model, perturb_func, x, explanations, target=target, n_perturb_samples=runs, normalize=normalize
    ).numpy()


@pytest.mark.parametrize("normalize", [False, True])
def test_gaussian_equals_captum_on_a_trained_mlp(tabular_task, normalize):
    model, x = tabular_task
    x = x[:9]
    target = model(x).argmax(1)
    explanations = attribute(model, x, "saliency")
    metric = Infidelity(model, x, perturbation="gaussian", n_perturb_samples=6, noise_std=0.3, random_state=4)
    ours = metric.evaluate_samples(explanations, normalize=normalize)
    noise = gaussian_perturbations((12,), range(9), 6, 0.3, 4)
    reference = _captum(model, x, explanations, target, noise, normalize)
    np.testing.assert_allclose(ours, reference, rtol=1e-4, atol=1e-6)
    assert ours.std() > 0  # a non-trivial case: the samples differ


def test_subset_on_images_equals_captum_with_channels_moving_together(small_cnn):
    x = torch.rand(4, 3, 6, 5, generator=torch.Generator().manual_seed(3))
    explanations = attribute(small_cnn, x, "input_x_gradient")  # (4, 6, 5): channels summed
    metric = Infidelity(
        small_cnn, x, batch_size=5, n_perturb_samples=7, subset_percent=0.3, baseline_mode=0.25
    )
    for normalize in (False, True):
        ours = metric.evaluate_samples(explanations, normalize=normalize)
        mask = torch.zeros(4, 7, 31, dtype=torch.bool).scatter_(2, metric._subsets, True)[..., :30]
        mask = mask.view(28, 1, 6, 5)
        difference = (x - 0.25).repeat_interleave(7, dim=0)
        perturbations = difference * mask  # I = (x − baseline) on the removed pixels, every channel
        target = small_cnn(x).argmax(1)
        reference = _captum(
            small_cnn, x, explanations.unsqueeze(1).expand_as(x), target, perturbations, normalize
        )
        np.testing.assert_allclose(ours, reference, rtol=1e-4, atol=1e-7)


def test_callable_perturbation_is_captums_contract(tabular_task):
    model, x = tabular_task
    x = x[:5]

    def perturb_func(inputs):
        noise = 0.2 * torch.sin(7 * inputs + torch.arange(inputs.shape[0])[:, None])
        return noise, inputs - noise

    explanations = attribute(model, x, "integrated_gradients", n_steps=20)
    metric = Infidelity(model, x, perturbation=perturb_func, n_perturb_samples=3, batch_size=None)
    target = model(x).argmax(1)
    reference = captum_metrics.infidelity(
        model, perturb_func, x, explanations, target=target, n_perturb_samples=3
    )
    np.testing.assert_allclose(metric.evaluate_samples(explanations), reference.numpy(), rtol=1e-4, atol=1e-7)


def test_batch_size_invariant_and_drops_computed_once(tabular_task):
    model, x = tabular_task
    e = torch.randn(x.shape, generator=torch.Generator().manual_seed(2))
    for perturbation in ("gaussian", "subset"):
        a = Infidelity(model, x, batch_size=7, perturbation=perturbation, random_state=1)
        b = Infidelity(model, x, batch_size=None, perturbation=perturbation, random_state=1)
        np.testing.assert_allclose(a.evaluate_samples(e), b.evaluate_samples(e), rtol=1e-5)  # float32 batches
        # the first 10 inputs alone get the same perturbations (seeded per sample)
        c = Infidelity(model, x[:10], batch_size=3, perturbation=perturbation, random_state=1)
        np.testing.assert_allclose(c.evaluate_samples(e[:10]), a.evaluate_samples(e)[:10], rtol=1e-5)
        a.evaluate(2 * e)
        assert len(a._cache) == 1
    assert Infidelity.higher_is_better is False


def test_texts_with_token_masks(tiny_bert, tokenizer):
    texts = ["a quiet film about loss", "the plot never moves", "sharp, funny and far too long"]
    metric = Infidelity(tiny_bert, texts, tokenizer=tokenizer, n_perturb_samples=5, subset_percent=0.4)
    names = metric.feature_names
    rng = np.random.default_rng(5)
    explanations = [rng.normal(size=len(f)) for f in names]
    values = metric.evaluate_samples(explanations)
    # by hand: each perturbation replaces the drawn tokens by [MASK]; I·Φ is the attribution of those tokens
    for i, text in enumerate(texts):
        encoded = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            logits = tiny_bert(**encoded).logits[0]
        predicted = int(logits.argmax())
        errors = []
        for r in range(5):
            drawn = metric._subsets[i, r]
            drawn = drawn[drawn < len(names[i])]
            ids = encoded["input_ids"].clone()
            ids[0, 1 + drawn] = tokenizer.mask_token_id  # features are the tokens after [CLS]
            with torch.no_grad():
                perturbed = tiny_bert(input_ids=ids, attention_mask=encoded["attention_mask"]).logits[
                    0, predicted
                ]
            drop = float(logits[predicted] - perturbed)
            errors.append((explanations[i][drawn.numpy()].sum() - drop) ** 2)
        assert values[i] == pytest.approx(np.mean(errors), rel=1e-5)
    with pytest.raises(
        InvalidParameterError, match="'perturbation' parameter of Infidelity must be 'subset' for text"
    ):
        Infidelity(tiny_bert, texts, tokenizer=tokenizer, perturbation="gaussian")


def test_errors_name_the_argument(tabular_task):
    model, x = tabular_task
    with pytest.raises(
        InvalidParameterError, match="'perturbation' parameter of Infidelity must be 'gaussian'"
    ):
        Infidelity(model, x, perturbation="uniform")
    with pytest.raises(InvalidParameterError, match="'n_perturb_samples' parameter of Infidelity"):
        Infidelity(model, x, n_perturb_samples=0)
    with pytest.raises(
        InvalidParameterError, match="'noise_std' parameter of Infidelity must be a number > 0"
    ):
        Infidelity(model, x, noise_std=-1.0)
    metric = Infidelity(model, x, perturbation=lambda inputs: inputs)
    with pytest.raises(InvalidParameterError, match="returning \\(perturbations, perturbed_inputs\\)"):
        metric.evaluate(torch.zeros_like(x))


def _captum_sensitivity(explain, x, target, radius, runs, seed, **kwargs):
    noise = uniform_perturbations(tuple(x.shape[1:]), range(x.shape[0]), runs, radius, seed)

    def perturb_func(inputs, perturb_radius):
        assert inputs.shape[0] == noise.shape[0]
        return inputs + noise.to(inputs.dtype)

    return captum_metrics.sensitivity_max(
        explain,
        x,
        perturb_func=perturb_func,
        perturb_radius=radius,
        n_perturb_samples=runs,
        target=target,
        **kwargs,
    ).numpy()


@pytest.mark.parametrize("norm_ord", ["fro", 1])
def test_sensitivity_max_equals_captum_on_a_trained_mlp(tabular_task, norm_ord):
    from captum.attr import InputXGradient

    model, x = tabular_task
    x = x[:8]
    target = model(x).argmax(1)
    explain = InputXGradient(model).attribute
    ours = sensitivity_max(
        explain, x, target, perturb_radius=0.2, n_perturb_samples=5, norm_ord=norm_ord, batch_size=6
    )
    reference = _captum_sensitivity(explain, x, target, 0.2, 5, 0, norm_ord=norm_ord)
    np.testing.assert_allclose(ours, reference, rtol=1e-5, atol=1e-7)
    assert ours.std() > 0
    # batch-size invariant and seeded per sample
    np.testing.assert_allclose(
        sensitivity_max(
            explain, x[:3], target[:3], perturb_radius=0.2, n_perturb_samples=5, norm_ord=norm_ord
        ),
        ours[:3],
        rtol=1e-6,
    )


def test_sensitivity_max_on_word_embeddings_is_embedding_noise(tiny_bert, tokenizer):
    from captum.attr import Saliency

    encoded = tokenizer(["a quiet film", "the plot never moves"], padding=True, return_tensors="pt")
    with torch.no_grad():
        embeddings = tiny_bert.get_input_embeddings()(encoded["input_ids"])

    def forward(e):
        return tiny_bert(
            inputs_embeds=e, attention_mask=encoded["attention_mask"].repeat_interleave(e.shape[0] // 2, 0)
        ).logits

    explain = Saliency(forward).attribute
    target = forward(embeddings).argmax(1)
    ours = sensitivity_max(explain, embeddings, target, perturb_radius=0.01, n_perturb_samples=3)
    reference = _captum_sensitivity(explain, embeddings, target, 0.01, 3, 0)
    np.testing.assert_allclose(ours, reference, rtol=1e-4, atol=1e-6)


def test_sensitivity_max_errors():
    with pytest.raises(InvalidParameterError, match="'perturb_radius' parameter of sensitivity_max"):
        sensitivity_max(lambda x: x, torch.ones(2, 3), perturb_radius=0)
    with pytest.raises(
        InvalidParameterError, match="'explain' parameter of sensitivity_max must be a callable returning one"
    ):
        sensitivity_max(lambda x: x[:1], torch.ones(2, 3))
    with pytest.raises(InvalidParameterError, match="'norm_ord' parameter of sensitivity_max"):
        sensitivity_max(lambda x: x, torch.ones(2, 3), norm_ord="nuc")


def test_subset_layouts_do_not_mix(small_cnn):
    x = torch.rand(3, 3, 6, 5, generator=torch.Generator().manual_seed(8))
    pixels = torch.randn(3, 6, 5, generator=torch.Generator().manual_seed(9))
    elements = torch.randn(3, 3, 6, 5, generator=torch.Generator().manual_seed(10))
    shared = Infidelity(small_cnn, x, n_perturb_samples=4)
    first = shared.evaluate_samples(pixels)
    shared.evaluate_samples(elements)
    np.testing.assert_allclose(shared.evaluate_samples(pixels), first, rtol=1e-12)
    np.testing.assert_allclose(
        shared.evaluate_samples(elements),
        Infidelity(small_cnn, x, n_perturb_samples=4).evaluate_samples(elements),
    )


def test_gaussian_on_word_embeddings_is_embedding_noise(tiny_bert, tokenizer):
    encoded = tokenizer(["a quiet film", "the plot never moves"], padding=True, return_tensors="pt")
    with torch.no_grad():
        embeddings = tiny_bert.get_input_embeddings()(encoded["input_ids"])
    mask = encoded["attention_mask"]

    def forward(e):
        return tiny_bert(inputs_embeds=e, attention_mask=mask.repeat_interleave(e.shape[0] // 2, 0)).logits

    explanations = attribute(forward, embeddings, "input_x_gradient")
    metric = Infidelity(forward, embeddings, perturbation="gaussian", n_perturb_samples=3, noise_std=0.05)
    ours = metric.evaluate_samples(explanations)
    noise = gaussian_perturbations(tuple(embeddings.shape[1:]), range(2), 3, 0.05, 0)
    reference = _captum(forward, embeddings, explanations, forward(embeddings).argmax(1), noise, False)
    np.testing.assert_allclose(ours, reference, rtol=1e-4, atol=1e-7)
