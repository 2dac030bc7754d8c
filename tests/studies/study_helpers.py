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
            except (requests.ConnectionError, requests.Timeout):  # the port is bound before the app is ready
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


def screenshot(page: Any, name: str, tmp_path: Path, *, full_page: bool = True) -> Path:
    """A PNG of ``page`` (whole, or what the viewport shows): into docs/images/studies/ when
    XAIMETRICS_UPDATE_SCREENSHOTS=1."""
    folder = (
        SCREENSHOTS if os.environ.get("XAIMETRICS_UPDATE_SCREENSHOTS") == "1" else tmp_path / "screenshots"
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    if folder == SCREENSHOTS:  # committed: a 256-colour palette keeps them small (Pillow, when installed)
        with contextlib.suppress(ImportError):
            from PIL import Image

            with Image.open(path) as image:
                small = image.convert("RGB").quantize(256)
            small.save(path, optimize=True)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000, name
    return path


def csrf_of(html: str) -> str:
    import re

    found = re.search(r'name="csrf" value="([0-9a-f]{64})"', html)
    assert found, "no CSRF token in the page"
    return found.group(1)


#: words of the toy news articles, per class, and the concepts that describe the classes
_TOPICS = {
    "World": ["embassy", "minister", "treaty", "election", "border", "summit", "parliament", "refugees"],
    "Sports": ["goal", "match", "coach", "league", "striker", "season", "referee", "stadium"],
    "Business": ["market", "shares", "profit", "bank", "investors", "quarter", "merger", "oil"],
    "Sci/Tech": ["software", "chip", "robot", "internet", "space", "researchers", "phone", "data"],
}


def article(c: int, i: int, words: int = 420) -> str:
    """A long toy news article of class ``c`` (about 2,500 characters, like a BBC News text)."""
    topic = list(_TOPICS.values())[c]
    common = ["the", "said", "on", "a", "new", "after", "in", "year", "report", "with", "people", "and"]
    body = [
        topic[(i * 7 + k * 3) % len(topic)] if k % 3 == 0 else common[(i + k) % len(common)]
        for k in range(words)
    ]
    return f"Article {i}: " + " ".join(body) + "."


def article_study(n_lp: int = 20, n_ep: int = 4) -> Any:
    """A 4-class study of long articles (20 LP + 4 EP): an anonymised E3 arm and a U1 arm with concept words."""
    import numpy as np

    from xaimetrics.studies import SimulatabilityStudy
    from xaimetrics.studies._simulatability import MethodExplanation, SampleSet, StudyArm

    classes = list(_TOPICS)
    lp_classes = [i % 4 for i in range(n_lp)]
    ep_classes = [(i + 1) % 4 for i in range(n_ep)]
    samples = SampleSet.from_texts(
        0, [article(c, i) for i, c in enumerate(lp_classes)], lp_classes,
        [article(c, 100 + i) for i, c in enumerate(ep_classes)], ep_classes,
    )  # fmt: skip
    concepts = {c: {"aligned": words[:5], "opposed": list(_TOPICS.values())[(c + 1) % 4][:3]}
                for c, words in enumerate(_TOPICS.values())}  # fmt: skip
    rng = np.random.default_rng(0)
    explanation = MethodExplanation(
        method="NMF", seed=0, n_concepts=4, concepts=concepts,
        global_importances=np.eye(4) * 0.9 - 0.2 * np.roll(np.eye(4), 1, axis=1),
        lp_local=np.eye(4)[lp_classes] + 0.05 * rng.random((n_lp, 4)),
        ep_local=np.eye(4)[ep_classes] + 0.05 * rng.random((n_ep, 4)),
    )  # fmt: skip
    arms = [StudyArm("NMF", "E3", True, 0, n_concepts=4), StudyArm("NMF", "U1", False, 0, n_concepts=4)]
    return SimulatabilityStudy(classes, [samples], [explanation], arms, title="Guess the model's answer")
