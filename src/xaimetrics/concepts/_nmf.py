"""NMF concepts: a non-negative factorisation ``A ≈ UW`` of non-negative activations."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.concepts._base import IterativeExtractor, like, to_numpy

if TYPE_CHECKING:
    from xaimetrics._typing import Array

__all__ = ["NMF"]


def _check_non_negative(data: np.ndarray, owner: str) -> None:
    minimum = float(data.min())
    if minimum < 0:
        n_negative = int((data < 0).sum())
        raise invalid(
            "A",
            owner,
            "non-negative (NMF factorises A ≈ UW with U, W ≥ 0)",
            f"{n_negative} negative entries (minimum {minimum:.4g})",
            "Take activations that are non-negative by construction: a classifier with a ReLU before the "
            "split, e.g. load_demo_classifier(..., positive=True). Otherwise use an extractor that accepts "
            "signed activations: NoProjection, ICA or SAE.",
        )


class NMF(IterativeExtractor):
    """Non-negative matrix factorisation ``A ≈ UW`` with ``U, W ≥ 0`` (ConSim paper, App. A.3).

    ``W`` (shape ``(n_concepts, n_features)``) is learnt with :class:`sklearn.decomposition.NMF`
    (Frobenius loss, coordinate descent, default initialisation) and is the decoder: ``t⁻¹(u) = uW``
    (``components_ = W``, ``bias_ = 0``). ``t`` has no closed form: encoding new activations solves the
    non-negative least-squares problem ``min_{U ≥ 0} ‖A − UW‖²`` with ``W`` fixed, by scikit-learn's batched
    coordinate descent (``NMF.transform``; the same ``max_iter``/``tol``), which is much faster than one
    :func:`scipy.optimize.nnls` call per row and agrees with it up to ``tol``. Encoding a tensor therefore
    goes through numpy and is **not differentiable**; decoding is.

    The activations must be non-negative, as after a ReLU (the paper's "+" models).

    Args:
        n_concepts: number of atoms, at most ``min(n_samples, n_features)``; ``None`` keeps that many.
        random_state: seed of the initialisation (used when it is random).
        max_iter: coordinate-descent iterations, for fitting and for encoding.
        tol: coordinate-descent tolerance.

    Attributes:
        components_ (numpy.ndarray): ``W``, shape ``(n_concepts_, n_features_in_)``, non-negative.
        estimator_ (sklearn.decomposition.NMF): the fitted scikit-learn model (its ``transform`` encodes).
        reconstruction_err_ (float): Frobenius norm ``‖A − UW‖`` on the training activations.

    ``fit_encode`` returns the training concepts ``U`` found jointly with ``W`` while fitting; ``encode`` of
    the same activations re-solves for ``U`` with ``W`` fixed and lands close to it.

    Raises:
        InvalidParameterError: on activations with negative entries (the message names the fixes).

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> A = rng.random(size=(12, 3)) @ rng.random(size=(3, 5))
        >>> nmf = NMF(n_concepts=3, random_state=0, max_iter=1000).fit(A)
        >>> U = nmf.encode(A)
        >>> U.shape, bool((U >= 0).all())
        ((12, 3), True)
        >>> bool(np.linalg.norm(nmf.decode(U) - A) < 0.05 * np.linalg.norm(A))
        True
    """

    def _fit(self, A: Array) -> np.ndarray:
        from sklearn.decomposition import NMF as SklearnNMF

        max_iter, tol = self._solver_options()
        data = to_numpy(A)
        _check_non_negative(data, "NMF.fit")
        k = self._resolve_n_concepts(min(data.shape), "min(n_samples, n_features)")
        model = SklearnNMF(n_components=k, random_state=self.random_state, max_iter=max_iter, tol=tol)
        concepts = self._solve(lambda: model.fit_transform(data))
        self.estimator_ = model
        self.reconstruction_err_ = float(model.reconstruction_err_)
        self._set_decoder(np.asarray(model.components_, dtype=data.dtype))
        return concepts

    def _encode(self, A: Array) -> Array:
        data = to_numpy(A)
        _check_non_negative(data, "NMF.encode")
        concepts = self.estimator_.transform(data.astype(self.components_.dtype, copy=False))
        return like(concepts, A)
