"""The report and tracking toolkit below every family: one document model, one writer per format.

- :mod:`._document`: a report as :class:`Section` s of paragraphs, :class:`Bullets`, :class:`Table` s and
  :class:`Figure` s, rendered to Markdown and HTML (every value escaped) and saved as pages (:class:`Document`,
  :func:`write_outputs`);
- :mod:`._tables`: :func:`markdown_table` and :func:`html_table`, the cells written the same way in both;
- :mod:`._templates`: the jinja2 environments of the families' own report templates (:func:`render_template`);
- :mod:`._figures`: matplotlib on its file backend, PNG files beside the pages (:func:`pyplot`, :func:`save_figure`);
- :mod:`._sections`: the report sections that families above ``benchmark`` register (:data:`REPORT_SECTIONS`).

Experiment tracking (MLflow, Weights & Biases) is the ``tracking`` family's one :class:`~xaimetrics.tracking.Tracker`
interface, with :func:`~xaimetrics.tracking.log_run` for a run of metrics and files.
"""

from xaimetrics._reporting._document import (
    Block,
    Bullets,
    Document,
    Figure,
    Section,
    Table,
    inline_html,
    report_section,
    write_outputs,
)
from xaimetrics._reporting._figures import pyplot, save_figure
from xaimetrics._reporting._sections import REPORT_SECTIONS, ReportSection, report_sections
from xaimetrics._reporting._tables import html_table, markdown_table
from xaimetrics._reporting._templates import render_template

__all__ = [
    "REPORT_SECTIONS",
    "Block",
    "Bullets",
    "Document",
    "Figure",
    "ReportSection",
    "Section",
    "Table",
    "html_table",
    "inline_html",
    "markdown_table",
    "pyplot",
    "render_template",
    "report_section",
    "report_sections",
    "save_figure",
    "write_outputs",
]
