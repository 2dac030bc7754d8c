"""The HTML report opens in headless Chromium without console errors; every image it links exists."""

from __future__ import annotations

import re

import pytest
from browser import available, open_in_chromium
from toy_grid import PROVIDER_KWARGS, toy_grid

from xaimetrics.benchmark import Providers, ResultsStore, run_grid, write_report

pytestmark = pytest.mark.skipif(
    not available(), reason="needs /usr/bin/chromium (apt-get install -y chromium)"
)


def test_report_renders_in_headless_chromium(tmp_path):
    grid = toy_grid(seeds=(0, 1), prompt_types=("NE2-a", "E2-a", "E3-a"))
    run_grid(grid, tmp_path / "r.sqlite", providers=Providers(**PROVIDER_KWARGS), progress=False)
    paths = write_report(
        ResultsStore(tmp_path / "r.sqlite").to_frame(), tmp_path / "report", grid=grid.to_dict()
    )
    html = paths["report_html"]
    for source in re.findall(r'<img src="([^"]+)"', html.read_text()):
        assert (html.parent / source).is_file(), source
    shot, dom, errors = open_in_chromium(html, tmp_path)
    assert errors == []
    assert shot.is_file() and shot.stat().st_size > 10_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<h1>ConSim benchmark report</h1>" in dom and dom.count("<table") >= 5
