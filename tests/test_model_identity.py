"""model_digest: what a classifier computes with changes the digest; where and how it runs does not."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from xaimetrics._model_identity import model_digest


class Wrapped:
    """A classifier holding a torch module (as SplitClassifier does), with options and placement."""

    def __init__(self, module: nn.Module, **attributes: object) -> None:
        self.model = module
        self.class_names = ["neg", "pos"]
        self.metadata: dict[str, object] = {"recipe": "a", "path": "/here"}
        self.device, self.batch_size, self.threshold = "cpu", 8, 0.5
        self.__dict__.update(attributes)


def _linear(seed: int) -> nn.Linear:
    torch.manual_seed(seed)
    return nn.Linear(3, 2)


def test_the_weights_decide_and_one_changed_value_changes_the_digest() -> None:
    first, same = Wrapped(_linear(0)), Wrapped(_linear(0))
    assert model_digest(first) == model_digest(same)
    with torch.no_grad():
        same.model.weight[1, 2] += 1e-6
    assert model_digest(first) != model_digest(same)


def test_placement_and_the_metadata_path_do_not_count_but_options_and_classes_do() -> None:
    base = model_digest(Wrapped(_linear(0)))
    assert model_digest(Wrapped(_linear(0), device="cuda", batch_size=64, progress=False)) == base
    moved = Wrapped(_linear(0))
    moved.metadata["path"] = "/elsewhere"
    assert model_digest(moved) == base
    assert model_digest(Wrapped(_linear(0), threshold=0.6)) != base
    assert model_digest(Wrapped(_linear(0), class_names=["pos", "neg"])) != base
    retrained = Wrapped(_linear(0))
    retrained.metadata["recipe"] = "b"
    assert model_digest(retrained) != base


def test_arrays_of_a_plain_classifier_count_with_their_dtype() -> None:
    class Plain:
        def __init__(self, weights: np.ndarray) -> None:
            self.weights = weights

    as_float64 = model_digest(Plain(np.array([1.0, 2.0])))
    assert as_float64 == model_digest(Plain(np.array([1.0, 2.0])))
    assert as_float64 != model_digest(Plain(np.array([1.0, 2.0], dtype=np.float32)))
    assert as_float64 != model_digest(Plain(np.array([[1.0, 2.0]])))  # the shape counts
    assert len(as_float64) == 16 and int(as_float64, 16) >= 0
