"""Detection tables as Markdown and HTML (no extra dependency: pandas' ``to_markdown`` needs ``tabulate``)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["markdown_table", "write_detection_report"]


def _cell(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "" if value != value else f"{value:.3f}"  # NaN → empty
    return str(value).replace("|", "\\|")


def markdown_table(frame: pd.DataFrame) -> str:
    """A pipe table of a DataFrame (floats with 3 decimals, NaN empty, booleans yes/no).

    Example:
        >>> import pandas as pd
        >>> print(markdown_table(pd.DataFrame({"concept": [0], "auroc": [0.91234], "legible": [True]})))
        | concept | auroc | legible |
        |---|---|---|
        | 0 | 0.912 | yes |
    """
    columns = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines)


def write_detection_report(
    directory: str | Path, title: str, sections: Sequence[tuple[str, str, pd.DataFrame]]
) -> dict[str, Path]:
    """Write ``detection.md`` and ``detection.html``: each section is ``(heading, sentence, table)``."""
    directory = Path(directory)
    md = [f"# {title}", ""]
    body = [f"<h1>{html.escape(title)}</h1>"]
    for heading, sentence, table in sections:
        md += [f"## {heading}", "", sentence, "", markdown_table(table), ""]
        body += [f"<h2>{html.escape(heading)}</h2>", f"<p>{html.escape(sentence)}</p>",
                 table.to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep="", escape=True)]  # fmt: skip
    paths = {"report_md": directory / "detection.md", "report_html": directory / "detection.html"}
    paths["report_md"].write_text("\n".join(md), encoding="utf-8")
    style = "body{font-family:sans-serif;max-width:70em;margin:auto}table{border-collapse:collapse}td,th{padding:2px 8px}"
    paths["report_html"].write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{style}</style></head><body>{''.join(body)}</body></html>",
        encoding="utf-8",
    )
    return paths
