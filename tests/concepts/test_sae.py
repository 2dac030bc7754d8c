"""The sparse autoencoder: training, sparsity variants, resampling, determinism, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xaimetrics.concepts import SAE
from xaimetrics.exceptions import InvalidParameterError

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def sparse_data(n: int = 400, p: int = 20, rank: int = 6, seed: int = 0) -> np.ndarray:
    """Sparse non-negative codes on random atoms, with an offset and a large scale (tests the scaling)."""
    rng = np.random.default_rng(seed)
    codes = rng.exponential(size=(n, rank)) * (rng.random((n, rank)) < 0.3)
    atoms = rng.normal(size=(rank, p))
    return (50.0 * (codes @ atoms + 0.02 * rng.normal(size=(n, p))) + 7.0).astype(np.float32)


def relative_squared_error(sae: SAE, A: np.ndarray) -> float:
    reconstruction = sae.decode(sae.encode(A))
    return float(((reconstruction - A) ** 2).sum() / ((A - A.mean(axis=0)) ** 2).sum())


def fit(A: np.ndarray | torch.Tensor, **kwargs: object) -> SAE:
    settings: dict[str, object] = {
        "n_concepts": 16,
        "max_steps": 300,
        "batch_size": 64,
        "random_state": 0,
        "device": "cpu",
        "eval_interval": 50,
    }
    return SAE(**{**settings, **kwargs}).fit(A)


@pytest.fixture(scope="module")
def relu_sae() -> tuple[SAE, np.ndarray]:
    A = sparse_data()
    return fit(A, early_stopping=False), A


def test_loss_decreases_and_reconstructs(relu_sae: tuple[SAE, np.ndarray]) -> None:
    sae, A = relu_sae
    history = sae.training_history_
    assert history["n_steps"] == 300 and history["step"] == [50, 100, 150, 200, 250, 300]
    assert history["train_loss"][-1] < 0.5 * history["train_loss"][0]
    assert history["relative_error"][-1] < history["relative_error"][0]
    assert relative_squared_error(sae, A) < 0.05
    assert sae.scale_ > 10  # the activations were ~50 × larger than unit scale


def test_relu_codes_are_sparse_and_follow_the_formula(relu_sae: tuple[SAE, np.ndarray]) -> None:
    sae, A = relu_sae
    U = sae.encode(A)
    assert (U >= 0).all()
    assert 0 < (U > 0).sum(axis=1).mean() < sae.n_concepts_
    expected = np.maximum((A - sae.bias_) @ sae.encoder_weights_.T + sae.encoder_bias_, 0)
    np.testing.assert_allclose(U, expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(sae.components_, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(sae.decode(U), U @ sae.components_ + sae.bias_, rtol=1e-5, atol=1e-4)


def test_encode_is_differentiable(relu_sae: tuple[SAE, np.ndarray]) -> None:
    sae, A = relu_sae
    tensor = torch.tensor(A[:8], requires_grad=True)
    codes = sae.encode(tensor)
    codes.sum().backward()
    active = (codes.detach() > 0).double().numpy()
    expected = active @ sae.encoder_weights_.astype(np.float64)
    np.testing.assert_allclose(tensor.grad.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_l1_coefficient_controls_sparsity() -> None:
    A = sparse_data()
    dense = fit(A, l1_coefficient=0.0, early_stopping=False)
    sparse = fit(A, l1_coefficient=0.05, early_stopping=False)
    assert (sparse.encode(A) > 0).sum() < 0.8 * (dense.encode(A) > 0).sum()


def test_topk_has_exactly_k_active_per_row() -> None:
    A = sparse_data()
    sae = fit(A, activation="topk", k_active=3)
    U = sae.encode(A)
    assert sae.k_active_ == 3 and (U >= 0).all()
    np.testing.assert_array_equal((U > 0).sum(axis=1), np.full(len(A), 3))
    assert relative_squared_error(sae, A) < 0.2


def test_batchtopk_keeps_k_active_on_average() -> None:
    A = sparse_data()
    sae = fit(A, activation="batchtopk", k_active=3, max_steps=400)
    U = sae.encode(A)
    assert sae.threshold_ > 0
    assert 1.5 < (U > 0).sum(axis=1).mean() < 6
    assert ((U == 0) | (sae.threshold_ < U)).all()  # a JumpReLU at the learnt threshold
    assert relative_squared_error(sae, A) < 0.2


def test_k_active_default() -> None:
    assert fit(sparse_data(), activation="topk", n_concepts=30, max_steps=5).k_active_ == 3
    assert fit(sparse_data(), n_concepts=30, max_steps=5).k_active_ is None


def test_dead_neurons_are_resampled() -> None:
    A = sparse_data()
    # A heavy ℓ1 penalty on a 48-atom dictionary kills neurons quickly.
    settings = {"n_concepts": 48, "l1_coefficient": 0.2, "max_steps": 400, "early_stopping": False}
    resampled = fit(A, resample_interval=50, **settings)
    history = resampled.training_history_
    assert history["resample_steps"] and all(
        step % 50 == 0 and step <= 200 for step in history["resample_steps"]
    )
    assert all(count > 0 for count in history["resampled"])
    never = fit(A, resample_interval=None, **settings)
    assert never.training_history_["resample_steps"] == [] and never.training_history_["resampled"] == []
    # Resampling changed the dictionary: the two runs share their seed and differ only by it.
    assert not np.allclose(resampled.components_, never.components_)


def test_resampled_atoms_point_at_badly_reconstructed_inputs() -> None:
    from xaimetrics.concepts._sae_training import SAEConfig, _Trainer

    A = torch.tensor(sparse_data() / 50.0)
    config = SAEConfig(
        n_concepts=8,
        activation="relu",
        k_active=0,
        l1_coefficient=1e-3,
        learning_rate=1e-3,
        max_steps=10,
        batch_size=64,
        early_stopping=False,
        validation_fraction=0.0,
        n_iter_no_change=5,
        tol=0.0,
        eval_interval=10,
        resample_interval=5,
        seed=0,
        progress=False,
    )
    trainer = _Trainer(A.float(), config)
    trainer.fired[:] = True
    trainer.fired[[2, 5]] = False
    before = trainer.decoder_weight.detach().clone()
    assert trainer.resample_dead() == 2
    after = trainer.decoder_weight.detach()
    torch.testing.assert_close(after[[0, 1, 3, 4, 6, 7]], before[[0, 1, 3, 4, 6, 7]])
    torch.testing.assert_close(after[[2, 5]].norm(dim=1), torch.ones(2))
    # each new atom is a training input minus the decoder bias, at unit norm
    directions = trainer.train - trainer.decoder_bias.detach()
    directions = directions / directions.norm(dim=1, keepdim=True)
    similarity = after[[2, 5]] @ directions.T
    torch.testing.assert_close(similarity.max(dim=1).values, torch.ones(2))
    assert not bool(trainer.fired.any())  # the window restarts
    assert float(trainer.encoder_bias.detach()[2]) == 0.0


def test_deterministic_given_random_state() -> None:
    A = sparse_data()
    first, second = fit(A, max_steps=100), fit(A, max_steps=100)
    np.testing.assert_array_equal(first.components_, second.components_)
    np.testing.assert_array_equal(first.encode(A), second.encode(A))
    assert first.training_history_["train_loss"] == second.training_history_["train_loss"]
    other = fit(A, max_steps=100, random_state=1)
    assert not np.allclose(other.components_, first.components_)
    from_torch = fit(torch.tensor(A), max_steps=100)
    np.testing.assert_allclose(from_torch.components_, first.components_, atol=1e-6)


def test_early_stopping() -> None:
    A = sparse_data()
    sae = fit(A, max_steps=2000, tol=0.5, n_iter_no_change=2, resample_interval=None)
    history = sae.training_history_
    assert history["stopped_early"] and history["n_steps"] < 2000
    assert history["n_validation"] == 40
    without = fit(A, max_steps=120, early_stopping=False)
    assert without.training_history_["n_validation"] == 0 and not without.training_history_["stopped_early"]


def test_torch_round_trip_and_default_width() -> None:
    A = torch.tensor(sparse_data(n=120, p=12), dtype=torch.float64)
    sae = SAE(max_steps=20, random_state=0, device="cpu").fit(A)
    assert sae.n_concepts_ == 12 and sae.device_ == torch.device("cpu")
    U = sae.encode(A)
    assert isinstance(U, torch.Tensor) and U.dtype == torch.float64
    assert sae.decode(U).shape == (120, 12)


def test_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    fit(sparse_data(n=50), max_steps=10, progress=True)
    assert "SAE" in capsys.readouterr().err
    fit(sparse_data(n=50), max_steps=10, progress=False)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"activation": "gelu"},
            "The 'activation' parameter of SAE must be one of 'relu', 'topk', 'batchtopk'",
        ),
        (
            {"activation": "topk", "k_active": 17},
            r"The 'k_active' parameter of SAE must be ≤ n_concepts \(16\)",
        ),
        ({"activation": "topk", "k_active": 0}, "The 'k_active' parameter of SAE must be an integer ≥ 1"),
        ({"learning_rate": 0}, "The 'learning_rate' parameter of SAE must be a finite number > 0"),
        ({"l1_coefficient": -1e-3}, "The 'l1_coefficient' parameter of SAE must be a finite number ≥ 0"),
        (
            {"validation_fraction": 0.9},
            r"The 'validation_fraction' parameter of SAE must be a number in \[0.0, 0.5\]",
        ),
        ({"max_steps": 0}, "The 'max_steps' parameter of SAE must be an integer ≥ 1"),
        ({"resample_interval": 0}, "The 'resample_interval' parameter of SAE must be an integer ≥ 1"),
        ({"early_stopping": "yes"}, "The 'early_stopping' parameter of SAE must be True or False"),
        ({"device": "tpu"}, "The 'device' parameter of SAE must be"),
    ],
)
def test_invalid_parameters(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        fit(sparse_data(n=20), **kwargs)
