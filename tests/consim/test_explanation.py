"""Explanation: what a method gives ConSim, and the importances ConSim computes from the model when missing."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xaimetrics.concepts import PCA, global_importance, local_importance
from xaimetrics.consim import Explanation
from xaimetrics.consim._explanation import global_importances_of, local_importances_of
from xaimetrics.exceptions import InvalidParameterError

A = np.array([[2.0, 0.1, 0.0], [0.0, 1.0, 0.3], [1.0, 0.1, 0.2], [0.1, 0.2, 2.0], [1.5, 1.5, 0.0]])
W = torch.tensor([[1.0, -0.5], [-0.2, 0.8], [0.3, 0.3]])


class Head:
    """A split model whose g is a fixed linear head and whose h reads three numbers off a text."""

    def activations(self, texts: list[str]) -> torch.Tensor:
        return torch.tensor([[float(len(t)), float(t.count("a")), float(t.count(" "))] for t in texts])

    def logits_from_activations(
        self, activations: torch.Tensor, inputs: list[str] | None = None
    ) -> torch.Tensor:
        return torch.as_tensor(activations, dtype=torch.float32) @ W

    def predict(self, texts: list[str]) -> np.ndarray:
        return self.logits_from_activations(self.activations(texts)).argmax(dim=1).numpy()


class Labels:
    def interpret(self) -> dict[int, list[str]]:
        return {0: ["size"], 1: ["spaces"]}


def test_the_interpretation_is_a_mapping_or_a_fitted_interpreter() -> None:
    assert Explanation(interpretation=Labels()).interpretation_mapping() == {0: ["size"], 1: ["spaces"]}
    assert Explanation().interpretation_mapping() is None
    with pytest.raises(InvalidParameterError, match="'interpretation' parameter of ConSim"):
        Explanation(interpretation=["size"])  # type: ignore[arg-type]


def test_global_importances_are_eq_4_over_the_concept_fit_activations() -> None:
    extractor = PCA(n_concepts=2).fit(A)
    concepts = extractor.encode(A)
    local, predicted = local_importance(Head(), concepts, extractor=extractor, return_predictions=True)
    expected = global_importance(local, predicted, n_classes=2)
    assert np.allclose(global_importances_of(Head(), extractor, A, n_classes=2), expected)
    assert np.asarray(expected).shape == (2, 2) and len(set(np.asarray(predicted).tolist())) == 2


def test_local_importances_explain_the_given_classes_of_the_texts() -> None:
    extractor = PCA(n_concepts=2).fit(A)
    texts = ["a banana", "xyz", "aa a a"]
    got = local_importances_of(Head(), extractor, texts, [1, 0, 1], batch_size=2, phase="EP")
    expected = local_importance(
        Head(), extractor.encode(Head().activations(texts)), np.array([1, 0, 1]), extractor=extractor
    )
    assert np.allclose(np.asarray(got), np.asarray(expected))


def test_what_is_missing_is_named_with_the_way_out() -> None:
    extractor = PCA(n_concepts=2).fit(A)
    with pytest.raises(InvalidParameterError, match="'activations' parameter of ConSim must be given"):
        global_importances_of(Head(), extractor, None, n_classes=2)
    with pytest.raises(
        InvalidParameterError, match=r"'extractor' parameter of ConSim.*Pass Explanation\(extractor="
    ):
        global_importances_of(Head(), None, A, n_classes=2)
    with pytest.raises(InvalidParameterError, match="'model' parameter of ConSim must be given"):
        global_importances_of(None, extractor, A, n_classes=2)
    with pytest.raises(InvalidParameterError, match="'samples' parameter of ConSim must be LP samples"):
        local_importances_of(Head(), extractor, [], [], batch_size=2, phase="LP")
