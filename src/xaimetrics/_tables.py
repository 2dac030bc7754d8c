"""Markdown tables of ``pandas`` frames, one writer for every report (benchmark, detection, studies)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["markdown_table"]


def _cell(value: object, missing: str) -> str:
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, float):
        text = missing if math.isnan(value) else f"{value:.3f}"
    else:
        text = str(value)
    return text.replace("|", "\\|")


def markdown_table(frame: pd.DataFrame, *, index: bool = True, missing: str = "—") -> str:
    """A GitHub-flavoured Markdown table: floats with three decimals, booleans yes/no, ``missing`` for NaN,
    ``|`` in cells escaped; with ``index``, the frame's index is the first column.

    Example:
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"rank": [1, 2], "auc": [0.91234, float("nan")]}, index=pd.Index(["NMF", "A|B"], name="method"))
        >>> print(markdown_table(frame))
        | method | rank | auc |
        |---|---|---|
        | NMF | 1 | 0.912 |
        | A\\|B | 2 | — |
        >>> print(markdown_table(frame, index=False, missing=""))
        | rank | auc |
        |---|---|
        | 1 | 0.912 |
        | 2 |  |
    """
    table = frame.reset_index() if index else frame
    header = [str(c).replace("|", "\\|") for c in table.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in table.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v, missing) for v in row) + " |")
    return "\n".join(lines)
