"""A report as a small document: sections of paragraphs, bullet lists, tables and figures, each block written once
and rendered to Markdown and to HTML (every value escaped), saved as ``<stem>.md`` and ``<stem>.html`` pages.

The document model is ours because the formats we write are two and simple (a Markdown file to read in a diff, an
HTML page to open in a browser): the cells come from :mod:`._tables`, the page around the HTML from one jinja2
template (:mod:`._templates`), the figures are matplotlib PNG files beside the pages (:mod:`._figures`).
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from xaimetrics._reporting._tables import html_table, markdown_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Block",
    "Bullets",
    "Document",
    "Figure",
    "Section",
    "Table",
    "inline_html",
    "report_section",
    "write_outputs",
]

_CODE = re.compile(r"`([^`]+)`")


def inline_html(text: str) -> str:
    """A paragraph's text for HTML: escaped, with Markdown's inline ```code``` as ``<code>``.

    Example:
        >>> inline_html("`p` < 0.05")
        '<code>p</code> &lt; 0.05'
    """
    return _CODE.sub(r"<code>\1</code>", html.escape(text, quote=False))


@dataclass(frozen=True)
class Table:
    """A table block: ``frame`` (``None`` renders as nothing), its index as the first column when ``index``,
    ``missing`` for NaN cells, and ``empty`` (a short note) instead of a table without rows, when given.

    Example:
        >>> import pandas as pd
        >>> Table(pd.DataFrame({"p": [0.5]}), index=False).markdown()
        '| p |\\n|---|\\n| 0.500 |'
        >>> Table(pd.DataFrame({"p": []}), empty="none").html()
        '<p><em>none</em></p>'
    """

    frame: pd.DataFrame | None
    index: bool = True
    missing: str = "—"
    empty: str | None = None

    def markdown(self) -> str:
        return self._written(markdown_table, lambda note: f"_{note}_")

    def html(self) -> str:
        return self._written(html_table, lambda note: f"<p><em>{html.escape(note)}</em></p>")

    def _written(self, table: Callable[..., str], note: Callable[[str], str]) -> str:
        if self.frame is None:
            return ""
        if self.empty is not None and not len(self.frame):
            return note(self.empty)
        return table(self.frame, index=self.index, missing=self.missing)

    def render(self, markup: bool) -> str:
        """:meth:`html` as ``markupsafe.Markup`` (safe in an autoescaping template) when ``markup``, else
        :meth:`markdown`."""
        if not markup:
            return self.markdown()
        import markupsafe  # a dependency of jinja2, which renders the templates that ask for Markup

        return markupsafe.Markup(self.html())


@dataclass(frozen=True)
class Figure:
    """A figure block: an image file beside the pages (its name or a relative path) and its alternative text.

    Example:
        >>> Figure("wins.png", "win matrix").markdown()
        '![win matrix](wins.png)'
    """

    path: str
    alt: str

    def markdown(self) -> str:
        return f"![{self.alt}]({self.path})"

    def html(self) -> str:
        return f'<p><img src="{html.escape(self.path)}" alt="{html.escape(self.alt)}"></p>'


@dataclass(frozen=True)
class Bullets:
    """A bullet list block, one item per line.

    Example:
        >>> print(Bullets(["a < b", "c"]).html())
        <ul>
        <li>a &lt; b</li>
        <li>c</li>
        </ul>
    """

    items: Sequence[str]

    def markdown(self) -> str:
        return "\n".join(f"- {item}" for item in self.items)

    def html(self) -> str:
        return "\n".join(["<ul>", *(f"<li>{inline_html(item)}</li>" for item in self.items), "</ul>"])


#: what a section holds: paragraphs (plain text with inline ```code```), tables, figures, lists, subsections
Block: TypeAlias = "str | Table | Figure | Bullets | Section"


def _markdown(block: Block, level: int) -> str:
    if isinstance(block, str):
        return block
    if isinstance(block, Section):
        return block.markdown(level + 1)
    return block.markdown()


def _html(block: Block, level: int) -> str:
    if isinstance(block, str):
        return f"<p>{inline_html(block)}</p>"
    if isinstance(block, Section):
        return block.html(level + 1)
    return block.html()


@dataclass(frozen=True)
class Section:
    """A titled section of blocks; subsections among them sit one heading level below it.

    Example:
        >>> import pandas as pd
        >>> part = Section("Check <1>", ["It `passes`.", Table(pd.DataFrame({"p": [0.01]}, index=["A"]))])
        >>> print(part.markdown())
        ## Check <1>
        <BLANKLINE>
        It `passes`.
        <BLANKLINE>
        | index | p |
        |---|---|
        | A | 0.010 |
        >>> part.html().splitlines()[:3]
        ['<section>', '<h2>Check &lt;1&gt;</h2>', '<p>It <code>passes</code>.</p>']
    """

    title: str
    blocks: Sequence[Block] = ()
    id: str | None = None

    def markdown(self, level: int = 2) -> str:
        parts = [f"{'#' * min(level, 6)} {self.title}", *(_markdown(block, level) for block in self.blocks)]
        return "\n\n".join(part for part in parts if part)

    def html(self, level: int = 2) -> str:
        tag = f"h{min(level, 6)}"
        opening = "<section>" if self.id is None else f'<section id="{html.escape(self.id)}">'
        parts = [
            opening,
            f"<{tag}>{html.escape(self.title)}</{tag}>",
            *(_html(b, level) for b in self.blocks),
        ]
        return "\n".join([*(part for part in parts if part), "</section>"])

    def parts(self, level: int = 2) -> dict[str, str]:
        """``{"md": ..., "html": ...}``: the section in both formats, as report sections travel
        (:data:`~xaimetrics._reporting.REPORT_SECTIONS`, ``write_report(sections=...)``)."""
        return {"md": self.markdown(level) + "\n", "html": self.html(level) + "\n"}


def report_section(title: str, text: str, table: pd.DataFrame | None = None) -> dict[str, str]:
    """A report section of a title, a paragraph and an optional table, in both formats (:meth:`Section.parts`).

    Example:
        >>> import pandas as pd
        >>> part = report_section("Check", "It <passes>.", pd.DataFrame({"p": [0.01]}, index=["A"]))
        >>> part["md"].splitlines()[0], "It &lt;passes&gt;." in part["html"]
        ('## Check', True)
    """
    return Section(title, [text, Table(table)]).parts()


@dataclass(frozen=True)
class Document:
    """A report page: a title, then blocks (sections, paragraphs, tables, figures, lists).

    Its sections are ``##`` under the ``#`` title; ``heading=False`` leaves the title out of the body, and its
    sections are then ``#`` headings of their own.

    Example:
        >>> page = Document("Run <1>", [Section("Totals", ["3 settings."])])
        >>> print(page.markdown())
        # Run <1>
        <BLANKLINE>
        ## Totals
        <BLANKLINE>
        3 settings.
        <BLANKLINE>
        >>> "<title>Run &lt;1&gt;</title>" in page.html()
        True
    """

    title: str
    blocks: Sequence[Block] = ()
    heading: bool = True

    def markdown(self) -> str:
        parts = [f"# {self.title}"] if self.heading else []
        parts += [_markdown(block, int(self.heading)) for block in self.blocks]
        return "\n\n".join(part for part in parts if part) + "\n"

    def html(self) -> str:
        from xaimetrics._reporting._templates import render_template

        body = [f"<h1>{html.escape(self.title)}</h1>"] if self.heading else []
        body += [_html(block, int(self.heading)) for block in self.blocks]
        return render_template(
            "xaimetrics._reporting",
            "page.html.jinja",
            {"title": self.title, "body": "\n".join(body)},
            html=True,
        )

    def save(self, directory: str | os.PathLike[str], stem: str) -> dict[str, Path]:
        """Write ``<stem>.md`` and ``<stem>.html`` into ``directory`` (created); return ``{"markdown", "html"}``."""
        return write_outputs(directory, stem, markdown=self.markdown(), html=self.html())


def write_outputs(
    directory: str | os.PathLike[str],
    stem: str,
    *,
    markdown: str,
    html: str,
    data: Mapping[str, object] | None = None,
) -> dict[str, Path]:
    """Write a report's files into ``directory`` (created): ``<stem>.md``, ``<stem>.html`` and, with ``data``,
    ``<stem>.json`` (UTF-8, indented); return their paths under ``"markdown"``, ``"html"`` and ``"json"``.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     paths = write_outputs(folder, "r", markdown="# r\\n", html="<p>r</p>", data={"n": 1})
        ...     sorted(p.name for p in paths.values()), paths["json"].read_text(encoding="utf-8")
        (['r.html', 'r.json', 'r.md'], '{\\n  "n": 1\\n}\\n')
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": folder / f"{stem}.md", "html": folder / f"{stem}.html"}
    paths["markdown"].write_text(markdown, encoding="utf-8")
    paths["html"].write_text(html, encoding="utf-8")
    if data is not None:
        paths["json"] = folder / f"{stem}.json"
        paths["json"].write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return paths
