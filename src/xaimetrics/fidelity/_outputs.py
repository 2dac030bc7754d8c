"""From a model's outputs to the scores ``g(f, x, y)`` the fidelity metrics compare.

The outputs ``f(x)`` (``(batch, classes)``, ``.logits`` of Hugging Face models) go through the optional
``activation`` and are weighted by the targets ``y`` (one-hot rows of the predicted or given classes), or
passed to a user ``operator``. A leaf module: the tensor and text perturbers and the engine all read it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, Literal, TypeVar, Union

import numpy as np
import torch

from xaimetrics._validation import caller, invalid

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "ACTIVATIONS",
    "Activation",
    "BaselineMode",
    "FidelityModel",
    "Operator",
    "Scorer",
    "apply_activation",
    "build_targets",
    "check_finite_explanation",
    "model_outputs",
]

#: a model of tensor inputs: any callable ``inputs → outputs`` (a ``torch.nn.Module``, a function); for texts, a
#: Hugging Face sequence classifier (with ``tokenizer=``) or a split classifier that holds its tokenizer
FidelityModel = Callable[..., object]
#: ``g(f, x, y)``: called with the activated model, a batch of inputs and the target weights; one score per input
Operator = Callable[..., "ArrayLike"]
#: the value of perturbed features: a number or an array broadcastable to the inputs, a callable
#: ``inputs → baseline`` (tensor inputs), or ``"mask"``, ``"pad"``, ``"delete"`` (texts)
BaselineMode = Union[float, str, "ArrayLike", Callable[[torch.Tensor], "ArrayLike"]]
_In = TypeVar("_In")

Activation = Literal["sigmoid", "softmax"] | None
ACTIVATIONS = ("sigmoid", "softmax")


def apply_activation(outputs: torch.Tensor, activation: Activation) -> torch.Tensor:
    """Apply the optional output activation to model outputs of shape ``(batch, classes)``."""
    if activation == "softmax":
        return outputs.softmax(dim=-1)
    if activation == "sigmoid":
        return outputs.sigmoid()
    return outputs


def model_outputs(model: Callable[..., object], *args: object, **kwargs: object) -> torch.Tensor:
    """Call ``model`` and return a 2-D output tensor ``(batch, classes)`` (``.logits`` of HF outputs)."""
    out = model(*args, **kwargs)
    if hasattr(out, "logits"):
        out = out.logits
    elif isinstance(out, tuple | list):
        out = out[0]
    out = torch.as_tensor(out)
    if out.ndim == 1:
        out = out.unsqueeze(-1)
    return out


def build_targets(targets: ArrayLike | None, outputs: torch.Tensor, owner: str) -> torch.Tensor:
    """Turn ``targets`` into a float weight matrix ``(n, classes)`` applied to the (activated) outputs.

    ``None`` selects the predicted class (argmax of ``outputs``; weight 1 for single-output models); class
    indices become one-hot rows; a 2-D array is used as given (one-hot labels or regression signs, as in
    Xplique).
    """
    n, n_classes = outputs.shape
    if targets is None:
        if n_classes == 1:
            return torch.ones_like(outputs)
        return torch.nn.functional.one_hot(outputs.argmax(dim=-1), n_classes).to(outputs.dtype)
    y = torch.as_tensor(np.asarray(targets.detach().cpu() if isinstance(targets, torch.Tensor) else targets))
    if y.ndim == 2:
        if tuple(y.shape) != (n, n_classes):
            raise invalid(
                "targets",
                owner,
                f"one row per input of width {n_classes} (the number of model outputs)",
                f"shape {tuple(y.shape)}",
                "Pass one-hot rows or class indices.",
            )
        return y.to(device=outputs.device, dtype=outputs.dtype)
    if y.ndim != 1 or y.shape[0] != n:
        raise invalid(
            "targets", owner, f"{n} class indices or a ({n}, {n_classes}) array", f"shape {tuple(y.shape)}"
        )
    if n_classes == 1 and y.is_floating_point():
        return y.to(device=outputs.device, dtype=outputs.dtype).unsqueeze(-1)
    if y.is_floating_point():
        if not torch.equal(y, y.round()):
            raise invalid("targets", owner, "integer class indices", "non-integer values")
        y = y.long()
    if y.dtype == torch.bool or int(y.min()) < 0 or int(y.max()) >= n_classes:
        raise invalid(
            "targets",
            owner,
            f"class indices in [0, {n_classes - 1}]",
            f"values in [{int(y.min())}, {int(y.max())}]",
        )
    return torch.nn.functional.one_hot(y.long(), n_classes).to(device=outputs.device, dtype=outputs.dtype)


class Scorer(Generic[_In]):
    """``g(f, x, y)``: the default ``sum(activation(f(x)) * y)`` or a user operator."""

    def __init__(
        self,
        call: Callable[[_In], torch.Tensor],
        activation: Activation,
        operator: Operator | None,
    ):
        self._call = call
        self._activation = activation
        self._operator = operator
        self._owner = caller()  # the public metric being built

    @property
    def is_default(self) -> bool:
        """Whether scores are ``sum(activated outputs * y)`` (so they can be derived from stored outputs)."""
        return self._operator is None

    def activated(self, x: _In) -> torch.Tensor:
        return apply_activation(self._call(x), self._activation)

    def __call__(self, x: _In, y: torch.Tensor) -> torch.Tensor:
        if self._operator is None:
            return (self.activated(x) * y).sum(dim=-1)
        scores = torch.as_tensor(self._operator(self.activated, x, y)).reshape(-1)
        if scores.shape[0] != y.shape[0]:
            raise invalid(
                "operator",
                self._owner,
                "a callable returning one score per input of the batch",
                f"{scores.shape[0]} scores for {y.shape[0]} inputs",
            )
        return scores


def check_finite_explanation(values: np.ndarray, where: str, owner: str) -> None:
    """Raise naming ``explanations`` if ``values`` (one explanation) holds NaN or infinity.

    Example:
        >>> check_finite_explanation(np.array([0.5, np.inf]), "in sample 1", "complexity")
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'explanations' parameter of complexity must be finite numbers. Got NaN or inf in sample 1. Replace them (e.g. with 0).
    """
    if not np.isfinite(values).all():
        raise invalid(
            "explanations", owner, "finite numbers", f"NaN or inf {where}", "Replace them (e.g. with 0)."
        )
