"""Detection's report: each section a heading, a sentence and a table, written as ``detection.md`` and
``detection.html`` by the report toolkit (:class:`~xaimetrics._reporting.Document`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from xaimetrics._reporting import Document, Section, Table

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["detection_document", "write_detection_report"]


def detection_document(title: str, sections: Sequence[tuple[str, str, pd.DataFrame]]) -> Document:
    """The report of ``(heading, sentence, table)`` sections (missing values left blank).

    Example:
        >>> import pandas as pd
        >>> page = detection_document("Detection", [("Scores", "AUROC per concept.", pd.DataFrame({"auroc": [0.75, None]}))])
        >>> print(page.markdown())
        # Detection
        <BLANKLINE>
        ## Scores
        <BLANKLINE>
        AUROC per concept.
        <BLANKLINE>
        | auroc |
        |---|
        | 0.750 |
        |  |
        <BLANKLINE>
    """
    return Document(
        title,
        [
            Section(heading, [sentence, Table(table, index=False, missing="")])
            for heading, sentence, table in sections
        ],
    )


def write_detection_report(
    directory: str | Path, title: str, sections: Sequence[tuple[str, str, pd.DataFrame]]
) -> dict[str, Path]:
    """Write ``detection.md`` and ``detection.html`` into ``directory``; return them as ``report_md`` and
    ``report_html``."""
    paths = detection_document(title, sections).save(directory, "detection")
    return {"report_md": paths["markdown"], "report_html": paths["html"]}
