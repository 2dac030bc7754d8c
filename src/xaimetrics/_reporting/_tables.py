"""Tables of ``pandas`` frames in Markdown and HTML, one pair of writers for every report.

pandas' own ``to_markdown`` needs ``tabulate``; ours has no extra dependency and writes every cell the same way:
floats with three decimals, booleans yes/no, a ``missing`` mark for NaN, ``|`` escaped.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["html_table", "markdown_table"]


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


def html_table(frame: pd.DataFrame, *, index: bool = True, missing: str = "—") -> str:
    """The same table in HTML (cells escaped by pandas, floats with three decimals, ``missing`` for NaN).

    Example:
        >>> import pandas as pd
        >>> [line.strip() for line in html_table(pd.DataFrame({"p": [0.01234, None]}), index=False).splitlines()][8:12]
        ['<td>0.012</td>', '</tr>', '<tr>', '<td>—</td>']
    """
    table = frame.reset_index() if index else frame
    return table.to_html(
        index=False, escape=True, float_format=lambda v: f"{v:.3f}", na_rep=missing, border=0
    )
