"""ICA concepts: independent sources of the centred activations, decoded with the pseudo-inverse."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from xaimetrics.concepts._base import IterativeExtractor, to_numpy

if TYPE_CHECKING:
    from xaimetrics._typing import Array

__all__ = ["ICA"]


class ICA(IterativeExtractor):
    """Independent component analysis, ``t(a) = W(a − μ)`` and ``t⁻¹(u) = W⁺u + μ`` (ConSim paper, App. A.3).

    ``W`` (shape ``(n_concepts, n_features)``, whitening included) is the unmixing matrix of
    :class:`sklearn.decomposition.FastICA` and ``W⁺`` its Moore–Penrose pseudo-inverse (computed here with
    :func:`numpy.linalg.pinv`), so the decoder atoms are ``components_ = (W⁺)ᵀ`` and ``bias_ = μ``. With fewer
    concepts than features, ``decode(encode(a)) = W⁺W(a − μ) + μ`` is the projection of ``a`` on the span of
    the atoms.

    Args:
        n_concepts: number of sources, at most ``min(n_samples, n_features)``; ``None`` keeps that many.
        random_state: seed of FastICA's initial unmixing matrix.
        max_iter: FastICA iterations (scikit-learn's default, 200); a ``ConvergenceWarning`` says when more
            are needed.
        tol: FastICA convergence tolerance.

    Attributes:
        unmixing_ (numpy.ndarray): ``W``, shape ``(n_concepts_, n_features_in_)``.
        mean_, bias_ (numpy.ndarray): training mean ``μ``, shape ``(n_features_in_,)``.
        components_ (numpy.ndarray): ``(W⁺)ᵀ``, shape ``(n_concepts_, n_features_in_)``.

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> A = rng.laplace(size=(200, 3)) @ rng.normal(size=(3, 5))
        >>> ica = ICA(n_concepts=3, random_state=0).fit(A)
        >>> ica.encode(A).shape
        (200, 3)
        >>> bool(np.allclose(ica.decode(ica.encode(A)), A))
        True
    """

    def _fit(self, A: Array) -> None:
        from sklearn.decomposition import FastICA

        max_iter, tol = self._solver_options()
        data = to_numpy(A)
        k = self._resolve_n_concepts(min(data.shape), "min(n_samples, n_features)")
        model = FastICA(
            n_components=k,
            random_state=self.random_state,
            max_iter=max_iter,
            tol=tol,
            whiten="unit-variance",
        )
        self._solve(lambda: model.fit(data))
        self.unmixing_ = np.asarray(model.components_, dtype=data.dtype)
        self.mean_ = np.asarray(model.mean_, dtype=data.dtype)
        self._set_decoder(np.linalg.pinv(self.unmixing_).T.astype(data.dtype), self.mean_)

    def _encode(self, A: Array) -> Array:
        return (A - self._as(A, "mean_")) @ self._as(A, "unmixing_").T
