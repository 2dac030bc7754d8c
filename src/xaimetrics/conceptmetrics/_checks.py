"""Checks shared by the PyC-style concept metrics (CaCE, interventions, TCAV, NEC/NCC, completeness)."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from numpy.typing import ArrayLike

from xaimetrics._validation import caller, invalid
from xaimetrics.conceptmetrics._annotations import Annotations

__all__ = ["as_tensor", "check_2d", "concept_groups"]


def as_tensor(value: ArrayLike, name: str) -> torch.Tensor:
    """``value`` as a floating-point tensor (numpy arrays and nested lists are converted)."""
    owner = caller()
    if isinstance(value, torch.Tensor):
        return value if value.is_floating_point() else value.double()
    try:
        tensor = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError):
        raise invalid(name, owner, "a tensor or an array of numbers", type(value).__name__) from None
    return tensor if tensor.is_floating_point() else tensor.double()


def check_2d(value: ArrayLike, name: str, *, columns: int | None = None) -> torch.Tensor:
    """A non-empty, finite, floating-point tensor of shape ``(rows, columns)``.

    NaN is refused: a NaN weight or activation would be read as zero by ``|x| > threshold`` and a NaN gradient
    as "not positive", silently.
    """
    owner = caller()
    tensor = as_tensor(value, name)
    if tensor.ndim != 2 or tensor.shape[0] == 0 or (columns is not None and tensor.shape[1] != columns):
        shape = f"(rows, {columns})" if columns is not None else "(rows, columns)"
        raise invalid(name, owner, f"a non-empty 2-D tensor of shape {shape}", f"shape {tuple(tensor.shape)}")
    finite = torch.isfinite(tensor)
    if not bool(finite.all()):
        row = int((~finite).any(dim=1).nonzero()[0, 0])
        raise invalid(name, owner, "finite values", f"NaN or infinity in row {row}")
    return tensor


def concept_groups(cardinalities: Sequence[int] | Annotations | None, n_columns: int) -> torch.Tensor | None:
    """For each of ``n_columns`` weight columns, the concept it belongs to (``None``: one concept per column).

    ``cardinalities`` lists how many columns each concept spans (1 for binary / continuous, ``m`` for an
    ``m``-state categorical concept), or is an :class:`Annotations` whose cardinalities are used.
    """
    owner = caller()
    if cardinalities is None:
        return None
    if isinstance(cardinalities, Annotations) or hasattr(cardinalities, "cardinalities"):
        cardinalities = list(getattr(cardinalities, "cardinalities"))  # noqa: B009 (PyC's Annotations too)
    if isinstance(cardinalities, str) or not isinstance(cardinalities, Sequence) or not cardinalities:
        raise invalid(
            "cardinalities", owner, "a non-empty list of positive integers or an Annotations", cardinalities
        )
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in cardinalities):
        raise invalid("cardinalities", owner, "a list of positive integers", list(cardinalities))
    if sum(cardinalities) != n_columns:
        raise invalid(
            "cardinalities",
            owner,
            f"counts summing to the {n_columns} weight columns",
            f"{list(cardinalities)} (sum {sum(cardinalities)})",
            "List one count per concept, in column order.",
        )
    return torch.repeat_interleave(torch.arange(len(cardinalities)), torch.tensor(list(cardinalities)))
