"""SVD concepts: right singular vectors of the (uncentred) activations."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np

from xaimetrics._validation import Options, Rule
from xaimetrics.concepts._base import ConceptExtractor, to_numpy

if TYPE_CHECKING:
    from xaimetrics._typing import Array

__all__ = ["SVD"]

#: ``algorithm="auto"`` computes the exact SVD when the matrix has at most this many entries.
_EXACT_MAX_ENTRIES = 10_000_000


class SVD(ConceptExtractor):
    """Truncated singular value decomposition ``A ≈ UΣVᵀ`` without centring (ConSim paper, App. A.3).

    Concepts are ``UΣ``: ``t(a) = aV`` and ``t⁻¹(u) = uVᵀ``, so ``components_ = Vᵀ`` (orthonormal rows) and
    ``bias_ = 0``. Signs follow scikit-learn's ``svd_flip`` convention (deterministic).

    Args:
        n_concepts: number of singular directions kept, at most ``min(n_samples, n_features)``;
            ``None`` keeps that many.
        random_state: seed of the randomized solver.
        algorithm: ``"full"`` — exact LAPACK SVD (:func:`scipy.linalg.svd`); ``"randomized"`` —
            :class:`sklearn.decomposition.TruncatedSVD` (the paper's choice; approximate, fast for a few
            concepts of a large matrix); ``"auto"`` — exact when ``n_samples × n_features ≤ 10⁷`` or
            ``n_concepts ≥ 0.8 · min(n_samples, n_features)``, randomized otherwise.

    Attributes:
        components_ (numpy.ndarray): ``Vᵀ``, shape ``(n_concepts_, n_features_in_)``.
        singular_values_ (numpy.ndarray): ``diag(Σ)``, shape ``(n_concepts_,)``, decreasing.

    Example:
        >>> import numpy as np
        >>> A = np.random.default_rng(0).normal(size=(8, 5))
        >>> svd = SVD(n_concepts=3).fit(A)
        >>> svd.encode(A).shape
        (8, 3)
        >>> bool(np.allclose(svd.singular_values_, np.linalg.svd(A, compute_uv=False)[:3]))
        True
    """

    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        **ConceptExtractor._parameter_constraints,
        "algorithm": Options(("auto", "full", "randomized")),
    }

    def __init__(
        self,
        *,
        n_concepts: int | None = None,
        random_state: int | None = None,
        algorithm: Literal["auto", "full", "randomized"] = "auto",
    ) -> None:
        super().__init__(n_concepts=n_concepts, random_state=random_state)
        self.algorithm = algorithm

    def _fit(self, A: Array) -> None:
        algorithm = self.algorithm
        data = to_numpy(A)
        limit = min(data.shape)
        k = self._resolve_n_concepts(limit, "min(n_samples, n_features)")
        if algorithm == "auto":
            algorithm = "full" if data.size <= _EXACT_MAX_ENTRIES or k >= 0.8 * limit else "randomized"
        if algorithm == "full":
            from scipy.linalg import svd
            from sklearn.utils.extmath import svd_flip

            left, singular, right = svd(data, full_matrices=False, check_finite=False)
            left, right = svd_flip(left, right, u_based_decision=False)
            components, singular = right[:k], singular[:k]
        else:
            from sklearn.decomposition import TruncatedSVD

            model = TruncatedSVD(n_components=k, algorithm="randomized", random_state=self.random_state).fit(
                data
            )
            components, singular = model.components_, model.singular_values_
        self.algorithm_ = algorithm
        self.singular_values_ = np.asarray(singular, dtype=data.dtype)
        self._set_decoder(np.asarray(components, dtype=data.dtype))

    def _encode(self, A: Array) -> Array:
        return A @ self._as(A, "components_").T
