"""NoProjection: the neurons themselves as concepts (identity, a copy, the width only)."""

from __future__ import annotations

import numpy as np
import pytest

from extractor_data import N_FEATURES, low_rank
from xaimetrics.concepts import NoProjection
from xaimetrics.exceptions import InvalidParameterError

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_no_projection_is_identity() -> None:
    A = low_rank()
    extractor = NoProjection().fit(A)
    encoded = extractor.encode(A)
    np.testing.assert_array_equal(encoded, A)
    encoded[0, 0] = 1e6
    assert A[0, 0] != 1e6  # a copy, not a view
    np.testing.assert_array_equal(extractor.components_, np.eye(N_FEATURES))
    assert NoProjection(n_concepts=N_FEATURES).fit(A).n_concepts_ == N_FEATURES


def test_no_projection_rejects_another_width() -> None:
    message = r"The 'n_concepts' parameter of NoProjection must be None or 23 \(the activation width.*Got 10\. Use PCA"
    with pytest.raises(InvalidParameterError, match=message):
        NoProjection(n_concepts=10).fit(low_rank())
