"""The concept model of the ConSim paper (§3.1): ``f_ic = t∘h``, ``f_co = g∘t⁻¹`` and ``f_c = f_co∘f_ic``.

``h`` and ``g`` come from a split classifier (``activations`` and ``logits_from_activations``), ``t`` and ``t⁻¹``
from a fitted concept extractor (``encode`` and ``decode``). The private helpers at the bottom convert
between numpy and torch for the other concept modules (interpretation, importance, metrics), without
importing torch unless the caller already works with tensors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from xaimetrics._arrays import is_tensor, to_numpy
from xaimetrics._protocols import ArrayFunction, ConceptCodec, SplitClassifierLike
from xaimetrics._validation import caller, check_texts, invalid

if TYPE_CHECKING:
    import torch

    from xaimetrics._typing import Array

__all__ = ["ConceptModel"]


class ConceptModel:
    """An unsupervised concept bottleneck model ``f_c = g∘t⁻¹∘t∘h`` (ConSim paper §3.1).

    Args:
        model: a split classifier ``f = g∘h`` with ``activations(texts)`` (``h``, array of shape
            ``(n, p)``) and ``logits_from_activations(A)`` (``g``, differentiable), e.g.
            :class:`xaimetrics.models.SplitClassifier`.
        extractor: a fitted concept extractor with ``encode(A)`` (``t``) and ``decode(U)`` (``t⁻¹``).

    The object is itself the callable ``f_co``, so it can be passed to
    :func:`~xaimetrics.concepts.local_importance`. ``g`` is called with the decoded activations only, so the
    split must be one where ``g`` needs no texts (the default, the input of the classification head).
    Decoded tensors are cast to the dtype of the wrapped torch model (``model.model``) when there is one.

    Example:
        >>> import torch
        >>> class Split:  # h: 2 features per text, g: a fixed linear head with 2 classes
        ...     num_classes = 2
        ...     def activations(self, texts):
        ...         return torch.tensor([[float(len(t)), float(t.count("a"))] for t in texts])
        ...     def logits_from_activations(self, A):
        ...         return A @ torch.tensor([[1.0, -1.0], [0.0, 2.0]])
        >>> class Identity:  # t = t⁻¹ = identity
        ...     def encode(self, A):
        ...         return A
        ...     def decode(self, U):
        ...         return U
        >>> f_c = ConceptModel(Split(), Identity())
        >>> f_c.concepts(["abca", "b"]).tolist()
        [[4.0, 2.0], [1.0, 0.0]]
        >>> f_c.logits(["abca", "b"]).tolist()
        [[4.0, 0.0], [1.0, -1.0]]
        >>> f_c.predict(["abca", "b"]).tolist()
        [0, 0]
    """

    def __init__(self, model: SplitClassifierLike, extractor: ConceptCodec) -> None:
        self.model = model
        self.extractor = extractor

    @property
    def num_classes(self) -> int:
        """Number of classes of the split classifier (``model.num_classes``)."""
        return int(self.model.num_classes)

    @property
    def class_names(self) -> list[str]:
        """Class names of the split classifier (``model.class_names``)."""
        return list(self.model.class_names)

    def activations(self, inputs: Sequence[str]) -> Array:
        """``h(x)``: the activations at the split point, array of shape ``(n, p)``."""
        texts = check_texts(inputs, "inputs", "ConceptModel.activations")
        return self.model.activations(texts)

    def concepts(self, inputs: Sequence[str]) -> Array:
        """``f_ic(x) = t(h(x))``: the concept activations, array of shape ``(n, k)``."""
        return self.extractor.encode(self.activations(inputs))

    def logits_from_concepts(self, concepts: Array) -> Array:
        """``f_co(u) = g(t⁻¹(u))``: logits of shape ``(n, c)``, differentiable for tensors that require grad."""
        decoded = self.extractor.decode(concepts)
        if is_tensor(decoded):
            decoded = decoded.to(_model_dtype(self.model, default=decoded.dtype))
        return self.model.logits_from_activations(decoded)

    __call__ = logits_from_concepts

    def logits(self, inputs: Sequence[str]) -> Array:
        """``f_c(x) = f_co(f_ic(x))``: logits of the concept model, shape ``(n, c)``."""
        return self.logits_from_concepts(self.concepts(inputs))

    def predict(self, inputs: Sequence[str]) -> np.ndarray:
        """The classes predicted by ``f_c``, ``numpy.ndarray[int64]`` of shape ``(n,)``."""
        return to_numpy(self.logits(inputs)).argmax(axis=1).astype(np.int64)


# --- helpers shared by the concept modules (private) -------------------------------------------------------


def check_matrix(value: object, name: str, *, what: str = "(n_samples, n_features)") -> Array:
    """Return ``value`` if it is a non-empty 2-D float numpy array or tensor (lists become numpy arrays)."""
    owner = caller()
    if not is_tensor(value):
        value = np.asarray(value)
        if value.dtype == object or not (
            np.issubdtype(value.dtype, np.floating) or np.issubdtype(value.dtype, np.integer)
        ):
            raise invalid(name, owner, f"a numeric 2-D array of shape {what}", f"dtype {value.dtype}")
        if not np.issubdtype(value.dtype, np.floating):
            value = value.astype(np.float64)
    elif not value.is_floating_point():
        value = value.float()
    if value.ndim != 2:
        raise invalid(name, owner, f"a 2-D array of shape {what}", f"shape {tuple(value.shape)}")
    if value.shape[0] == 0 or value.shape[1] == 0:
        raise invalid(name, owner, f"a non-empty 2-D array of shape {what}", f"shape {tuple(value.shape)}")
    return value


def as_f_co(model: object, extractor: ConceptCodec | None) -> ArrayFunction:
    """Resolve ``f_co`` from ``model`` (a callable ``f_co``, or ``g`` plus ``extractor``)."""
    owner = caller()
    if extractor is not None:
        if isinstance(model, ConceptModel):
            raise invalid(
                "extractor",
                owner,
                "None when 'model' is a ConceptModel (it already holds its extractor)",
                type(extractor).__name__,
                "Drop the 'extractor' argument.",
            )
        if not hasattr(model, "logits_from_activations") and not callable(model):
            raise invalid(
                "model",
                owner,
                "a split classifier with logits_from_activations(A) (g) or a callable g",
                model,
            )
        if not hasattr(extractor, "decode"):
            raise invalid("extractor", owner, "a fitted concept extractor with decode(U)", extractor)
        return ConceptModel(_GAsModel(model), extractor)
    if isinstance(model, ConceptModel) or callable(model):
        return model
    raise invalid(
        "model",
        owner,
        "a callable f_co (concepts → logits), a ConceptModel, or a split classifier together with 'extractor'",
        type(model).__name__,
        "Pass extractor=<fitted extractor> or wrap both in ConceptModel(model, extractor).",
    )


def h_of(model: object) -> Callable[[list[str]], Array]:
    """The encoder ``h`` of ``model``: its ``activations`` method, or ``model`` itself if callable."""
    owner = caller()
    if hasattr(model, "activations"):
        return model.activations
    if callable(model):
        return model
    raise invalid(
        "model",
        owner,
        "a split classifier with activations(texts) (h) or a callable texts → activations",
        model,
    )


def g_of(model: object) -> ArrayFunction:
    """The head ``g`` of ``model``: its ``logits_from_activations`` method, or ``model`` itself if callable."""
    owner = caller()
    if hasattr(model, "logits_from_activations"):
        return model.logits_from_activations
    if callable(model):
        return model
    raise invalid("model", owner, "a split classifier with logits_from_activations(A) or a callable g", model)


class _GAsModel:
    """Adapter giving a bare callable ``g`` the ``logits_from_activations`` name."""

    def __init__(self, model: object) -> None:
        self._model = model
        self._g = g_of(model)

    def logits_from_activations(self, activations: Array) -> Array:
        return self._g(activations)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def _model_dtype(model: object, default: torch.dtype) -> torch.dtype:
    """The floating dtype of the wrapped torch module's parameters, or ``default``."""
    module = getattr(model, "model", None)
    parameters = getattr(module, "parameters", None)
    if parameters is None:
        return default
    for parameter in parameters():
        if parameter.is_floating_point():
            return parameter.dtype
    return default
