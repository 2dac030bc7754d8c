"""What the families need from a classifier and a concept extractor: small protocols, so that any object with
these methods works (a :class:`~xaimetrics.models.SplitClassifier`, a prompt classifier, a fitted extractor, a
hand-written toy model in a test).

They sit below every family that uses them (``concepts``, ``models``, ``consim``, ``representation``,
``benchmark``, ``studies``), so that none imports another family's private module for a type.

- :class:`ActivationModel`: ``h`` alone, ``activations(texts)`` — enough to interpret concepts (top words, LLM
  labels) and to encode texts; :class:`HeadModel`: ``g``, ``logits_from_activations``.
- :class:`SplitModel`: ``f = g∘h`` — ``h``, ``g``, ``predict`` and the ``class_names``: what ConSim needs to select
  samples (f's predictions) and to compute concept importances (gradients of ``g∘t⁻¹``).
- :class:`ConceptCodec`: a fitted extractor's ``t`` (``encode``) and ``t⁻¹`` (``decode``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from xaimetrics._typing import Texts

if TYPE_CHECKING:
    from xaimetrics._typing import Array

__all__ = [
    "ActivationModel",
    "ArrayFunction",
    "ConceptCodec",
    "DictionaryCodec",
    "HasComponents",
    "HeadLike",
    "HeadModel",
    "SplitClassifierLike",
    "SplitModel",
]


class ActivationModel(Protocol):
    """``h``: anything with ``activations(texts)`` returning an array of shape ``(n_texts, p)``."""

    def activations(self, inputs: list[str], /) -> Array: ...


class HeadModel(Protocol):
    """``g``: anything with ``logits_from_activations(A)`` returning logits of shape ``(n, n_classes)``."""

    def logits_from_activations(self, activations: Array, /) -> Array: ...


class SplitClassifierLike(ActivationModel, HeadModel, Protocol):
    """A split classifier ``f = g∘h`` (e.g. :class:`xaimetrics.models.SplitClassifier`) with its classes."""

    @property
    def num_classes(self) -> int: ...

    @property
    def class_names(self) -> Sequence[str]: ...


class ConceptCodec(Protocol):
    """A fitted concept extractor's ``t`` (``encode``) and ``t⁻¹`` (``decode``), e.g. any
    :class:`~xaimetrics.concepts.ConceptExtractor`."""

    def encode(self, A: Array, /) -> Array: ...

    def decode(self, U: Array, /) -> Array: ...


class DictionaryCodec(ConceptCodec, Protocol):
    """A fitted concept extractor with its decoder atoms ``components_`` (``(n_concepts, n_features)``)."""

    @property
    def components_(self) -> np.ndarray: ...


class HasComponents(Protocol):
    """Anything holding decoder atoms ``components_`` (a fitted extractor)."""

    @property
    def components_(self) -> np.ndarray: ...


#: ``f_co`` or ``g`` as a bare callable: an array of shape ``(n, k)`` → logits ``(n, n_classes)``.
ArrayFunction = Callable[["Array"], "Array"]
#: what the importance and metric functions take as ``model``: a callable, or an object with ``g``.
HeadLike = ArrayFunction | HeadModel


class SplitModel(ActivationModel, HeadModel, Protocol):
    """A classifier split as ``f = g∘h``: what :class:`~xaimetrics.consim.ConSim` needs from a model.

    ``predict`` gives f's class ids (the answers a simulator must reproduce), ``activations`` is ``h``,
    ``logits_from_activations`` is ``g`` (differentiable for tensors that require grad: concept importances are
    its gradients through ``t⁻¹``) and ``class_names`` names the class ids in prompts.
    """

    @property
    def class_names(self) -> Sequence[str]: ...

    def predict(self, inputs: Texts) -> np.ndarray: ...
