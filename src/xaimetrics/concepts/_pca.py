"""PCA concepts: principal directions of the centred activations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xaimetrics.concepts._base import ConceptExtractor, to_numpy

if TYPE_CHECKING:
    from xaimetrics._typing import Array

__all__ = ["PCA"]


class PCA(ConceptExtractor):
    """Principal component analysis, ``t(a) = (a − μ)W`` and ``t⁻¹(u) = uWᵀ + μ`` (ConSim paper, App. A.3).

    ``W`` (shape ``(n_features, n_concepts)``) holds the orthonormal principal directions of the training
    activations, fitted with :class:`sklearn.decomposition.PCA` (default solver). The decoder atoms are
    ``components_ = Wᵀ`` and ``bias_ = μ`` (the training mean), so ``encode`` equals scikit-learn's
    ``transform`` and ``decode`` its ``inverse_transform``.

    Args:
        n_concepts: number of principal directions kept, at most ``min(n_samples, n_features)``;
            ``None`` keeps that many.
        random_state: seed of scikit-learn's randomized solver (used on large inputs).

    Attributes:
        components_ (numpy.ndarray): principal directions, shape ``(n_concepts_, n_features_in_)``.
        bias_, mean_ (numpy.ndarray): training mean ``μ``, shape ``(n_features_in_,)``.
        explained_variance_ratio_ (numpy.ndarray): share of variance per concept, shape ``(n_concepts_,)``.

    Example:
        >>> import numpy as np
        >>> A = np.random.default_rng(0).normal(size=(8, 5))
        >>> pca = PCA(n_concepts=2).fit(A)
        >>> pca.encode(A).shape, pca.components_.shape
        ((8, 2), (2, 5))
        >>> full = PCA().fit(A)
        >>> bool(np.allclose(full.decode(full.encode(A)), A))
        True
    """

    def __init__(self, *, n_concepts: int | None = None, random_state: int | None = None) -> None:
        super().__init__(n_concepts=n_concepts, random_state=random_state)

    def _fit(self, A: Array) -> None:
        from sklearn.decomposition import PCA as SklearnPCA

        data = to_numpy(A)
        k = self._resolve_n_concepts(min(data.shape), "min(n_samples, n_features)")
        model = SklearnPCA(n_components=k, random_state=self.random_state).fit(data)
        self.mean_ = model.mean_
        self.explained_variance_ratio_ = model.explained_variance_ratio_
        self._set_decoder(model.components_, model.mean_)

    def _encode(self, A: Array) -> Array:
        return (A - self._as(A, "bias_")) @ self._as(A, "components_").T
