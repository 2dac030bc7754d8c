"""Randomisation sanity checks (Adebayo et al., 2018, *Sanity checks for saliency maps*), as in Xplique.

Each check compares, input by input, the explanation of the trained model with an explanation that should not
resemble it, by Spearman's rank correlation (ties at their average rank; any similarity of
``xaimetrics.fidelity`` can replace it, e.g. ``ssim`` for images as Xplique's ``RandomLogitMetric``):

- :class:`ModelRandomization`: the same model with re-initialised weights (all layers, or the last fraction /
  the named layers, Xplique's ``ProgressiveLayerRandomization``);
- :class:`RandomLogit`: the explanation of another class, drawn uniformly among the classes other than the
  target;
- :class:`CascadingRandomization`: layers re-initialised one after the other from the output down, one
  similarity per step (Adebayo's cascading randomisation).

An explanation method that passes a check has a *low* similarity (lower is better; Spearman in [−1, 1]). The
explanation function is ``explain(model, inputs, targets) -> explanations`` with ``targets`` class indices
``(n,)``: it works for tensors, for texts (one 1-D array per text, e.g. ``fidelity.attribute``) and for concept
importances (``concepts.local_importance`` of a concept model ``f_co``).

Re-initialisation calls each layer's own ``reset_parameters()`` (its initial distribution, as in Adebayo et al.),
seeded per layer from ``(random_state, layer position)`` (the last step of the cascade is the full randomisation); Xplique draws ``uniform[0, 1)`` weights instead. A *layer* is a module
with parameters of its own and a ``reset_parameters`` method, in ``model.modules()`` order (the forward order of
sequential models and Hugging Face transformers); the trained model is never modified (a deep copy is).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from xaimetrics._validation import Kind, invalid, validate_params
from xaimetrics.fidelity._base import RANDOM_STATE, is_text
from xaimetrics.fidelity._outputs import model_outputs
from xaimetrics.fidelity._similarity import correlation_spearman
from xaimetrics.fidelity._tensor import model_device

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["CascadingRandomization", "ModelRandomization", "RandomLogit", "randomizable_layers"]

#: ``explain(model, inputs, targets) -> explanations`` (an array ``(n, ...)`` or one 1-D array per text)
Explain = Callable[[torch.nn.Module, object, torch.Tensor], object]
Similarity = Callable[[np.ndarray, np.ndarray], np.ndarray]


def randomizable_layers(model: torch.nn.Module) -> list[str]:
    """Names of the modules that own parameters and can re-initialise them, in ``model.modules()`` order.

    Example:
        >>> model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
        >>> randomizable_layers(model)
        ['0', '2']
    """
    return [
        name
        for name, module in model.named_modules()
        if callable(getattr(module, "reset_parameters", None))
        and any(True for _ in module.parameters(recurse=False))
    ]


def _reset(model: torch.nn.Module, names: Sequence[str], random_state: int) -> None:
    """Re-initialise the named layers; layer ``j`` of :func:`randomizable_layers` is seeded by ``(random_state, j)``.

    Each layer's draw depends only on its own seed, so a layer gets the same weights whether it is re-initialised
    alone, with every layer, or at one step of the cascade; the global torch generator is left as it was.
    """
    modules = dict(model.named_modules())
    position = {name: j for j, name in enumerate(randomizable_layers(model))}
    with torch.random.fork_rng(devices=[]):
        for name in names:
            seed = int(np.random.default_rng([random_state, position[name]]).integers(2**62))
            torch.manual_seed(seed)
            modules[name].reset_parameters()


def _numpy(value: object) -> np.ndarray:
    detach = getattr(value, "detach", None)
    if callable(detach):
        value = detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def _rows(explanations: object, n: int, owner: str) -> np.ndarray | list[np.ndarray]:
    """Explanations as a float64 ``(n, features)`` array, or one flat array per sample (texts)."""
    if isinstance(explanations, list | tuple):
        rows = [_numpy(row).reshape(-1) for row in explanations]
        if len(rows) != n:
            raise invalid(
                "explain", owner, f"a function returning one explanation per input ({n})", f"{len(rows)}"
            )
        return rows
    array = _numpy(explanations)
    if array.ndim < 1 or array.shape[0] != n:
        raise invalid(
            "explain", owner, f"a function returning one explanation per input ({n})", f"shape {array.shape}"
        )
    return array.reshape(n, -1)


def _compare(first: object, second: object, similarity: Similarity, n: int, owner: str) -> np.ndarray:
    """Similarity of each sample's two explanations, float64 ``(n,)`` (vectorised when rows have one length)."""
    a, b = _rows(first, n, owner), _rows(second, n, owner)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.asarray(similarity(a, b), dtype=np.float64)
    out = np.empty(n)
    for i, (row_a, row_b) in enumerate(zip(a, b, strict=True)):
        if row_a.shape != row_b.shape:
            raise invalid(
                "explain",
                owner,
                "explanations of the same length for both models",
                f"{row_a.shape} and {row_b.shape} for input {i}",
            )
        out[i] = similarity(row_a[None], row_b[None])[0]
    return out


