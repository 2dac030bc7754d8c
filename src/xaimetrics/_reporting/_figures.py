"""The reports' figures: matplotlib (the ``report`` extra) on its file backend, saved as PNG files beside the pages
and shown there by :class:`~xaimetrics._reporting.Figure`."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from xaimetrics._optional import import_optional

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["pyplot", "save_figure"]


def pyplot(caller: str) -> ModuleType:
    """``matplotlib.pyplot`` on the Agg backend (files only, no window), or an error naming ``caller`` and the
    ``report`` extra when matplotlib is missing."""
    matplotlib = import_optional("matplotlib", extra="report", caller=caller)
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure: Figure, path: str | Path, *, dpi: int = 110) -> Path:
    """Lay ``figure`` out, save it as a PNG file at ``path`` (its folder created), close it, return the path.

    Example:
        >>> import tempfile
        >>> plt = pyplot("an example")
        >>> figure, ax = plt.subplots()
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     save_figure(figure, Path(folder) / "plot.png").stat().st_size > 0
        True
    """
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=dpi)
    plt.close(figure)
    return path
