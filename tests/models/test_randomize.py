"""The model-randomisation control: re-drawn weights (all, or the cascade's top units), the trained model untouched."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.models import SplitClassifier, randomized_copy
from xaimetrics.models._randomize import randomization_units

TEXTS = ["a fine film", "a dull and long film", "the cast is great", "no"]


def _trained(path) -> SplitClassifier:
    """The tiny saved classifier, loaded (transformers marks loaded weights initialised) and moved off its init."""
    classifier = SplitClassifier.from_pretrained(path, device="cpu")
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for parameter in classifier.model.parameters():
            parameter.add_(0.1 * torch.randn(parameter.shape, generator=generator))
    return classifier


def _state(classifier: SplitClassifier) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in classifier.model.state_dict().items()}


def test_all_layers_differ_and_the_trained_copy_is_untouched(tiny_model_dir) -> None:
    trained = _trained(tiny_model_dir)
    before = _state(trained)
    logits = trained.logits(TEXTS)
    twin = randomized_copy(trained, "all", seed=3)
    for name, parameter in twin.model.named_parameters():
        assert not torch.equal(parameter, before[name]), name
    after = _state(trained)
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert torch.equal(trained.logits(TEXTS), logits)
    assert twin.model is not trained.model and twin.tokenizer is trained.tokenizer
    assert twin.metadata["randomized"] == {
        "layers": "all",
        "units": ["head", "block 0", "embeddings"],
        "seed": 3,
    }
    assert not torch.allclose(twin.logits(TEXTS), logits)
    assert (twin.activations(TEXTS) >= 0).all()  # the ReLU of a '+' model is kept
    # the same initialiser as a fresh model of this config: LayerNorm weights back to one
    norms = [p for n, p in twin.model.named_parameters() if "LayerNorm.weight" in n]
    assert all(torch.equal(p, torch.ones_like(p)) for p in norms)


def test_top_units_cascade_from_the_head_down(tiny_model_dir) -> None:
    trained = _trained(tiny_model_dir)
    before = _state(trained)
    units = dict(randomization_units(trained.model))
    assert list(units) == ["head", "block 0", "embeddings"]
    assert units["head"] == ["bert.pooler.dense.weight", "bert.pooler.dense.bias", "classifier.weight",
                             "classifier.bias"]  # fmt: skip
    for n_top, changed in ((1, {"head"}), (2, {"head", "block 0"})):
        twin = randomized_copy(trained, "top", n_top=n_top, seed=0)
        for unit, names in units.items():
            for name in names:
                same = torch.equal(dict(twin.model.named_parameters())[name], before[name])
                assert same == (unit not in changed), (n_top, unit, name)


def test_deterministic_by_seed_and_the_callers_random_state_is_kept(tiny_model_dir) -> None:
    trained = _trained(tiny_model_dir)
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    first = randomized_copy(trained, seed=7)
    assert torch.equal(torch.rand(3), expected)
    second, other = randomized_copy(trained, seed=7), randomized_copy(trained, seed=8)
    a, b, c = (dict(m.model.named_parameters()) for m in (first, second, other))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["classifier.weight"], c["classifier.weight"])


def test_a_bare_module_and_bad_arguments() -> None:
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    twin = randomized_copy(net, seed=0)
    assert isinstance(twin, torch.nn.Sequential) and not torch.equal(twin[2].weight, net[2].weight)
    assert randomization_units(net)[0][0] == "all"
    with pytest.raises(InvalidParameterError, match="'layers' parameter of randomized_copy"):
        randomized_copy(net, "middle")
    with pytest.raises(InvalidParameterError, match="'n_top' parameter of randomized_copy must be at most 1"):
        randomized_copy(net, "top", n_top=2)
    with pytest.raises(InvalidParameterError, match="'model' parameter of randomized_copy"):
        randomized_copy(np.zeros(3))
