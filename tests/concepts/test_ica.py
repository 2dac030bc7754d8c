"""ICA against scikit-learn's FastICA, decoding with the pseudo-inverse of the unmixing matrix."""

from __future__ import annotations

import numpy as np
import pytest

from extractor_data import low_rank, relative_error
from xaimetrics.concepts import ICA

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_ica_decodes_with_the_pseudo_inverse() -> None:
    A = low_rank()
    ica = ICA(n_concepts=4, random_state=0, max_iter=1000).fit(A)
    W, mu = ica.unmixing_, ica.mean_
    by_hand = (np.linalg.pinv(W) @ W @ (A - mu).T).T + mu
    np.testing.assert_allclose(ica.decode(ica.encode(A)), by_hand, atol=1e-10)
    np.testing.assert_allclose(ica.encode(A), (W @ (A - mu).T).T, atol=1e-10)
    # a projection onto 4 directions, not the identity: the formula matters
    assert relative_error(by_hand, A) > 1e-3


def test_ica_matches_sklearn_fastica() -> None:
    from sklearn.decomposition import FastICA

    A = low_rank()
    ica = ICA(n_concepts=4, random_state=3, max_iter=1000).fit(A)
    reference = FastICA(n_components=4, random_state=3, max_iter=1000, whiten="unit-variance").fit(A)
    np.testing.assert_allclose(ica.encode(A), reference.transform(A), atol=1e-8)
    np.testing.assert_allclose(ica.components_, reference.mixing_.T, atol=1e-8)
