"""NMF against scikit-learn's NMF; encoding as non-negative least squares; negative activations refused."""

from __future__ import annotations

import numpy as np
import pytest

from extractor_data import RANK, low_rank, relative_error
from xaimetrics.concepts import NMF
from xaimetrics.exceptions import InvalidParameterError

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_nmf_non_negative_and_matches_sklearn() -> None:
    from sklearn.decomposition import NMF as SklearnNMF

    A = low_rank(non_negative=True)
    nmf = NMF(n_concepts=RANK, random_state=0, max_iter=2000, tol=1e-5)
    U_fit = nmf.fit_encode(A)
    assert (U_fit >= 0).all() and (nmf.components_ >= 0).all()
    U = nmf.encode(A)
    assert (U >= 0).all()
    assert relative_error(U, U_fit) < 0.05  # re-solving with W fixed lands close to the joint solution
    reference = SklearnNMF(n_components=RANK, random_state=0, max_iter=2000, tol=1e-5)
    reference.fit(A)
    ours = relative_error(nmf.decode(U), A)
    theirs = relative_error(reference.inverse_transform(reference.transform(A)), A)
    assert ours == pytest.approx(theirs, rel=1e-6)
    assert ours < 0.02
    assert nmf.reconstruction_err_ == pytest.approx(reference.reconstruction_err_)


def test_nmf_encode_solves_non_negative_least_squares() -> None:
    from scipy.optimize import nnls

    A = low_rank(non_negative=True)
    nmf = NMF(n_concepts=4, random_state=0, max_iter=3000, tol=1e-8).fit(A)
    B = low_rank(1, non_negative=True)[:5]
    expected = np.stack([nnls(nmf.components_.T, row)[0] for row in B])
    np.testing.assert_allclose(nmf.encode(B), expected, atol=1e-3)


@pytest.mark.parametrize("method", ["fit", "encode"])
def test_nmf_rejects_negative_activations_with_the_fix(method: str) -> None:
    A = low_rank()
    assert (A < 0).any()
    nmf = NMF(n_concepts=3)
    if method == "encode":
        nmf.fit(np.abs(A))
    pattern = (
        rf"The 'A' parameter of NMF\.{method} must be non-negative .*"
        r"load_demo_classifier\(\.\.\., positive=True\).*NoProjection, ICA or SAE"
    )
    with pytest.raises(InvalidParameterError, match=pattern):
        getattr(nmf, method)(A)
