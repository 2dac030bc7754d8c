"""The report toolkit: one document, written once, read the same in Markdown and HTML (every value escaped)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from xaimetrics._reporting import (
    Bullets,
    Document,
    Figure,
    Section,
    Table,
    render_template,
    report_section,
    save_figure,
)

pytest.importorskip("jinja2")

FRAME = pd.DataFrame(
    {
        "method": ["NMF", "<script>x</script>", "A|B"],
        "score": [0.71234, float("nan"), 0.5],
        "ok": [True, False, True],
    }
)


def _page() -> Document:
    return Document(
        "Run <1> & co",
        [
            "Intro with `code` and <b>tags</b>.",
            Section(
                "Scores",
                [
                    "Mean accuracy.",
                    Table(FRAME, index=False),
                    Bullets(["first < second", "`p` = 0.05"]),
                    Figure("wins <1>.png", 'win "matrix"'),
                    Section("Details", [Table(FRAME.iloc[:0], index=False, empty="none")]),
                ],
                id="scores",
            ),
        ],
    )


def test_markdown_and_html_carry_the_same_tables_and_text() -> None:
    page = _page()
    md, html = page.markdown(), page.html()
    md_header = re.findall(r"(?m)^\| method \| score \| ok \|$", md)
    assert len(md_header) == 1 and re.findall(r"<th>(.*?)</th>", html) == ["method", "score", "ok"]
    assert "| NMF | 0.712 | yes |" in md and "<td>0.712</td>" in html
    assert "| A\\|B | 0.500 | yes |" in md and "| <script>x</script> | — | no |" in md
    assert md.splitlines()[0] == "# Run <1> & co" and "## Scores" in md and "### Details" in md
    assert "_none_" in md and "<p><em>none</em></p>" in html
    assert "- first < second" in md and '![win "matrix"](wins <1>.png)' in md


def test_html_escapes_every_value() -> None:
    html = _page().html()
    assert "<script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html
    assert "<title>Run &lt;1&gt; &amp; co</title>" in html and "<h1>Run &lt;1&gt; &amp; co</h1>" in html
    assert "<p>Intro with <code>code</code> and &lt;b&gt;tags&lt;/b&gt;.</p>" in html
    assert "<li>first &lt; second</li>" in html and "<li><code>p</code> = 0.05</li>" in html
    assert '<img src="wins &lt;1&gt;.png" alt="win &quot;matrix&quot;">' in html
    assert '<section id="scores">' in html and "<h2>Scores</h2>" in html and "<h3>Details</h3>" in html
    assert html.count("<section") == html.count("</section>") == 2


def test_a_missing_table_renders_as_nothing_and_a_section_without_title_heading() -> None:
    assert Table(None).markdown() == Table(None).html() == "" == Table(None).render(True)
    assert Table(FRAME.iloc[:0], index=False).markdown() == "| method | score | ok |\n|---|---|---|"
    part = Section("Totals", ["3 settings.", Table(None)])
    assert part.markdown() == "## Totals\n\n3 settings."
    assert part.markdown(level=9).startswith("###### Totals") and "<h6>Totals</h6>" in part.html(level=9)
    assert Table(FRAME[["score"]], index=False, missing="").markdown().splitlines()[3] == "|  |"


def test_report_section_is_a_section_in_both_formats() -> None:
    frame = pd.DataFrame({"p": [0.01]}, index=pd.Index(["A"], name="method"))
    part = report_section("Check <x>", "It passes.", frame)
    assert part == Section("Check <x>", ["It passes.", Table(frame)]).parts()
    assert part["md"] == "## Check <x>\n\nIt passes.\n\n| method | p |\n|---|---|\n| A | 0.010 |\n"
    assert part["html"].startswith("<section>\n<h2>Check &lt;x&gt;</h2>\n<p>It passes.</p>\n<table")


def test_save_writes_both_pages_and_heading_false_leaves_the_title_out(tmp_path) -> None:
    page = Document("Agreement", [Section("Does it agree?", ["Yes."])], heading=False)
    paths = page.save(tmp_path / "out", "agreement")
    assert {p.name for p in paths.values()} == {"agreement.md", "agreement.html"}
    assert paths["markdown"].read_text(encoding="utf-8") == "# Does it agree?\n\nYes.\n"
    html = paths["html"].read_text(encoding="utf-8")
    assert (
        "<title>Agreement</title>" in html
        and "<h1>Does it agree?</h1>" in html
        and "<h1>Agreement" not in html
    )


def test_templates_escape_html_only_and_compact_trims_block_lines() -> None:
    context = {"title": "a<b", "body": "<p>kept</p>"}
    page = render_template("xaimetrics._reporting", "page.html.jinja", context, html=True)
    assert "<title>a&lt;b</title>" in page and "<p>kept</p>" in page  # the body is already escaped HTML
    report = {
        "title": "a<b",
        "model": "m",
        "version": "1",
        "recommendations": [{"title": "x|y", "actions": []}],
    }
    md = render_template("xaimetrics.representation", "report.md.jinja", report, html=False, compact=True)
    loose = render_template("xaimetrics.representation", "report.md.jinja", report, html=False)
    assert md.startswith("# a<b - m 1\n") and "- x\\|y\n" in md  # the md filter escapes a cell's |
    assert len(md.splitlines()) < len(loose.splitlines())  # block tags leave no lines of their own
    html = render_template("xaimetrics.representation", "report.html.jinja", report, html=True, compact=True)
    assert "<h1>a&lt;b - m 1</h1>" in html
    # the family's page extends the toolkit's skeleton: its title block, the shared style and its own
    assert "<title>a&lt;b - m 1</title>" in html and "border-collapse" in html and ".bad { color" in html
    assert html.startswith("<!DOCTYPE html>") and html.count("<body>") == 1


def test_save_figure_writes_a_png_and_closes_the_figure(tmp_path) -> None:
    from xaimetrics._reporting import pyplot

    plt = pyplot("a test")
    figure, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    path = save_figure(figure, tmp_path / "sub" / "line.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert figure.number not in plt.get_fignums()
