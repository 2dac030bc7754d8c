"""Fixtures of the benchmark tests: the fake OpenAI-compatible server (real HTTP on 127.0.0.1), and this folder
on ``sys.path`` so that ``toy_grid`` (providers for subprocesses, Ray workers and ``--providers``) imports."""

from __future__ import annotations

import sys
from pathlib import Path

from fake_openai_server import fake_openai_server  # noqa: F401  (fixture)

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))
