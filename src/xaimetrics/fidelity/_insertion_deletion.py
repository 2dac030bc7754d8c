"""Insertion and Deletion (Petsiuk et al., 2018, *RISE*), with the Xplique API and exact definitions.

For one input ``x`` with ``n`` features, an explanation orders the features from the most to the least
important (stable order: equal scores keep their feature-index order). Let ``K = floor(p * n)`` (at least 1)
with ``p = max_percentage_perturbed``, and ``k_0 = 0 < k_1 < … < k_S = K`` the distinct counts
``round(j K / S)``, ``j = 0..S`` (``S = steps``; ``steps=-1`` gives every count ``0..K``).

- **Deletion**: ``y_j = g(f, x with its k_j most important features set to the baseline, y)``.
- **Insertion**: ``y_j = g(f, baseline with the k_j most important features of x put back, y)``.

The curve's x-axis is the true fraction of features perturbed, ``k_j / n``. The area is the trapezoid rule
over these fractions, divided by the x-range ``K / n``, so it is the curve's mean height: a constant curve
``c`` scores ``c``, whatever ``steps`` and ``max_percentage_perturbed``. ``evaluate`` averages the areas of
the samples. Deletion: lower is better; Insertion: higher is better.

``steps`` larger than ``K`` for some sample is clamped, with one warning: that sample's curve uses every
count ``0..K`` (no step is repeated, so no point weighs twice).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch

from xaimetrics._validation import Check, Interval, validate_params
from xaimetrics.fidelity._base import (
    FIDELITY_RULES,
    FRACTION,
    FidelityBase,
    PerturbationOptions,
    n_perturbed,
    nominal_counts,
    run_rows,
    step_counts,
    trapezoid_auc,
    warn_clamped,
)
from xaimetrics.fidelity._outputs import Activation

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from typing_extensions import Unpack

    from xaimetrics.fidelity._outputs import BaselineMode, FidelityModel, Operator
    from xaimetrics.fidelity._text import TokenizedModel

__all__ = ["Curves", "Deletion", "Insertion"]


@dataclass(frozen=True)
class Curves:
    """Per-sample insertion or deletion curves.

    Attributes:
        kind: ``"insertion"`` or ``"deletion"``.
        n_perturbed: per sample, int array of the distinct numbers of features perturbed ``k_j``.
        fractions: per sample, the x-axis ``k_j / n_features`` (from 0 to ``max_percentage_perturbed``).
        scores: per sample, ``g(f, x_perturbed, y)`` at each step.
        auc: float array ``(n_samples,)``: each curve's normalised trapezoid area.
    """

    kind: str
    n_perturbed: list[np.ndarray]
    fractions: list[np.ndarray]
    scores: list[np.ndarray]
    auc: np.ndarray

    def mean_curve(self, n_points: int = 101) -> tuple[np.ndarray, np.ndarray]:
        """Average curve: each curve linearly interpolated on ``n_points`` fractions of its x-range.

        Returns ``(grid, mean)``, with ``grid`` from 0 to the largest fraction reached.

        Example:
            >>> c = Curves("deletion", [np.array([0, 2])], [np.array([0.0, 1.0])], [np.array([1.0, 0.0])], np.array([0.5]))
            >>> [round(float(v), 2) for v in c.mean_curve(3)[1]]
            [1.0, 0.5, 0.0]
        """
        relative = np.linspace(0.0, 1.0, n_points)
        values = [np.interp(relative * f[-1], f, s) for f, s in zip(self.fractions, self.scores, strict=True)]
        end = float(np.mean([f[-1] for f in self.fractions]))
        return relative * end, np.mean(values, axis=0)


class _CausalFidelity(FidelityBase):
    """Shared implementation of Insertion and Deletion."""

    _kind: Literal["insertion", "deletion"] = "deletion"

    @validate_params(
        {
            "steps": Check(
                lambda v: Interval(int, 1).accepts(v) or (Interval(int).accepts(v) and v == -1),
                "an integer ≥ 1, or -1 for every feature",
            ),
            "max_percentage_perturbed": FRACTION,
            **FIDELITY_RULES,
        }
    )
    def __init__(
        self,
        model: FidelityModel | TokenizedModel,
        inputs: ArrayLike | Sequence[str],
        targets: ArrayLike | None = None,
        batch_size: int | None = 64,
        baseline_mode: BaselineMode = 0.0,
        steps: int = 10,
        max_percentage_perturbed: float = 1.0,
        operator: Operator | None = None,
        activation: Activation = None,
        **options: Unpack[PerturbationOptions],
    ) -> None:
        self.steps = steps
        self.max_percentage_perturbed = float(max_percentage_perturbed)
        super().__init__(model, inputs, targets, batch_size, baseline_mode, operator, activation, **options)

    def curves(self, explanations: ArrayLike) -> Curves:
        """Compute each sample's curve.

        Args:
            explanations: tensors: an array ``(n, *features)`` (see the class docstring for images); texts: a
                list of 1-D arrays, one score per feature (``feature_names``), or a padded 2-D array.

        Returns:
            :class:`Curves` with the x-axis (true fractions perturbed), the scores and the areas.
        """
        ranks, n_features = self._prepare(explanations)
        clean = self._clean_scores()
        n = self.n_samples
        counts = [
            step_counts(n_perturbed(int(n_features[i]), self.max_percentage_perturbed), self.steps)
            for i in range(n)
        ]
        ends = np.array([int(c[-1]) for c in counts])
        if self.steps != -1 and (ends < self.steps).any():
            warn_clamped(self._owner, self.steps, int((ends < self.steps).sum()), n, int(ends.min()))
        sizes = np.array([len(c) for c in counts])
        sample_of_row = np.repeat(np.arange(n), sizes)
        count_of_row = np.concatenate(counts)
        full = count_of_row == n_features.numpy()[sample_of_row]
        empty = count_of_row == 0
        deletion = self._kind == "deletion"
        is_clean = empty if deletion else full
        is_baseline = full if deletion else empty
        values = np.empty(len(count_of_row))
        values[is_clean] = clean.numpy()[sample_of_row[is_clean]]
        if is_baseline.any():
            values[is_baseline] = self._baseline_scores().numpy()[sample_of_row[is_baseline]]
        todo = ~(is_clean | is_baseline)
        device = self._perturber.device
        samples = torch.from_numpy(sample_of_row[todo])
        samples_device = samples.to(device)
        counts_device = torch.from_numpy(count_of_row[todo]).to(device)

        def mask_fn(rows: torch.Tensor) -> torch.Tensor:
            r = ranks[samples_device[rows]]
            k = counts_device[rows].unsqueeze(1)
            return r < k if deletion else r >= k

        values[todo] = run_rows(self._perturber, samples, mask_fn, self.batch_size).numpy()
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        per_sample = [values[bounds[i] : bounds[i + 1]] for i in range(n)]
        fractions = [c / float(n_features[i]) for i, c in enumerate(counts)]
        auc = np.array([trapezoid_auc(f, s) for f, s in zip(fractions, per_sample, strict=True)])
        return Curves(self._kind, counts, fractions, per_sample, auc)

    def evaluate(self, explanations: ArrayLike) -> float:
        """The mean (over samples) normalised area under the curve."""
        return float(self.curves(explanations).auc.mean())

    def detailed_evaluate(self, explanations: ArrayLike) -> dict[int, float]:
        """Mean score (over samples) at each step.

        Keys are the step numbers ``j = 0..steps``; for sample ``i`` step ``j`` perturbs
        ``round(j K_i / steps)`` features (for tensors, ``curves(...).n_perturbed[0][j]``; a clamped sample
        repeats its scores). With ``steps=-1`` keys are feature counts, averaged over the samples that reach them.
        """
        curves = self.curves(explanations)
        if self.steps == -1:
            longest = max(len(c) for c in curves.n_perturbed)
            return {k: float(np.mean([s[k] for s in curves.scores if len(s) > k])) for k in range(longest)}
        aligned = []
        for counts, scores in zip(curves.n_perturbed, curves.scores, strict=True):
            wanted = nominal_counts(int(counts[-1]), self.steps)
            aligned.append(scores[np.searchsorted(counts, wanted)])
        mean = np.mean(aligned, axis=0)
        return {j: float(v) for j, v in enumerate(mean)}

    def evaluate_samples(self, explanations: ArrayLike) -> np.ndarray:
        """The area of each sample's curve, shape ``(n_samples,)``."""
        return self.curves(explanations).auc


