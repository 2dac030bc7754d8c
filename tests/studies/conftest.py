"""Fixtures of the study tests: the toy grid of the benchmark tests (a real tiny classifier), a study server on
a free port of 127.0.0.1 (a thread, or a ``xaimetrics study serve`` subprocess), and headless Chromium."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "benchmark"))  # toy_grid: the benchmark tests' toy data

from study_helpers import CHROMIUM, browser_available


@pytest.fixture(scope="module")
def chromium():
    """A headless Chromium driven by Playwright (Debian's /usr/bin/chromium; no download).

    Module-scoped: Playwright's sync API keeps an event loop running in the main thread while it is open, and
    any later test calling ``asyncio.run`` would fail.
    """
    reason = browser_available()
    if reason is not None:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()
