"""The model-randomisation control (Adebayo et al., 2018; Heap et al., ICLR 2026): a copy with re-initialised weights.

An explanation method that says something about the *trained* classifier must say something different about a
classifier whose weights are random. :func:`randomized_copy` returns a copy of a classifier (a
:class:`~xaimetrics.models.SplitClassifier` or a bare ``torch.nn.Module``) whose weights are drawn again, leaving
the trained one untouched:

- ``layers="all"``: every weight (embeddings included) — Heap et al.'s "randomly initialised transformer";
- ``layers="top"``: Adebayo's *cascade*, from the logits down: the ``n_top`` topmost **units** in the order
  *head* (every module registered after the last transformer block: pooler, pre-classifier, classifier, final
  norm), then the transformer blocks from the last to the first, then the *embeddings* (everything registered
  before the first block). The blocks are the longest ``torch.nn.ModuleList`` of the model (``bert.encoder.layer``,
  ``distilbert.transformer.layer``, ``model.layers``…). ``n_top=1`` re-draws the head only.

Weights are drawn by the model's own initialiser when it has one (``PreTrainedModel._init_weights``: for BERT,
normal with ``config.initializer_range``, zero biases, unit LayerNorms), else each module's
``reset_parameters``; the draw is seeded by ``seed`` in a forked RNG (the caller's random state is unchanged),
so a seed gives the same copy every time. transformers marks loaded weights as initialised
(``_is_hf_initialized``) and its initialiser skips them: the marks are cleared on the copy first.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Literal, TypeVar

from xaimetrics._validation import check_choice, check_positive_int, check_seed, invalid

if TYPE_CHECKING:
    from torch import nn

__all__ = ["randomization_units", "randomized_copy"]

Layers = Literal["all", "top"]
T = TypeVar("T")


def randomization_units(model: nn.Module) -> list[tuple[str, list[str]]]:
    """The cascade's units from the top: ``[(unit name, [parameter names])]`` — head, blocks last to first,
    embeddings (module docstring). A model without a ``ModuleList`` of blocks has one unit, ``"all"``.

    Example:
        >>> import torch
        >>> net = torch.nn.Sequential(torch.nn.Embedding(5, 4), torch.nn.ModuleList([torch.nn.Linear(4, 4)] * 1),
        ...                           torch.nn.Linear(4, 2))
        >>> [(name, len(params)) for name, params in randomization_units(net)]
        [('head', 2), ('block 0', 2), ('embeddings', 1)]
    """
    from torch import nn

    lists = [(name, module) for name, module in model.named_modules() if isinstance(module, nn.ModuleList)]
    params = [name for name, _ in model.named_parameters()]
    if not lists:
        return [("all", params)]
    blocks_name, blocks = max(lists, key=lambda item: len(item[1]))
    order = [name for name, _ in model.named_modules()]
    prefix = f"{blocks_name}." if blocks_name else ""
    last_block = max(i for i, name in enumerate(order) if name == f"{prefix}{len(blocks) - 1}")
    position = {name: i for i, name in enumerate(order)}
    units: dict[str, list[str]] = {"head": []}
    for i in reversed(range(len(blocks))):
        units[f"block {i}"] = []
    units["embeddings"] = []
    for name in params:
        owner = name.rsplit(".", 1)[0] if "." in name else ""
        if name.startswith(prefix) and name[len(prefix) :].split(".", 1)[0].isdigit():
            units[f"block {int(name[len(prefix) :].split('.', 1)[0])}"].append(name)
        elif position.get(owner, -1) > last_block:
            units["head"].append(name)
        else:
            units["embeddings"].append(name)
    return [(unit, names) for unit, names in units.items() if names]


def _reinitialise(model: nn.Module, chosen: set[str], seed: int) -> None:
    import torch

    init = getattr(model, "_init_weights", None)
    devices = sorted({p.device.index or 0 for p in model.parameters() if p.device.type == "cuda"})
    with torch.random.fork_rng(devices=devices), torch.no_grad():
        torch.manual_seed(seed)
        for module_name, module in model.named_modules():
            own = {
                f"{module_name}.{n}" if module_name else n for n, _ in module.named_parameters(recurse=False)
            }
            if not own or not own <= chosen:
                continue
            for parameter in module.parameters(recurse=False):
                if hasattr(parameter, "_is_hf_initialized"):
                    parameter._is_hf_initialized = False
            if callable(init):
                init(module)
            elif hasattr(module, "reset_parameters"):
                module.reset_parameters()


def randomized_copy(model: T, layers: Layers = "all", *, n_top: int = 1, seed: int = 0) -> T:
    """A copy of ``model`` with re-initialised weights (all, or the ``n_top`` topmost units); see the module.

    Args:
        model: a :class:`~xaimetrics.models.SplitClassifier` (its ``model`` is copied; tokenizer, split and
            ReLU are kept) or a ``torch.nn.Module``.
        layers: ``"all"`` or ``"top"`` (the cascade from the logits down).
        n_top: with ``"top"``, how many units from the top (head, then blocks last to first, then embeddings).
        seed: seeds the draw (same seed, same copy).

    Returns:
        The copy; a SplitClassifier's ``metadata["randomized"]`` records the layers, units and seed.

    Example:
        >>> import torch
        >>> net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ModuleList([torch.nn.Linear(4, 4)]),
        ...                           torch.nn.Linear(4, 2))
        >>> twin = randomized_copy(net, "top", n_top=1, seed=0)
        >>> torch.equal(twin[0].weight, net[0].weight), torch.equal(twin[2].weight, net[2].weight)
        (True, False)
    """
    from torch import nn

    owner = "randomized_copy"
    layers = check_choice(layers, "layers", owner, ("all", "top"))
    n_top = check_positive_int(n_top, "n_top", owner)
    seed = check_seed(seed, "seed", owner)
    module = getattr(model, "model", model)
    if not isinstance(module, nn.Module):
        raise invalid("model", owner, "a SplitClassifier or a torch.nn.Module", type(model).__name__)
    units = randomization_units(module)
    if layers == "top" and n_top > len(units):
        raise invalid(
            "n_top", owner, f"at most {len(units)} (the units of this model: "
            + ", ".join(name for name, _ in units) + ")", n_top, "Use layers='all' to re-draw everything.",
        )  # fmt: skip
    chosen_units = units if layers == "all" else units[:n_top]
    twin = copy.deepcopy(module)
    _reinitialise(twin, {p for _, names in chosen_units for p in names}, seed)
    if module is model:
        return twin  # type: ignore[return-value]
    out = copy.copy(model)
    out.model = twin.eval()  # type: ignore[attr-defined]
    metadata = dict(getattr(model, "metadata", {}) or {})
    metadata["randomized"] = {"layers": layers, "units": [name for name, _ in chosen_units], "seed": seed}
    out.metadata = metadata  # type: ignore[attr-defined]
    return out
