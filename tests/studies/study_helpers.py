"""Helpers of the study tests: toy studies, a study server on a free port, browser pages and screenshots.

Screenshots go to ``docs/images/studies/`` when ``XAIMETRICS_UPDATE_SCREENSHOTS=1`` (commit them), else to a
temporary folder; either way the test checks that they are real PNG images.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests

REPOSITORY = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPOSITORY / "docs" / "images" / "studies"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"


def browser_available() -> str | None:
    """``None`` when Playwright and Chromium are usable, else the reason to skip."""
    if not Path(CHROMIUM).is_file():
        return "needs Chromium (apt-get install -y chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "needs Playwright (pip install 'xaimetrics[studies]'; Debian's chromium is used, no download)"
    return None


def study_grid(**changes: Any) -> Any:
    """The toy grid of the studies: 3 conditions (NMF, PCA with E2-a; NoExplanation with NE2-a) × 3 seeds."""
    from toy_grid import toy_grid

    options = {
        "methods": ("NMF", "PCA", "NoExplanation"), "prompt_types": ("NE2-a", "E2-a"), "seeds": (0, 1, 2),
        "n_lp": 6, "n_ep": 6, "simulators": ("oracle",),
    }  # fmt: skip
    options.update(changes)
    return toy_grid(**options)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ThreadServer:
    """The study app under uvicorn in a thread of the test process."""

    def __init__(self, study: Any, store: Any, **options: Any) -> None:
        import uvicorn

        from xaimetrics.studies import create_app

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            create_app(study, store, **options), host="127.0.0.1", port=self.port, log_level="warning"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the study server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@contextlib.contextmanager
def cli_server(config: Path, port: int) -> Iterator[subprocess.Popen[str]]:
    """``xaimetrics study serve CONFIG --port PORT`` in a subprocess, killed (SIGKILL) at the end."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPOSITORY / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "xaimetrics.cli", "study", "serve", str(config), "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                requests.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except requests.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the server did not start: {process.stdout.read() if process.stdout else ''}"
                    ) from None
                time.sleep(0.1)
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)


def screenshot(page: Any, name: str, tmp_path: Path) -> Path:
    """A full-page PNG of ``page``: into docs/images/studies/ when XAIMETRICS_UPDATE_SCREENSHOTS=1."""
    folder = (
        SCREENSHOTS if os.environ.get("XAIMETRICS_UPDATE_SCREENSHOTS") == "1" else tmp_path / "screenshots"
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000, name
    return path


def csrf_of(html: str) -> str:
    import re

    found = re.search(r'name="csrf" value="([0-9a-f]{64})"', html)
    assert found, "no CSRF token in the page"
    return found.group(1)
