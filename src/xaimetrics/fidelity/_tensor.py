"""Perturbation of tensor inputs (images, tabular rows, time series).

Features are the elements of the *explanation*: an explanation with the inputs' shape makes every input
element a feature; an explanation without the channel axis (or with it of size 1) makes all channels of a
pixel (or all variables of a time step) move together. The feature mask of a batch is reshaped to the
explanation's shape and broadcast over the inputs, so perturbing costs one ``torch.where`` per batch.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import torch

from xaimetrics._device import resolve_device
from xaimetrics._validation import caller, invalid
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.fidelity._outputs import Activation, Scorer, build_targets, model_outputs
from xaimetrics.fidelity._stacklevel import user_stacklevel

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from xaimetrics._typing import DeviceLike
    from xaimetrics.fidelity._outputs import BaselineMode, Operator

__all__ = ["TensorPerturber", "as_float_tensor", "model_device", "model_dtype", "warn_if_training"]


def as_float_tensor(value: object, name: str, owner: str) -> torch.Tensor:
    """Turn a numpy array, a torch tensor or nested lists into a floating-point tensor (detached)."""
    if isinstance(value, torch.Tensor):
        tensor = value.detach()
    else:
        try:
            tensor = torch.as_tensor(np.asarray(value))
        except (TypeError, ValueError) as error:
            raise invalid(name, owner, "a numpy array or a torch tensor", type(value).__name__) from error
    if not tensor.is_floating_point():
        tensor = tensor.to(torch.float32)
    return tensor


class TensorPerturber:
    """Inputs of shape ``(n, *feature_shape)`` and their baseline, perturbed by feature masks."""

    def __init__(
        self,
        model: object,  # checked: a callable
        inputs: ArrayLike,
        *,
        baseline_mode: BaselineMode,
        device: DeviceLike | None,
        activation: Activation,
        operator: Operator | None,
    ) -> None:
        self.owner = owner = caller()
        if not callable(model):
            raise invalid(
                "model",
                owner,
                "a callable (torch.nn.Module or function) mapping inputs to outputs",
                type(model).__name__,
            )
        x = as_float_tensor(inputs, "inputs", owner)
        if x.ndim < 2 or x.shape[0] == 0:
            raise invalid(
                "inputs",
                owner,
                "an array of shape (n_samples, *features) with n_samples ≥ 1",
                f"shape {tuple(x.shape)}",
            )
        self.device = model_device(model) if device is None else resolve_device(device, owner)
        self.inputs = x.to(device=self.device, dtype=model_dtype(model) or x.dtype)
        _check_finite(self.inputs, "inputs", owner)
        self.n_samples = int(x.shape[0])
        self.sample_position = torch.arange(self.n_samples)
        self.baseline = self._resolve_baseline(baseline_mode)
        self.scorer: Scorer[torch.Tensor] = Scorer(
            lambda batch: model_outputs(model, batch), activation, operator
        )
        self.targets: torch.Tensor | None = None
        self._mask_shape: tuple[int, ...] = tuple(x.shape[1:])
        warn_if_training(model, owner)

    def _resolve_baseline(self, baseline_mode: BaselineMode) -> torch.Tensor:
        owner = self.owner
        if callable(baseline_mode):
            value = baseline_mode(self.inputs)
        elif isinstance(baseline_mode, bool | str):
            raise invalid(
                "baseline_mode",
                owner,
                "a number, an array broadcastable to the inputs or a callable",
                baseline_mode,
            )
        else:
            value = baseline_mode
        baseline = as_float_tensor(value, "baseline_mode", owner).to(
            device=self.device, dtype=self.inputs.dtype
        )
        _check_finite(baseline, "baseline_mode", owner)
        try:
            return baseline.expand(self.inputs.shape)
        except RuntimeError as error:
            raise invalid(
                "baseline_mode",
                owner,
                f"broadcastable to the inputs' shape {tuple(self.inputs.shape)}",
                f"shape {tuple(baseline.shape)}",
            ) from error

    # ------------------------------------------------------------------ targets and endpoints
    def set_targets(self, targets: ArrayLike | None, batch_size: int | None) -> None:
        outputs = self._batched(lambda idx: self.scorer.activated(self.inputs[idx]), batch_size)
        self.targets = build_targets(targets, outputs, self.owner)
        self.clean_outputs = outputs

    def endpoint_scores(self, *, baseline: bool, batch_size: int | None) -> torch.Tensor:
        source = self.baseline if baseline else self.inputs
        targets = self._targets()
        if not baseline and self.scorer.is_default:
            return (self.clean_outputs * targets).sum(dim=-1).to(device="cpu", dtype=torch.float64)
        return self._batched(lambda idx: self.scorer(source[idx], targets[idx]), batch_size).to(
            device="cpu", dtype=torch.float64
        )

    def _targets(self) -> torch.Tensor:
        if self.targets is None:
            raise RuntimeError("set_targets must run before scoring (internal order of the fidelity engine)")
        return self.targets

    def _batched(self, fn: Callable[[torch.Tensor], torch.Tensor], batch_size: int | None) -> torch.Tensor:
        size = self.n_samples if batch_size is None else batch_size
        parts = []
        with torch.inference_mode():
            for start in range(0, self.n_samples, size):
                idx = torch.arange(start, min(start + size, self.n_samples), device=self.device)
                parts.append(fn(idx))
        return torch.cat(parts)

    # ------------------------------------------------------------------ explanations and perturbation
    def explanation_scores(self, explanations: ArrayLike) -> tuple[torch.Tensor, torch.Tensor]:
        """Validate explanations; return scores ``(n, n_features)`` and feature counts ``(n,)``."""
        owner = self.owner
        e = as_float_tensor(explanations, "explanations", owner)
        x_shape = tuple(self.inputs.shape)
        if e.ndim == 0 or e.shape[0] != self.n_samples:
            raise invalid(
                "explanations",
                owner,
                f"one explanation per input ({self.n_samples})",
                f"shape {tuple(e.shape)}",
            )
        self._mask_shape = _feature_shape(tuple(e.shape[1:]), x_shape[1:], owner)
        flat = e.reshape(self.n_samples, -1).to(torch.float64)
        bad = ~torch.isfinite(flat).all(dim=1)
        if bool(bad.any()):
            first = int(bad.nonzero()[0, 0])
            raise invalid(
                "explanations",
                owner,
                "finite numbers",
                f"NaN or inf in sample {first}",
                "Replace them (e.g. with 0).",
            )
        n_features = torch.full((self.n_samples,), flat.shape[1], dtype=torch.int64)
        return flat, n_features

    def forward(self, samples: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Scores of ``inputs[samples]`` with masked features (``True``) replaced by the baseline."""
        targets = self._targets()
        mask = mask.view(mask.shape[0], *self._mask_shape)
        perturbed = torch.where(mask, self.baseline[samples], self.inputs[samples])
        return self.scorer(perturbed, targets[samples])


