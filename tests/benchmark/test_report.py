"""The report: each table is built once and rendered to HTML and Markdown alike."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from toy_grid import PROVIDERS, toy_grid

from xaimetrics.benchmark import ResultRow, ResultsStore, run_grid, write_report
from xaimetrics.benchmark._report import html_table, markdown_table, report_section

pytest.importorskip("jinja2")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, str, str]:
    folder = tmp_path_factory.mktemp("report")
    grid = toy_grid(methods=("NMF", "PCA", "NoExplanation"), seeds=(0, 1), prompt_types=("NE2", "E2", "E3"))
    run_grid(grid, folder / "r.sqlite", providers=PROVIDERS, progress=False)
    with ResultsStore(folder / "r.sqlite") as store:
        frame = store.to_frame()
    section = report_section("Extra <check>", "It passes.", pd.DataFrame({"p": [0.01]}, index=["A"]))
    paths = write_report(frame, folder / "out", grid=grid.to_dict(), sections=[section])
    return (
        frame,
        paths["report_html"].read_text(encoding="utf-8"),
        paths["report_md"].read_text(encoding="utf-8"),
    )


def _md_headers(md: str) -> list[str]:
    return [line for line in md.splitlines() if line.startswith("| ") and not line.startswith("| ---")]


def test_html_and_markdown_show_the_same_tables(report: tuple[pd.DataFrame, str, str]) -> None:
    _, html, md = report
    md_tables = re.findall(r"(?m)^\|[^\n]*\|\n\|(?:---\|)+$", md)
    html_tables = re.findall(r"<thead>(.*?)</thead>", html, flags=re.S)
    assert len(md_tables) == len(html_tables) > 10
    for md_table, html_table_head in zip(md_tables, html_tables, strict=True):
        md_columns = [c.strip() for c in md_table.splitlines()[0].strip("|").split("|")]
        html_columns = re.findall(r"<th>(.*?)</th>", html_table_head)
        assert md_columns == html_columns


def test_every_setting_is_listed_with_the_store_columns(report: tuple[pd.DataFrame, str, str]) -> None:
    frame, html, md = report
    header = "| " + " | ".join(("key", *ResultRow.columns())) + " |"
    assert header in md and md.count("\n| ") >= len(frame)
    assert all(key in md and key in html for key in frame["key"])
    assert f"The stored row of each setting ({len(frame)})" in html
    assert "created_at" not in md


def test_extra_sections_keep_their_producers_escaping(report: tuple[pd.DataFrame, str, str]) -> None:
    _, html, md = report
    assert "<h2>Extra &lt;check&gt;</h2>" in html and "## Extra <check>" in md


def test_table_renderers() -> None:
    frame = pd.DataFrame({"a|b": [0.12345, float("nan")], "c": ["<x>", True]})
    assert markdown_table(frame, index=False).splitlines() == [
        "| a\\|b | c |",
        "|---|---|",
        "| 0.123 | <x> |",
        "| — | yes |",
    ]
    assert "&lt;x&gt;" in html_table(frame, index=False) and "<td>0.123</td>" in html_table(
        frame, index=False
    )


def test_the_pipeline_shares_and_the_top_k_are_reported(report: tuple[pd.DataFrame, str, str]) -> None:
    _, html, md = report
    assert "## How much of the score is the pipeline" in md and "| seed × method |" in md
    assert "## Is the top 1 stable across seeds?" in md and "top_k_share" in md
    assert "<h2>How much of the score is the pipeline</h2>" in html
