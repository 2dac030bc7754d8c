"""Open an HTML file in headless Chromium: screenshot, DOM and console errors (for the report tests)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-logging=stderr", "--v=0", "--allow-file-access-from-files",
]  # fmt: skip


def available() -> bool:
    return Path(CHROMIUM).is_file()


def open_in_chromium(html: Path, workdir: Path) -> tuple[Path, str, list[str]]:
    """Return (screenshot PNG, dumped DOM, console error lines) of ``html`` rendered headless."""
    profile = workdir / "chromium-profile"
    shot = workdir / "screenshot.png"
    url = html.resolve().as_uri()
    common = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--window-size=1280,2000"]
    screenshot = subprocess.run(
        [*common, f"--screenshot={shot}", url], capture_output=True, text=True, timeout=180
    )
    dom = subprocess.run([*common, "--dump-dom", url], capture_output=True, text=True, timeout=180)
    errors = [
        line for line in (screenshot.stderr + dom.stderr).splitlines()
        if ":CONSOLE" in line  # the report has no script: any console message is unexpected
        or "Not allowed to load local resource" in line or "ERR_FILE_NOT_FOUND" in line
    ]  # fmt: skip
    return shot, dom.stdout, errors
