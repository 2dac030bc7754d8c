"""Infidelity (Yeh et al., 2019, *On the (In)fidelity and Sensitivity of Explanations*), Captum's definition.

For an input ``x``, its explanation ``Φ`` and ``R`` random perturbations ``I_r`` (``x̃_r = x − I_r``):

    INFD(Φ, f, x) = (1/R) Σ_r ( I_rᵀ Φ − (g(f, x) − g(f, x − I_r)) )²

with ``g(f, x, y)`` the target score (``activation``, ``targets`` and ``operator`` as in every fidelity
metric). ``normalize=True`` scales ``Φ`` by the least-squares factor ``β = Σ_r I_rᵀΦ Δ_r / Σ_r (I_rᵀΦ)²``
first (``Δ_r = g(x) − g(x − I_r)``), so the value no longer depends on the explanation's scale (Captum's
``normalize``; ``β = 0`` when every ``I_rᵀΦ`` is 0). Lower is better; range ``[0, ∞)``.

Perturbations (seeded per ``(random_state, sample)``: a sample's
perturbations never depend on the batch size, on the other samples nor on the explanation):

- ``"gaussian"`` (tensors): ``I ~ N(0, noise_std²)`` on every input element — the noisy-baseline perturbation
  of Captum's documentation. For text, pass the word embeddings as the tensor inputs (embedding noise).
- ``"subset"`` (tensors and texts): a random subset ``S`` of ``max(1, round(subset_percent · n_features))``
  features goes to the baseline (Yeh et al.'s removal perturbations); tensors: ``I = (x − baseline) ⊙ 1_S``;
  texts (token masks; tokens have no numeric difference): ``I = 1_S``, so ``I ᵀΦ`` is the attribution of the
  removed features.
- a callable ``perturb_func(inputs) -> (perturbations, perturbed_inputs)``, Captum's contract without
  baselines: called on each batch of ``inputs`` repeated ``n_perturb_samples`` times (sample-major).

The model's outputs on the perturbed inputs do not depend on the explanation: they are computed once per metric
object and every further explanation costs one product per perturbation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, cast

import numpy as np
import torch

from xaimetrics._validation import Check, Interval, invalid, validate_params
from xaimetrics.fidelity._base import (
    FIDELITY_RULES,
    FRACTION,
    POSITIVE,
    RANDOM_STATE,
    FidelityBase,
    PerturbationOptions,
    check_finite_scores,
    run_rows,
)
from xaimetrics.fidelity._mufidelity import draw_subsets
from xaimetrics.fidelity._outputs import Activation

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from typing_extensions import Unpack

    from xaimetrics.fidelity._outputs import BaselineMode, FidelityModel, Operator
    from xaimetrics.fidelity._tensor import TensorPerturber
    from xaimetrics.fidelity._text import TokenizedModel

__all__ = ["Infidelity", "gaussian_perturbations"]

#: Perturbations kept between calls up to this many elements (float32: 128 MiB); beyond, Gaussian noise is
#: drawn again from its seeds for each explanation.
_MAX_KEPT = 2**25

PerturbFunc = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
Perturbation = Literal["gaussian", "subset"] | PerturbFunc


def gaussian_perturbations(
    shape: tuple[int, ...], samples: Sequence[int], runs: int, std: float, random_state: int
) -> torch.Tensor:
    """The Gaussian perturbations ``I`` of ``samples``, float32 ``(len(samples) · runs, *shape)``, sample-major.

    Sample ``i``'s ``runs`` perturbations come from a generator seeded with ``(random_state, i)``, whatever else
    is drawn (so they depend neither on the batch size nor on the other samples).
    """
    out = np.empty((len(samples), runs, *shape), dtype=np.float32)
    for k, i in enumerate(samples):
        out[k] = np.random.default_rng([random_state, int(i)]).standard_normal(
            (runs, *shape), dtype=np.float32
        )
    out *= np.float32(std)
    return torch.from_numpy(out.reshape(len(samples) * runs, *shape))


class Infidelity(FidelityBase):
    """Infidelity: expected squared error between ``I ᵀΦ`` and the output drop ``I`` causes (lower is better).

    Arguments as :class:`~xaimetrics.fidelity.MuFidelity` (``model, inputs, targets, batch_size``,
    ``baseline_mode``, ``operator``, ``activation`` and the keyword-only text options), plus:

    Args:
        perturbation: ``"gaussian"`` (tensors), ``"subset"`` (tensors and texts) or Captum's
            ``perturb_func(inputs) -> (perturbations, perturbed_inputs)`` (tensors).
        n_perturb_samples: perturbations per input ``R`` (≥ 1).
        normalize: scale the explanation by the least-squares ``β`` first (Captum's ``normalize``).
        noise_std: standard deviation of the ``"gaussian"`` perturbation.
        subset_percent: fraction of the features removed by ``"subset"``, in ]0, 1].
        random_state: seed of the perturbations.

    Example:
        >>> import torch
        >>> model = torch.nn.Linear(3, 1, bias=False).eval()
        >>> _ = model.weight.data.copy_(torch.tensor([[3.0, -2.0, 1.0]]))
        >>> metric = Infidelity(model, torch.ones(2, 3), perturbation="gaussian", n_perturb_samples=5)
        >>> exact = torch.tensor([[3.0, -2.0, 1.0]]).repeat(2, 1)  # the gradient: I·Φ equals the drop
        >>> round(metric.evaluate(exact), 10), round(metric.evaluate(2 * exact, normalize=True), 10)
        (0.0, 0.0)
    """

    higher_is_better = False

    @validate_params(
        {
            "perturbation": Check(
                lambda v: callable(v) or v in ("gaussian", "subset"),
                "'gaussian', 'subset' or a callable perturb_func(inputs)",
            ),
            "n_perturb_samples": Interval(int, 1),
            "noise_std": POSITIVE,
            "subset_percent": FRACTION,
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
        perturbation: Perturbation = "subset",
        baseline_mode: BaselineMode = 0.0,
        n_perturb_samples: int = 10,
        operator: Operator | None = None,
        activation: Activation = None,
        *,
        normalize: bool = False,
        noise_std: float = 0.1,
        subset_percent: float = 0.2,
        random_state: int = 0,
        **options: Unpack[PerturbationOptions],
    ) -> None:
        self.perturbation = perturbation
        self.n_perturb_samples = n_perturb_samples
        self.normalize = bool(normalize)
        self.noise_std = float(noise_std)
        self.subset_percent = float(subset_percent)
        self.random_state = random_state
        super().__init__(model, inputs, targets, batch_size, baseline_mode, operator, activation, **options)
        self._text = not hasattr(self._perturber, "baseline")
        if self._text and perturbation != "subset":
            raise invalid(
                "perturbation",
                self._owner,
                "'subset' for text inputs (token masks)",
                perturbation if isinstance(perturbation, str) else "a callable",
                "For embedding noise, pass the word embeddings as tensor inputs with a model that takes them.",
            )
        self._cache: dict[object, tuple[torch.Tensor, torch.Tensor | None]] = {}

    # ------------------------------------------------------------------ perturbations and output drops
    def _drops_and_perturbations(self, n_features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Output drops ``Δ`` ``(n, R)`` and the perturbations: ``(n·R, *input shape)``, or the subsets drawn.

        Computed once per metric (subsets: per feature layout), never per explanation; ``"gaussian"``
        perturbations too large to keep (over ``_MAX_KEPT`` elements) are ``None`` and drawn again from their
        seeds for the products.
        """
        perturber = self._perturber
        key: object = "noise"
        if self.perturbation == "subset":
            key = (tuple(n_features.tolist()), getattr(perturber, "_mask_shape", None))
        if key in self._cache:
            return self._cache[key]
        n, runs = self.n_samples, self.n_perturb_samples
        clean = self._clean_scores()
        samples = torch.arange(n).repeat_interleave(runs)
        stored: torch.Tensor | None = None
        if self.perturbation == "subset":
            subsets = draw_subsets(
                n_features.numpy(), runs, self.subset_percent, self.random_state, self._owner
            )
            self._subsets = stored = subsets  # the latest layout's subsets (tests read them)
            width = int(n_features.max())
            device = perturber.device
            subsets_device = subsets.to(device)

            def mask_fn(rows: torch.Tensor) -> torch.Tensor:
                drawn = subsets_device[rows // runs, rows % runs]
                chosen = torch.zeros(len(rows), width + 1, dtype=torch.bool, device=device)
                return chosen.scatter_(1, drawn, True)[:, :width]

            perturbed = run_rows(perturber, samples, mask_fn, self.batch_size)
        else:
            perturbed, stored = self._tensor_scores()
        drops = clean.repeat_interleave(runs) - perturbed
        result = (drops.view(n, runs), stored)
        self._cache[key] = result
        return result

    def _tensor_scores(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Scores of ``x − I`` for every row (Gaussian or callable perturbations) and the perturbations kept.

        Batches hold whole inputs: ``max(1, batch_size // R)`` inputs, ``R`` rows each.
        """
        perturber = cast("TensorPerturber", self._perturber)
        x = perturber.inputs
        targets = perturber._targets()
        n, runs = self.n_samples, self.n_perturb_samples
        per_batch = n if self.batch_size is None else max(1, self.batch_size // runs)
        scores = torch.empty(n * runs, dtype=torch.float64)
        kept: list[torch.Tensor] = []
        keep_noise = n * runs * int(np.prod(x.shape[1:])) <= _MAX_KEPT
        with torch.inference_mode():
            for start in range(0, n, per_batch):
                chosen = torch.arange(start, min(start + per_batch, n))
                rows = torch.arange(start * runs, (start + len(chosen)) * runs)
                index = chosen.repeat_interleave(runs).to(x.device)
                batch = x[index]
                if callable(self.perturbation):
                    perturbations, perturbed = _call_perturb_func(self.perturbation, batch, self._owner)
                    kept.append(perturbations.detach().to(device="cpu", dtype=torch.float32))
                else:
                    noise = gaussian_perturbations(
                        tuple(x.shape[1:]), chosen.tolist(), runs, self.noise_std, self.random_state
                    )
                    if keep_noise:
                        kept.append(noise)
                    perturbed = batch - noise.to(device=x.device, dtype=x.dtype)
                scores[rows] = perturber.scorer(perturbed, targets[index]).to("cpu", torch.float64)
        stored = torch.cat(kept) if kept else None
        return check_finite_scores(scores, self._owner, "the perturbed inputs"), stored

    def _products(
        self, scores: torch.Tensor, n_features: torch.Tensor, stored: torch.Tensor | None
    ) -> torch.Tensor:
        """``I_rᵀΦ`` for every sample and perturbation, float64 ``(n, R)``."""
        n, runs = self.n_samples, self.n_perturb_samples
        if self.perturbation == "subset" and self._text:
            padded = torch.cat([torch.where(torch.isfinite(scores), scores, 0.0), torch.zeros(n, 1)], dim=1)
            subsets = cast("torch.Tensor", stored)
            return padded.gather(1, subsets.view(n, -1)).view(subsets.shape).sum(dim=-1)
        perturber = cast("TensorPerturber", self._perturber)
        shape = tuple(perturber.inputs.shape[1:])
        phi = scores.view(n, *perturber._mask_shape).expand(n, *shape).to(torch.float64)
        x = perturber.inputs.to("cpu", torch.float64)
        if self.perturbation == "subset":
            difference = x - perturber.baseline.to("cpu", torch.float64)
            # a removed feature contributes its attribution times x − baseline over the elements it covers
            per_feature = _per_feature(phi * difference, perturber._mask_shape)
            padded = torch.cat([per_feature, torch.zeros(n, 1, dtype=torch.float64)], dim=1)
            subsets = cast("torch.Tensor", stored)
            return padded.gather(1, subsets.view(n, -1)).view(subsets.shape).sum(dim=-1)
        if stored is not None:
            return torch.einsum("nrf,nf->nr", stored.reshape(n, runs, -1).double(), phi.reshape(n, -1))
        products = torch.empty(n, runs, dtype=torch.float64)
        per_batch = n if self.batch_size is None else max(1, self.batch_size // runs)
        for start in range(0, n, per_batch):
            chosen = torch.arange(start, min(start + per_batch, n))
            noise = gaussian_perturbations(shape, chosen.tolist(), runs, self.noise_std, self.random_state)
            products[chosen] = torch.einsum(
                "nrf,nf->nr", noise.view(len(chosen), runs, -1).double(), phi[chosen].reshape(len(chosen), -1)
            )
        return products.view(n, runs)

    # ------------------------------------------------------------------ evaluation
    def evaluate_samples(self, explanations: ArrayLike, normalize: bool | None = None) -> np.ndarray:
        """Infidelity of each input, float64 ``(n_samples,)`` (``normalize``: this call's override)."""
        self._clean_scores()
        scores, n_features = self._perturber.explanation_scores(explanations)
        drops, stored = self._drops_and_perturbations(n_features)
        products = self._products(scores, n_features, stored)
        if self.normalize if normalize is None else normalize:
            numerator = (products * drops).sum(dim=1, keepdim=True)
            denominator = (products * products).sum(dim=1, keepdim=True)
            beta = numerator / torch.where(denominator == 0, torch.ones_like(denominator), denominator)
            products = beta * products
        return ((products - drops) ** 2).mean(dim=1).numpy()

    def evaluate(self, explanations: ArrayLike, normalize: bool | None = None) -> float:
        """Mean infidelity over the inputs (lower is better)."""
        return float(self.evaluate_samples(explanations, normalize).mean())


def _per_feature(values: torch.Tensor, mask_shape: tuple[int, ...]) -> torch.Tensor:
    """Sum ``values`` ``(n, *input shape)`` over the input elements of each feature: ``(n, prod(mask_shape))``."""
    n = values.shape[0]
    reduce = tuple(
        1 + axis for axis, size in enumerate(mask_shape) if size == 1 and values.shape[1 + axis] != 1
    )
    if reduce:
        values = values.sum(dim=reduce, keepdim=True)
    return values.reshape(n, -1)


def _call_perturb_func(
    func: PerturbFunc, batch: torch.Tensor, owner: str
) -> tuple[torch.Tensor, torch.Tensor]:
    result = func(batch)
    if not (
        isinstance(result, tuple) and len(result) == 2 and all(isinstance(t, torch.Tensor) for t in result)
    ):
        raise invalid(
            "perturbation",
            owner,
            "a callable returning (perturbations, perturbed_inputs), two tensors",
            type(result).__name__,
        )
    perturbations, perturbed = result
    if perturbations.shape != batch.shape or perturbed.shape != batch.shape:
        raise invalid(
            "perturbation",
            owner,
            f"a callable returning two tensors of the batch's shape {tuple(batch.shape)}",
            f"shapes {tuple(perturbations.shape)} and {tuple(perturbed.shape)}",
        )
    return perturbations, perturbed.to(batch.dtype)
