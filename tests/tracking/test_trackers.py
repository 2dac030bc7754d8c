"""A tracker that cannot log fails in one line before the grid runs: a bad ``--mlflow-uri`` is a
``TrackingError``, ``--wandb`` without wandb installed a ``MissingDependencyError`` — and no call is made."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from fake_openai_server import fake_openai_server  # noqa: F401  (fixture)
from xaimetrics.exceptions import TrackingError
from xaimetrics.tracking import MLflowTracker

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmark"))
from cli_runs import cli, write_grid


def _answer(messages):
    return "Sample_1: politics"


@pytest.mark.skipif(importlib.util.find_spec("mlflow") is None, reason="needs mlflow")
def test_bad_mlflow_uri_is_one_line_before_any_call(tmp_path, fake_openai_server):  # noqa: F811
    server = fake_openai_server(_answer)
    grid = write_grid(tmp_path, server.base_url)
    result = cli("benchmark", "run", str(grid), "--output", str(tmp_path / "out"), "--providers",
                 "toy_grid:PROVIDERS", "--no-cache", "--no-progress", "--mlflow-uri", "nosuchscheme://x/y",
                 cache_dir=tmp_path / "cache")  # fmt: skip
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert (
        lines[-1].startswith("TrackingError: MLflow could not open the experiment")
        and "--mlflow-uri" in lines[-1]
    )
    assert "Traceback" not in result.stderr
    assert server.chat_request_count == 0


@pytest.mark.skipif(importlib.util.find_spec("wandb") is not None, reason="wandb is installed")
def test_wandb_missing_is_reported_before_any_call(tmp_path, fake_openai_server):  # noqa: F811
    server = fake_openai_server(_answer)
    grid = write_grid(tmp_path, server.base_url)
    result = cli("benchmark", "run", str(grid), "--output", str(tmp_path / "out"), "--providers",
                 "toy_grid:PROVIDERS", "--no-cache", "--no-progress", "--wandb", cache_dir=tmp_path / "cache")  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("MissingDependencyError:")
    assert "tracking" in result.stderr and "Traceback" not in result.stderr
    assert server.chat_request_count == 0


@pytest.mark.skipif(importlib.util.find_spec("mlflow") is None, reason="needs mlflow")
def test_mlflow_errors_during_logging_are_tracking_errors(tmp_path):
    tracker = MLflowTracker(tracking_uri="nosuchscheme://x/y", experiment="e")
    with pytest.raises(TrackingError, match="nosuchscheme"):
        tracker.check()
    with pytest.raises(TrackingError):
        tracker.start("run")


@pytest.mark.skipif(importlib.util.find_spec("mlflow") is None, reason="needs mlflow")
def test_the_documented_sqlite_uri_says_what_to_install_or_use(tmp_path, monkeypatch):
    """``--mlflow-uri sqlite:///mlflow.db`` with the tracking extra's mlflow-skinny (no SQL store): before, MLflow's
    "unsupported URI ... for model registry" error; now what to install, or the file: store to use instead."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    if importlib.util.find_spec("sqlalchemy") is not None:  # the full MLflow: the URI works
        MLflowTracker(tracking_uri=uri, experiment="e").check()
        return
    with pytest.raises(
        TrackingError, match=r"pip install mlflow .*file:///path/to/mlruns .*MLFLOW_ALLOW_FILE_STORE"
    ):
        MLflowTracker(tracking_uri=uri, experiment="e").check()
    with pytest.raises(TrackingError, match="full MLflow package"):
        MLflowTracker(tracking_uri="postgresql+psycopg2://u@h/db").check()
    # the file: store it points to works with mlflow-skinny
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    tracker = MLflowTracker(tracking_uri=(tmp_path / "mlruns").as_uri(), experiment="e")
    tracker.check()
    tracker.start("run")
    tracker.log_metrics({"score": 0.5})
    tracker.end()
    assert any((tmp_path / "mlruns").rglob("score"))
