"""Concept importance: gradient×input (eq. 3), global importance (eq. 4), normalisation (eq. 9–10), Tab. 4 buckets."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xaimetrics.concepts import global_importance, importance_bucket, local_importance, normalize_importance
from xaimetrics.concepts._concept_model import ConceptModel
from xaimetrics.concepts._importance import important_concepts
from xaimetrics.exceptions import InvalidParameterError

# --------------------------------------------------------------------------- float64 stand-ins


class AffineDecoder:
    """A stand-in extractor: ``decode(u) = u @ components_ + bias_`` in float64 (torch in, torch out)."""

    def __init__(self, n_concepts: int, n_features: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.components_ = rng.normal(size=(n_concepts, n_features))
        self.bias_ = rng.normal(size=n_features)

    def decode(self, U: torch.Tensor) -> torch.Tensor:
        return U @ torch.as_tensor(self.components_, dtype=U.dtype) + torch.as_tensor(
            self.bias_, dtype=U.dtype
        )


class NonLinearHead:
    """A stand-in ``g``: ``tanh(a W1 + b1) W2 + b2``, so the gradient changes with the input."""

    def __init__(self, n_features: int, n_classes: int, seed: int) -> None:
        generator = torch.Generator().manual_seed(seed)
        self.W1 = torch.randn(n_features, 5, generator=generator, dtype=torch.float64)
        self.b1 = torch.randn(5, generator=generator, dtype=torch.float64)
        self.W2 = torch.randn(5, n_classes, generator=generator, dtype=torch.float64)
        self.b2 = torch.randn(n_classes, generator=generator, dtype=torch.float64)

    def __call__(self, A: torch.Tensor) -> torch.Tensor:
        return torch.tanh(A @ self.W1 + self.b1) @ self.W2 + self.b2


def finite_difference_importance(f_co, U: np.ndarray, targets: np.ndarray, eps: float) -> np.ndarray:
    """``u_ij · (f(u + eps e_j)[t] − f(u − eps e_j)[t]) / (2 eps)``, one coordinate at a time."""
    phi = np.zeros_like(U)
    for i in range(U.shape[0]):
        for j in range(U.shape[1]):
            step = np.zeros_like(U[i])
            step[j] = eps
            plus = f_co(torch.as_tensor((U[i] + step)[None]))[0, targets[i]].item()
            minus = f_co(torch.as_tensor((U[i] - step)[None]))[0, targets[i]].item()
            phi[i, j] = U[i, j] * (plus - minus) / (2 * eps)
    return phi


@pytest.fixture
def setup64():
    decoder = AffineDecoder(n_concepts=4, n_features=6, seed=1)
    head = NonLinearHead(n_features=6, n_classes=3, seed=6)
    U = np.random.default_rng(3).normal(size=(7, 4))
    f_co = ConceptModel(_Head(head), decoder)
    return decoder, head, U, f_co


class _Head:
    def __init__(self, g) -> None:
        self.logits_from_activations = g


def test_gradient_x_input_equals_finite_differences_for_predicted_class(setup64) -> None:
    decoder, head, U, f_co = setup64
    with torch.no_grad():
        predicted = f_co(torch.as_tensor(U)).argmax(dim=1).numpy()
    assert len(set(predicted.tolist())) > 1  # the check covers several explained classes
    expected = finite_difference_importance(f_co, U, predicted, eps=1e-6)
    phi, predictions = local_importance(head, U, extractor=decoder, return_predictions=True)
    np.testing.assert_array_equal(predictions, predicted)
    assert isinstance(phi, np.ndarray) and phi.dtype == np.float64
    np.testing.assert_allclose(phi, expected, rtol=1e-6, atol=1e-8)


def test_gradient_x_input_for_given_targets(setup64) -> None:
    _, _, U, f_co = setup64
    targets = np.array([2, 0, 1, 1, 0, 2, 2])
    expected = finite_difference_importance(f_co, U, targets, eps=1e-6)
    np.testing.assert_allclose(local_importance(f_co, U, targets), expected, rtol=1e-6, atol=1e-8)
    # one class for every sample
    constant = finite_difference_importance(f_co, U, np.full(7, 1), eps=1e-6)
    np.testing.assert_allclose(local_importance(f_co, U, targets=1), constant, rtol=1e-6, atol=1e-8)
    assert not np.allclose(constant, expected)


def test_kind_dtype_and_batch_size_do_not_change_results(setup64) -> None:
    _, _, U, f_co = setup64
    reference = local_importance(f_co, U, batch_size=100)
    for batch_size in (1, 3):
        np.testing.assert_allclose(local_importance(f_co, U, batch_size=batch_size), reference, rtol=1e-12)
    tensor = torch.as_tensor(U).requires_grad_(True)
    phi = local_importance(f_co, tensor, batch_size=2)
    assert isinstance(phi, torch.Tensor) and not phi.requires_grad and phi.dtype == torch.float64
    np.testing.assert_allclose(phi.numpy(), reference, rtol=1e-12)
    with torch.inference_mode():  # tensors made in inference mode (e.g. by a benchmark) still work
        frozen = torch.as_tensor(U).clone()
    np.testing.assert_allclose(local_importance(f_co, frozen).numpy(), reference, rtol=1e-12)


def test_linear_f_co_gives_u_times_weight_column() -> None:
    W = torch.tensor([[1.0, -2.0], [0.5, 3.0], [-1.0, 0.0]], dtype=torch.float64)
    U = torch.tensor([[2.0, 1.0, 1.0], [1.0, 1.0, 3.0], [-1.0, 2.0, 0.5]], dtype=torch.float64)
    phi = local_importance(lambda u: u @ W, U, targets=[1, 0, 1])
    expected = U * torch.stack([W[:, 1], W[:, 0], W[:, 1]])
    torch.testing.assert_close(phi, expected)


def test_concepts_that_do_not_reach_the_logits_get_zero() -> None:
    U = np.array([[1.0, 2.0], [3.0, -1.0]])
    phi = local_importance(lambda u: torch.zeros(u.shape[0], 2, dtype=u.dtype) + 0 * u[:, :1], U)
    np.testing.assert_array_equal(phi, np.zeros_like(U))
    phi = local_importance(lambda u: torch.stack([u[:, 0], -u[:, 0]], dim=1), U, targets=0)
    np.testing.assert_array_equal(phi, [[1.0, 0.0], [3.0, 0.0]])  # concept 1 is unused


def test_non_differentiable_f_co_is_an_error() -> None:
    U = np.array([[1.0, 2.0], [3.0, -1.0]])
    with pytest.raises(InvalidParameterError, match=r"'model' .* differentiable .* torch.no_grad"):
        local_importance(lambda u: torch.ones(u.shape[0], 2, dtype=u.dtype), U)
    with pytest.raises(InvalidParameterError, match=r"differentiable"):
        local_importance(lambda u: u.detach() @ torch.ones(2, 2, dtype=u.dtype), U)


def test_local_importance_errors(setup64) -> None:
    *_, U, f_co = setup64
    with pytest.raises(
        InvalidParameterError, match=r"'concepts' parameter of local_importance must be a 2-D"
    ):
        local_importance(f_co, U[0])
    with pytest.raises(InvalidParameterError, match=r"'concepts' parameter .* non-empty"):
        local_importance(f_co, np.zeros((0, 4)))
    with pytest.raises(
        InvalidParameterError, match=r"'targets' .* one class index per sample \(7\). Got 6 targets"
    ):
        local_importance(f_co, U, targets=[0] * 6)
    with pytest.raises(InvalidParameterError, match=r"'targets' .* class indices in \[0, 3\)"):
        local_importance(f_co, U, targets=3)
    with pytest.raises(InvalidParameterError, match=r"'targets' .* non-negative"):
        local_importance(f_co, U, targets=-1)
    with pytest.raises(InvalidParameterError, match=r"'targets' .* integer array"):
        local_importance(f_co, U, targets=np.full(7, 0.5))
    with pytest.raises(InvalidParameterError, match=r"'batch_size' .* integer ≥ 1"):
        local_importance(f_co, U, batch_size=0)
    with pytest.raises(InvalidParameterError, match=r"'model' .* logits tensor of shape"):
        local_importance(lambda u: u.sum(dim=1), U)
    with pytest.raises(InvalidParameterError, match=r"'model' .* Pass extractor="):
        local_importance(object(), U)


# --------------------------------------------------------------------------- global importance


def test_global_importance_is_the_mean_per_predicted_class() -> None:
    phi = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.5], [0.5, 0.5, 4.0], [-1.0, 2.0, 1.0]])
    predictions = np.array([2, 0, 2, 2])
    Phi = global_importance(phi, predictions, n_classes=4)
    expected = np.array(
        [
            [3.0, 0.0, -1.5],
            [0.0, 0.0, 0.0],  # no sample predicted as class 1
            [(1.0 + 0.5 - 1.0) / 3, (-2.0 + 0.5 + 2.0) / 3, (0.5 + 4.0 + 1.0) / 3],
            [0.0, 0.0, 0.0],
        ]
    )
    np.testing.assert_allclose(Phi, expected)
    assert global_importance(phi, predictions).shape == (3, 3)  # default: max(prediction) + 1 classes
    tensor_Phi = global_importance(torch.as_tensor(phi, dtype=torch.float32), torch.as_tensor(predictions), 4)
    assert isinstance(tensor_Phi, torch.Tensor) and tensor_Phi.dtype == torch.float32
    np.testing.assert_allclose(tensor_Phi.numpy(), expected, rtol=1e-6)


def test_global_importance_errors() -> None:
    phi = np.ones((3, 2))
    with pytest.raises(InvalidParameterError, match=r"'predictions' .* one class per row .* \(3\). Got 2"):
        global_importance(phi, [0, 1])
    with pytest.raises(InvalidParameterError, match=r"'predictions' .* integer array"):
        global_importance(phi, [0.0, 1.0, 1.0])
    with pytest.raises(InvalidParameterError, match=r"'predictions' .* class indices < n_classes \(2\)"):
        global_importance(phi, [0, 1, 2], n_classes=2)
    with pytest.raises(InvalidParameterError, match=r"'importance' .* 2-D"):
        global_importance(np.ones(3), [0, 1, 2])


def test_normalized_global_importance_has_unit_absolute_sum_per_class(setup64) -> None:
    _, _, U, f_co = setup64
    phi, predictions = local_importance(f_co, U, return_predictions=True)
    Phi_hat = normalize_importance(global_importance(phi, predictions, n_classes=4))
    sums = np.abs(Phi_hat).sum(axis=1)
    present = np.isin(np.arange(4), predictions)
    np.testing.assert_allclose(sums[present], 1.0)
    np.testing.assert_array_equal(sums[~present], 0.0)  # class 3 is never predicted
    # local normalisation (eq. 10) too, and the signs are kept
    phi_hat = normalize_importance(phi)
    np.testing.assert_allclose(np.abs(phi_hat).sum(axis=1), 1.0)
    np.testing.assert_array_equal(np.sign(phi_hat), np.sign(phi))


def test_normalize_importance_hand_values_and_kinds() -> None:
    values = np.array([[2.0, -1.0, 1.0], [0.0, 0.0, 0.0], [0.0, -3.0, 1.0]])
    expected = np.array([[0.5, -0.25, 0.25], [0.0, 0.0, 0.0], [0.0, -0.75, 0.25]])
    np.testing.assert_allclose(normalize_importance(values), expected)
    torch.testing.assert_close(normalize_importance(torch.as_tensor(values)), torch.as_tensor(expected))
    np.testing.assert_allclose(normalize_importance(np.array([3, -1])), [0.75, -0.25])  # ints, 1-D
    with pytest.raises(InvalidParameterError, match=r"'importance' parameter of normalize_importance"):
        normalize_importance(np.ones((2, 2, 2)))
    with pytest.raises(InvalidParameterError, match=r"non-empty"):
        normalize_importance(torch.ones(0))


# --------------------------------------------------------------------------- buckets (Tab. 4)


@pytest.mark.parametrize(
    ("value", "bucket"),
    [
        (-1.0, "--"),
        (-0.3, "--"),
        (-0.2999, "-"),
        (-0.05, "-"),
        (-0.0499, None),
        (0.0, None),
        (0.0499, None),
        (0.05, "+"),
        (0.2999, "+"),
        (0.3, "++"),
        (1.0, "++"),
    ],
)
def test_bucket_edges_follow_table_4(value: float, bucket: str | None) -> None:
    assert importance_bucket(value) == bucket


def test_bucket_reaches_plus_plus_and_accepts_array_scalars() -> None:
    # the paper's code tested "+" before "++" and never emitted "++"
    assert importance_bucket(0.9) == "++"
    assert importance_bucket(np.float32(0.3)) == "++"
    assert importance_bucket(np.float32(-0.05)) == "-"
    assert importance_bucket(torch.tensor(0.05)) == "+"
    assert importance_bucket(np.array(-0.3)) == "--"
    assert importance_bucket(1) == "++"


def test_bucket_out_of_range_clips_to_the_outer_signs() -> None:
    assert importance_bucket(1.0000001) == "++"
    assert importance_bucket(7.5) == "++"
    assert importance_bucket(-1.2) == "--"


def test_bucket_errors() -> None:
    with pytest.raises(
        InvalidParameterError, match=r"'value' parameter of importance_bucket must be a finite"
    ):
        importance_bucket(float("nan"))
    with pytest.raises(InvalidParameterError, match=r"one real number"):
        importance_bucket(np.array([0.1, 0.2]))
    with pytest.raises(InvalidParameterError, match=r"one real number"):
        importance_bucket("0.1")


def test_important_concepts_union_per_row_and_strict_threshold() -> None:
    Phi_hat = np.array([[0.05, -0.6, 0.0, 0.35], [-0.051, 0.2, 0.049, 0.7]])
    np.testing.assert_array_equal(important_concepts(Phi_hat), [0, 1, 3])  # 0.05 itself is not > τ
    rows = important_concepts(Phi_hat, per_row=True)
    assert [r.tolist() for r in rows] == [[1, 3], [0, 1, 3]]
    np.testing.assert_array_equal(important_concepts(Phi_hat, threshold=0.3), [1, 3])
    np.testing.assert_array_equal(important_concepts(torch.as_tensor(Phi_hat[0])), [1, 3])
    assert important_concepts(np.zeros((2, 3))).tolist() == []
    with pytest.raises(InvalidParameterError, match=r"'threshold' .* non-negative"):
        important_concepts(Phi_hat, threshold=-0.1)
    with pytest.raises(InvalidParameterError, match=r"'importance' parameter of important_concepts"):
        important_concepts(np.ones((1, 1, 1)))


# --------------------------------------------------------------------------- with the real SplitClassifier


def test_real_split_classifier_and_pca_match_finite_differences(tiny_pipeline) -> None:
    clf, extractor, texts = tiny_pipeline
    f_co = ConceptModel(clf, extractor)
    U = f_co.concepts(texts)
    assert isinstance(U, torch.Tensor) and U.dtype == torch.float32
    phi, predictions = local_importance(clf, U, extractor=extractor, return_predictions=True)
    np.testing.assert_array_equal(predictions, f_co.predict(texts))
    # the head is affine: central differences are exact up to float32 rounding
    U64 = U.double().numpy()
    expected = finite_difference_importance(lambda u: f_co(u).double(), U64, predictions, eps=1e-2)
    np.testing.assert_allclose(phi.double().numpy(), expected, rtol=2e-3, atol=2e-4)
    # full-rank PCA reconstructs the activations, so f_c predicts like f
    np.testing.assert_array_equal(predictions, clf.predict(texts))
    np.testing.assert_allclose(
        local_importance(f_co, U, targets=predictions, batch_size=1).numpy(),
        phi.numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


@pytest.fixture(scope="module")
def tiny_pipeline(tiny_split_classifier):
    from xaimetrics.concepts import PCA

    clf = tiny_split_classifier(hidden_size=12, seed=0, batch_size=4)
    texts = [
        "a fine film",
        "dull and far too long",
        "the actors shine in every scene",
        "I want my money back",
        "a quiet, moving story about a family",
        "nothing happens for two hours",
        "funny, sharp and kind",
        "the plot makes no sense at all",
        "beautiful music",
        "worst sequel ever",
        "an honest look at grief",
        "it is fine, I guess",
        "the camera work is stunning",
        "too many subplots",
    ]
    extractor = PCA().fit(clf.activations(texts))
    return clf, extractor, texts


def test_concept_model_with_an_extractor_is_an_error(setup64) -> None:
    decoder, _, U, f_co = setup64
    with pytest.raises(InvalidParameterError, match=r"'extractor' .* None when 'model' is a ConceptModel"):
        local_importance(f_co, U, extractor=decoder)
