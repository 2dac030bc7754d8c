"""Reading and replacing module outputs inside a forward pass (hooks), and small model/array helpers."""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import torch
from torch import nn

from xaimetrics._validation import invalid

__all__ = [
    "as_float_tensor",
    "first_tensor",
    "last_layer_name",
    "positions_from_input_ids",
    "replace_first_tensor",
    "transformer_layers",
]


def first_tensor(output: object) -> torch.Tensor:
    """The main tensor of a module output (a tensor, a tuple starting with one, or a ``ModelOutput``)."""
    if isinstance(output, torch.Tensor):
        return output
    if isinstance(output, tuple | list | Mapping) and len(output) and isinstance(output[0], torch.Tensor):
        return output[0]
    raise invalid("split", "SplitClassifier", "a module that outputs a tensor", type(output).__name__)


def replace_first_tensor(output: object, tensor: torch.Tensor) -> object:
    """``output`` (a module's output, as :func:`first_tensor` reads it) with its main tensor replaced by
    ``tensor``, in the same container type."""
    if isinstance(output, torch.Tensor):
        return tensor
    if isinstance(output, Mapping):  # a transformers ModelOutput
        first = next(iter(output))
        return type(output)(**{**output, first: tensor})
    if isinstance(output, tuple | list):
        return type(output)([tensor, *output[1:]])
    return first_tensor(output)  # raises: not an output first_tensor reads


def as_float_tensor(activations: object, owner: str) -> torch.Tensor:
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


def transformer_layers(model: nn.Module) -> list[str]:
    """The module names of the model's transformer blocks, input side first: the entries of its longest
    ``torch.nn.ModuleList`` (``bert.encoder.layer.0`` … for BERT, ``model.layers.0`` … for Llama); ``[]`` without one.

    Example:
        >>> net = nn.Sequential(nn.Embedding(5, 4), nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)]), nn.Linear(4, 2))
        >>> transformer_layers(net)
        ['1.0', '1.1']
    """
    lists = [(name, module) for name, module in model.named_modules() if isinstance(module, nn.ModuleList)]
    if not lists:
        return []
    name, blocks = max(lists, key=lambda item: len(item[1]))
    prefix = f"{name}." if name else ""
    return [f"{prefix}{i}" for i in range(len(blocks))]


def positions_from_input_ids(model: nn.Module) -> bool:
    """True for models that derive positions from the token ids, skipping padding (RoBERTa-style embeddings):
    they handle left padding themselves and must not be given explicit ``position_ids``."""
    return any(hasattr(module, "create_position_ids_from_input_ids") for module in model.modules())
