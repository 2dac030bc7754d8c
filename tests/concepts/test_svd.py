"""SVD: concepts UΣ against numpy's SVD; the randomized solver against the exact one."""

from __future__ import annotations

import numpy as np
import pytest

from extractor_data import N_FEATURES, RANK, low_rank, relative_error
from xaimetrics.concepts import SVD

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_svd_randomized_matches_exact() -> None:
    A = low_rank()
    exact = SVD(n_concepts=RANK, algorithm="full").fit(A)
    randomized = SVD(n_concepts=RANK, algorithm="randomized", random_state=0).fit(A)
    assert exact.algorithm_ == "full" and randomized.algorithm_ == "randomized"
    np.testing.assert_allclose(randomized.singular_values_, exact.singular_values_, rtol=1e-6)
    np.testing.assert_allclose(np.abs(randomized.encode(A)), np.abs(exact.encode(A)), atol=1e-6)
    full = SVD(algorithm="randomized", random_state=0).fit(A)
    assert relative_error(full.decode(full.encode(A)), A) <= 1e-5


def test_svd_concepts_are_u_sigma() -> None:
    A = low_rank()
    svd = SVD(n_concepts=4).fit(A)
    left, singular, _ = np.linalg.svd(A, full_matrices=False)
    expected = left[:, :4] * singular[:4]
    encoded = svd.encode(A)
    signs = np.sign((encoded * expected).sum(axis=0))
    assert set(signs) <= {-1.0, 1.0}
    np.testing.assert_allclose(encoded, expected * signs, atol=1e-9)
    np.testing.assert_allclose(svd.singular_values_, singular[:4])
    np.testing.assert_array_equal(svd.bias_, np.zeros(N_FEATURES))  # no centring
