"""Reading and replacing the output of a module inside a forward pass (hooks), and small array helpers."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from xaimetrics._validation import invalid

__all__ = [
    "as_float_tensor",
    "first_tensor",
    "last_layer_name",
    "replace_first_tensor",
    "run_with_replaced_output",
]


def run_with_replaced_output(
    model: nn.Module,
    module_name: str,
    batches: Iterable[tuple[np.ndarray, dict[str, torch.Tensor]]],
    rows: Sequence[torch.Tensor],
    *,
    sequence: bool,
) -> torch.Tensor:
    """Logits of ``model`` with the output of ``module_name`` replaced, batch by batch, shape ``(n, c)``.

    ``rows[i]`` is the replacement for text ``i``: shape ``(n_tokens_i, p)`` when the module outputs one
    vector per token (``sequence=True``; padding positions keep the module's own output, so the result is
    exactly the model's when ``rows`` are the module's outputs), else ``(p,)``. Autograd flows to ``rows``
    when the caller enables it.
    """
    out: list[torch.Tensor | None] = [None] * len(rows)
    current: dict[str, Any] = {}

    def hook(_module: nn.Module, _args: Any, output: Any) -> Any:
        raw = first_tensor(output)
        if sequence:
            replaced = torch.where(current["mask"][..., None], current["values"].to(raw.dtype), raw)
        else:
            replaced = current["values"].to(raw.dtype)
        return replace_first_tensor(output, replaced)

    handle = model.get_submodule(module_name).register_forward_hook(hook)
    try:
        for indices, batch in batches:
            device = batch["input_ids"].device
            chosen = [rows[i].to(device) for i in indices]
            current["mask"] = batch["attention_mask"].bool()
            current["values"] = (
                nn.utils.rnn.pad_sequence(chosen, batch_first=True)
                if sequence
                else torch.stack(chosen, dim=0)
            )
            logits = model(**batch, return_dict=True).logits.float().cpu()
            for row, index in enumerate(indices):
                out[index] = logits[row]
    finally:
        handle.remove()
    return torch.stack(out, dim=0)  # type: ignore[arg-type]


def first_tensor(output: Any) -> torch.Tensor:
    """The main tensor of a module output (a tensor, a tuple starting with one, or a ``ModelOutput``)."""
    if isinstance(output, torch.Tensor):
        return output
    if isinstance(output, tuple | list | Mapping) and len(output) and isinstance(output[0], torch.Tensor):
        return output[0]
    raise invalid("split", "SplitClassifier", "a module that outputs a tensor", type(output).__name__)


def replace_first_tensor(output: Any, tensor: torch.Tensor) -> Any:
    """``output`` with its main tensor replaced by ``tensor`` (same container type)."""
    if isinstance(output, torch.Tensor):
        return tensor
    if isinstance(output, Mapping):  # a transformers ModelOutput
        first = next(iter(output))
        return type(output)(**{**output, first: tensor})
    return type(output)([tensor, *output[1:]])


def as_float_tensor(activations: Any, owner: str) -> torch.Tensor:
    """A float32 tensor from a tensor (kept in the autograd graph) or an array-like."""
    if isinstance(activations, torch.Tensor):
        return activations if activations.dtype == torch.float32 else activations.float()
    try:
        return torch.from_numpy(np.asarray(activations, dtype=np.float32))
    except (TypeError, ValueError) as error:
        raise invalid(
            "activations", owner, "a numpy array or torch tensor of floats", type(activations).__name__
        ) from error


def last_layer_name(model: nn.Module) -> str:
    """The name of the last numbered transformer block (e.g. ``bert.encoder.layer.5``), for suggestions."""
    numbered = [name for name, _ in model.named_modules() if re.search(r"\.(layer|layers|h)\.\d+$", name)]
    return numbered[-1] if numbered else "<module name>"