class _RandomizationCheck:
    """Inputs, targets and the explanation function shared by the randomisation checks."""

    higher_is_better = False

    @property
    def _owner(self) -> str:
        """The public class name, shown in error messages."""
        return type(self).__name__

    @validate_params(
        {
            "model": Kind(torch.nn.Module, "a torch.nn.Module (its weights are re-initialised)"),
            "similarity": Kind(callable, "a callable (a, b) -> one value per row"),
            "random_state": RANDOM_STATE,
        }
    )
    def __init__(
        self,
        model: torch.nn.Module,
        inputs: ArrayLike | Sequence[str],
        targets: ArrayLike | None = None,
        *,
        similarity: Similarity = correlation_spearman,
        random_state: int = 0,
    ) -> None:
        self.model = model
        self.inputs = inputs
        self.similarity = similarity
        self.random_state = random_state
        self.n_samples = len(inputs) if is_text(inputs) else int(np.shape(inputs)[0])
        self._outputs: torch.Tensor | None = None
        self.targets = self._targets(targets)

    def _model_outputs(self) -> torch.Tensor:
        if self._outputs is None:
            if is_text(self.inputs):
                raise invalid(
                    "targets",
                    self._owner,
                    "class indices (n,) for text inputs",
                    None,
                    "Pass the predicted classes.",
                )
            with torch.no_grad():
                x = (
                    self.inputs
                    if isinstance(self.inputs, torch.Tensor)
                    else torch.as_tensor(np.asarray(self.inputs))
                )
                x = x.to(model_device(self.model))
                self._outputs = model_outputs(self.model, x).detach().cpu()
        return self._outputs

    def _targets(self, targets: ArrayLike | None) -> torch.Tensor:
        if targets is None:
            return self._model_outputs().argmax(dim=1)
        y = torch.as_tensor(
            np.asarray(targets.detach().cpu() if isinstance(targets, torch.Tensor) else targets)
        )
        if y.ndim == 2:
            y = y.argmax(dim=1)
        if (
            y.ndim != 1
            or y.shape[0] != self.n_samples
            or (y.is_floating_point() and not torch.equal(y, y.round()))
        ):
            raise invalid(
                "targets",
                self._owner,
                f"{self.n_samples} class indices or one-hot rows",
                f"shape {tuple(y.shape)}",
            )
        return y.long()

    def _explain(self, explain: Explain, model: torch.nn.Module, targets: torch.Tensor) -> object:
        if not callable(explain):
            raise invalid(
                "explain", self._owner, "a callable explain(model, inputs, targets)", type(explain).__name__
            )
        return explain(model, self.inputs, targets)


class ModelRandomization(_RandomizationCheck):
    """Similarity between explanations of the trained and of a re-initialised model (lower is better).

    Args:
        model: the trained ``torch.nn.Module`` (left untouched: a copy is re-initialised).
        inputs: tensor inputs ``(n, ...)``, texts, or concept activations ``(n, k)``.
        targets: class indices ``(n,)`` or one-hot rows; ``None``: the predicted class (tensors only).
        layers: which layers to re-initialise: ``None`` all of them, a fraction in ]0, 1] of the layers counted
            from the output (Xplique's ``ProgressiveLayerRandomization(stop_layer)``), or a list of layer names
            (:func:`randomizable_layers`).
        similarity: ``(a, b) -> (n,)``; Spearman by default.
        random_state: seed of the re-initialisation.

    Example:
        >>> from xaimetrics.fidelity import attribute
        >>> _ = torch.manual_seed(0)
        >>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).eval()
        >>> saliency = lambda m, x, y: attribute(m, x, "saliency", y)
        >>> round(ModelRandomization(model, torch.randn(5, 4)).evaluate(saliency), 4)
        0.08
    """

    def __init__(
        self,
        model: torch.nn.Module,
        inputs: ArrayLike | Sequence[str],
        targets: ArrayLike | None = None,
        layers: float | Sequence[str] | None = None,
        *,
        similarity: Similarity = correlation_spearman,
        random_state: int = 0,
    ) -> None:
        super().__init__(model, inputs, targets, similarity=similarity, random_state=random_state)
        available = randomizable_layers(model)
        if not available:
            raise invalid("model", self._owner, "a model with layers that have reset_parameters()", "none")
        if layers is None:
            chosen = available
        elif isinstance(layers, bool | str):
            raise invalid(
                "layers", self._owner, "None, a fraction in ]0, 1] or a list of layer names", layers
            )
        elif isinstance(layers, float | int):
            if not 0 < layers <= 1:
                raise invalid(
                    "layers", self._owner, "None, a fraction in ]0, 1] or a list of layer names", layers
                )
            chosen = available[len(available) - max(1, int(len(available) * layers)) :]
        else:
            unknown = [name for name in layers if name not in available]
            if unknown or not layers:
                raise invalid(
                    "layers",
                    self._owner,
                    "names among randomizable_layers(model): "
                    + ", ".join(available[:8])
                    + ("…" if len(available) > 8 else ""),
                    unknown or "an empty list",
                )
            chosen = list(layers)
        self.layers = chosen

    def randomized_model(self) -> torch.nn.Module:
        """A copy of the model with :attr:`layers` re-initialised (seeded by ``random_state``)."""
        copied = copy.deepcopy(self.model)
        _reset(copied, self.layers, self.random_state)
        return copied

    def evaluate_samples(self, explain: Explain) -> np.ndarray:
        """Similarity per input, float64 ``(n_samples,)``."""
        original = self._explain(explain, self.model, self.targets)
        randomized = self._explain(explain, self.randomized_model(), self.targets)
        return _compare(original, randomized, self.similarity, self.n_samples, self._owner)

    def evaluate(self, explain: Explain) -> float:
        """Mean similarity over the inputs whose similarity is defined (lower is better)."""
        return _mean(self.evaluate_samples(explain))


