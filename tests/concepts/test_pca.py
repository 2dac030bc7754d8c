"""PCA against scikit-learn's PCA (encode, decode, mean, orthonormal directions)."""

from __future__ import annotations

import numpy as np
import pytest

from extractor_data import low_rank
from xaimetrics.concepts import PCA

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_pca_matches_sklearn() -> None:
    from sklearn.decomposition import PCA as SklearnPCA

    A, B = low_rank(0), low_rank(1)
    ours = PCA(n_concepts=4).fit(A)
    theirs = SklearnPCA(n_components=4).fit(A)
    np.testing.assert_allclose(ours.encode(B), theirs.transform(B), atol=1e-10)
    U = ours.encode(B)
    np.testing.assert_allclose(ours.decode(U), theirs.inverse_transform(U), atol=1e-10)
    np.testing.assert_allclose(ours.bias_, A.mean(axis=0))
    np.testing.assert_allclose(ours.components_ @ ours.components_.T, np.eye(4), atol=1e-10)
