"""MuFidelity (Bhatt et al., 2020, *Evaluating and Aggregating Feature-based Model Explanations*, eq. 3).

For each input, draw ``nb_samples`` random subsets ``S`` of ``m = max(1, round(subset_percent * n))``
features (uniformly, without replacement) and correlate, over the subsets,

    sum_{j in S} e_j      with      g(f, x, y) − g(f, x with S set to the baseline, y)

(Pearson correlation). The score is the mean correlation over inputs; higher is better. Subsets depend only
on ``random_state`` and the sample (never on ``batch_size`` nor on the explanation), so the output drops are computed
once per metric object and reused for every explanation evaluated with it.

``grid_size`` (images only) draws subsets of the cells of a ``grid_size × grid_size`` grid instead of single
pixels, as Xplique does; the attribution of a cell is the sum over its pixels.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
import torch

from xaimetrics._validation import Interval, invalid, validate_params
from xaimetrics.fidelity._base import (
    FIDELITY_RULES,
    RANDOM_STATE,
    FidelityBase,
    PerturbationOptions,
    run_rows,
)
from xaimetrics.fidelity._outputs import Activation
from xaimetrics.fidelity._stacklevel import user_stacklevel

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from typing_extensions import Unpack

    from xaimetrics.fidelity._outputs import BaselineMode, FidelityModel, Operator
    from xaimetrics.fidelity._tensor import TensorPerturber
    from xaimetrics.fidelity._text import TokenizedModel

__all__ = ["MuFidelity", "draw_subsets"]

#: Largest number of subset indices kept (int64): 2**27 is 1 GiB.
_MAX_SUBSET_ENTRIES = 2**27


class MuFidelity(FidelityBase):
    """MuFidelity: correlation between the attribution of random subsets and the output drop they cause.

    Arguments as :class:`~xaimetrics.fidelity.Deletion`, plus:

    Args:
        grid_size: images only: subsets are drawn on a ``grid_size × grid_size`` grid of cells (``None``:
            single pixels).
        subset_percent: fraction of the features (or cells) in each subset, in ]0, 1[.
        nb_samples: number of random subsets per input (≥ 2).
        random_state: seed of the subsets.

    Example:
        >>> import torch
        >>> model = torch.nn.Linear(6, 1, bias=False).eval()
        >>> _ = model.weight.data.copy_(torch.tensor([[6.0, 5.0, 4.0, 3.0, 2.0, 1.0]]))
        >>> metric = MuFidelity(model, torch.ones(2, 6), subset_percent=0.5, nb_samples=20)
        >>> exact = torch.tensor([[6.0, 5.0, 4.0, 3.0, 2.0, 1.0]]).repeat(2, 1)
        >>> round(metric.evaluate(exact), 6), round(metric.evaluate(-exact), 6)
        (1.0, -1.0)
    """

    higher_is_better = True

    @validate_params(
        {
            "subset_percent": Interval(float, 0, 1, closed="neither"),
            "nb_samples": Interval(int, 2, text="an integer ≥ 2 (a correlation needs two points)"),
            "grid_size": (Interval(int, 1), None),
            "random_state": RANDOM_STATE,
            **FIDELITY_RULES,
        }
    )
    def __init__(
        self,
        model: FidelityModel | TokenizedModel,
        inputs: ArrayLike | Sequence[str],
        targets: ArrayLike | None = None,
        batch_size: int | None = 64,
        grid_size: int | None = None,
        subset_percent: float = 0.2,
        baseline_mode: BaselineMode = 0.0,
        nb_samples: int = 200,
        operator: Operator | None = None,
        activation: Activation = None,
        *,
        random_state: int = 0,
        **options: Unpack[PerturbationOptions],
    ) -> None:
        self.grid_size = grid_size
        self.subset_percent = float(subset_percent)
        self.nb_samples = nb_samples
        self.random_state = random_state
        super().__init__(model, inputs, targets, batch_size, baseline_mode, operator, activation, **options)
        if grid_size is not None and getattr(self._perturber, "inputs", torch.empty(0)).ndim != 4:
            raise invalid(
                "grid_size", self._owner, "None unless the inputs are images (n, C, H, W)", grid_size
            )
        self._drop_cache: dict[tuple[object, ...], np.ndarray] = {}
        self._subset_cache: dict[tuple[int, ...], torch.Tensor] = {}

    # ------------------------------------------------------------------ subsets
    def _groups(self, n_features: torch.Tensor) -> tuple[torch.Tensor | None, np.ndarray]:
        """Feature → group map (``None``: one group per feature) and the number of groups per sample."""
        if self.grid_size is None:
            return None, n_features.numpy()
        shape = cast("TensorPerturber", self._perturber)._mask_shape  # grid_size: images (tensor inputs)
        height, width = shape[-2], shape[-1]
        g = self.grid_size
        if g > min(height, width):
            raise invalid("grid_size", self._owner, f"at most the image side ({min(height, width)})", g)
        rows = torch.arange(height) * g // height
        cols = torch.arange(width) * g // width
        cells = (rows[:, None] * g + cols[None, :]).expand(*shape).reshape(-1)
        return cells, np.full(self.n_samples, g * g)

    def _subsets(self, n_groups: np.ndarray) -> torch.Tensor:
        """Indices of the groups drawn, int64 ``(n_samples, nb_samples, m_max)``, padded with ``max(n_groups)``.

        Sample ``i`` draws ``m_i = max(1, round(subset_percent * n_groups[i]))`` distinct groups per run from
        a generator seeded with ``(random_state, i)``; computed once per metric and feature layout.
        """
        key = tuple(int(g) for g in n_groups)
        cached = self._subset_cache.get(key)
        if cached is not None:
            return cached
        subsets = draw_subsets(n_groups, self.nb_samples, self.subset_percent, self.random_state, self._owner)
        self._subset_cache = {key: subsets}
        return subsets

    # ------------------------------------------------------------------ evaluation
    def _output_drops(
        self, n_features: torch.Tensor, groups: torch.Tensor | None, n_groups: np.ndarray
    ) -> np.ndarray:
        key = (tuple(n_features.tolist()), getattr(self._perturber, "_mask_shape", None))
        if key in self._drop_cache:
            return self._drop_cache[key]
        n, runs = self.n_samples, self.nb_samples
        width = int(n_groups.max())
        device = self._perturber.device
        subsets = self._subsets(n_groups).to(device)
        groups_device = None if groups is None else groups.to(device)

        def mask_fn(rows: torch.Tensor) -> torch.Tensor:
            drawn = subsets[rows // runs, rows % runs]
            chosen = torch.zeros(len(rows), width + 1, dtype=torch.bool, device=device)
            chosen = chosen.scatter_(1, drawn, True)[:, :width]
            return chosen if groups_device is None else chosen[:, groups_device]

        samples = torch.arange(n).repeat_interleave(runs)
        perturbed = run_rows(self._perturber, samples, mask_fn, self.batch_size).numpy().reshape(n, runs)
        drops = self._clean_scores().numpy()[:, None] - perturbed
        self._drop_cache[key] = drops
        return drops

    def evaluate_samples(self, explanations: ArrayLike) -> np.ndarray:
        """Per-sample Pearson correlation, shape ``(n_samples,)`` (NaN when attribution sums are constant)."""
        scores, n_features = self._perturber.explanation_scores(explanations)
        self._clean_scores()
        groups, n_groups = self._groups(n_features)
        drops = self._output_drops(n_features, groups, n_groups)
        scores = torch.where(torch.isfinite(scores), scores, torch.zeros_like(scores))
        width = int(n_groups.max())
        if groups is not None:
            scores = torch.zeros(self.n_samples, width, dtype=scores.dtype).index_add_(1, groups, scores)
        padded = torch.cat([scores[:, :width], torch.zeros(self.n_samples, 1, dtype=scores.dtype)], dim=1)
        subsets = self._subsets(n_groups)
        sums = padded.gather(1, subsets.view(self.n_samples, -1)).view(subsets.shape).sum(dim=-1)
        return _pearson_rows(sums.numpy(), drops)

    def evaluate(self, explanations: ArrayLike) -> float:
        """Mean correlation over the inputs (inputs with an undefined correlation are skipped, with a warning)."""
        values = self.evaluate_samples(explanations)
        undefined = np.isnan(values)
        if undefined.all():
            raise invalid(
                "explanations",
                self._owner,
                "explanations whose subset sums vary (or a model whose output varies)",
                "a constant attribution sum or output drop for every input",
            )
        if undefined.any():
            warnings.warn(
                f"MuFidelity: the correlation is undefined (constant attribution sums or output drops) for "
                f"{int(undefined.sum())} of {len(values)} inputs; they are left out of the mean.",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        return float(np.nanmean(values))


def _pearson_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise Pearson correlation of two ``(n, runs)`` arrays (NaN where a row is constant)."""
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    denominator = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    scale = np.maximum(np.abs(a).max(axis=1), 1e-300) * np.maximum(np.abs(b).max(axis=1), 1e-300)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (a * b).sum(axis=1) / denominator
    return np.where(denominator > 1e-12 * scale * a.shape[1], np.clip(r, -1.0, 1.0), np.nan)


def draw_subsets(
    n_groups: np.ndarray, runs: int, subset_percent: float, random_state: int, owner: str
) -> torch.Tensor:
    """Random feature subsets, int64 ``(n_samples, runs, m_max)``, padded with ``max(n_groups)``.

    Sample ``i`` draws ``m_i = max(1, round(subset_percent * n_groups[i]))`` distinct groups per run from a
    generator seeded with ``(random_state, i)``: a sample's subsets depend on nothing else (not on the other
    samples, the batch size nor the explanation).
    """
    sizes = [max(1, round(subset_percent * int(g))) for g in n_groups]
    shape = (len(sizes), runs, max(sizes))
    if math.prod(shape) > _MAX_SUBSET_ENTRIES:
        raise invalid(
            "nb_samples",
            owner,
            f"small enough that the subsets fit in memory ({_MAX_SUBSET_ENTRIES:,} indices)",
            f"{math.prod(shape):,} indices",
            "Pass grid_size (images), fewer nb_samples, a smaller subset_percent or fewer inputs per metric.",
        )
    drawn = np.full(shape, int(max(n_groups)), dtype=np.int64)
    for i, (n_i, m_i) in enumerate(zip(n_groups, sizes, strict=True)):
        rng = np.random.default_rng([random_state, i])
        for run in range(runs):
            drawn[i, run, :m_i] = rng.choice(int(n_i), m_i, replace=False)
    return torch.from_numpy(drawn)
