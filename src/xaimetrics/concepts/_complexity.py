"""Complexity metrics of a concept space (ConSim paper, App. D.1).

Every function takes numpy arrays or tensors and returns a Python ``float`` (or ``int``), computed in
float64. The decoder atoms are the rows of ``components_`` (``t⁻¹(u) = u @ components_ + bias_``), which is
the paper's ``W_{t⁻¹}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._arrays import to_numpy
from xaimetrics._validation import Interval, caller, invalid, validate_params
from xaimetrics.concepts._concept_model import check_matrix
from xaimetrics.concepts._importance import IMPORTANCE_THRESHOLD, important_concepts

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from xaimetrics._protocols import HasComponents
    from xaimetrics._typing import Array

__all__ = [
    "concept_activation_ratio",
    "concept_l0",
    "decoder_cosine_similarity",
    "decoder_covariance",
    "important_concept_ratio",
    "n_important_concepts",
]


def _concepts64(concepts: Array) -> np.ndarray:
    return to_numpy(check_matrix(concepts, "concepts", what="(n_samples, n_concepts)")).astype(np.float64)


#: ``atol`` of the activation counts: values with ``|u| <= atol`` are inactive.
_ATOL = {"atol": Interval(float, 0, text="a non-negative number")}


@validate_params(_ATOL)
def concept_l0(concepts: Array, atol: float = 0.0) -> float:
    """Mean number of active concepts per sample, ``L0 = E_x Σ_i 1{|f_ic(x)_i| > atol}`` (App. D.1 "nb activated").

    The paper counts non-zero values (``atol = 0``). Methods with exact zeros (NMF's non-negative least
    squares, SAE's ReLU/TopK) get a meaningful count; dense methods (PCA, ICA, SVD) count every concept.
    Pass a small ``atol`` to ignore numerical noise around zero.

    Args:
        concepts: ``U = f_ic(X)``, shape ``(n_samples, n_concepts)``.
        atol: values with ``|u| <= atol`` count as inactive.

    Example:
        >>> import numpy as np
        >>> concept_l0(np.array([[0.0, 2.0, 0.0], [1.0, -1.0, 0.0]]))
        1.5
    """
    values = _concepts64(concepts)
    return float((np.abs(values) > float(atol)).sum(axis=1).mean())


@validate_params(_ATOL)
def concept_activation_ratio(concepts: Array, atol: float = 0.0) -> float:
    """Share of active concepts, ``L0 / k`` (App. D.1 "ratio of activated").

    Example:
        >>> import numpy as np
        >>> concept_activation_ratio(np.array([[0.0, 2.0, 0.0, 0.0], [1.0, -1.0, 0.0, 3.0]]))
        0.5
    """
    values = _concepts64(concepts)
    return float((np.abs(values) > float(atol)).mean())


def _atoms(components: object) -> np.ndarray:
    """Decoder atoms ``(n_concepts, n_features)`` from an array or a fitted extractor's ``components_``."""
    owner = caller()
    if hasattr(components, "components_"):
        components = components.components_
    elif hasattr(components, "encode") and hasattr(components, "decode"):
        raise invalid(
            "components",
            owner,
            "decoder atoms of shape (n_concepts, n_features) or a fitted extractor",
            f"an unfitted {type(components).__name__}",
            "Call fit first.",
        )
    return to_numpy(check_matrix(components, "components", what="(n_concepts, n_features)")).astype(
        np.float64
    )


@validate_params({})
def decoder_cosine_similarity(components: ArrayLike | HasComponents) -> float:
    """Mean pairwise cosine similarity of the decoder atoms, ``1/k² Σ_{i,j} cos(W_i, W_j)`` (App. D.1).

    The sum runs over all pairs **including** ``i = j`` (as in the paper), so ``k`` orthogonal atoms give
    ``1/k`` and ``k`` identical atoms give 1. The mean is signed: opposite atoms cancel. An all-zero atom
    (a dead concept) has cosine 0 with every atom, itself included.

    Args:
        components: decoder atoms ``W``, shape ``(n_concepts, n_features)``, or a fitted extractor
            (its ``components_``).

    Example:
        >>> import numpy as np
        >>> round(decoder_cosine_similarity(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])), 6)
        0.647603
    """
    atoms = _atoms(components)
    norms = np.linalg.norm(atoms, axis=1)
    unit = np.divide(atoms, norms[:, None], out=np.zeros_like(atoms), where=norms[:, None] > 0)
    return float((unit @ unit.T).mean())


@validate_params({})
def decoder_covariance(components: ArrayLike | HasComponents) -> float:
    """Mean entry of the covariance matrix between decoder atoms (App. D.1 "covariance").

    Like the cosine similarity, it compares the concepts of one method through their decoder atoms (the
    issue's reading of the paper's "covariance between concepts"): atom ``i`` is a variable observed over
    the ``p`` activation dimensions, and the result is the mean of the ``k × k`` matrix
    ``numpy.cov(W)`` (unbiased, ``ddof = 1``), diagonal included.

    Args:
        components: decoder atoms ``W``, shape ``(n_concepts, n_features)`` with ``n_features ≥ 2``, or a
            fitted extractor.

    Example:
        >>> import numpy as np
        >>> W = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 3.0]])  # cov(W) = [[1, 1], [1, 7/3]]
        >>> round(decoder_covariance(W), 6)
        1.333333
    """
    atoms = _atoms(components)
    if atoms.shape[1] < 2:
        raise invalid("components", "decoder_covariance", "atoms with at least 2 features", atoms.shape[1])
    return float(np.cov(atoms).mean())


@validate_params({})
def n_important_concepts(importance: Array, threshold: float = IMPORTANCE_THRESHOLD) -> int:
    """Number of concepts shown in prompts: ``|⋃_c {i : |Φ̂_c,i| > τ}|`` (App. D.1 "nb important").

    Args:
        importance: normalised global importances ``Φ̂`` (see
            :func:`~xaimetrics.concepts.normalize_importance`), shape ``(n_classes, n_concepts)``.
        threshold: ``τ``, 0.05 in the paper.

    Example:
        >>> import numpy as np
        >>> n_important_concepts(np.array([[0.6, 0.01, -0.39], [0.02, 0.9, 0.08]]))
        3
    """
    return len(important_concepts(_importance2d(importance), threshold))


@validate_params({})
def important_concept_ratio(importance: Array, threshold: float = IMPORTANCE_THRESHOLD) -> float:
    """Share of concepts shown in prompts, ``nb important / k`` (App. D.1 "ratio of important").

    Example:
        >>> import numpy as np
        >>> important_concept_ratio(np.array([[0.6, 0.01, -0.39, 0.0]]))
        0.5
    """
    values = _importance2d(importance)
    return len(important_concepts(values, threshold)) / values.shape[1]


def _importance2d(importance: Array) -> np.ndarray:
    return to_numpy(check_matrix(importance, "importance", what="(n_classes, n_concepts)"))
