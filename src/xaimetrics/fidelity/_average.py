"""Average Drop, Average Increase and Average Gain (Xplique 2.0; Chattopadhay et al., 2018; Zhang et al., 2024).

Each input is *softly* masked by its own explanation, ``x̃ = b + M ⊙ (x − b)``, where ``M`` is ``|e|`` (averaged
over channels for image explanations ``(n, C, H, W)``) min–max scaled to [0, 1] per input, and ``b`` the baseline
(``0``: Xplique's ``x ⊙ M``). With ``base = g(f, x, y)`` and ``after = g(f, x̃, y)``:

- **Average Drop** ``mean ReLU(base − after) / (base + ε)``: lower is better, in [0, 1] for scores in [0, 1];
- **Average Increase** ``mean 1[after > base]``: higher is better, in [0, 1];
- **Average Gain** ``mean ReLU(after − base) / (1 − base + ε)``: higher is better, in [0, 1] for probabilities,

with ``ε = 1e-8`` (Xplique's). They are meant for probabilities: pass ``activation="softmax"`` (or ``"sigmoid"``)
for logits. A constant explanation gives ``M = 0`` (every feature at the baseline).

Texts: tokens cannot be scaled, their embeddings can: the word embedding of each token is moved towards the
embedding of the baseline token (``baseline_mode="mask"`` by default, ``"pad"`` or a token id),
``b_emb + M ⊙ (emb − b_emb)``, and the model reads ``inputs_embeds``; special tokens keep ``M = 1``. This needs a
Hugging Face model (``get_input_embeddings`` and ``inputs_embeds``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
import torch

from xaimetrics._validation import invalid, validate_params
from xaimetrics.fidelity._base import FIDELITY_RULES, FidelityBase, PerturbationOptions, check_finite_scores
from xaimetrics.fidelity._outputs import Activation
from xaimetrics.fidelity._tensor import as_float_tensor

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from typing_extensions import Unpack

    from xaimetrics.fidelity._outputs import BaselineMode, FidelityModel, Operator
    from xaimetrics.fidelity._tensor import TensorPerturber
    from xaimetrics.fidelity._text import TextPerturber, TokenizedModel

__all__ = ["AverageDrop", "AverageGain", "AverageIncrease"]

#: Xplique's ``_EPS`` in the ratios and the min–max scaling
_EPS = 1e-8


class _AverageBase(FidelityBase, ABC):
    """Scores of the inputs softly masked by their explanations; subclasses reduce ``(base, after)``."""

    @validate_params(FIDELITY_RULES)
    def __init__(
        self,
        model: FidelityModel | TokenizedModel,
        inputs: ArrayLike | Sequence[str],
        targets: ArrayLike | None = None,
        batch_size: int | None = 64,
        operator: Operator | None = None,
        activation: Activation = None,
        *,
        baseline_mode: BaselineMode = 0.0,
        **options: Unpack[PerturbationOptions],
    ) -> None:
        super().__init__(model, inputs, targets, batch_size, baseline_mode, operator, activation, **options)
        perturber = self._perturber
        if not hasattr(perturber, "baseline"):
            text = perturber
            if text.mode not in ("mask", "pad", "replace") or text.replacement is not None:
                raise invalid(
                    "baseline_mode",
                    self._owner,
                    "'mask', 'pad' or a token id for texts (embeddings move towards that token's embedding)",
                    repr(baseline_mode) if isinstance(baseline_mode, str) else "a callable",
                )

    def _masks(self, explanations: ArrayLike) -> torch.Tensor:
        """``M``: ``|e|`` min–max scaled per input, float64 ``(n, n_features)`` (0 on text padding)."""
        if hasattr(self._perturber, "baseline") and not isinstance(explanations, list | tuple):
            e = as_float_tensor(explanations, "explanations", self._owner).abs()
            inputs = cast("TensorPerturber", self._perturber).inputs
            if e.ndim == 4 and inputs.ndim == 4 and e.shape[1] > 1:
                e = e.mean(dim=1)  # Xplique: channels averaged before scaling
            explanations = e
        scores, _ = self._perturber.explanation_scores(explanations)
        valid = torch.isfinite(scores)
        magnitude = torch.where(valid, scores.abs(), torch.nan)
        low = torch.where(valid, magnitude, torch.inf).amin(dim=1, keepdim=True)
        high = torch.where(valid, magnitude, -torch.inf).amax(dim=1, keepdim=True)
        masks = (magnitude - low) / (high - low + _EPS)
        return torch.where(valid, masks, 0.0)

    def _after(self, masks: torch.Tensor) -> torch.Tensor:
        """``g(f, x̃, y)`` for every input, float64 ``(n,)``, in batches."""
        n = self.n_samples
        size = n if self.batch_size is None else self.batch_size
        out = torch.empty(n, dtype=torch.float64)
        perturber = self._perturber
        with torch.inference_mode():
            for start in range(0, n, size):
                samples = torch.arange(start, min(start + size, n))
                batch_masks = masks[samples].to(perturber.device)
                if hasattr(perturber, "baseline"):
                    out[samples] = self._tensor_scores(
                        cast("TensorPerturber", perturber), samples, batch_masks
                    )
                else:
                    out[samples] = self._text_scores(perturber, samples, batch_masks)
        return check_finite_scores(out, self._owner, "the masked inputs")

    @staticmethod
    def _tensor_scores(
        perturber: TensorPerturber, samples: torch.Tensor, masks: torch.Tensor
    ) -> torch.Tensor:
        index = samples.to(perturber.device)
        x, b = perturber.inputs[index], perturber.baseline[index]
        weights = masks.to(x.dtype).view(len(samples), *perturber._mask_shape)
        targets = perturber._targets()[index]
        return perturber.scorer(b + weights * (x - b), targets).to("cpu", torch.float64)

    def _text_scores(
        self, perturber: TextPerturber, samples: torch.Tensor, masks: torch.Tensor
    ) -> torch.Tensor:
        index = samples.to(perturber.device)
        keep_all = torch.zeros(len(samples), masks.shape[1], dtype=torch.bool, device=perturber.device)
        encoded = perturber.encode(index, keep_all)
        ids = encoded.pop("input_ids")
        model = perturber.hf_model
        embed = getattr(model, "get_input_embeddings", None)
        if not callable(embed):
            raise invalid(
                "model",
                self._owner,
                "a Hugging Face model with get_input_embeddings() for text inputs",
                type(model).__name__,
            )
        layer = embed()
        embeddings = layer(ids)
        baseline = layer(torch.full_like(ids, int(perturber.token_id)))
        feature = perturber.feature_of_token[index, : ids.shape[1]]
        weights = torch.where(feature >= 0, masks.gather(1, feature.clamp(min=0)), 1.0).to(embeddings.dtype)
        encoded["inputs_embeds"] = baseline + weights[..., None] * (embeddings - baseline)
        targets = cast("torch.Tensor", perturber.targets)[index]
        return perturber.scorer(encoded, targets).to("cpu", torch.float64)

    def _base_and_after(self, explanations: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        base = self._clean_scores()
        return base.numpy(), self._after(self._masks(explanations)).numpy()

    @abstractmethod
    def _reduce(self, base: np.ndarray, after: np.ndarray) -> np.ndarray:
        """One value per input from its clean and its masked scores (the metric's own reduction)."""

    def evaluate_samples(self, explanations: ArrayLike) -> np.ndarray:
        """One value per input, float64 ``(n_samples,)``."""
        return self._reduce(*self._base_and_after(explanations))

    def evaluate(self, explanations: ArrayLike) -> float:
        """Mean over the inputs."""
        return float(self.evaluate_samples(explanations).mean())


class AverageDrop(_AverageBase):
    """Average Drop: mean relative drop of the score when inputs are masked by their explanation (lower is better).

    ``ReLU(base − after) / (base + 1e-8)`` per input (see the module's definitions); Xplique's constructor order
    ``(model, inputs, targets, batch_size, operator, activation)``, then ``baseline_mode`` and the text options.

    Example:
        >>> import torch
        >>> model = torch.nn.Sequential(torch.nn.Linear(3, 1, bias=False), torch.nn.Sigmoid()).eval()
        >>> _ = model[0].weight.data.copy_(torch.tensor([[2.0, 1.0, -1.0]]))
        >>> metric = AverageDrop(model, torch.tensor([[1.0, 1.0, 1.0]]))
        >>> round(metric.evaluate(torch.tensor([[0.0, 0.5, 1.0]])), 4)  # x̃ = (0, 0.5, 1): 0.8808 -> 0.3775
        0.5714
    """

    higher_is_better = False

    def _reduce(self, base: np.ndarray, after: np.ndarray) -> np.ndarray:
        return np.maximum(base - after, 0.0) / (base + _EPS)


class AverageIncrease(_AverageBase):
    """Average Increase in confidence: the fraction of inputs whose masked score exceeds the score (higher is better).

    Example:
        >>> import torch
        >>> model = torch.nn.Sequential(torch.nn.Linear(3, 1, bias=False), torch.nn.Sigmoid()).eval()
        >>> _ = model[0].weight.data.copy_(torch.tensor([[2.0, 1.0, -1.0]]))
        >>> metric = AverageIncrease(model, torch.ones(2, 3))
        >>> metric.evaluate(torch.tensor([[1.0, 0.5, 0.0], [0.0, 0.5, 1.0]]))  # x̃ = (1, 0.5, 0) and (0, 0.5, 1)
        0.5
    """

    higher_is_better = True

    def _reduce(self, base: np.ndarray, after: np.ndarray) -> np.ndarray:
        return (after > base).astype(np.float64)


class AverageGain(_AverageBase):
    """Average Gain: mean relative gain ``ReLU(after − base) / (1 − base + 1e-8)`` (higher is better).

    Example:
        >>> import torch
        >>> model = torch.nn.Sequential(torch.nn.Linear(3, 1, bias=False), torch.nn.Sigmoid()).eval()
        >>> _ = model[0].weight.data.copy_(torch.tensor([[2.0, 1.0, -1.0]]))
        >>> metric = AverageGain(model, torch.ones(1, 3))
        >>> round(metric.evaluate(torch.tensor([[1.0, 1.0, 0.0]])), 4)  # x̃ = (1, 1, 0): 0.8808 -> 0.9526
        0.6021
    """

    higher_is_better = True

    def _reduce(self, base: np.ndarray, after: np.ndarray) -> np.ndarray:
        return np.maximum(after - base, 0.0) / (1.0 - base + _EPS)
