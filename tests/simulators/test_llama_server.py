"""The llama.cpp server entry point: llama_cpp.server's own command line, under the weights policy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from xaimetrics.simulators._llama_weights import PORTABLE_ENV

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.mark.parametrize(("value", "label"), [("1", "portable"), ("0", "accelerated")])
def test_the_server_states_its_weights_policy_and_takes_the_servers_arguments(value: str, label: str) -> None:
    pytest.importorskip("llama_cpp.server.app", reason="needs the 'server' extra")
    result = subprocess.run(
        [sys.executable, "-m", "xaimetrics.simulators._llama_server", "--help"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(SRC), PORTABLE_ENV: value},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"xaimetrics: llama.cpp weights {label} ({PORTABLE_ENV}={value})" in result.stderr
    assert "--model MODEL" in result.stdout and "--n_gpu_layers" in result.stdout  # llama_cpp.server's parser
