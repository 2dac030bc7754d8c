"""AOPC comprehensiveness and sufficiency (DeYoung et al., 2020, *ERASER*).

For a threshold ``t`` (a fraction of the features) the rationale ``r_t`` is the ``k = ceil(t n)`` most
important features (stable order, ties by feature index; ``k`` at least 1):

- comprehensiveness ``= mean_t [ g(f, x, y) − g(f, x without r_t, y) ]`` — higher is better;
- sufficiency ``= mean_t [ g(f, x, y) − g(f, r_t alone, y) ]`` — lower is better;

where "without" / "alone" means the other features are set to the baseline (for text: the mask token by
default, or ``"delete"`` as in ERASER's own erasure). ERASER's bins are ``t ∈ {1, 5, 10, 20, 50}%`` (the
default) and its scorer averages over them. ERASER uses class probabilities: pass ``activation="softmax"``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from xaimetrics._validation import Check, validate_params
from xaimetrics.fidelity._base import FIDELITY_RULES, FRACTION, FidelityBase, PerturbationOptions, run_rows
from xaimetrics.fidelity._outputs import Activation

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from typing_extensions import Unpack

    from xaimetrics.fidelity._outputs import BaselineMode, FidelityModel, Operator
    from xaimetrics.fidelity._text import TokenizedModel

__all__ = ["AOPCComprehensiveness", "AOPCSufficiency"]

ERASER_THRESHOLDS = (0.01, 0.05, 0.1, 0.2, 0.5)


class _AOPC(FidelityBase):
    _remove_rationale = True

    @validate_params(
        {
            "thresholds": Check(
                lambda v: isinstance(v, Sequence) and not isinstance(v, str) and len(v) > 0
                and all(FRACTION.accepts(t) for t in v),
                "a non-empty sequence of fractions in ]0, 1]",
            ),
            **FIDELITY_RULES,
        }
    )  # fmt: skip
    def __init__(
        self,
        model: FidelityModel | TokenizedModel,
        inputs: ArrayLike | Sequence[str],
        targets: ArrayLike | None = None,
        batch_size: int | None = 64,
        baseline_mode: BaselineMode = 0.0,
        thresholds: Sequence[float] = ERASER_THRESHOLDS,
        operator: Operator | None = None,
        activation: Activation = None,
        **options: Unpack[PerturbationOptions],
    ) -> None:
        self.thresholds = tuple(float(t) for t in thresholds)
        super().__init__(model, inputs, targets, batch_size, baseline_mode, operator, activation, **options)

    def _drops(self, explanations: ArrayLike) -> np.ndarray:
        """Score drops ``(n_samples, n_thresholds)``."""
        ranks, n_features = self._prepare(explanations)
        clean = self._clean_scores().numpy()
        n = self.n_samples
        n_feat = n_features.numpy()
        k = np.array(
            [[min(max(1, math.ceil(t * n_i - 1e-9)), n_i) for t in self.thresholds] for n_i in n_feat]
        )
        sample_of = np.repeat(np.arange(n), len(self.thresholds))
        pairs, inverse = np.unique(np.stack([sample_of, k.ravel()], axis=1), axis=0, return_inverse=True)
        samples, counts = pairs[:, 0], pairs[:, 1]
        full = counts == n_feat[samples]
        values = np.empty(len(pairs))
        if self._remove_rationale:
            if full.any():
                values[full] = self._baseline_scores().numpy()[samples[full]]
        else:
            values[full] = clean[samples[full]]
        todo = ~full
        device = self._perturber.device
        todo_samples = torch.from_numpy(samples[todo])
        samples_device = todo_samples.to(device)
        counts_device = torch.from_numpy(counts[todo]).to(device)
        remove = self._remove_rationale

        def mask_fn(rows: torch.Tensor) -> torch.Tensor:
            r = ranks[samples_device[rows]]
            kk = counts_device[rows].unsqueeze(1)
            return r < kk if remove else r >= kk

        values[todo] = run_rows(self._perturber, todo_samples, mask_fn, self.batch_size).numpy()
        perturbed = values[inverse.ravel()].reshape(n, len(self.thresholds))
        return clean[:, None] - perturbed

    def evaluate_samples(self, explanations: ArrayLike) -> np.ndarray:
        """Per-sample AOPC (mean drop over the thresholds), shape ``(n_samples,)``."""
        return self._drops(explanations).mean(axis=1)

    def evaluate(self, explanations: ArrayLike) -> float:
        """AOPC averaged over samples."""
        return float(self.evaluate_samples(explanations).mean())

    def detailed_evaluate(self, explanations: ArrayLike) -> dict[float, float]:
        """Mean score drop (over samples) at each threshold."""
        drops = self._drops(explanations).mean(axis=0)
        return {t: float(d) for t, d in zip(self.thresholds, drops, strict=True)}


class AOPCComprehensiveness(_AOPC):
    """AOPC comprehensiveness: the score drop when the top ``t``% features are removed (higher is better).

    Arguments as :class:`~xaimetrics.fidelity.Deletion`, with ``thresholds`` (fractions of the features,
    default ERASER's ``(0.01, 0.05, 0.1, 0.2, 0.5)``) instead of ``steps``.

    Example:
        >>> import torch
        >>> model = torch.nn.Linear(4, 1, bias=False).eval()
        >>> _ = model.weight.data.copy_(torch.tensor([[4.0, 3.0, 2.0, 1.0]]))
        >>> metric = AOPCComprehensiveness(model, torch.ones(1, 4), thresholds=(0.25, 0.5))
        >>> metric.detailed_evaluate(torch.tensor([[4.0, 3.0, 2.0, 1.0]]))
        {0.25: 4.0, 0.5: 7.0}
        >>> metric.evaluate(torch.tensor([[4.0, 3.0, 2.0, 1.0]]))
        5.5
    """

    _remove_rationale = True
    higher_is_better = True


class AOPCSufficiency(_AOPC):
    """AOPC sufficiency: the score drop when only the top ``t``% features are kept (lower is better).

    Example:
        >>> import torch
        >>> model = torch.nn.Linear(4, 1, bias=False).eval()
        >>> _ = model.weight.data.copy_(torch.tensor([[4.0, 3.0, 2.0, 1.0]]))
        >>> metric = AOPCSufficiency(model, torch.ones(1, 4), thresholds=(0.25, 0.5))
        >>> metric.detailed_evaluate(torch.tensor([[4.0, 3.0, 2.0, 1.0]]))
        {0.25: 6.0, 0.5: 3.0}
    """

    _remove_rationale = False
    higher_is_better = False
