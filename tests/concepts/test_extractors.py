"""Concept extractors against their reference definitions (ConSim paper App. A.3, scikit-learn, numpy)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

from extractor_data import N_FEATURES, N_SAMPLES, RANK, low_rank, relative_error
from xaimetrics import concepts
from xaimetrics.concepts import ICA, NMF, PCA, SAE, SVD, ConceptExtractor
from xaimetrics.exceptions import InvalidParameterError, NotFittedError

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def make(name: str, **kwargs: object) -> ConceptExtractor:
    """Every extractor, small and fast; NMF gets non-negative data in the tests that use this."""
    defaults: dict[str, dict[str, object]] = {
        "NoProjection": {},
        "PCA": {"n_concepts": 5},
        "SVD": {"n_concepts": 5},
        "ICA": {"n_concepts": RANK, "random_state": 0, "max_iter": 1000},
        "NMF": {"n_concepts": 5, "random_state": 0, "max_iter": 500},
        "SAE": {"n_concepts": 8, "random_state": 0, "max_steps": 60, "batch_size": 32, "device": "cpu"},
    }
    return getattr(concepts, name)(**{**defaults[name], **kwargs})


ALL = ["NoProjection", "PCA", "SVD", "ICA", "NMF", "SAE"]


def data_for(name: str) -> np.ndarray:
    return low_rank(non_negative=name == "NMF")


def test_extractors_are_exported() -> None:
    public = {"ICA", "NMF", "PCA", "SAE", "SVD", "NoProjection", "ConceptExtractor"}
    assert public <= set(concepts.__all__)  # ruff (RUF022) keeps __all__ sorted
    assert len(set(concepts.__all__)) == len(concepts.__all__)
    assert all(hasattr(concepts, name) for name in concepts.__all__)


# --------------------------------------------------------------------------------------------- references
@pytest.mark.parametrize("cls", [PCA, SVD])
def test_full_rank_reconstruction_float64(cls: type[ConceptExtractor]) -> None:
    A = low_rank()
    extractor = cls().fit(A)
    assert extractor.n_concepts_ == min(A.shape) == N_FEATURES
    assert relative_error(extractor.decode(extractor.encode(A)), A) <= 1e-5
    assert extractor.encode(A).dtype == np.float64


@pytest.mark.parametrize("cls", [PCA, SVD])
def test_full_rank_reconstruction_float32(cls: type[ConceptExtractor]) -> None:
    A = low_rank().astype(np.float32)
    extractor = cls().fit(A)
    encoded = extractor.encode(A)
    assert encoded.dtype == np.float32
    assert relative_error(extractor.decode(encoded), A) <= 1e-5 * 10  # single precision
    assert relative_error(extractor.decode(encoded), A) > 0  # it did go through float32 arithmetic


def test_full_rank_with_more_features_than_samples() -> None:
    A = low_rank()[:15]  # 15 × 23: the limit is n_samples
    for cls in (PCA, SVD):
        extractor = cls().fit(A)
        assert extractor.n_concepts_ == 15
        assert relative_error(extractor.decode(extractor.encode(A)), A) <= 1e-5


# --------------------------------------------------------------------------------------------- contract
@pytest.mark.parametrize("name", ALL)
def test_decode_is_the_affine_dictionary(name: str) -> None:
    A = data_for(name)
    extractor = make(name).fit(A)
    k = extractor.n_concepts_
    assert extractor.n_features_in_ == N_FEATURES
    assert extractor.components_.shape == (k, N_FEATURES)
    assert extractor.bias_.shape == (N_FEATURES,)
    U = np.random.default_rng(5).random((7, k))
    np.testing.assert_allclose(extractor.decode(U), U @ extractor.components_ + extractor.bias_, rtol=1e-6)
    assert extractor.encode(A).shape == (N_SAMPLES, k)


@pytest.mark.parametrize("name", ALL)
def test_torch_in_torch_out(name: str) -> None:
    A = data_for(name)
    extractor = make(name).fit(A)
    for dtype in (torch.float32, torch.float64):
        tensor = torch.tensor(A, dtype=dtype)
        encoded = extractor.encode(tensor)
        assert isinstance(encoded, torch.Tensor) and encoded.dtype == dtype
        np.testing.assert_allclose(
            encoded.numpy(), extractor.encode(A.astype(tensor.numpy().dtype)), atol=1e-5
        )
        decoded = extractor.decode(encoded)
        assert isinstance(decoded, torch.Tensor) and decoded.dtype == dtype
        np.testing.assert_allclose(decoded.numpy(), extractor.decode(encoded.numpy()), atol=1e-5)


@pytest.mark.parametrize("name", ["NoProjection", "PCA", "SVD", "ICA", "NMF"])
def test_fit_on_torch_equals_fit_on_numpy(name: str) -> None:
    A = data_for(name)
    from_numpy = make(name).fit(A)
    from_torch = make(name).fit(torch.tensor(A))
    assert isinstance(from_torch.components_, np.ndarray)
    np.testing.assert_allclose(from_torch.components_, from_numpy.components_, atol=1e-8)
    encoded = make(name).fit_encode(torch.tensor(A))
    assert isinstance(encoded, torch.Tensor)
    np.testing.assert_allclose(encoded.numpy(), make(name).fit_encode(A), atol=1e-8)


@pytest.mark.parametrize("name", ALL)
def test_decode_gradient_is_components_times_gradient(name: str) -> None:
    A = data_for(name)
    extractor = make(name).fit(A)
    U = torch.tensor(np.random.default_rng(1).random((4, extractor.n_concepts_)), requires_grad=True)
    decoded = extractor.decode(U)
    (torch.sin(decoded) * torch.arange(N_FEATURES, dtype=torch.float64)).sum().backward()
    grad_activations = torch.cos(decoded.detach()) * torch.arange(N_FEATURES, dtype=torch.float64)
    expected = grad_activations.numpy() @ extractor.components_.T  # row-wise: components_ @ ∇_a
    np.testing.assert_allclose(U.grad.numpy(), expected, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("name", ["NoProjection", "PCA", "SVD", "ICA"])
def test_linear_encode_is_differentiable(name: str) -> None:
    A = low_rank()
    extractor = make(name).fit(A)
    tensor = torch.tensor(A[:5], requires_grad=True)
    weights = torch.tensor(np.random.default_rng(2).normal(size=(5, extractor.n_concepts_)))
    (extractor.encode(tensor) * weights).sum().backward()
    # encode(a) = (a − offset) @ E for a matrix E: the gradient is weights @ Eᵀ
    zero = extractor.encode(np.zeros((1, N_FEATURES)))
    basis = extractor.encode(np.eye(N_FEATURES)) - zero
    np.testing.assert_allclose(tensor.grad.numpy(), weights.numpy() @ basis.T, atol=1e-8)


@pytest.mark.parametrize("name", ALL)
def test_not_fitted(name: str) -> None:
    extractor = make(name)
    with pytest.raises(
        NotFittedError, match=rf"This {name} is not fitted yet\. Call 'fit'.* before 'encode'"
    ):
        extractor.encode(low_rank())
    with pytest.raises(AttributeError, match="before 'decode'"):
        extractor.decode(np.ones((2, 3)))


def test_integer_and_list_inputs_become_float() -> None:
    A = np.rint(low_rank() * 10).astype(np.int64)
    pca = PCA(n_concepts=3).fit(A)
    assert pca.encode(A).dtype == np.float64
    encoded = pca.encode(A[:2].tolist())
    assert isinstance(encoded, np.ndarray) and encoded.shape == (2, 3)
    assert pca.encode(torch.tensor(A)).dtype == torch.get_default_dtype()


def test_estimator_params_and_clone() -> None:
    from sklearn.base import clone

    svd = SVD(n_concepts=3, random_state=1, algorithm="full")
    assert svd.get_params() == {"n_concepts": 3, "random_state": 1, "algorithm": "full"}
    assert repr(svd) == "SVD(n_concepts=3, random_state=1, algorithm='full')"
    assert repr(PCA()) == "PCA()"
    svd.fit(low_rank())
    copy = clone(svd)
    assert copy.get_params() == svd.get_params() and not hasattr(copy, "components_")
    assert svd.set_params(n_concepts=2) is svd and svd.n_concepts == 2
    with pytest.raises(InvalidParameterError, match="The 'n_components' parameter of SVD must be one of"):
        svd.set_params(n_components=2)


def test_refit_resets_the_torch_cache() -> None:
    pca = PCA(n_concepts=3).fit(low_rank(0))
    first = pca.decode(torch.ones(1, 3, dtype=torch.float64))
    pca.fit(low_rank(1))
    second = pca.decode(torch.ones(1, 3, dtype=torch.float64))
    np.testing.assert_allclose(second.numpy(), pca.decode(np.ones((1, 3))))
    assert not torch.allclose(first, second)


# --------------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("name", "limit"),
    [("PCA", N_FEATURES), ("SVD", N_FEATURES), ("ICA", N_FEATURES), ("NMF", N_FEATURES)],
)
def test_too_many_concepts(name: str, limit: int) -> None:
    message = (
        f"The 'n_concepts' parameter of {name} must be ≤ {limit} (min(n_samples, n_features)). Got 500. "
        "Use a smaller value or NoProjection."
    )
    with pytest.raises(InvalidParameterError, match=re.escape(message)):
        make(name, n_concepts=500).fit(data_for(name))


def test_too_many_concepts_for_few_samples() -> None:
    with pytest.raises(InvalidParameterError, match=re.escape("must be ≤ 10 (min(n_samples, n_features))")):
        PCA(n_concepts=11).fit(low_rank()[:10])


@pytest.mark.parametrize("name", ["PCA", "SVD", "ICA", "NMF", "SAE"])
@pytest.mark.parametrize("value", [0, -3, 2.5, True, "5"])
def test_invalid_n_concepts(name: str, value: object) -> None:
    with pytest.raises(
        InvalidParameterError, match=rf"The 'n_concepts' parameter of {name} must be None or an integer ≥ 1"
    ):
        make(name, n_concepts=value).fit(data_for(name))


@pytest.mark.parametrize("value", [-1, 2**32, 1.5, "seed"])
def test_invalid_random_state(value: object) -> None:
    with pytest.raises(
        InvalidParameterError, match="The 'random_state' parameter of PCA must be None or an integer"
    ):
        PCA(random_state=value).fit(low_rank())


@pytest.mark.parametrize("name", ALL)
def test_bad_arrays(name: str) -> None:
    A = data_for(name)
    extractor = make(name)
    with pytest.raises(
        InvalidParameterError,
        match=rf"'A' parameter of {name}\.fit must be a 2-D array.*Got an array of shape \(23,\)\. Reshape",
    ):
        extractor.fit(A[0])
    with pytest.raises(InvalidParameterError, match=r"Got an array of shape \(2, 30, 23\)\. Token-level"):
        extractor.fit(A[:60].reshape(2, 30, N_FEATURES))
    with pytest.raises(InvalidParameterError, match="at least 2 samples"):
        extractor.fit(A[:1])
    with pytest.raises(
        InvalidParameterError, match=r"must be a non-empty 2-D array\. Got an array of shape \(0, 23\)"
    ):
        extractor.fit(A[:0])
    bad = A.copy()
    bad[3, 4], bad[5, 6] = np.nan, np.inf
    with pytest.raises(
        InvalidParameterError, match=r"must be finite \(no NaN or infinity\)\. Got 2 NaN or infinite entries"
    ):
        extractor.fit(bad)
    tensor = torch.tensor(A[:5])
    tensor[1, 2] = float("nan")
    with pytest.raises(InvalidParameterError, match="Got 1 NaN or infinite entries"):
        extractor.fit(tensor)
    with pytest.raises(InvalidParameterError, match="must be a 2-D array of real numbers"):
        extractor.fit(np.array([["a", "b"], ["c", "d"]]))
    extractor.fit(A)
    with pytest.raises(
        InvalidParameterError,
        match=rf"'A' parameter of {name}\.encode must be an array with 23 columns \(the width {name} was fitted on\)\. Got 22 columns",
    ):
        extractor.encode(A[:, :-1])
    with pytest.raises(
        InvalidParameterError,
        match=rf"'U' parameter of {name}\.decode must be an array with {extractor.n_concepts_} columns",
    ):
        extractor.decode(np.ones((2, extractor.n_concepts_ + 1)))
    with pytest.raises(InvalidParameterError, match=rf"'U' parameter of {name}\.decode must be finite"):
        extractor.decode(np.full((2, extractor.n_concepts_), np.nan))


def test_complex_tensor_rejected() -> None:
    with pytest.raises(InvalidParameterError, match="must be a real-valued array"):
        PCA().fit(torch.ones(3, 2, dtype=torch.complex64))


@pytest.mark.parametrize(
    ("cls", "kwargs", "match"),
    [
        (
            SVD,
            {"algorithm": "arpack"},
            "The 'algorithm' parameter of SVD must be one of 'auto', 'full', 'randomized'",
        ),
        (ICA, {"max_iter": 0}, "The 'max_iter' parameter of ICA must be an integer ≥ 1"),
        (NMF, {"tol": -1.0}, "The 'tol' parameter of NMF must be a positive number"),
    ],
)
def test_invalid_method_parameters(
    cls: type[ConceptExtractor], kwargs: dict[str, object], match: str
) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        cls(n_concepts=2, **kwargs).fit(np.abs(low_rank()))


@pytest.mark.parametrize("kind", [ICA, NMF])
def test_an_unconverged_fit_says_which_option_to_raise_once(kind) -> None:
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stopped = kind(n_concepts=5, random_state=0, max_iter=1).fit(np.abs(low_rank()))
    (warning,) = caught  # ours alone: scikit-learn's bare "Maximum number of iterations" is replaced
    assert issubclass(warning.category, ConvergenceWarning) and stopped.converged_ is False
    name = kind.__name__
    assert f"{name} stopped at max_iter=1" in str(warning.message)
    assert f"[extractor_options.{name}] max_iter = 4" in str(warning.message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert kind(n_concepts=2, random_state=0, max_iter=5000).fit(np.abs(low_rank())).converged_ is True


def test_sae_is_exported() -> None:
    assert SAE().get_params()["l1_coefficient"] == 1e-3
