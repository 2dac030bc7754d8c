"""The metric registry as a table: :func:`metrics` (a DataFrame) and :func:`metrics_table` (Markdown)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xaimetrics._metric_entries import METRICS
from xaimetrics._metric_registry import COLUMNS, FAMILIES, MetricInfo
from xaimetrics._validation import invalid

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["metrics", "metrics_table"]


def _entries(family: str | None) -> list[tuple[MetricInfo, str]]:
    if family is not None and family not in FAMILIES:
        raise invalid("family", "metrics", f"one of {', '.join(FAMILIES)}", family)
    return [(e.value, e.description) for e in METRICS.entries() if family is None or e.value.family == family]


def metrics(family: str | None = None) -> pd.DataFrame:
    """Every registered metric as a DataFrame, one row per metric (columns: :data:`COLUMNS`).

    Args:
        family: keep one family's metrics (``"fidelity"``, ``"conceptmetrics"``, ...); ``None`` for all.

    Example:
        >>> table = metrics("fidelity")
        >>> table.set_index("name").loc["deletion", ["direction", "range", "category"]].tolist()
        ['lower', '[0, 1]', 'faithfulness']
    """
    import pandas as pd

    return pd.DataFrame(
        [info.row(description) for info, description in _entries(family)], columns=list(COLUMNS)
    )


def metrics_table(family: str | None = None, *, columns: tuple[str, ...] = COLUMNS[:-2]) -> str:
    """The registry as a Markdown table (the ``xaimetrics metrics`` listing and ``docs/metrics.md``).

    Example:
        >>> print(metrics_table("consim", columns=("name", "direction", "range")).splitlines()[2])
        | consim_accuracy | higher | [0, 1] |
    """
    for column in columns:
        if column not in COLUMNS:
            raise invalid("columns", "metrics_table", f"names among {', '.join(COLUMNS)}", column)
    rows = [info.row(description) for info, description in _entries(family)]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = [f"`{row[c]}`" if c == "callables" else str(row[c]) for c in columns]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)
