"""jinja2 templates of the reports: one environment per family's ``templates`` folder and format.

Every HTML page extends the toolkit's ``xaimetrics/page.html.jinja`` (the document skeleton and its style; blocks
``title``, ``style`` and ``body``), so a family's template holds its content only.

HTML templates autoescape every value (a table or section already rendered to HTML comes in as
``markupsafe.Markup``); Markdown templates do not, and escape table cells with the ``md`` filter. jinja2 is the
``report`` extra's, imported when a report is written.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING

from xaimetrics._optional import import_optional

if TYPE_CHECKING:
    import jinja2

__all__ = ["markdown_cell", "render_template", "status_class"]


def markdown_cell(text: object) -> str:
    """A value for a Markdown table cell: ``|`` escaped, line breaks as spaces.

    Example:
        >>> markdown_cell("a|b\\nc")
        'a\\\\|b c'
    """
    return str(text).replace("|", "\\|").replace("\n", " ")


def status_class(status: object) -> str:
    """The CSS class of a status mark (``✓`` ok, ``○`` warn, ``✗`` bad; anything else none).

    Example:
        >>> status_class("✗ below"), status_class("n/a")
        ('bad', '')
    """
    return {"✓": "ok", "○": "warn", "✗": "bad"}.get(str(status)[:1], "")


@functools.cache
def _environment(package: str, html: bool, compact: bool) -> jinja2.Environment:
    jinja2 = import_optional("jinja2", extra="report", caller=f"the report of {package}")
    # the family's templates first, the toolkit's page under the prefix "xaimetrics/"
    toolkit = jinja2.PrefixLoader({"xaimetrics": jinja2.PackageLoader("xaimetrics._reporting", "templates")})
    environment = jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader(package, "templates"), toolkit]),
        autoescape=html,
        trim_blocks=compact,
        lstrip_blocks=compact,
        keep_trailing_newline=True,
    )
    environment.filters["md"] = markdown_cell
    environment.filters["css"] = status_class
    return environment


def render_template(
    package: str, name: str, context: Mapping[str, object], *, html: bool, compact: bool = False
) -> str:
    """Render the template ``name`` of ``package``'s ``templates`` folder with ``context``.

    Args:
        package: the package holding the ``templates`` folder (``"xaimetrics.benchmark"``).
        name: the template's file name (``"report.md.jinja"``).
        context: the template's variables.
        html: autoescape every value (an HTML template).
        compact: jinja2's ``trim_blocks`` and ``lstrip_blocks`` (a block tag leaves no line of its own).

    Example:
        >>> render_template("xaimetrics._reporting", "page.html.jinja", {"title": "a<b", "body": ""}, html=True).count("a&lt;b")
        1
    """
    return _environment(package, html, compact).get_template(name).render(**context)