class RandomLogit(_RandomizationCheck):
    """Similarity between the explanation of the target class and of a random other class (lower is better).

    The other class is drawn uniformly among the ``n_classes − 1`` others, per input, from a generator seeded by
    ``random_state``. Arguments as :class:`ModelRandomization` without ``layers``, plus ``n_classes`` (default:
    the model's output width on tensor inputs, ``model.config.num_labels`` for Hugging Face models).

    Example:
        >>> model = torch.nn.Linear(4, 3, bias=False).eval()
        >>> _ = model.weight.data.copy_(torch.tensor([[1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0]]))
        >>> weights = lambda m, x, y: m.weight[y].detach()  # the gradient of a linear model
        >>> RandomLogit(model, torch.ones(2, 4), targets=[0, 0], random_state=1).evaluate_samples(weights).round(6).tolist()
        [-1.0, 1.0]
    """

    def __init__(
        self,
        model: torch.nn.Module,
        inputs: ArrayLike | Sequence[str],
        targets: ArrayLike | None = None,
        n_classes: int | None = None,
        *,
        similarity: Similarity = correlation_spearman,
        random_state: int = 0,
    ) -> None:
        super().__init__(model, inputs, targets, similarity=similarity, random_state=random_state)
        if n_classes is None:
            config_labels = getattr(getattr(model, "config", None), "num_labels", None)
            n_classes = (
                int(config_labels) if config_labels is not None else int(self._model_outputs().shape[1])
            )
        if isinstance(n_classes, bool) or not isinstance(n_classes, int) or n_classes < 2:
            raise invalid("n_classes", self._owner, "an integer ≥ 2 (another class must exist)", n_classes)
        if int(self.targets.max()) >= n_classes or int(self.targets.min()) < 0:
            raise invalid(
                "targets", self._owner, f"class indices in [0, {n_classes - 1}]", int(self.targets.max())
            )
        self.n_classes = n_classes
        draw = np.random.default_rng(random_state).integers(0, n_classes - 1, size=self.n_samples)
        other = torch.from_numpy(draw)
        self.other_targets = torch.where(other >= self.targets, other + 1, other)

    def evaluate_samples(self, explain: Explain) -> np.ndarray:
        """Similarity per input, float64 ``(n_samples,)``."""
        original = self._explain(explain, self.model, self.targets)
        other = self._explain(explain, self.model, self.other_targets)
        return _compare(original, other, self.similarity, self.n_samples, self._owner)

    def evaluate(self, explain: Explain) -> float:
        """Mean similarity over the inputs whose similarity is defined (lower is better)."""
        return _mean(self.evaluate_samples(explain))


class CascadingRandomization(ModelRandomization):
    """Layers re-initialised cumulatively from the output down; one similarity per step (lower is better).

    Step ``j`` re-initialises the ``j`` last layers of :attr:`layers` (all layers by default); the result maps
    the name of the last layer re-initialised to the per-input similarities. Arguments as
    :class:`ModelRandomization`.

    Example:
        >>> from xaimetrics.fidelity import attribute
        >>> _ = torch.manual_seed(0)
        >>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).eval()
        >>> saliency = lambda m, x, y: attribute(m, x, "saliency", y)
        >>> steps = CascadingRandomization(model, torch.randn(5, 4)).evaluate(saliency)
        >>> {layer: round(value, 4) for layer, value in steps.items()}
        {'2': 0.04, '0': 0.08}
    """

    def evaluate_samples(self, explain: Explain) -> dict[str, np.ndarray]:  # type: ignore[override]
        """Per layer (output first), the similarity per input, float64 ``(n_samples,)``."""
        original = self._explain(explain, self.model, self.targets)
        copied = copy.deepcopy(self.model)
        result: dict[str, np.ndarray] = {}
        for name in reversed(self.layers):
            _reset(copied, [name], self.random_state)
            randomized = self._explain(explain, copied, self.targets)
            result[name] = _compare(original, randomized, self.similarity, self.n_samples, self._owner)
        return result

    def evaluate(self, explain: Explain) -> dict[str, float]:  # type: ignore[override]
        """Per layer (output first), the mean similarity."""
        return {name: _mean(values) for name, values in self.evaluate_samples(explain).items()}


def _mean(values: np.ndarray) -> float:
    return float(np.nanmean(values)) if not np.isnan(values).all() else float("nan")
