"""Max-sensitivity (Yeh et al., 2019), Captum's ``sensitivity_max``: how much an explanation moves under tiny noise.

For an input ``x``, ``R`` perturbations ``δ_r`` drawn uniformly from the L∞ ball of radius ``perturb_radius``
(seeded per ``(random_state, sample)``: independent of the batch size and of the other samples):

    SENS_MAX(Φ, x) = max_r ‖Φ(x + δ_r) − Φ(x)‖ / ‖Φ(x)‖

(``‖Φ(x)‖ = 0`` divides by 1, as Captum). Lower is better; range ``[0, ∞)``. Explanations are recomputed on the
perturbed inputs, so the cost is ``R`` explanation calls per input, in batches of ``batch_size`` rows.

Text: pass the word embeddings ``(n, length, dim)`` as ``inputs`` and an ``explain`` that works on embeddings
(e.g. Captum's ``Saliency`` of ``lambda e: model(inputs_embeds=e).logits``): that is embedding noise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch

from xaimetrics._validation import Check, Interval, Kind, caller, invalid, validate_params
from xaimetrics.fidelity._base import BATCH_SIZE, POSITIVE, RANDOM_STATE
from xaimetrics.fidelity._tensor import as_float_tensor

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["sensitivity_max", "uniform_perturbations"]

Explain = Callable[..., "torch.Tensor | np.ndarray"]


def uniform_perturbations(
    shape: tuple[int, ...], samples: Sequence[int], runs: int, radius: float, random_state: int
) -> torch.Tensor:
    """Noise ``δ`` of ``samples``, uniform in ``[−radius, radius]``, float32 ``(len(samples) · runs, *shape)``.

    Sample ``i``'s ``runs`` draws come from a generator seeded with ``(random_state, i)`` (sample-major rows).
    """
    out = np.empty((len(samples), runs, *shape), dtype=np.float32)
    for k, i in enumerate(samples):
        out[k] = np.random.default_rng([random_state, int(i)]).uniform(-radius, radius, (runs, *shape))
    return torch.from_numpy(out.reshape(len(samples) * runs, *shape))


def _explain(explain: Explain, inputs: torch.Tensor, targets: torch.Tensor | None) -> torch.Tensor:
    values = explain(inputs) if targets is None else explain(inputs, target=targets)
    detach = getattr(values, "detach", None)
    tensor = detach() if callable(detach) else torch.as_tensor(np.asarray(values))
    if tensor.shape[0] != inputs.shape[0]:
        raise invalid(
            "explain",
            "sensitivity_max",
            "a callable returning one explanation per input",
            f"{tensor.shape[0]} explanations for {inputs.shape[0]} inputs",
        )
    return tensor.reshape(inputs.shape[0], -1).to(torch.float64)


@validate_params(
    {
        "explain": Kind(callable, "a callable explain(inputs[, target=...]) -> explanations"),
        "perturb_radius": POSITIVE,
        "n_perturb_samples": Interval(int, 1),
        "batch_size": BATCH_SIZE,
        "norm_ord": Check(
            lambda v: v == "fro" or Interval(float, 0, closed="neither").accepts(v),
            "'fro' or a number > 0 (the order of a vector norm)",
        ),
        "random_state": RANDOM_STATE,
    }
)
def sensitivity_max(
    explain: Explain,
    inputs: ArrayLike,
    targets: ArrayLike | None = None,
    *,
    perturb_radius: float = 0.02,
    n_perturb_samples: int = 10,
    norm_ord: Literal["fro"] | float = "fro",
    batch_size: int | None = None,
    random_state: int = 0,
) -> np.ndarray:
    """Max-sensitivity of an explanation function on each input: float64 ``(n_samples,)``, lower is better.

    Args:
        explain: ``explain(inputs)`` or, with ``targets``, ``explain(inputs, target=targets)`` returning
            explanations ``(b, ...)`` — e.g. ``captum.attr.Saliency(model).attribute``.
        inputs: tensor ``(n, *features)`` (word embeddings for texts).
        targets: class indices ``(n,)`` passed to ``explain`` (repeated for the perturbed copies).
        perturb_radius: radius of the L∞ ball the noise is drawn from (> 0).
        n_perturb_samples: perturbations per input (≥ 1).
        norm_ord: ``"fro"`` (L2 of the flattened explanation) or the order ``p`` of a vector norm.
        batch_size: perturbed rows per call of ``explain``, rounded down to whole inputs (at least one input's
            ``n_perturb_samples`` rows; ``None``: all at once).
        random_state: seed of the noise.

    Example:
        >>> import torch
        >>> weights = torch.tensor([[2.0, -1.0]])
        >>> linear_gradient = lambda x: weights.expand(x.shape[0], 2)  # a constant explanation
        >>> sensitivity_max(linear_gradient, torch.ones(3, 2)).tolist()
        [0.0, 0.0, 0.0]
        >>> input_times_gradient = lambda x: x * weights
        >>> values = sensitivity_max(input_times_gradient, torch.ones(3, 2), perturb_radius=0.1)
        >>> bool(((values > 0) & (values <= 0.1)).all())
        True
    """
    owner = caller()
    x = as_float_tensor(inputs, "inputs", owner)
    if x.ndim < 2 or x.shape[0] == 0:
        raise invalid("inputs", owner, "a tensor of shape (n_samples, *features)", f"shape {tuple(x.shape)}")
    n, runs = int(x.shape[0]), n_perturb_samples
    y = None
    if targets is not None:
        y = torch.as_tensor(
            np.asarray(targets.detach().cpu() if isinstance(targets, torch.Tensor) else targets)
        )
        if y.ndim != 1 or y.shape[0] != n:
            raise invalid("targets", owner, f"{n} class indices", f"shape {tuple(y.shape)}")
        y = y.long().to(x.device)
    order = 2.0 if norm_ord == "fro" else float(norm_ord)
    size = n * runs if batch_size is None else batch_size

    def norm(values: torch.Tensor) -> torch.Tensor:
        return torch.linalg.vector_norm(values, ord=order, dim=1)

    original = torch.cat(
        [
            _explain(explain, x[s : s + size], None if y is None else y[s : s + size])
            for s in range(0, n, size)
        ]
    ).cpu()
    reference = norm(original)
    reference = torch.where(reference == 0, torch.ones_like(reference), reference)
    per_batch = max(1, size // runs)  # whole inputs per call of explain
    ratios = torch.empty(n, runs, dtype=torch.float64)
    for start in range(0, n, per_batch):
        chosen = torch.arange(start, min(start + per_batch, n))
        noise = uniform_perturbations(
            tuple(x.shape[1:]), chosen.tolist(), runs, float(perturb_radius), random_state
        )
        index = chosen.repeat_interleave(runs)
        perturbed = x[index.to(x.device)] + noise.to(device=x.device, dtype=x.dtype)
        explained = _explain(explain, perturbed, None if y is None else y[index.to(y.device)]).cpu()
        ratios[chosen] = (norm(explained - original[index]) / reference[index]).view(len(chosen), runs)
    return ratios.view(n, runs).max(dim=1).values.numpy()
