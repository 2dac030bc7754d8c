"""NoProjection: the activation space is the concept space (each neuron is a concept)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._arrays import is_tensor
from xaimetrics._validation import invalid
from xaimetrics.concepts._base import ConceptExtractor, to_numpy

if TYPE_CHECKING:
    from xaimetrics._typing import Array

__all__ = ["NoProjection"]


class NoProjection(ConceptExtractor):
    """The identity concept space, ``t(a) = a`` and ``t⁻¹(u) = u`` (ConSim paper, App. A.3; the baseline).

    Concepts are the neurons at the split point, so ``components_`` is the identity matrix of size
    ``n_features`` and ``bias_`` is zero.

    Args:
        n_concepts: ``None`` (the activation width, the only allowed value) or that width itself.
        random_state: accepted for a uniform interface; unused.

    Example:
        >>> import numpy as np
        >>> A = np.arange(6.0).reshape(2, 3)
        >>> extractor = NoProjection().fit(A)
        >>> extractor.n_concepts_
        3
        >>> extractor.encode(A)[1].tolist()
        [3.0, 4.0, 5.0]
    """

    def __init__(self, *, n_concepts: int | None = None, random_state: int | None = None) -> None:
        super().__init__(n_concepts=n_concepts, random_state=random_state)

    def _fit(self, A: Array) -> None:
        width = int(A.shape[1])
        if self.n_concepts is not None and (isinstance(self.n_concepts, bool) or self.n_concepts != width):
            raise invalid(
                "n_concepts",
                "NoProjection",
                f"None or {width} (the activation width: NoProjection keeps every neuron as a concept)",
                self.n_concepts,
                "Use PCA, SVD, ICA, NMF or SAE to get a different number of concepts.",
            )
        self._set_decoder(np.eye(width, dtype=to_numpy(A[:1]).dtype))

    def _encode(self, A: Array) -> Array:
        return A.clone() if is_tensor(A) else A.copy()