def _check_finite(values: torch.Tensor, name: str, owner: str) -> None:
    """Raise naming ``name`` when ``values`` (inputs or baseline) hold NaN or inf (also after a dtype cast)."""
    flat = values.reshape(values.shape[0], -1) if values.ndim > 1 else values.reshape(1, -1)
    bad = ~torch.isfinite(flat).all(dim=1)
    if bool(bad.any()):
        first = int(bad.nonzero()[0, 0])
        where = f"sample {first}" if values.ndim > 1 and name == "inputs" else f"row {first}"
        raise invalid(
            name, owner, "finite numbers", f"NaN or inf in {where} ({int(bad.sum())} of {bad.numel()} rows)",
            "Replace or drop them: every score, and so every area, would be NaN or inf. Inputs in a wide "
            "float range may also overflow when cast to the model's dtype.",
        )  # fmt: skip


def _feature_shape(e_shape: tuple[int, ...], x_shape: tuple[int, ...], owner: str) -> tuple[int, ...]:
    """The shape (per sample) of the feature mask, broadcastable to the inputs' per-sample shape."""

    def fits(shape: tuple[int, ...]) -> bool:
        return len(shape) == len(x_shape) and all(s in (1, t) for s, t in zip(shape, x_shape, strict=True))

    if fits(e_shape):
        return e_shape
    if len(e_shape) == len(x_shape) - 1:
        first = (1, *e_shape)
        last = (*e_shape, 1)
        # images (C, H, W) lose their channel axis first; tabular/time series lose their last axis
        candidates = (first, last) if len(x_shape) == 3 else (last, first)
        for candidate in candidates:
            if fits(candidate):
                return candidate
    raise InvalidParameterError(
        f"The 'explanations' parameter of {owner} must have the inputs' shape {x_shape} per sample, or that "
        f"shape without (or with size 1 on) the channel axis. Got {e_shape} per sample. "
        "For images (N, C, H, W) pass (N, H, W), (N, 1, H, W) or (N, C, H, W)."
    )


def warn_if_training(model: object, owner: str) -> None:
    """Warn when dropout or batch-norm layers are in training mode (their outputs would be random)."""
    modules = getattr(model, "modules", None)
    if not callable(modules):
        return
    stochastic = (torch.nn.modules.dropout._DropoutNd, torch.nn.modules.batchnorm._BatchNorm)
    if any(isinstance(m, stochastic) and m.training for m in modules()):
        warnings.warn(
            f"{owner}: the model has dropout or batch-norm layers in training mode, so its outputs are random. "
            "Call model.eval() first.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


def model_dtype(model: object) -> torch.dtype | None:
    """The floating dtype of the model's first parameter (inputs are cast to it), if any."""
    parameters = getattr(model, "parameters", None)
    if callable(parameters):
        for parameter in parameters():
            return parameter.dtype if parameter.is_floating_point() else None
    return None


def model_device(model: object) -> torch.device:
    parameters = getattr(model, "parameters", None)
    if callable(parameters):
        for parameter in parameters():
            return parameter.device
    return torch.device("cpu")
