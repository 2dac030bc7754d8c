"""Type aliases shared across xaimetrics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Union

import numpy as np

if TYPE_CHECKING:
    import torch

__all__ = ["Array", "DeviceLike", "Granularity", "Texts"]

#: A 2-D float array, numpy or torch. Functions that accept it return the same kind they were given.
Array = Union[np.ndarray, "torch.Tensor"]
#: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``, ``"auto"`` (the best available) or a ``torch.device``.
DeviceLike = Union[str, "torch.device"]
#: How token activations become one vector per text (or stay per token, or per word).
Granularity = Literal["cls", "last", "mean", "token", "word"]
Texts = Sequence[str]
