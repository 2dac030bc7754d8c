"""Device selection."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xaimetrics._typing import DeviceLike
from xaimetrics._validation import invalid

if TYPE_CHECKING:
    import torch

__all__ = ["resolve_device"]


def resolve_device(device: DeviceLike = "auto", owner: str = "this function") -> torch.device:
    """Turn ``"auto"`` into the best available device (CUDA, then MPS, then CPU) and validate the rest.

    Example:
        >>> resolve_device("cpu")
        device(type='cpu')
    """
    import torch

    if isinstance(device, torch.device):
        return device
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise invalid(
            "device", owner, "'auto', 'cpu', 'cuda', 'cuda:N', 'mps' or a torch.device", device
        ) from error
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise invalid(
            "device", owner, "an available device", device, "No CUDA GPU is visible; use 'cpu' or 'auto'."
        )
    return resolved
