"""Local concept importance φ = u ⊙ ∇_u f_co(u) (paper eq. 3) summed over each text's rows, against the
closed form of a small non-linear g with several rows per text."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.models._concept_importance import concept_importance

W = np.array([[0.5, -1.0, 0.2], [-0.3, 0.4, 1.1]])  # 2 concepts -> 3 classes


class Words:
    """h: one row per word, (length, count of 'a'); g: tanh of the text's summed rows times W."""

    def _rows(self, texts: list[str]) -> list[list[list[float]]]:
        return [[[float(len(w)) / 4, float(w.count("a"))] for w in t.split()] for t in texts]

    def activations(self, texts: list[str]) -> torch.Tensor:
        return torch.tensor([row for rows in self._rows(texts) for row in rows])

    def rows_per_text(self, texts: list[str]) -> np.ndarray:
        return np.array([len(t.split()) for t in texts], dtype=np.int64)

    def logits_from_activations(self, activations: torch.Tensor, inputs: list[str]) -> torch.Tensor:
        counts = [len(t.split()) for t in inputs]
        sums = torch.stack([chunk.sum(dim=0) for chunk in torch.split(activations, counts)])
        return torch.tanh(sums @ torch.as_tensor(W, dtype=sums.dtype))


class Scaled:
    """A linear concept codec: u = 2a, a = u / 2."""

    def encode(self, activations: torch.Tensor) -> torch.Tensor:
        return 2 * torch.as_tensor(activations)

    def decode(self, concepts: torch.Tensor) -> torch.Tensor:
        return concepts / 2


TEXTS = ["banana a", "bb", "a cab dad"]


def _closed_form(target: list[int] | None) -> tuple[np.ndarray, np.ndarray]:
    model = Words()
    phis, predicted = [], []
    for text in TEXTS:
        u = 2 * np.array(model._rows([text])[0])  # the text's concept rows
        z = np.tanh((u / 2).sum(axis=0) @ W)
        c = int(np.argmax(z)) if target is None else target[len(phis)]
        gradient = (1 - z[c] ** 2) * W[:, c] / 2  # ∂ tanh(Σ_rows u/2 · W)_c / ∂u_row, the same for every row
        phis.append((u * gradient).sum(axis=0))
        predicted.append(int(np.argmax(z)))
    return np.array(phis), np.array(predicted)


@pytest.mark.parametrize("batch_size", [1, 2, 8])
def test_phi_matches_the_closed_form_for_the_predicted_class_at_any_batch_size(batch_size: int) -> None:
    phi, predicted = concept_importance(Words(), Scaled(), TEXTS, batch_size=batch_size)
    expected_phi, expected_predicted = _closed_form(None)
    assert phi.shape == (3, 2) and phi.dtype == np.float64
    assert np.allclose(phi, expected_phi, atol=1e-6) and predicted.tolist() == expected_predicted.tolist()


def test_given_targets_are_explained_instead_of_the_prediction() -> None:
    phi, _ = concept_importance(Words(), Scaled(), TEXTS, targets=[2, 0, 1])
    assert np.allclose(phi, _closed_form([2, 0, 1])[0], atol=1e-6)
    one, _ = concept_importance(Words(), Scaled(), TEXTS, targets=1)
    assert np.allclose(one, _closed_form([1, 1, 1])[0], atol=1e-6)


def test_bad_targets_and_extractors_are_named() -> None:
    with pytest.raises(
        InvalidParameterError, match=r"'targets' parameter of concept_importance.*3 class indices"
    ):
        concept_importance(Words(), Scaled(), TEXTS, targets=[0, 1])
    with pytest.raises(InvalidParameterError, match="class indices below 3"):
        concept_importance(Words(), Scaled(), TEXTS, targets=3)

    class NumpyDecoder(Scaled):
        def decode(self, concepts: torch.Tensor) -> np.ndarray:  # type: ignore[override]
            return concepts.detach().numpy() / 2

    with pytest.raises(InvalidParameterError, match="a decode\\(\\) that returns a torch tensor"):
        concept_importance(Words(), NumpyDecoder(), TEXTS)
