"""Arrays or tensors, read without importing torch: the numpy/torch conversions the concept modules and the
detection family share (a leaf; torch is looked up only where the caller already imported it)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch
    from typing_extensions import TypeIs

__all__ = ["is_tensor", "to_numpy"]


def is_tensor(value: object) -> TypeIs[torch.Tensor]:
    """True if ``value`` is a ``torch.Tensor`` (without importing torch when nobody has).

    Example:
        >>> is_tensor([1.0, 2.0]), to_numpy([[1, 2]]).shape
        (False, (1, 2))
    """
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def to_numpy(value: object) -> np.ndarray:
    """A numpy view or copy of an array-like (tensors are detached and moved to the CPU)."""
    if is_tensor(value):
        return value.detach().cpu().numpy()
    return np.asarray(value)
