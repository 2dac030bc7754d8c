"""Shared test configuration: the ``--run-slow`` switch and small, offline fixtures."""

from __future__ import annotations

import os

import pytest

from tiny_model import tiny_model_dir  # noqa: F401  (fixture: a tiny saved split classifier)

# Tests never reach a hub: everything comes from PyPI packages or is built by the test.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="also run tests marked slow (real fine-tuned model, local LLM); CI always does",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip_slow = pytest.mark.skip(reason="slow: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
