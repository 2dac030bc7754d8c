"""Detection tables as Markdown and HTML (no extra dependency: pandas' ``to_markdown`` needs ``tabulate``)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

from xaimetrics._tables import markdown_table

__all__ = ["write_detection_report"]


def write_detection_report(
    directory: str | Path, title: str, sections: Sequence[tuple[str, str, pd.DataFrame]]
) -> dict[str, Path]:
    """Write ``detection.md`` and ``detection.html``: each section is ``(heading, sentence, table)``."""
    directory = Path(directory)
    md = [f"# {title}", ""]
    body = [f"<h1>{html.escape(title)}</h1>"]
    for heading, sentence, table in sections:
        md += [f"## {heading}", "", sentence, "", markdown_table(table, index=False, missing=""), ""]
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
