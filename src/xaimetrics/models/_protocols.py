"""What the rest of the library needs from a classifier: small protocols, so that any object with these methods
works (a :class:`~xaimetrics.models.SplitClassifier`, a prompt classifier, a hand-written toy model in a test).

- :class:`ActivationModel` (defined with the concept protocols, re-exported here): ``h`` alone, ``activations(texts)`` — enough to interpret concepts (top words, LLM
  labels) and to encode texts.
- :class:`SplitModel`: ``f = g∘h`` — ``h`` (``activations``), ``g`` (``logits_from_activations``), ``predict``
  and the ``class_names``: what ConSim needs to select samples (f's predictions) and to compute concept
  importances (gradients of ``g∘t⁻¹``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from xaimetrics._typing import Texts
from xaimetrics.concepts._concept_model import ActivationModel, HeadModel

__all__ = ["ActivationModel", "SplitModel"]


class SplitModel(ActivationModel, HeadModel, Protocol):
    """A classifier split as ``f = g∘h``: what :class:`~xaimetrics.consim.ConSim` needs from a model.

    ``predict`` gives f's class ids (the answers a simulator must reproduce), ``activations`` is ``h``,
    ``logits_from_activations`` is ``g`` (differentiable for tensors that require grad: concept importances are
    its gradients through ``t⁻¹``) and ``class_names`` names the class ids in prompts.
    """

    @property
    def class_names(self) -> Sequence[str]: ...

    def predict(self, inputs: Texts) -> np.ndarray: ...
