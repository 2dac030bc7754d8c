"""The shared perturbation engine of the fidelity metrics.

Every metric of this family asks the same question: *what does the model output when some features of each
input are replaced by a baseline?* The answer is computed by one engine:

1. a *perturber* (tensor or text, see ``_tensor.py`` and ``_text.py``; both score outputs with the leaf
   module ``_outputs.py``) knows the inputs, their features and
   how to build a perturbed batch from a boolean mask ``(rows, features)`` where ``True`` means "this feature
   shows its baseline value";
2. a metric describes its *rows*: one ``(sample, mask)`` pair per forward pass it needs;
3. :func:`run_rows` packs the rows of all samples into full batches of ``batch_size``, builds each batch's
   masks on the model's device (from a rank tensor, never per row in Python) and runs the model under
   ``torch.inference_mode``.

The two explanation-independent endpoints, ``f(x)`` (nothing perturbed) and ``f(baseline)`` (everything
perturbed), are computed once per metric object and reused by every call (several attribution methods are
usually compared on the same metric object).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, TypedDict

import numpy as np

from xaimetrics._validation import Interval, Kind, Options, Rule, invalid
from xaimetrics.fidelity._outputs import ACTIVATIONS, Activation
from xaimetrics.fidelity._stacklevel import user_stacklevel

if TYPE_CHECKING:
    from typing import TypeGuard

    import torch
    from numpy.typing import ArrayLike
    from transformers import PreTrainedTokenizerBase

    from xaimetrics._typing import DeviceLike
    from xaimetrics.fidelity._outputs import BaselineMode, FidelityModel, Operator
    from xaimetrics.fidelity._tensor import TensorPerturber
    from xaimetrics.fidelity._text import TextPerturber, TokenizedModel

__all__ = [
    "BATCH_SIZE",
    "FIDELITY_RULES",
    "FRACTION",
    "POSITIVE",
    "RANDOM_STATE",
    "FidelityBase",
    "PerturbationOptions",
    "check_finite_scores",
    "feature_ranks",
    "is_text",
    "n_perturbed",
    "nominal_counts",
    "run_rows",
    "step_counts",
    "trapezoid_auc",
    "warn_clamped",
]


class PerturbationOptions(TypedDict, total=False):
    """The keyword-only options of every fidelity metric, passed on unchanged to :class:`FidelityBase`."""

    tokenizer: PreTrainedTokenizerBase | None
    granularity: Literal["token", "word"]
    max_length: int | None
    device: DeviceLike | None


#: ``batch_size`` of every batched metric of this family.
BATCH_SIZE: Rule = (Interval(int, 1, text="an integer ≥ 1 or None (all rows at once)"), None)
#: The seed of the randomised metrics.
RANDOM_STATE = Interval(int, 0)
#: The arguments every :class:`FidelityBase` metric shares, declared once; each metric's ``__init__`` adds its
#: own to these in its :func:`~xaimetrics._validation.validate_params` declaration.
FIDELITY_RULES: dict[str, Rule] = {
    "batch_size": BATCH_SIZE,
    "activation": Options(lambda: (*ACTIVATIONS, None)),
    "operator": (Kind(callable, "a callable g(f, x, y) or None"), None),
}
#: A fraction of the features in ]0, 1] (thresholds, max_percentage_perturbed, subset_percent).
FRACTION = Interval(float, 0, 1, closed="right")
#: A scale or radius: a number > 0.
POSITIVE = Interval(float, 0, closed="neither")

#: Tolerance used when a fraction times a count should be an integer (0.29 * 100 is 28.999999999999996).
_EPS = 1e-9


def feature_ranks(scores: torch.Tensor) -> torch.Tensor:
    """Rank features from the most to the least important, ties broken by feature index (ascending).

    Args:
        scores: float tensor of shape ``(n_samples, n_features)``; ``-inf`` marks padding (ranked last).

    Returns:
        int64 tensor of the same shape: ``ranks[i, j]`` is the position of feature ``j`` in sample ``i``'s
        order (0 = most important). A *stable* sort of the negated scores keeps equal scores in index order,
        so the order never depends on the sorting algorithm (numpy's and torch's default sorts are unstable
        and may reverse ties).

    Example:
        >>> import torch
        >>> feature_ranks(torch.tensor([[0.5, 2.0, 0.5, -1.0]])).tolist()
        [[1, 0, 2, 3]]
    """
    import torch

    order = torch.sort(-scores, dim=1, stable=True).indices
    ranks = torch.empty_like(order)
    positions = torch.arange(scores.shape[1], device=scores.device).expand_as(order)
    ranks.scatter_(1, order, positions)
    return ranks


def n_perturbed(n_features: int, max_percentage_perturbed: float) -> int:
    """The number of features perturbed at the end of a curve: ``floor(max_percentage * n)``, at least 1.

    Example:
        >>> n_perturbed(100, 0.29), n_perturbed(7, 0.5), n_perturbed(3, 0.1)
        (29, 3, 1)
    """
    return max(1, math.floor(max_percentage_perturbed * n_features + _EPS))


def step_counts(n_end: int, steps: int) -> np.ndarray:
    """The distinct numbers of perturbed features of a curve: ``round(j * n_end / steps)`` for ``j = 0..steps``.

    The counts always include 0 and ``n_end``; when ``steps <= n_end`` they are all distinct (consecutive
    values differ by at least 1), so no forward pass is repeated and no point of the curve is counted twice.
    ``steps=-1`` (or ``steps >= n_end``) gives every count ``0, 1, ..., n_end``. Rounding is half-up, in
    integer arithmetic.

    Example:
        >>> step_counts(10, 4).tolist()
        [0, 3, 5, 8, 10]
        >>> step_counts(3, -1).tolist()
        [0, 1, 2, 3]
    """
    if steps == -1 or steps >= n_end:
        return np.arange(n_end + 1, dtype=np.int64)
    j = np.arange(steps + 1, dtype=np.int64)
    return (2 * j * n_end + steps) // (2 * steps)


def nominal_counts(n_end: int, steps: int) -> np.ndarray:
    """Counts at the nominal steps ``j = 0..steps`` (repeated when ``steps > n_end``), used to align curves."""
    if steps == -1:
        return np.arange(n_end + 1, dtype=np.int64)
    j = np.arange(steps + 1, dtype=np.int64)
    return (2 * j * n_end + steps) // (2 * steps)


def trapezoid_auc(fractions: np.ndarray, scores: np.ndarray) -> float:
    """Area under a curve by the trapezoid rule, normalised by the width of its x-range.

    A constant curve ``c`` has area ``c`` whatever the number of steps or ``max_percentage_perturbed``.

    Example:
        >>> trapezoid_auc(np.array([0.0, 0.25, 1.0]), np.array([1.0, 0.5, 0.0]))
        0.375
    """
    width = float(fractions[-1] - fractions[0])
    if width <= 0:
        return float(scores[0])
    return float(np.trapezoid(scores, fractions) / width)


def check_finite_scores(scores: torch.Tensor, owner: str, where: str) -> torch.Tensor:
    """Return ``scores`` (shape ``(rows,)``) if every one is finite; raise naming the model otherwise.

    A NaN or infinite score would make every area, AOPC or correlation NaN or infinite without a word.

    Example:
        >>> import torch
        >>> check_finite_scores(torch.tensor([0.5, float("nan")]), "Deletion", "the inputs")
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'model' parameter of Deletion must be a model whose scores g(f, x, y) are finite on the inputs. Got nan for row 1 (1 of 2 rows). Check the model's weights and the inputs; a model that overflows needs inputs on a smaller scale.
    """
    import torch

    bad = ~torch.isfinite(scores)
    if bool(bad.any()):
        first = int(bad.nonzero()[0, 0]) if bad.ndim > 1 else int(bad.nonzero()[0])
        raise invalid(
            "model", owner, f"a model whose scores g(f, x, y) are finite on {where}",
            f"{scores.reshape(-1)[first].item()} for row {first} ({int(bad.sum())} of {bad.numel()} rows)",
            "Check the model's weights and the inputs; a model that overflows needs inputs on a smaller scale.",
        )  # fmt: skip
    return scores


def run_rows(
    perturber: TensorPerturber | TextPerturber,
    sample_index: torch.Tensor,
    mask_fn: Callable[[torch.Tensor], torch.Tensor],
    batch_size: int | None,
) -> torch.Tensor:
    """Forward every row ``(sample_index[r], mask_fn(r))`` in full batches and return one score per row.

    Rows are processed in the perturber's preferred sample order (texts sorted by length so batches hold
    similar lengths); the result is in the rows' original order and does not depend on ``batch_size``.

    Args:
        perturber: a tensor or text perturber (``forward(sample_index, mask) -> scores``, ``sample_order``).
        sample_index: int64 tensor of shape ``(rows,)``.
        mask_fn: maps row numbers ``(b,)`` to a bool mask ``(b, n_features)`` (``True`` = baseline value).
        batch_size: rows per forward pass (``None``: all at once).

    Returns:
        float64 tensor of shape ``(rows,)`` on the CPU.
    """
    import torch

    n_rows = int(sample_index.shape[0])
    out = torch.empty(n_rows, dtype=torch.float64)
    if n_rows == 0:
        return out
    position = perturber.sample_position[sample_index.cpu()]
    order = torch.sort(position, stable=True).indices
    size = n_rows if batch_size is None else batch_size
    device = perturber.device
    with torch.inference_mode():
        for start in range(0, n_rows, size):
            rows = order[start : start + size]
            samples = sample_index[rows].to(device)
            mask = mask_fn(rows.to(device))
            out[rows] = perturber.forward(samples, mask).to(device="cpu", dtype=torch.float64)
    return check_finite_scores(out, perturber.owner, "the perturbed inputs")


class FidelityBase:
    """Constructor and cached endpoints shared by every fidelity metric.

    Subclasses declare the public signature with its defaults (Xplique's positional order), check it with
    ``@validate_params({**own rules, **FIDELITY_RULES})`` on their ``__init__`` and implement their curves.
    """

    higher_is_better: bool = True

    @property
    def _owner(self) -> str:
        """The public class name, shown in error messages."""
        return type(self).__name__

    def __init__(
        self,
        model: FidelityModel | TokenizedModel,
        inputs: ArrayLike | Sequence[str],
        targets: ArrayLike | None,
        batch_size: int | None,
        baseline_mode: BaselineMode,
        operator: Operator | None,
        activation: Activation,
        *,
        tokenizer: PreTrainedTokenizerBase | None = None,
        granularity: Literal["token", "word"] = "token",
        max_length: int | None = None,
        device: DeviceLike | None = None,
    ) -> None:
        self.batch_size = batch_size
        self.activation = activation
        self.operator = operator
        if is_text(inputs):
            from xaimetrics.fidelity._text import TextPerturber

            self._perturber: TensorPerturber | TextPerturber = TextPerturber(
                model,
                inputs,
                tokenizer=tokenizer,
                granularity=granularity,
                baseline_mode=baseline_mode,
                max_length=max_length,
                device=device,
                activation=activation,
                operator=operator,
            )
        else:
            if tokenizer is not None:
                raise invalid(
                    "tokenizer",
                    self._owner,
                    "None for tensor inputs",
                    type(tokenizer).__name__,
                    "Pass texts as a list of strings.",
                )
            from xaimetrics.fidelity._tensor import TensorPerturber

            self._perturber = TensorPerturber(
                model,
                inputs,
                baseline_mode=baseline_mode,
                device=device,
                activation=activation,
                operator=operator,
            )
        self._raw_targets = targets
        self._clean: torch.Tensor | None = None
        self._baseline: torch.Tensor | None = None

    # ------------------------------------------------------------------ cached endpoints
    @property
    def n_samples(self) -> int:
        """Number of inputs under study."""
        return int(self._perturber.n_samples)

    @property
    def feature_names(self) -> list[list[str]] | None:
        """For text inputs, the features (tokens or words) of each text, in the order explanations use."""
        return getattr(self._perturber, "feature_names", None)

    def _clean_scores(self) -> torch.Tensor:
        """Scores ``g(f, x, y)`` of the unperturbed inputs, shape ``(n_samples,)`` (computed once)."""
        if self._clean is None:
            self._perturber.set_targets(self._raw_targets, self.batch_size)
            clean = self._perturber.endpoint_scores(baseline=False, batch_size=self.batch_size)
            self._clean = check_finite_scores(clean, self._owner, "the inputs")
        return self._clean

    def _baseline_scores(self) -> torch.Tensor:
        """Scores of the fully perturbed inputs (every feature at its baseline), shape ``(n_samples,)``."""
        if self._baseline is None:
            self._clean_scores()
            baseline = self._perturber.endpoint_scores(baseline=True, batch_size=self.batch_size)
            self._baseline = check_finite_scores(
                baseline, self._owner, "the baseline (every feature perturbed)"
            )
        return self._baseline

    def _prepare(self, explanations: ArrayLike) -> tuple[torch.Tensor, torch.Tensor]:
        """Validate explanations; return feature ranks ``(n, F)`` on the device and feature counts ``(n,)``."""
        self._clean_scores()
        scores, n_features = self._perturber.explanation_scores(explanations)
        return feature_ranks(scores).to(self._perturber.device), n_features


def is_text(inputs: object) -> TypeGuard[str | list[str] | tuple[str, ...]]:
    if isinstance(inputs, str):
        return True
    return isinstance(inputs, list | tuple) and bool(inputs) and all(isinstance(t, str) for t in inputs)


def warn_clamped(owner: str, steps: int, n_clamped: int, n_total: int, smallest: int) -> None:
    """Warn once that ``steps`` exceeded the number of perturbable features of some samples."""
    warnings.warn(
        f"{owner}: steps={steps} is larger than the number of features perturbed for {n_clamped} of "
        f"{n_total} samples (as few as {smallest}); their curves use every feature count instead "
        "(no step is repeated). Pass steps=-1 to ask for every feature explicitly.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
