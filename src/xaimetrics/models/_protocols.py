"""What the rest of the library needs from a classifier: small protocols, so that any object with these methods
works (a :class:`~xaimetrics.models.SplitClassifier`, a prompt classifier, a hand-written toy model in a test).

- :class:`ActivationModel`: ``h`` alone, ``activations(texts)`` — enough to interpret concepts (top words, LLM
  labels) and to encode texts.
- :class:`SplitModel`: ``f = g∘h`` — ``h`` (``activations``), ``g`` (``logits_from_activations``), ``predict``
  and the ``class_names``: what ConSim needs to select samples (f's predictions) and to compute concept
  importances (gradients of ``g∘t⁻¹``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from xaimetrics._typing import Array, Texts

__all__ = ["ActivationModel", "SplitModel"]


@runtime_checkable
class ActivationModel(Protocol):
    """Anything with ``activations(texts) -> array of shape (n_texts, width)`` (the ``h`` of ``f = g∘h``)."""

    def activations(self, inputs: Texts) -> Array: ...


@runtime_checkable
class SplitModel(ActivationModel, Protocol):
    """A classifier split as ``f = g∘h``: what :class:`~xaimetrics.consim.ConSim` needs from a model.

    ``predict`` gives f's class ids (the answers a simulator must reproduce), ``activations`` is ``h``,
    ``logits_from_activations`` is ``g`` (differentiable for tensors that require grad: concept importances are
    its gradients through ``t⁻¹``) and ``class_names`` names the class ids in prompts.
    """

    @property
    def class_names(self) -> Sequence[str]: ...

    def predict(self, inputs: Texts) -> np.ndarray: ...

    def logits_from_activations(self, activations: Array, /) -> Array: ...
