"""Plot insertion/deletion curves (matplotlib, imported lazily)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from xaimetrics._metric_entries import METRICS
from xaimetrics._optional import import_optional
from xaimetrics._validation import invalid
from xaimetrics.fidelity._insertion_deletion import Curves

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_curves"]


def plot_curves(
    curves: Curves | Mapping[str, Curves],
    ax: Axes | None = None,
    *,
    show_samples: bool = False,
    n_points: int = 101,
) -> Axes:
    """Draw the mean curve of one or several methods (their AUC in the legend) on a matplotlib axis.

    Args:
        curves: a :class:`Curves` or a mapping ``{method name: Curves}`` to compare methods.
        ax: the axis to draw on (default: a new figure).
        show_samples: also draw every sample's curve, faintly.
        n_points: points of the mean curve (each curve is interpolated on its own x-range).

    Returns:
        The matplotlib ``Axes``.

    Example:
        >>> import numpy as np
        >>> c = Curves("deletion", [np.array([0, 1, 2])], [np.array([0.0, 0.5, 1.0])],
        ...            [np.array([1.0, 0.4, 0.0])], np.array([0.45]))
        >>> ax = plot_curves({"saliency": c})
        >>> ax.get_legend().get_texts()[0].get_text(), ax.get_title()
        ('saliency (AUC 0.450)', 'Deletion: lower AUC is better')
    """
    import_optional("matplotlib", extra="report", caller="plot_curves")
    import matplotlib.pyplot as plt

    series = {"explanation": curves} if isinstance(curves, Curves) else dict(curves)
    if not series or not all(isinstance(c, Curves) for c in series.values()):
        raise invalid(
            "curves", "plot_curves", "a Curves object or a non-empty mapping of name to Curves", curves
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5))
    for name, c in series.items():
        grid, mean = c.mean_curve(n_points)
        (line,) = ax.plot(grid, mean, label=f"{name} (AUC {c.auc.mean():.3f})")
        if show_samples:
            for fractions, scores in zip(c.fractions, c.scores, strict=True):
                ax.plot(fractions, scores, color=line.get_color(), alpha=0.15, linewidth=0.8)
    kinds = {c.kind for c in series.values()}
    verb = "inserted" if kinds == {"insertion"} else "deleted" if kinds == {"deletion"} else "perturbed"
    ax.set_xlabel(f"fraction of features {verb}")
    ax.set_ylabel("score")
    if len(kinds) == 1:  # the direction as the metric registry states it
        info = METRICS.get(next(iter(kinds)))
        ax.set_title(f"{next(iter(kinds)).capitalize()}: {info.direction} AUC is better")
    ax.set_xlim(left=0.0)
    ax.legend()
    return ax