class Deletion(_CausalFidelity):
    """Deletion: the target score as the most important features are replaced by the baseline (lower is better).

    Xplique's API on PyTorch models and Hugging Face text classifiers, with exact definitions (see the module
    docstring): stable order (ties by feature index), distinct steps including 0 and the end, area over the
    true fractions normalised to [0, 1] on the x-axis, results independent of ``batch_size``.

    Args:
        model: tensors: a callable (``torch.nn.Module``) mapping ``(b, *features)`` to outputs ``(b, classes)``
            or ``(b,)``; texts: a Hugging Face sequence classifier (with ``tokenizer=``) or a
            ``xaimetrics.models.SplitClassifier``.
        inputs: an array ``(n, *features)`` (images ``(n, C, H, W)``, tabular ``(n, d)``, time series
            ``(n, T, d)``) or a list of texts.
        targets: ``None`` (the predicted class), class indices ``(n,)`` or one-hot / weight rows ``(n, classes)``.
        batch_size: perturbed inputs per forward pass (``None``: all at once). Never changes the result.
        baseline_mode: tensors: a value, an array broadcastable to the inputs, or a callable
            ``inputs -> baseline``; texts: ``"mask"`` (also the default ``0.0``), ``"pad"``, ``"delete"``, a
            token id or a callable ``input_ids -> replacement ids``.
        steps: number of steps from 0 to the end (``-1``: every feature; more than the features: clamped with
            a warning).
        max_percentage_perturbed: fraction of the features perturbed at the last step, in ]0, 1].
        operator: ``g(f, x, y) -> scores (b,)``; default ``sum(f(x) * y)``, i.e. the target's output. For texts
            ``x`` is the dict of model inputs.
        activation: ``None``, ``"sigmoid"`` or ``"softmax"``, applied to the model outputs.
        tokenizer, granularity, max_length: text only: the tokenizer, ``"token"`` or ``"word"`` features, and
            the truncation length.
        device: where inputs go (default: the model's device).

    Explanations of images may be ``(n, H, W)`` or ``(n, 1, H, W)``: the channels of a pixel move together.

    Example:
        >>> import torch
        >>> model = torch.nn.Linear(4, 1, bias=False)
        >>> _ = model.weight.data.copy_(torch.tensor([[4.0, 3.0, 2.0, 1.0]]))
        >>> x = torch.ones(1, 4)
        >>> metric = Deletion(model, x, steps=4)
        >>> metric.curves(torch.tensor([[4.0, 3.0, 2.0, 1.0]])).scores[0].tolist()
        [10.0, 6.0, 3.0, 1.0, 0.0]
        >>> metric.evaluate(torch.tensor([[4.0, 3.0, 2.0, 1.0]]))
        3.75
    """

    _kind = "deletion"
    higher_is_better = False


class Insertion(_CausalFidelity):
    """Insertion: the target score as the most important features are put back into the baseline (higher is better).

    Same arguments and definitions as :class:`Deletion`; step 0 is the baseline and the last step (with
    ``max_percentage_perturbed=1``) the original input.

    Example:
        >>> import torch
        >>> model = torch.nn.Linear(4, 1, bias=False)
        >>> _ = model.weight.data.copy_(torch.tensor([[4.0, 3.0, 2.0, 1.0]]))
        >>> metric = Insertion(model, torch.ones(1, 4), steps=-1)
        >>> metric.curves(torch.tensor([[4.0, 3.0, 2.0, 1.0]])).scores[0].tolist()
        [0.0, 4.0, 7.0, 9.0, 10.0]
        >>> metric.evaluate(torch.tensor([[4.0, 3.0, 2.0, 1.0]]))
        6.25
    """

    _kind = "insertion"
    higher_is_better = True
